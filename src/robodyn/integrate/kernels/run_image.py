"""A warm run's image: one adaptive run of a cached model, written down so that a new process repeats it without numpy.

A warm ``robodyn simulate MODEL --t-final T --out x.csv`` spends most of its start-up importing what prepares the
kernel's call (numpy alone is two thirds of it: 393 of 590 million instructions), while the call itself — the
adaptive kernel's C entry, the model's functions, both opened from shared libraries — takes microseconds. After such
a run the command line keeps its *image* (:func:`remember`): everything the entry's two blocks hold, with every
address replaced by where it comes from, so that the quick path (:mod:`robodyn.cli.quick`) can call the entry with
``ctypes`` and the standard library alone (:func:`execute`).

What an image holds (JSON, in the private cache folder ``runs/``, keyed by the model's record key, the method and
:func:`fingerprint`):

- the entry's int block, each entry a linear form ``c0 + c_rows * rows + c_eval * n_eval`` of the number of output
  rows and of requested output times (the kernel's tables are placed in the run's one data block, ahead of
  everything whose size depends on them, so every place and shape is such a form: checked at a fourth point when
  the image is made). An array's address field is always a place in the data block (``-(bytes + 1)``,
  robodyn.integrate.kernels.entry), never an address;
- the tables' values (the method's coefficients, the inputs' tables) and where they go;
- where the model's functions and the entry come from: the keys of their cached objects (``ORIGINS`` of
  robodyn.codegen.libraries), opened again through robodyn.codegen.objects / libraries, which check every digest;
- the model's facts the run needs: its name, states, parameter values.

That is an image of kind ``adaptive``. A linear model's exact run keeps one of kind ``exact`` under the same key
(its generator and matrix exponentials: robodyn.integrate.paths.exact_image, :func:`remember_exact`); :func:`read_image`
checks each kind's fields, and the quick path runs each its own way.

Trust: an image is a cache file like a record (docs/dev/security.md): read under the cache's rules, its SHA-256
checked, every field's type checked, and every array place of its int block, at the sizes of this run, checked to lie
inside the data block allocated for it (from the entry's own argument table, robodyn.integrate.kernels.entry_arguments,
not from the image). It is keyed by :func:`fingerprint`, the digest of the sources that decide what a run image
means (the kernel templates, the entry, the tables, the layout): a changed kernel never runs an old image.
"""

from __future__ import annotations

import array
import ctypes
import json
import math
from pathlib import Path
from typing import Any, Final

from robodyn.base.digest import sha256
from robodyn.base.names import is_qualified_name
from robodyn.integrate.kernels.entry_arguments import leaves
from robodyn.integrate.paths import exact_image

__all__ = ["IMAGE_FORMAT", "QuickRun", "execute", "fingerprint", "image_key", "read_image", "remember",
           "remember_exact"]

IMAGE_FORMAT: Final = 2  # 2: images have a kind (adaptive, exact)
_FOLDER: Final = "runs"
MAX_IMAGE_BYTES: Final = 4 * 2**20  # a pendulum's image is ~3 kB
#: The sources whose code decides what an image means (robodyn/ relative): the kernels and their entry, the method
#: tables, the signals' tables, the layout and this module. Any change makes new images.
FINGERPRINT_FILES: Final = (
    "integrate/kernels/kernel_template.py", "integrate/kernels/implicit_template.py",
    "integrate/kernels/work_template.py", "integrate/kernels/module.py", "integrate/kernels/entry.py",
    "integrate/kernels/entry_arguments.py", "integrate/kernels/native.py", "integrate/kernels/run.py",
    "integrate/kernels/setup.py",
    "integrate/methods/tableaus.py", "integrate/methods/registry.py", "integrate/methods/families.py",
    "integrate/status.py",
    "integrate/kernels/run_image.py", "signals/kernel.py", "signals/kinds.py", "codegen/indirect.py",
    "codegen/llvm/pyir.py", "codegen/objects.py", "codegen/libraries.py",
    "linear/exact.py", "linear/exact_steps.py", "integrate/paths/exact_image.py",
    "signals/core.py",
)
_ROOT: Final = Path(__file__).resolve().parents[2]  # robodyn/
_ENTRY_TYPE: Final = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_SAMPLES: Final = ((64, 0), (65, 0), (64, 1))  # (rows, n_eval) where the linear forms are read off
_CHECK: Final = (71, 6)  # and where they are checked
_INTS: Final = 9  # counts (7), status, i_fail: read back after the call


