"""The kind codes of compiled input signals: the one table read by the packer and by the evaluator.

:meth:`robodyn.signals.Inputs.compiled` writes these codes into ``codes[:, 1]`` and the numbers of
each kind into ``coef``; the evaluator template (``robodyn/signals/kernel.py``) imports the same names
to decide what each row is. Row ``j`` adds ``coef[j, 0] * f_j(t)`` to channel ``codes[j, 0]``:

=====  ==============  =============  =====================================================
code   name            kind           ``coef[j, 1:]``
=====  ==============  =============  =====================================================
0      CONSTANT        constant       value
1      STEP            step           t0, before, after
2      RAMP            ramp           t0, slope, initial
3      SINE            sine           amplitude, omega = 2*pi*frequency (rad/s), phase, offset
4      PULSE           pulse          t0, width, amplitude, base, period (0: not periodic)
5      TABLE_ZOH       table, zoh     offset into ``tdata``, length n
6      TABLE_LINEAR    table, linear  offset into ``tdata``, length n
7      WHITE_NOISE     white_noise    start, sample, std, mean, seed (robodyn.signals.noise)
=====  ==============  =============  =====================================================

Unused ``coef`` slots are 0. The codes are plain ints: numba reads module-level integer globals as
compile-time constants, so the evaluator's comparisons against these names cost nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

__all__ = [
    "CONSTANT",
    "HELD_KINDS",
    "KIND_CODES",
    "N_COEF",
    "PULSE",
    "RAMP",
    "SINE",
    "STEP",
    "TABLE_LINEAR",
    "TABLE_ZOH",
    "WHITE_NOISE",
]

CONSTANT: Final = 0  # coef: gain, value
STEP: Final = 1  # coef: gain, t0, before, after
RAMP: Final = 2  # coef: gain, t0, slope, initial
SINE: Final = 3  # coef: gain, amplitude, omega (rad/s), phase, offset
PULSE: Final = 4  # coef: gain, t0, width, amplitude, base, period (0 = not periodic)
TABLE_ZOH: Final = 5  # coef: gain, offset into tdata, length n (times then values)
TABLE_LINEAR: Final = 6  # coef: as TABLE_ZOH
WHITE_NOISE: Final = 7  # coef: gain, start, sample, std, mean, seed (an integer < 2**53, exact as a float)

#: Kind name -> code; table kinds are named ``"table_" + Table.interpolation``.
KIND_CODES: Final[Mapping[str, int]] = {
    "constant": CONSTANT,
    "step": STEP,
    "ramp": RAMP,
    "sine": SINE,
    "pulse": PULSE,
    "table_zoh": TABLE_ZOH,
    "table_linear": TABLE_LINEAR,
    "white_noise": WHITE_NOISE,
}

#: Kind codes whose value depends only on the piece (constant, step, pulse, zero-order-hold table, held noise):
#: inputs made of these alone are constant between breakpoints.
HELD_KINDS: Final = (CONSTANT, STEP, PULSE, TABLE_ZOH, WHITE_NOISE)

#: Columns of ``coef``: the gain and up to five numbers of the kind.
N_COEF: Final = 6
