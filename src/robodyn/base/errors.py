"""robodyn's exceptions.

Every error robodyn raises on purpose is a :class:`RobodynError`. Its message names what is wrong and
what to change. The CLI prints it as one line on stderr and exits with :attr:`RobodynError.exit_code`:
2 for bad input (:class:`InputError` and its subclasses), 1 for numerical failure
(:class:`NumericalError`).

Input errors also derive from :class:`ValueError` so that code written against the standard library's
conventions keeps working.
"""

from __future__ import annotations

__all__ = [
    "ConvergenceError",
    "ExpressionError",
    "InputError",
    "ModelFileError",
    "NumericalError",
    "RobodynError",
    "RobodynWarning",
    "ShapeError",
    "SingularMatrixError",
    "UnknownNameError",
]


class RobodynError(Exception):
    """Base class of every error robodyn raises deliberately.

    ``key`` optionally names the model-file key the error is about (``"mass"``, ``"kinetic"``), so
    that a model file loader can point at the key's line.
    """

    exit_code: int = 1

    def __init__(self, message: str = "", *, key: str | None = None):
        super().__init__(message)
        self.key = key


class InputError(RobodynError, ValueError):
    """Bad input: a malformed file, an unknown name, a wrong shape, a non-finite number."""

    exit_code = 2


class ExpressionError(InputError):
    """An expression was rejected by the safe parser (a token outside the whitelist, bad syntax)."""


class ModelFileError(InputError):
    """A model file is malformed or inconsistent; the message carries the file and the key path."""


class UnknownNameError(InputError, KeyError):
    """A name (state, input, parameter, model) that the model or catalog does not define."""

    def __str__(self) -> str:  # KeyError would add quotes around the message
        return str(self.args[0]) if self.args else ""


class ShapeError(InputError):
    """An array has the wrong shape for the model it is used with."""


class NumericalError(RobodynError):
    """A computation failed numerically: a singular matrix, a solver that did not converge."""

    exit_code = 1


class SingularMatrixError(NumericalError):
    """A matrix that must be invertible (a mass matrix, a Jacobian) is singular or not positive definite."""


class ConvergenceError(NumericalError):
    """An iterative method did not converge; the message gives the best result reached and what to try."""


class RobodynWarning(UserWarning):
    """Something robodyn accepted but a user should know: data kept as given although it looks unphysical."""