def fingerprint() -> str:
    """SHA-256 of :data:`FINGERPRINT_FILES`' bytes (with the image format): what an image was made by."""
    digest = sha256(f"robodyn run image {IMAGE_FORMAT}".encode())
    for name in FINGERPRINT_FILES:
        data = (_ROOT / name).read_bytes()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def image_key(record_key: str, method: str) -> str:
    """The key of the image of ``method`` runs of the model whose record key is ``record_key``."""
    from robodyn.codegen.cache import content_hash

    return content_hash("robodyn run image", str(IMAGE_FORMAT), record_key, method, fingerprint())


def _path(key: str) -> Path:
    from robodyn.codegen.cache import cache_dir, own_folder

    return own_folder(cache_dir(numba_code=False) / _FOLDER) / f"{key}.json"


# --- made after a run ---------------------------------------------------------------------------------------
def remember(kernels: Any, record_key: str, method: str, facts: dict[str, Any], min_rtol: float) -> bool:
    """Keep the image of ``kernels``' last adaptive run (robodyn.integrate.kernels.native.NativeKernels) of the
    model whose record key is ``record_key``, run by ``method`` (the command line's, "" for the default).

    ``facts``: ``name``, ``method_name`` (the method that ran), ``states``, ``parameters`` (the values the run
    used), ``row_bytes`` (the full path's memory per output time) and ``hint`` (the least steps and share of
    rejected ones for which the stiffness hint looks: the quick path leaves such runs to the full one);
    ``min_rtol`` the least rtol the kernels take. Returns whether an image was written: not when a table, an
    address or a size of the run cannot be written down (a function compiled in this process, events, input
    breakpoints)."""
    from robodyn.codegen.libraries import ORIGINS

    last = getattr(kernels, "last_run", None)
    entry_key = getattr(kernels, "entry_keys", {}).get(last[0]) if last is not None else None
    if last is None or entry_key is None:
        return False
    variant, shared, (n, m, n_p, max_steps) = last
    fns, _, _, _, _, stops, ev_direction, _ = shared
    if stops.size or ev_direction.size or n != len(facts["states"]) or n_p != len(facts["parameters"]):
        return False
    functions = [None if int(a) == 0 else ORIGINS.get(int(a)) for a in fns.tolist()]
    if any(a != 0 and f is None for a, f in zip(fns.tolist(), functions)):
        return False  # compiled in this process (MCJIT): the next run's image
    try:
        layouts = {at: kernels.relocatable_layout(variant, shared, (n, m, n_p, at[1], at[0], 0, max_steps))
                   for at in (*_SAMPLES, _CHECK)}
    except ValueError:  # a table of another type
        return False
    values = {at: _numbers(layout) for at, layout in layouts.items()}
    forms = _linear_forms(values)
    if forms is None:
        return False
    first = layouts[_SAMPLES[0]]
    constants = [{"block": place.block, "values": table.ravel().tolist()} for place, table in first.constants]
    if not all(math.isfinite(v) for c in constants for v in c["values"]):
        return False
    tables = len(constants)
    image = {
        "format": IMAGE_FORMAT, "kind": "adaptive", "record": record_key, "method": method, "variant": variant,
        "entry": ["object", entry_key], "functions": functions, "rows": 64, "min_rtol": float(min_rtol),
        "name": facts["name"], "method_name": facts["method_name"], "states": list(facts["states"]),
        "parameters": [float(v) for v in facts["parameters"]], "row_bytes": int(facts["row_bytes"]),
        "hint": [int(facts["hint"][0]), float(facts["hint"][1])],
        "size": forms[0], "ints": forms[1:-tables], "at": forms[-tables:], "constants": constants,
        "fns": next(k for k, (_, table) in enumerate(first.constants) if table is fns),
    }
    return _write(record_key, method, image)


