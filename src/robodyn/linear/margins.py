"""Gain, phase and stability margins of one loop L, from its exact crossings (robodyn.linear.crossings).

Margins belong to a loop: L is what a controller and a plant give when the loop is broken at one connection
(``robodyn.linearize(diagram, x, u, open="block.port")``), or a loop transfer built by hand (K (sI - A)^-1 B for a
state feedback). A plant u -> y has no loop of its own; closing one around it by unity feedback is a choice the
model does not make, and the report does not make it either.

Definitions (python-control's ``stability_margins``, whose choice among several crossings is kept):

- gain margin 1 / |L(jw)| at a phase crossover, where L(jw) is real and negative (w = 0 included), and in dB;
- phase margin 180 deg + arg L(jw) at a gain crossover |L(jw)| = 1 (w > 0), in (-180, 180];
- stability margin min over w >= 0 of |1 + L(jw)|, the distance of the Nyquist curve from -1.

The gain margin chosen is the one closest to 1 (0 dB), the phase margin the smallest in magnitude. A margin with no
crossing is infinite (JSON null, with the reason), decided from the exact crossings: where python-control's
polynomials find a crossing from rounding (a gain margin of 2.8e15, 309 dB, at 5e8 rad/s for the joint, whose phase
only approaches -180 deg) there is none. Discrete time: frequencies up to the Nyquist frequency pi / dt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from robodyn import display
from robodyn.base.errors import InputError, UnknownNameError
from robodyn.linear.crossings import Loop, level_crossings, phase_crossings, real_everywhere, smallest_value
from robodyn.linear.modes import modes
from robodyn.linear.systems import StateSpace, as_linear

__all__ = ["Margins", "margins"]

Array = NDArray[np.float64]

UNDAMPED = ("L(jw) is real at every frequency (a loop without damping: L(-s) = L(s)), so its phase is 0 or -180 deg "
            "on whole bands rather than crossing -180 deg: the gain margin is not defined")
_KEYS = ("gain_margins", "phase_margins", "stability_margins", "phase_crossovers", "gain_crossovers",
         "stability_margin_frequencies")


def _null(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True, slots=True, eq=False)
class Margins:
    """Stability margins of the loop L from ``input`` to ``output`` (module docstring).

    Attributes
    ----------
    gain_margin, gain_margin_db
        1 / |L| at the phase crossover, and in dB (inf: the phase crosses -180° nowhere; NaN: L(jw) is real at every
        frequency, a loop without damping, whose phase is -180° on whole bands).
    phase_margin
        180° + arg L at the gain crossover, in degrees (inf: |L| crosses 1 nowhere).
    phase_crossover, gain_crossover
        The frequencies (rad/s) of the gain margin (phase -180°) and of the phase margin (|L| = 1); NaN if none.
    stability_margin, stability_margin_frequency
        min |1 + L| (the distance of the Nyquist curve from -1) and where it is reached (inf: approached as
        w -> inf).
    crossings
        Every crossing found: {"gain_margins", "phase_crossovers", "phase_margins", "gain_crossovers",
        "stability_margins", "stability_margin_frequencies"} (the last two: the local minima of |1 + L| met,
        the smallest among them); the chosen ones are python-control's: the gain margin closest to 1 (0 dB), the
        phase margin smallest in magnitude, the smallest stability margin.
    reasons, notes
        Why a value is infinite or undefined (by field); what else to know (an open loop that is not stable).
    """

    input: str
    output: str
    gain_margin: float
    gain_margin_db: float
    phase_margin: float
    phase_crossover: float
    gain_crossover: float
    stability_margin: float
    stability_margin_frequency: float
    crossings: Mapping[str, Array]
    reasons: Mapping[str, str]
    notes: tuple[str, ...] = ()
    dt: float | None = None

    def as_control(self) -> tuple[float, float, float, float, float, float]:
        """``(gm, pm, sm, wpc, wgc, wms)`` in the order ``control.stability_margins(sys)`` returns them."""
        return (self.gain_margin, self.phase_margin, self.stability_margin, self.phase_crossover,
                self.gain_crossover, self.stability_margin_frequency)

    def text(self) -> str:
        """One line: each margin with its frequency, or why it is infinite ("infinite: the phase crosses -180 deg
        nowhere"), never an artefact of rounding."""
        def at(frequency: float) -> str:
            return f" at {display.number(frequency)} rad/s" if math.isfinite(frequency) else ""

        gain = (f"gain margin {display.number(self.gain_margin)} ({display.number(self.gain_margin_db)} dB)"
                f"{at(self.phase_crossover)}" if math.isfinite(self.gain_margin) else
                "gain margin infinite (the phase crosses -180 deg nowhere)" if self.gain_margin > 0 else
                "gain margin not defined (L(jw) is real at every frequency: a loop without damping)")
        phase = (f"phase margin {display.number(self.phase_margin)} deg{at(self.gain_crossover)}"
                 if math.isfinite(self.phase_margin) else "phase margin infinite (|L| crosses 1 nowhere)")
        stability = (f"stability margin {display.number(self.stability_margin)}{at(self.stability_margin_frequency)}"
                     + ("" if math.isfinite(self.stability_margin_frequency) else " (approached as w -> inf)"))
        return f"{gain}, {phase}, {stability}"

    def to_dict(self) -> dict[str, Any]:
        """Strict JSON: infinite or undefined values are null, with ``null_reasons``; units in ``units``."""
        names = ("gain_margin", "gain_margin_db", "phase_margin", "phase_crossover", "gain_crossover",
                 "stability_margin", "stability_margin_frequency")
        return {"input": self.input, "output": self.output, "dt": self.dt,
                **{name: _null(getattr(self, name)) for name in names},
                "crossings": {k: [_null(v) for v in np.asarray(a, dtype=float).tolist()]
                              for k, a in self.crossings.items()},
                "null_reasons": dict(self.reasons), "notes": list(self.notes), "text": self.text(),
                "units": {"gain_margin": "1", "gain_margin_db": "dB", "phase_margin": "deg",
                          "phase_crossover": "rad/s", "gain_crossover": "rad/s", "stability_margin": "1",
                          "stability_margin_frequency": "rad/s"}}

    def _repr_html_(self) -> str:
        """The margins as a table (inf / undefined with their reasons), then the notes."""
        def shown(value: float) -> str:
            return display.number(value) if math.isfinite(value) else ("inf" if value > 0 else "-")

        rows = [("gain margin", f"{shown(self.gain_margin)} ({shown(self.gain_margin_db)} dB)",
                 f"at {shown(self.phase_crossover)} rad/s"),
                ("phase margin", f"{shown(self.phase_margin)} deg", f"at {shown(self.gain_crossover)} rad/s"),
                ("stability margin", shown(self.stability_margin),
                 f"at {shown(self.stability_margin_frequency)} rad/s")]
        notes = [display.note(f"{k}: {v}") for k, v in self.reasons.items()] + [display.note(n) for n in self.notes]
        return display.block([display.heading(f"margins of the loop {self.input} -> {self.output}"),
                              display.html_table(rows, row_header=True), *notes])


def _siso(linear: StateSpace, input: str | None, output: str | None) -> tuple[int, int]:
    chosen = []
    for name, names, what in ((output, linear.outputs, "output"), (input, linear.inputs, "input")):
        if name is None:
            if len(names) != 1:
                raise InputError(f"margins are for one loop: {linear.name!r} has {len(names)} {what}s "
                                 f"({', '.join(names) or 'none'}): pick one with {what}=...")
            chosen.append(0)
        elif name not in names:
            raise UnknownNameError(f"margins: unknown {what} {name!r} (the {what}s: {', '.join(names)})")
        else:
            chosen.append(names.index(name))
    return chosen[0], chosen[1]


def _select(gm: Array, pm: Array, sm: Array, w180: Array, wc: Array, wstab: Array) -> tuple[float, ...]:
    """python-control's choice among all crossings (stability_margins with returnall=False)."""
    gain, w_gain = math.inf, math.nan
    if gm.size and not np.isinf(gm).all():
        with np.errstate(all="ignore"):
            index = np.flatnonzero(np.abs(np.log(gm)) == np.min(np.abs(np.log(gm))))
        gain, w_gain = float(gm[index][0]), float(w180[index][0])
    phase, w_phase = math.inf, math.nan
    if pm.size:
        index = np.flatnonzero(np.abs(pm) == np.min(np.abs(pm)))
        phase, w_phase = float(pm[index][0]), float(wc[index][0])
    stab = float(np.min(sm)) if sm.size else math.inf
    w_stab = float(wstab[sm == np.min(sm)][0]) if sm.size else math.nan
    return gain, phase, stab, w_gain, w_phase, w_stab


def _margin_reasons(values: Mapping[str, float], crossings: Mapping[str, Array]) -> dict[str, str]:
    """Why each infinite or undefined margin is so."""
    reasons = {}
    if not math.isfinite(values["gain_margin"]):
        reasons["gain_margin"] = ("L(jw) is real and negative at no frequency (no phase crossover: the exact "
                                  "crossings of Im L = 0): the gain margin is infinite" if not
                                  crossings["phase_crossovers"].size else
                                  "|L| = 0 at the phase crossover: the gain margin is infinite")
        reasons["gain_margin_db"] = reasons["gain_margin"]
    if math.isnan(values["phase_crossover"]):
        reasons["phase_crossover"] = "the phase of L crosses -180 deg at no frequency"
    if not math.isfinite(values["phase_margin"]):
        reasons["phase_margin"] = "|L| crosses 1 (0 dB) at no w > 0: the phase margin is infinite"
    if math.isnan(values["gain_crossover"]):
        reasons["gain_crossover"] = "no frequency w > 0 where |L| = 1"
    if not math.isfinite(values["stability_margin_frequency"]):
        reasons["stability_margin_frequency"] = ("|1 + L| is smallest in the limit w -> inf (|1 + D|), reached at no "
                                                 "frequency")
    return reasons


def _crossings(loop: Loop, poles: NDArray[np.complex128], undamped: bool) -> dict[str, Array]:
    """Every crossing of ``loop`` (module docstring) in its own frequencies, as the arrays of :class:`Margins`; none
    of the phase when L is real at every frequency (``undamped``)."""
    phase = [] if undamped else [w for w in phase_crossings(loop) if loop.value(w).real <= 0.0]
    gain = level_crossings(loop, 1.0)
    closed = Loop(loop.A, loop.B, loop.C, loop.D + 1.0, loop.dt)  # 1 + L
    hints = [*phase, *gain, *(abs(float(z.imag)) for z in poles)]
    _, where, minima = smallest_value(closed, [w for w in hints if math.isfinite(w)])
    with np.errstate(divide="ignore"):
        found = {"gain_margins": [1.0 / abs(loop.value(w)) for w in phase],
                 "phase_margins": [float(np.remainder(np.angle(loop.value(w), deg=True), 360.0) - 180.0) for w in gain],
                 "stability_margins": [abs(closed.value(w)) for w in minima],
                 "phase_crossovers": [loop.frequency(w) for w in phase],
                 "gain_crossovers": [loop.frequency(w) for w in gain],
                 "stability_margin_frequencies": [loop.frequency(w) for w in minima]}
    if not math.isfinite(where):  # |1 + L| smallest in the limit w -> inf
        found["stability_margins"].append(abs(closed.D))
        found["stability_margin_frequencies"].append(math.inf)
    arrays = {key: np.array(found[key], dtype=float) for key in _KEYS}
    for array in arrays.values():
        array.setflags(write=False)
    return arrays


def margins(system: Any, *, input: str | None = None, output: str | None = None) -> Margins:
    """Gain, phase and stability margins of the loop L from ``input`` to ``output`` (SISO), from its exact
    crossings.

    Parameters
    ----------
    system
        A LinearSystem (continuous or discrete time) that *is* the loop transfer L: a diagram broken at a
        connection (``robodyn.linearize(diagram, x, u, open="block.port")``) or a loop built by hand. For a plant
        the numbers are those of a unity-feedback loop the model does not have.
    input, output
        The loop's input and output names; needed when the system has several.

    Returns
    -------
    Margins
        python-control's ``stability_margins`` where its crossings are real ones; an open loop that is not
        stable gets a note (the margins alone then do not tell closed-loop stability).

    Raises
    ------
    InputError
        The loop is not named; NumericalError: a discrete-time pole at z = -1.
    """
    linear = as_linear(system, "margins")
    i, j = _siso(linear, input, output)
    crossings, undamped, notes = _kept_crossings(linear, i, j)
    gm, pm, sm, wpc, wgc, wms = _select(*(crossings[key] for key in _KEYS))
    if undamped:
        gm = math.nan
    with np.errstate(divide="ignore"):
        values = {"gain_margin": gm, "gain_margin_db": float(20.0 * np.log10(gm)), "phase_margin": pm,
                  "phase_crossover": wpc, "gain_crossover": wgc, "stability_margin": sm,
                  "stability_margin_frequency": wms}
    reasons = _margin_reasons(values, crossings)
    if undamped:
        reasons["gain_margin"] = reasons["gain_margin_db"] = reasons["phase_crossover"] = UNDAMPED
    return Margins(linear.inputs[j], linear.outputs[i], **values, crossings=MappingProxyType(crossings),
                   reasons=MappingProxyType(reasons), notes=tuple(notes), dt=linear.dt)


def _loop_crossings(linear: StateSpace, i: int, j: int) -> tuple[dict[str, Array], bool, list[str]]:
    """The crossings of the loop from input ``j`` to output ``i`` (:func:`_crossings`), whether L is real at every
    frequency, and the notes (an open loop that is not stable)."""
    loop = Loop.of(linear.A, linear.B[:, j], linear.C[i], float(linear.D[i, j]), linear.dt)
    undamped = real_everywhere(loop)
    notes = []
    verdict = modes(linear)
    if verdict.stability != "asymptotically stable":
        notes.append(f"the open loop is {verdict.stability} ({verdict.explanation}): the margins alone do not tell "
                     "closed-loop stability; use the Nyquist criterion or the modes of the closed loop")
    return _crossings(loop, np.asarray(np.linalg.eigvals(loop.A), dtype=np.complex128), undamped), undamped, notes


def _kept_crossings(linear: StateSpace, i: int, j: int) -> tuple[dict[str, Array], bool, list[str]]:
    """:func:`_loop_crossings`, kept in the private cache (robodyn.codegen.kept) by the loop's bytes (A, its column
    of B, row of C, entry of D, dt, the names), robodyn's code and numpy's and scipy's versions: refining the
    crossings and the modes' verdict import scipy, half a second of a command that a second ``linearize --open`` of
    the same loop need not pay. The arrays come back bit for bit (JSON keeps a float's shortest repr; non-finite
    values as the text ``inf``, ``-inf``, ``nan``). ``ROBODYN_KEPT=0`` computes them every time."""
    from robodyn.base.digest import sha256
    from robodyn.codegen.kept import code_fingerprint, enabled, kept, library_stamp

    if not enabled():
        return _loop_crossings(linear, i, j)

    def computed() -> dict[str, Any]:
        arrays, undamped, notes = _loop_crossings(linear, i, j)
        return {"undamped": undamped, "notes": notes,
                **{key: [_plain(v) for v in arrays[key].tolist()] for key in _KEYS}}

    digest = sha256(repr((linear.A.shape, linear.dt, linear.states)).encode())
    for matrix in (linear.A, linear.B[:, j], linear.C[i], linear.D[i, j:j + 1]):
        digest.update(np.ascontiguousarray(matrix, dtype=np.float64).tobytes())
    value = kept("results", "crossings", (digest.hexdigest(), code_fingerprint(), library_stamp("numpy", "scipy")),
                 computed, _is_kept, MAX_KEPT_BYTES)
    arrays = {key: np.array([_float(v) for v in value[key]], dtype=np.float64) for key in _KEYS}
    for array in arrays.values():
        array.setflags(write=False)
    return arrays, value["undamped"], list(value["notes"])


MAX_KEPT_BYTES = 4 * 2**20  # a loop's kept crossings (~1 kB for a PID loop)
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _plain(value: float) -> float | str:
    """A float as JSON data: itself, or ``inf``, ``-inf``, ``nan`` as text (JSON has none of them)."""
    if math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"


def _float(value: float | str) -> float:
    return _NON_FINITE[value] if isinstance(value, str) else float(value)


def _is_kept(value: Any) -> bool:
    """Whether ``value`` is kept crossings: ``undamped`` a bool, ``notes`` a list of text and each of the six arrays
    a list of floats (or ``inf``, ``-inf``, ``nan``)."""
    return (isinstance(value, dict) and set(value) == {"undamped", "notes", *_KEYS} and type(value["undamped"]) is bool
            and isinstance(value["notes"], list) and all(isinstance(note, str) for note in value["notes"])
            and all(isinstance(value[key], list) and all(
                type(v) is float or (isinstance(v, str) and v in _NON_FINITE) for v in value[key]) for key in _KEYS))
