"""The base every other folder stands on: no numpy model, no sympy, nothing robodyn-specific above it.

- :mod:`~robodyn.base.errors` — the one exception tree (InputError, NumericalError, ...) and RobodynWarning;
- :mod:`~robodyn.base.atomic` — outputs written whole or not at all; :mod:`~robodyn.base.textfile` — bounded reading
  of the text files robodyn is given; :mod:`~robodyn.base.budget` — budgets for display-only symbolic work;
- :mod:`~robodyn.base.progress` — progress bars; :mod:`~robodyn.base.digest` — SHA-256 without OpenSSL;
  :mod:`~robodyn.base.blas` — one BLAS thread for small factorizations; :mod:`~robodyn.base.threads` — independent
  pieces of compiled work on every CPU; :mod:`~robodyn.base.lazy` — names loaded
  on first use and the old import paths of modules that moved; :mod:`~robodyn.base.numbers` — the checks of the
  finite numbers and float arrays users give, and read-only copies; :mod:`~robodyn.base.names` — the rules of
  names (states, inputs, parameters, frames) and of plain numbers, shared by every reader. The package version is
  :mod:`~robodyn.base.version`.
"""