def remember_exact(record_key: str, method: str, facts: dict[str, Any], fields: dict[str, Any]) -> bool:
    """Keep the image of an exact run (robodyn.integrate.paths.exact_image) of the model whose record key is
    ``record_key``, run by ``method`` (the command line's, "" for the default).

    ``facts``: ``name``, ``states``, ``inputs``, ``constant`` (B's last column is the model's constant term),
    ``row_bytes``; ``fields``: the run's ``generator`` (rows), ``quantum`` (None for infinite) and ``entries``
    ([step length, exponential rows] it computed: robodyn.linear.exact.exact_transitions), merged with those of
    the image kept before. Returns whether it was written."""
    image = {"format": IMAGE_FORMAT, "kind": exact_image.KIND, "record": record_key, "method": method,
             "name": facts["name"], "states": list(facts["states"]), "inputs": list(facts["inputs"]),
             "constant": bool(facts["constant"]), "columns": len(facts["inputs"]) + bool(facts["constant"]),
             "row_bytes": int(facts["row_bytes"])}
    previous = read_image(record_key, method)
    image.update(exact_image.merged(fields, previous if previous is not None and previous["kind"] == exact_image.KIND
                                    else None))
    if exact_image.check(image) is not None:
        return False  # too large for the plain steps, or a non-finite exponential: the full path every time
    return _write(record_key, method, image)


def _write(record_key: str, method: str, image: dict[str, Any]) -> bool:
    from robodyn.codegen.cache import write_private

    text = json.dumps({"sha256": _digest(image), "image": image}, sort_keys=True).encode()
    return write_private(_path(image_key(record_key, method)), text)


def _numbers(layout: Any) -> list[int]:
    """The layout's data size, int block and its tables' element offsets in the data block, as one list."""
    at = [place.offset + (layout.floats if place.block == "i" else 0) for place, _ in layout.constants]
    return [layout.size, *layout.ints_block.tolist(), *at]


def _linear_forms(values: dict[tuple[int, int], list[int]]) -> list[list[int]] | None:
    """``[c0, c_rows, c_eval]`` of each number, read off at the three samples; None unless they give the numbers
    at the check point too (then the layout is not linear in the sizes and no image is made)."""
    base, more_rows, more_eval = (values[at] for at in _SAMPLES)
    (r, e), check = _SAMPLES[0], values[_CHECK]
    forms = []
    for v0, vr, ve, vc in zip(base, more_rows, more_eval, check, strict=True):
        cr, ce = vr - v0, ve - v0
        form = [v0 - cr * r - ce * e, cr, ce]
        if _at(form, *_CHECK) != vc:
            return None
        forms.append(form)
    return forms


def _at(form: list[int], rows: int, n_eval: int) -> int:
    return form[0] + form[1] * rows + form[2] * n_eval


