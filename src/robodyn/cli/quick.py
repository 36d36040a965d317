"""The quick path of ``robodyn simulate``: a warm run repeated from its image, in a process without numpy.

``robodyn simulate MODEL --t-final T [--t0 T0] [--x0 NAME=VALUE,...] [--method M] [--rtol R] [--atol A]
[--points N] [--out FILE.csv | -]`` of a model file or catalog model whose run image exists
(:mod:`robodyn.integrate.kernels.run_image`: written by the full path after such a run) is done here: the image read and
checked, the kernel's entry and the model's functions opened from their shared libraries, the entry called through
``ctypes``, the CSV and the summary written by the full path's own functions (:mod:`robodyn.cli.run_output`; tests
compare the bytes). The process imports the standard library's ``ctypes``, ``json`` and ``re`` and a handful of
robodyn's modules: a third of the instructions of the full path, which imports numpy alone for two thirds of its own.

A linear model's image is its exact run's (:mod:`robodyn.integrate.paths.exact_image`): its steps are repeated in
Python's
floats from the kept matrix exponentials, and it also takes constant inputs, ``--input NAME=NUMBER``.

Everything else goes the full way: any other option or form of one (``--t-final=1``, ``pi``, ``--plot``, ...), a
value the full path would refuse or warn about, no image yet (the first run of a model, a new robodyn), a run that
fails, overflows, meets an event or may earn the stiffness hint. This module answers None and
:func:`robodyn.cli.main.main` runs as ever, so every message and exit code stays the full path's. ``ROBODYN_QUICK=0``
turns it off (as do ``ROBODYN_NATIVE=0`` and ``ROBODYN_LIBRARIES=0``, which ask for other machinery).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from typing import Any, Final

from robodyn.cli.run_output import Work, print_run, print_written, run_summary, write_csv

__all__ = ["quick_simulate"]

_OPTIONS: Final = frozenset({"--t-final", "--t0", "--x0", "--input", "--method", "--rtol", "--atol", "--points",
                             "--out"})
_REPEATED: Final = frozenset({"--x0", "--input"})
_COUNT: Final = re.compile(r"[0-9]+\Z")
_NEGATIVE: Final = re.compile(r"-[0-9]+\Z|-[0-9]*\.[0-9]+\Z")  # what argparse takes for a value, not an option
_MAX_ROW_BYTES: Final = 2**28  # the full path's results below this size need no memory check (guards.check_memory)
_EXACT_POINTS: Final = "1001"  # the exact path's output times without --points (robodyn.integrate.simulate)


def quick_simulate(argv: Sequence[str]) -> int | None:
    """``robodyn simulate`` with the arguments ``argv`` (after ``simulate``) by its run image: the exit code (0), or
    None when the full path must run (see the module's docstring). Never raises (``ROBODYN_DEBUG`` re-raises)."""
    if any(os.environ.get(name) == "0" for name in ("ROBODYN_QUICK", "ROBODYN_NATIVE", "ROBODYN_LIBRARIES")):
        return None
    try:
        return _simulate(list(argv))
    except Exception:  # the full path says what is wrong
        if os.environ.get("ROBODYN_DEBUG"):
            raise
        return None


def _simulate(argv: list[str]) -> int | None:
    given = _options(argv)
    if given is None or "model" not in given or "--t-final" not in given:
        return None
    from robodyn.base.names import plain_number
    from robodyn.files.loading import model_text
    from robodyn.files.records import model_record_key
    from robodyn.integrate.kernels.run_image import execute, read_image

    numbers: dict[str, float] = {"--t0": 0.0, "--rtol": 1e-6, "--atol": 1e-9}
    for option in ("--t-final", "--t0", "--rtol", "--atol"):
        if option in given:
            number = plain_number(given[option])
            if number is None:
                return None
            numbers[option] = number
    t0, t1, rtol, atol = (numbers[option] for option in ("--t0", "--t-final", "--rtol", "--atol"))
    if not (t1 > t0 and rtol > 0.0 and atol >= 0.0):  # plain numbers are finite
        return None
    out = given.get("--out")
    if out is not None and not _writable(out):
        return None
    found = model_text(given["model"])
    key = None if found is None else model_record_key(*found)
    if key is None:
        return None
    image = read_image(key, given.get("--method", "").lower())
    if image is None:
        return None
    states = image["states"]
    x0 = _initial(given.get("--x0", []), states)
    if x0 is None:
        return None
    if image["kind"] == "exact":
        return _exact(image, x0, given, (t0, t1), out)
    grid = _grid(given.get("--points"), t0, t1, image["row_bytes"])
    if grid is None or "--input" in given:
        return None
    run = execute(image, x0, (t0, t1), rtol, atol, grid)
    if run is None or run.status < 0 or not all(math.isfinite(v) for row in run.x for v in row):
        return None  # failed or overflowed: the full path's error
    least_steps, least_rejected = image["hint"]
    if run.steps >= least_steps and run.rejected >= least_rejected * run.steps:
        return None  # the stiffness hint may apply: the full path looks
    work = Work("compiled", image["method_name"], run.nfev, run.steps, run.rejected, run.seconds, from_cache=True)
    return _written(image, run.t, run.x, out, run_summary(work, run.t[0], run.t[-1], len(run.t)))


def _exact(image: dict[str, Any], x0: list[float], given: dict[str, Any], span: tuple[float, float],
           out: str | None) -> int | None:
    """A linear model's run from its exact image (robodyn.integrate.paths.exact_image), or None for the full path."""
    from robodyn.integrate.paths.exact_image import execute

    inputs = _inputs(given.get("--input", []), image["inputs"])
    times = _grid(given.get("--points", _EXACT_POINTS), *span, image["row_bytes"])
    if inputs is None or not times:
        return None
    x = execute(image, x0, inputs, span[0], times)
    if x is None or not all(math.isfinite(v) for row in x for v in row):
        return None  # an exponential not kept, or an overflow: the full path's error
    return _written(image, times, x, out, run_summary(Work("exact", "exact"), times[0], times[-1], len(times)))


def _written(image: dict[str, Any], t: list[float], x: list[list[float]], out: str | None, summary: str) -> int:
    """Write the CSV (to ``out`` or stdout) and print the summary, by the full path's functions
    (robodyn.cli.run_output); the exit code 0."""
    states = image["states"]
    if out is not None:
        write_csv(out, ["t", *states], ([time, *row] for time, row in zip(t, x)))
    if out == "-":
        return 0
    print_run(image["name"], summary, states, x[-1])
    print_written([out])
    return 0


def _options(argv: list[str]) -> dict[str, Any] | None:
    """The options of ``argv`` the quick path takes (``model`` the positional), or None for anything else: another
    option, an option's ``=`` form or abbreviation, a single option repeated, a missing value."""
    given: dict[str, Any] = {}
    k = 0
    while k < len(argv):
        word = argv[k]
        if word in _OPTIONS:
            if k + 1 == len(argv):
                return None
            value = argv[k + 1]
            if value.startswith("-") and value != "-" and not _NEGATIVE.match(value):
                return None  # argparse takes it for an option
            if word in _REPEATED:
                given.setdefault(word, []).append(value)
            elif word in given:
                return None
            else:
                given[word] = value
            k += 2
        elif word.startswith("-") or "model" in given:
            return None
        else:
            given["model"] = word
            k += 1
    return given


def _writable(out: str) -> bool:
    """Whether ``--out`` names what the full path writes without complaint: ``-`` or a creatable ``.csv`` file."""
    if out == "-":
        return True
    if not out.strip() or os.path.splitext(out)[1].lower() != ".csv":
        return False
    from robodyn.base.atomic import check_output_path
    from robodyn.base.errors import InputError

    try:
        check_output_path(out, "--out")
    except InputError:
        return False
    return True


def _initial(texts: list[str], states: list[str]) -> list[float] | None:
    """The initial state of ``--x0 NAME=VALUE,...`` options (others 0), or None for anything but plain numbers
    given once each to known states, and for a value beyond a turn (the full path warns when the state is an angle
    in rad, robodyn.model.quantities.in_units; a value in degrees is not a plain number)."""
    from robodyn.base.names import TURN, plain_number

    values: dict[str, float] = {}
    for text in texts:
        if "(" in text or ")" in text:
            return None
        for part in (p.strip() for p in text.split(",")):
            name, sep, value = part.partition("=")
            number = plain_number(value) if sep else None
            if not part or number is None or name.strip() not in states or name.strip() in values \
                    or abs(number) > TURN:
                return None
            values[name.strip()] = number
    return [values.get(name, 0.0) for name in states]


def _inputs(texts: list[str], names: list[str]) -> list[float] | None:
    """The constant inputs of ``--input NAME=NUMBER`` options, one each (others 0), or None for anything else: a
    signal, an unknown input, one given twice (the full path reads the signal or words the error)."""
    from robodyn.base.names import plain_number

    values: dict[str, float] = {}
    for text in texts:
        name, _, value = text.partition("=")
        number = plain_number(value)
        if number is None or name.strip() not in names or name.strip() in values:
            return None
        values[name.strip()] = number
    return [values.get(name, 0.0) for name in names]


def _grid(points: str | None, t0: float, t1: float, row_bytes: int) -> list[float] | None:
    """``--points`` evenly spaced times from t0 to t1 as numpy's ``linspace`` makes them (``i * step + t0``, the
    last ``t1``): [] without the option; None for a count the full path refuses or checks memory for."""
    if points is None:
        return []
    if not _COUNT.match(points):
        return None
    count = int(points)
    if count < 2 or count * row_bytes >= _MAX_ROW_BYTES:
        return None
    step = (t1 - t0) / (count - 1)
    if step == 0.0:
        return None
    grid = [float(i) * step + t0 for i in range(count)]
    grid[-1] = t1
    return grid