def _digest(image: dict[str, Any]) -> str:
    return sha256(json.dumps(image, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


# --- read and run in a new process --------------------------------------------------------------------------
def read_image(record_key: str, method: str) -> dict[str, Any] | None:
    """The valid image for ``record_key`` and ``method``, or None (none yet; a damaged or edited one is moved aside
    and made again by the next full run)."""
    from robodyn.base.textfile import JsonLimitError, parse_json_limited
    from robodyn.codegen.cache import quarantine, read_trusted

    path = _path(image_key(record_key, method))
    data = read_trusted(path, MAX_IMAGE_BYTES)
    if data is None:
        return None
    try:
        wrapper = parse_json_limited(data, limit=MAX_IMAGE_BYTES)
        image = wrapper.get("image") if isinstance(wrapper, dict) else None
        problem = _problem(image, record_key, method) if isinstance(image, dict) else "not an image"
        if problem is None and wrapper.get("sha256") != _digest(image):  # type: ignore[arg-type]
            problem = "its content does not match its SHA-256"
    except JsonLimitError as exc:
        problem = f"not JSON: {exc}"
    if problem is not None:
        quarantine(path, problem)
        return None
    return image


def _problem(image: dict[str, Any], record_key: str, method: str) -> str | None:
    """What is wrong with the fields of ``image`` (types and counts), or None."""
    if (image.get("format"), image.get("record"), image.get("method")) != (IMAGE_FORMAT, record_key, method):
        return "an image of another format, model or method"
    if image.get("kind") == exact_image.KIND:
        return exact_image.check(image)
    if image.get("kind") != "adaptive":
        return "an image of an unknown kind"
    return _adaptive_problem(image)


def _adaptive_problem(image: dict[str, Any]) -> str | None:
    """What is wrong with the fields of an adaptive run's ``image``, or None."""
    def ints(value: Any, size: int | None = None) -> bool:
        return isinstance(value, list) and (size is None or len(value) == size) and all(
            type(v) is int for v in value)

    def form(value: Any) -> bool:
        return ints(value, 3)

    if image.get("variant") not in ("rk", "dop853") or not isinstance(image.get("name"), str) or not isinstance(
            image.get("method_name"), str):
        return "bad variant or names"
    hint = image.get("hint")
    if not (type(image.get("row_bytes")) is int and image["row_bytes"] > 0 and isinstance(hint, list) and len(hint)
            == 2 and type(hint[0]) is int and type(hint[1]) is float):
        return "bad facts"
    states, parameters = image.get("states"), image.get("parameters")
    if not (isinstance(states, list) and states and all(is_qualified_name(s) for s in states)
            and len(set(states)) == len(states)):
        return "bad states"
    if not (isinstance(parameters, list) and all(type(p) is float and math.isfinite(p) for p in parameters)):
        return "bad parameters"
    if not (type(image.get("min_rtol")) is float and 0.0 < image["min_rtol"] < 1.0):
        return "bad least rtol"
    if not (all(form(f) for f in image.get("ints", [None])) and form(image.get("size")) and type(image.get("rows"))
            is int and image["rows"] > 0):
        return "bad layout"
    constants, at = image.get("constants"), image.get("at")
    if not (isinstance(constants, list) and isinstance(at, list) and len(at) == len(constants) and all(
            form(a) for a in at) and all(isinstance(c, dict) and c.get("block") in ("f", "i") and isinstance(
            c.get("values"), list) for c in constants)):
        return "bad tables"
    if not all(all(type(v) is (float if c["block"] == "f" else int) for v in c["values"]) for c in constants):
        return "bad table values"
    fns = image.get("fns")
    if not (type(fns) is int and 0 <= fns < len(constants) and constants[fns]["block"] == "i"):
        return "bad function table"
    origins = [image.get("entry"), *image.get("functions", [])]
    if len(origins) != 1 + len(constants[fns]["values"]) or not all(
            o is None or (isinstance(o, list) and o and all(isinstance(w, str) for w in o)) for o in origins):
        return "bad origins"
    return None


class QuickRun:
    """What :func:`execute` gives back: the kernel's status and counts, and the output times and states."""

    __slots__ = ("nfev", "rejected", "seconds", "status", "steps", "t", "x")

    def __init__(self, status: int, counts: list[int], t: list[float], x: list[list[float]], seconds: float):
        self.status, self.t, self.x, self.seconds = status, t, x, seconds
        self.nfev, self.steps, self.rejected = counts[2], counts[3], counts[4]


def _address(origin: list[str] | None) -> int | None:
    """The function ``origin`` names, opened from its shared library (its digests checked), or None."""
    if origin is None:
        return 0
    if origin[0] == "object" and len(origin) == 2:
        from robodyn.codegen import objects

        return objects.load(origin[1])
    if origin[0] == "module" and len(origin) == 3:
        from robodyn.codegen.libraries import module_library_address

        return module_library_address(origin[1], origin[2])
    return None


def execute(image: dict[str, Any], x0: list[float], span: tuple[float, float], rtol: float, atol: float,
            t_eval: list[float]) -> QuickRun | None:
    """Run the image's kernel from ``x0`` over ``span`` (``t_eval`` the output times, or [] for the steps), or None
    when it cannot run here (a library that does not open, a place outside the block, events written)."""
    import time

    start = time.perf_counter()
    addresses = [_address(o) for o in [image["entry"], *image["functions"]]]
    if any(a is None for a in addresses) or not addresses[0]:
        return None
    seconds = time.perf_counter() - start
    entry = _ENTRY_TYPE(int(addresses[0] or 0))
    n = len(image["states"])
    scalars = {"t0": span[0], "t1": span[1], "rtol": max(rtol, image["min_rtol"]), "h0": 0.0, "h_max": math.inf}
    rows = len(t_eval) or image["rows"]
    while True:
        size = _at(image["size"], rows, len(t_eval))
        places = _places(image, [_at(f, rows, len(t_eval)) for f in image["ints"]], size)
        if places is None or places["x0s"][1] != [1, n] or places["t_eval"][1] != [len(t_eval)] \
                or places["ps"][1] != [1, len(image["parameters"])] or places["atol"][1] != [n]:
            return None
        block = (ctypes.c_double * (size + 2))()
        base = ctypes.addressof(block)
        base += base % 16  # the complex work arrays come first: 16-byte aligned (the block is 8-byte aligned)
        for where, table in zip(image["at"], image["constants"]):
            _put(base, _at(where, rows, len(t_eval)), table["values"], table["block"], size)
        fns_at = _at(image["at"][image["fns"]], rows, len(t_eval))
        _put(base, fns_at, addresses[1:], "i", size)
        for name, values in (("x0s", x0), ("ps", image["parameters"]), ("t_eval", t_eval), ("atol", [atol] * n)):
            _put(base, places[name][0], values, "f", size)
        int_block = array.array("q", places["ints"])
        float_block = array.array("d", (scalars[name] for name in places["floats"]))
        entry(int_block.buffer_info()[0], float_block.buffer_info()[0], base)
        counts = (ctypes.c_int64 * 7).from_address(base + 8 * places["counts"][0])[:]
        k = counts[0]
        if counts[1] != 0:  # events: the full path reports them
            return None
        if k <= places["out_ts"][1][1]:
            break
        rows = k
    status = (ctypes.c_int64 * 1).from_address(base + 8 * places["statuses"][0])[0]
    t = (ctypes.c_double * k).from_address(base + 8 * places["out_ts"][0])[:]
    flat = (ctypes.c_double * (k * n)).from_address(base + 8 * places["out_xs"][0])[:]
    return QuickRun(status, counts, t, [flat[i * n:(i + 1) * n] for i in range(k)], seconds)


def _put(base: int, at: int, values: list[Any], block: str, size: int) -> None:
    """Copy ``values`` (float64 or int64 by ``block``) to element ``at`` of the data block, inside its ``size``."""
    if not 0 <= at <= at + len(values) <= size:
        raise ValueError("a table outside the run's block")
    data = array.array("d" if block == "f" else "q", values)
    ctypes.memmove(base + 8 * at, data.buffer_info()[0], 8 * len(values))


def _places(image: dict[str, Any], ints: list[int], size: int) -> dict[str, Any] | None:
    """Each array argument's (element offset, dimensions) in a data block of ``size`` elements, by name, with the
    int block ``ints`` and the float scalars' names in order; None when the int block does not fit the entry's
    argument table or a place lies outside the block."""
    found: dict[str, Any] = {"ints": ints, "floats": []}
    k = 0
    for path, kind in leaves(image["variant"]):
        if kind == "f":  # the float block's scalars, in order
            found["floats"].append(path)
            continue
        if kind == "i":
            if k >= len(ints):
                return None
            found[path] = ints[k]
            k += 1
            continue
        if k + 4 > len(ints):
            return None
        field, dims = ints[k], ints[k + 1:k + 4]
        ndim, item = int(kind[1]), 16 if kind[0] == "c" else 8
        if field >= 0 or (-field - 1) % 8 or any(d < 0 for d in dims) or any(dims[ndim:]):
            return None  # an address (never in an image), a misaligned place, a negative or surplus dimension
        offset = (-field - 1) // 8
        if 8 * offset + item * math.prod(dims[:ndim]) > 8 * size:
            return None
        found[path] = (offset, dims[:ndim])
        k += 4
    if k != len(ints) or (found.get("first"), found.get("stop")) != (0, 1) or \
            found["floats"] != ["t0", "t1", "rtol", "h0", "h_max"]:
        return None
    return found
