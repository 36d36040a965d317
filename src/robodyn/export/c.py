"""A model's functions as standalone C99: ``P.h``, ``P.c``, a Makefile and a CMakeLists.txt (docs/export.md).

:func:`export_c` asks the model for its functions on one straight-line tape (the contract's
``exported_functions()``: robodyn.model.exported) and prints each as a static function of the tape's nodes
(robodyn.codegen.c_source) behind the public signatures of docs/export.md: ``P_f``, ``P_h``, ``P_linearize``
and, for rigid bodies, ``P_mass``, ``P_rnea``, ``P_aba``, ``P_com`` and ``P_fk_<frame>``. The code has no globals,
allocates nothing (work arrays on the stack), is re-entrant and needs only ``<math.h>``. With ``build=True`` the
library is compiled by the system's C compiler into the export's folder and bound by ctypes (:class:`CLibrary`).
"""

from __future__ import annotations

import ctypes
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import numpy as np

from robodyn.base.atomic import check_output_folder, write_files_atomic
from robodyn.base.errors import InputError, NumericalError
from robodyn.base.version import __version__
from robodyn.codegen.c_source import c_function, c_literal
from robodyn.codegen.cache import content_hash
from robodyn.codegen.libraries import c_compiler
from robodyn.codegen.llvm.tape import tape_data
from robodyn.codegen.text import c_comment
from robodyn.export.c_names import default_prefix, field_names, frame_functions, prefix_problem

__all__ = ["FUNCTIONS", "CExport", "CLibrary", "CSources", "c_sources", "export_c"]

#: The functions an export can hold (``fk`` stands for every frame's ``P_fk_<frame>``; ``step_rk4`` and
#: ``step_dopri5`` are one step of those methods on ``P_f``).
FUNCTIONS: Final = ("f", "h", "linearize", "mass", "rnea", "aba", "com", "fk", "step_rk4", "step_dopri5")
_STEPPERS: Final = ("step_rk4", "step_dopri5")
C_FLAGS: Final = ("-std=c99", "-O2", "-fPIC")


@dataclass(frozen=True)
class CExport:
    """What :func:`export_c` wrote: the folder, the prefix, the files and the functions (C names), the bound
    library when built, the ``P_params`` fields (in the model's parameter order) and the frames of the
    ``P_fk_<frame>`` functions (in their order). How the model's names became C names (robodyn.export.c_names):
    ``parameter_fields`` maps each parameter to its field, ``frame_functions`` each frame to its function."""

    directory: Path
    prefix: str
    files: tuple[Path, ...]
    functions: tuple[str, ...]
    library: CLibrary | None = None
    fields: tuple[str, ...] = ()
    frames: tuple[str, ...] = ()
    parameter_fields: Mapping[str, str] = field(default_factory=dict)
    frame_functions: Mapping[str, str] = field(default_factory=dict)


@dataclass
class CLibrary:
    """An export compiled into a shared library and bound by ctypes: each function takes and returns float64
    arrays (``params`` a parameter vector in the model's order, default the export's defaults);
    ``parameter_fields`` and ``frame_functions`` as in :class:`CExport`."""

    path: Path
    prefix: str
    sizes: dict[str, int]
    defaults: np.ndarray
    frames: tuple[str, ...]
    parameter_fields: Mapping[str, str] = field(default_factory=dict)
    frame_functions: Mapping[str, str] = field(default_factory=dict)
    _lib: Any = field(repr=False, default=None)

    def __post_init__(self) -> None:
        self._lib = ctypes.CDLL(str(self.path))

    def _call(self, name: str, *arrays: Any, sizes: Sequence[int]) -> list[np.ndarray]:
        function = getattr(self._lib, f"{self.prefix}_{name}")
        outputs = [np.zeros(s) for s in sizes]
        arguments = [a if isinstance(a, float) else np.ascontiguousarray(a, dtype=float).ctypes.data_as(
            ctypes.POINTER(ctypes.c_double)) for a in arrays]
        function.restype = None
        function(*[ctypes.c_double(a) if isinstance(a, float) else a for a in arguments],
                 *[o.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for o in outputs])
        return outputs

    def _p(self, params: Any) -> np.ndarray:
        return self.defaults if params is None else np.ascontiguousarray(params, dtype=float)

    def f(self, t: float, x: Any, u: Any, params: Any = None) -> np.ndarray:
        """x' ``(NX,)``."""
        return self._call("f", float(t), x, _vector(u), self._p(params), sizes=[self.sizes["NX"]])[0]

    def h(self, t: float, x: Any, u: Any, params: Any = None) -> np.ndarray:
        """y ``(NY,)``."""
        return self._call("h", float(t), x, _vector(u), self._p(params), sizes=[self.sizes["NY"]])[0]

    def linearize(self, t: float, x: Any, u: Any, params: Any = None) -> tuple[np.ndarray, ...]:
        """A, B, C, D."""
        nx, nu, ny = self.sizes["NX"], self.sizes["NU"], self.sizes["NY"]
        A, B, C, D = self._call("linearize", float(t), x, _vector(u), self._p(params),
                                sizes=[nx * nx, nx * nu, ny * nx, ny * nu])
        return A.reshape(nx, nx), B.reshape(nx, nu), C.reshape(ny, nx), D.reshape(ny, nu)

    def step_rk4(self, t: float, x: Any, u: Any, h: float, params: Any = None) -> np.ndarray:
        """One RK4 step of length ``h``: x(t + h) ``(NX,)``."""
        return self._call("step_rk4", float(t), x, _vector(u), self._p(params), float(h), sizes=[self.sizes["NX"]])[0]

    def step_dopri5(self, t: float, x: Any, u: Any, h: float, params: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """One Dormand-Prince 5(4) step: x(t + h) and the embedded error estimate (both ``(NX,)``)."""
        nx = self.sizes["NX"]
        xnext, error = self._call("step_dopri5", float(t), x, _vector(u), self._p(params), float(h), sizes=[nx, nx])
        return xnext, error

    def mass(self, q: Any, params: Any = None) -> np.ndarray:
        nq = self.sizes["NQ"]
        return self._call("mass", q, self._p(params), sizes=[nq * nq])[0].reshape(nq, nq)

    def rnea(self, q: Any, qd: Any, qdd: Any, params: Any = None) -> np.ndarray:
        return self._call("rnea", q, qd, qdd, self._p(params), sizes=[self.sizes["NQ"]])[0]

    def aba(self, q: Any, qd: Any, tau: Any, params: Any = None) -> np.ndarray:
        return self._call("aba", q, qd, tau, self._p(params), sizes=[self.sizes["NQ"]])[0]

    def com(self, q: Any, params: Any = None) -> np.ndarray:
        return self._call("com", q, self._p(params), sizes=[3])[0]

    def fk(self, frame: str, q: Any, params: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position (3,), rotation (3, 3), Jacobian (6, NQ) of ``frame`` (its function: ``frame_functions[frame]``)."""
        if frame not in self.frame_functions:
            raise InputError(f"fk: the library has no function for the frame {frame!r}: its frames are "
                             f"{', '.join(map(repr, self.frames)) or 'none'}", key="frames")
        nq = self.sizes["NQ"]
        suffix = self.frame_functions[frame].removeprefix(f"{self.prefix}_")
        position, rotation, jacobian = self._call(suffix, q, self._p(params), sizes=[3, 9, 6 * nq])
        return position, rotation.reshape(3, 3), jacobian.reshape(6, nq)


def _vector(u: Any) -> np.ndarray:
    return np.zeros(1) if u is None or np.size(u) == 0 else np.ascontiguousarray(u, dtype=float)


def export_c(model: Any, directory: str | Path, *, functions: Sequence[str] | None = None,
             frames: Sequence[str] | None = None, prefix: str | None = None, build: bool = False,
             source: str | Path | None = None) -> CExport:
    """Write ``model``'s functions as C99 into ``directory`` (see the module docstring and docs/export.md).

    Parameters
    ----------
    model
        A robodyn model with exportable functions (``model.exported_functions()``: chains, URDF robots, symbolic
        models).
    directory
        Created if missing; ``P.h``, ``P.c``, ``Makefile`` and ``CMakeLists.txt`` are written atomically.
    functions
        A subset of :data:`FUNCTIONS` (default: all the model has).
    frames
        The frames whose ``P_fk_<frame>`` to write (default: every frame the model has); naming frames implies
        ``fk``.
    prefix
        The C prefix P (default: the model's name made a safe C name: robodyn.export.c_names); the parameters'
        fields and the frames' functions are named by the same rule (``CExport.parameter_fields``,
        ``CExport.frame_functions``), the model's own names kept, escaped, in the header's comments.
    source
        The model file (or catalog name) the model was loaded from: its name and the sha256 of its text go in
        the header, so a controller's code names the file it came from (without it the header says the model
        came from Python).
    build
        Compile the library with the system's C compiler (``cc``, ``gcc`` or ``clang``; InputError when there is
        none) into ``directory`` and return it bound (``CExport.library``).
    """
    sources = c_sources(model, functions=functions, frames=frames, prefix=prefix, source=source)
    p, names = sources.prefix, sources.names
    folder = check_output_folder(directory, "export: cannot write")
    files = {f"{p}.h": sources.header, f"{p}.c": sources.code, "Makefile": _makefile(p), "CMakeLists.txt": _cmake(p)}
    write_files_atomic({folder / name: text for name, text in files.items()}, "export: cannot write")  # all or none
    library = _build(folder, p, model, sources.exported, names, sources.digest) if build else None
    return CExport(folder, p, tuple(folder / name for name in files), sources.public, library,
                   tuple(names.fields.values()), tuple(names.frames), dict(names.fields), dict(names.frames))


@dataclass(frozen=True)
class _Names:
    """The C names of an export: each parameter's ``P_params`` field, each written frame's ``P_fk_<frame>``."""

    fields: dict[str, str]
    frames: dict[str, str]


@dataclass(frozen=True)
class CSources:
    """The C texts of an export before they are written (:func:`c_sources`): the prefix P, ``P.h``, ``P.c``, the
    functions' hash, the public functions (C names), the model's exported functions (their tape) and the C names of
    its parameters and frames."""

    prefix: str
    header: str
    code: str
    digest: str
    public: tuple[str, ...]
    exported: Any
    names: _Names


def c_sources(model: Any, *, functions: Sequence[str] | None = None, frames: Sequence[str] | None = None,
              prefix: str | None = None, source: str | Path | None = None) -> CSources:
    """``P.h`` and ``P.c`` of ``model`` (the arguments and refusals of :func:`export_c`), checked, not written."""
    from robodyn.model.system import require_model

    require_model(model, "export_c")
    exported = model.exported_functions()
    if exported is None:
        raise InputError(f"export: model {model.name!r} ({model.kind}) has no straight-line functions to export: C "
                         "export covers chain files, URDF robots on a fixed base, symbolic models (first-order, "
                         "mechanical and Lagrangian files, the catalog) and continuous-time diagrams of them; "
                         "moving bases, closed chains, contacts and discrete-time or sampled models are not built "
                         "yet, and Python callables have no source to export",
                         key="model")
    available = [name for name in FUNCTIONS if name in exported.functions or (name == "fk" and exported.frames)
                 or (name in _STEPPERS and "f" in exported.functions)]
    if isinstance(functions, str):
        raise InputError(f"export: functions must be a list of names, got the string {functions!r}",
                         key="functions")
    chosen = available if functions is None else list(dict.fromkeys(functions))
    unknown = [name for name in chosen if name not in available]
    if unknown:
        raise InputError(f"export: {', '.join(unknown)} not available for {model.name!r}: choose from "
                         f"{', '.join(available)}", key="functions")
    exported = _with_frames(model, exported, frames)
    if frames is not None and "fk" not in chosen:
        chosen = [*chosen, "fk"]
    if any(name in _STEPPERS for name in chosen) and "f" not in chosen:
        chosen = ["f", *chosen]  # the steppers call P_f
    p = _prefix(model, prefix)
    names = _Names(field_names(model.parameters, p), frame_functions(exported.frames, p) if "fk" in chosen else {})
    header, code, digest = _texts(model, exported, chosen, p, names, _origin(source))
    return CSources(p, header, code, digest, tuple(_public_names(chosen, p, names)), exported, names)


def _prefix(model: Any, prefix: str | None) -> str:
    """The export's prefix P: ``prefix`` when it is safe (else an InputError naming why), or the model's name made
    one (robodyn.export.c_names)."""
    if prefix is None:
        return default_prefix(model.name)
    problem = prefix_problem(prefix) if isinstance(prefix, str) else "is not text"
    if problem is not None:
        raise InputError(f"export: prefix {prefix!r} is not a C identifier safe in C and C++: it {problem}; use "
                         "letters, digits and single _ (a letter first, not last), not a keyword or a standard macro",
                         key="prefix")
    return prefix


def _origin(source: str | Path | None) -> str:
    """The header's line on where the model came from: the file's name and the sha256 of its bytes (a catalog
    model's text), or that it was built in Python."""
    import hashlib

    from robodyn.files import catalog

    if source is None:
        return "model file: none (built in Python)"
    path = Path(source)
    if path.is_file():
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InputError(f"export: cannot read the model file {path}: {exc.strerror or exc}", key="source") \
                from None
        return f"model file: {path.name}, sha256 {hashlib.sha256(data).hexdigest()}"
    name = str(source)
    if name in catalog.FILE_MODELS:
        return f"model file: catalog:{name}, sha256 {hashlib.sha256(catalog.catalog_text(name).encode()).hexdigest()}"
    if name in catalog.CATALOG:
        return f"model file: none (catalog model {name!r} of robodyn {__version__})"
    raise InputError(f"export: source {name!r} is neither a file nor a catalog model: give the path the model was "
                     "loaded from", key="source")


def _with_frames(model: Any, exported: Any, frames: Sequence[str] | None) -> Any:
    """``exported`` with only the named frames (in the order given), each checked to exist."""
    if frames is None:
        return exported
    from dataclasses import replace

    from robodyn.base.names import did_you_mean

    known = list(exported.frames)
    if isinstance(frames, str) or not frames:
        raise InputError(f"export: frames must be a non-empty list of frame names, got {frames!r}", key="frames")
    for frame in frames:
        if frame not in exported.frames:
            listed = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
            raise InputError(f"export: frame {frame!r} does not exist in {model.name!r}{did_you_mean(frame, known)} "
                             f"(its frames: {listed or 'none'})", key="frames")
    return replace(exported, frames={frame: exported.frames[frame] for frame in frames})


def _public_names(chosen: Sequence[str], p: str, names: _Names) -> list[str]:
    public = [f"{p}_params_default"]
    for name in chosen:
        if name == "fk":
            public += list(names.frames.values())
        else:
            public.append(f"{p}_{name}")
    return public


def _texts(model: Any, exported: Any, chosen: Sequence[str], p: str, names: _Names,
           origin: str) -> tuple[str, str, str]:
    """The header, the source and the functions' hash. Text from the model (its name, kind and names, the file's
    name) is only in comments, escaped (robodyn.codegen.text.c_comment); its names are C names by ``names``."""
    nx, nu, ny, nq = model.n_states, model.n_inputs, model.n_outputs, len(exported.coordinates)
    fields = list(names.fields.values())
    defaults = [float(v) for v in model.parameters.values()]
    bodies: list[str] = []
    declarations: list[str] = []
    counter = 0

    def kernel(outputs: Sequence[Any]) -> str:
        nonlocal counter
        name = f"{p}_tape{counter}"
        counter += 1
        bodies.append(c_function(name, *tape_data(exported.tape, outputs)))
        return name

    params = ("    const double *pv = (const double *)0;\n    (void)p;" if not fields else
              f"    const double values[{len(fields)}] = {{{', '.join(f'p->{name}' for name in fields)}}};\n"
              "    const double *pv = values;")
    state = f"    double xv[{max(nx, 1)}] = {{0.0}};\n    int i;\n    for (i = 0; i < {nq}; ++i) xv[i] = q[i];\n"
    work = []
    for name in chosen:
        if name == "f":
            declarations.append(f"void {p}_f(double t, const double *x, const double *u, const {p}_params *p, "
                                "double *xdot);")
            work.append(f"void {p}_f(double t, const double *x, const double *u, const {p}_params *p, double *xdot)\n"
                        f"{{\n{params}\n    {kernel(exported.functions['f'])}(t, x, u, pv, x, xdot);\n}}\n")
        elif name == "h":
            declarations.append(f"void {p}_h(double t, const double *x, const double *u, const {p}_params *p, "
                                "double *y);")
            work.append(f"void {p}_h(double t, const double *x, const double *u, const {p}_params *p, double *y)\n"
                        f"{{\n{params}\n    {kernel(exported.functions['h'])}(t, x, u, pv, x, y);\n}}\n")
        elif name == "linearize":
            sizes = [nx * nx, nx * nu, ny * nx, ny * nu]
            total = sum(sizes)
            declarations.append(f"void {p}_linearize(double t, const double *x, const double *u, const {p}_params *p,"
                                "\n    double *A, double *B, double *C, double *D);")
            copies, start = [], 0
            for target, size in zip("ABCD", sizes):
                if size:
                    copies.append(f"    for (i = 0; i < {size}; ++i) {target}[i] = work[{start} + i];")
                else:
                    copies.append(f"    (void){target};")
                start += size
            work.append(f"void {p}_linearize(double t, const double *x, const double *u, const {p}_params *p,\n"
                        f"    double *A, double *B, double *C, double *D)\n{{\n{params}\n"
                        f"    double work[{max(total, 1)}];\n    int i;\n"
                        f"    {kernel(exported.functions['linearize'])}(t, x, u, pv, x, work);\n"
                        + "\n".join(copies) + "\n}\n")
        elif name == "mass":
            declarations.append(f"void {p}_mass(const double *q, const {p}_params *p, double *M);")
            work.append(f"void {p}_mass(const double *q, const {p}_params *p, double *M)\n{{\n{params}\n"
                        f"{state}    {kernel(exported.functions['mass'])}(0.0, xv, xv, pv, xv, M);\n}}\n")
        elif name == "com":
            declarations.append(f"void {p}_com(const double *q, const {p}_params *p, double *com);")
            work.append(f"void {p}_com(const double *q, const {p}_params *p, double *com)\n{{\n{params}\n"
                        f"{state}    {kernel(exported.functions['com'])}(0.0, xv, xv, pv, xv, com);\n}}\n")
        elif name in ("rnea", "aba"):
            third, result = ("qdd", "tau") if name == "rnea" else ("tau", "qdd")
            declarations.append(f"void {p}_{name}(const double *q, const double *qd, const double *{third}, "
                                f"const {p}_params *p, double *{result});")
            work.append(f"void {p}_{name}(const double *q, const double *qd, const double *{third}, "
                        f"const {p}_params *p, double *{result})\n{{\n{params}\n"
                        f"    double xv[{max(nx, 1)}];\n    const double uz[{max(nu, 1)}] = {{0.0}};\n    int i;\n"
                        f"    for (i = 0; i < {nq}; ++i) {{ xv[i] = q[i]; xv[{nq} + i] = qd[i]; }}\n"
                        f"    {kernel(exported.functions[name])}(0.0, xv, uz, pv, {third}, {result});\n}}\n")
        elif name in _STEPPERS:
            embedded = name == "step_dopri5"
            declarations.append(f"void {p}_{name}(double t, const double *x, const double *u, const {p}_params *p, "
                                f"double h,\n    double *xnext{', double *error' if embedded else ''});")
            work.append(_stepper(p, name, nx))
        else:  # fk
            for frame, outputs in exported.frames.items():
                c_name = names.frames[frame]
                declarations.append(f"void {c_name}(const double *q, const {p}_params *p, double *pos, double *rot, "
                                    f"double *J);  {c_comment(f'frame {frame}: 3, 3x3, 6xNQ')}")
                work.append(f"void {c_name}(const double *q, const {p}_params *p, double *pos, double *rot, "
                            f"double *J)\n{{\n{params}\n{state}"
                            f"    double work[{3 + 9 + 6 * nq}];\n"
                            f"    {kernel(outputs)}(0.0, xv, xv, pv, xv, work);\n"
                            f"    for (i = 0; i < 3; ++i) pos[i] = work[i];\n"
                            f"    for (i = 0; i < 9; ++i) rot[i] = work[3 + i];\n"
                            f"    for (i = 0; i < {6 * nq}; ++i) J[i] = work[12 + i];\n}}\n")
    digest = content_hash("robodyn C export", __version__, *bodies)
    listing = "\n".join(c_comment(f"{label}: {', '.join(items) or '(none)'}") for label, items in (
        ("states", model.states), ("inputs", model.inputs), ("outputs", model.outputs),
        ("parameters", [f"{n} = {v!r}" for n, v in zip(model.parameters, defaults)]),
        ("coordinates", exported.coordinates), ("frames", list(exported.frames))))
    struct = "\n".join(f"    double {member};" + ("" if member == name else f"  {c_comment(f'parameter {name}')}")
                       for name, member in names.fields.items()) or "    double unused_;  /* no parameters */"
    guard = f"{p.upper()}_H"
    header = "\n".join([
        c_comment(f"{p}.h: model '{model.name}' ({model.kind}) as C99, generated by robodyn {__version__}. Do not "
                  "edit."),
        c_comment(origin), f"/* functions' hash: sha256 {digest} */", f"#ifndef {guard}", f"#define {guard}", "",
        "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
        f"#define {p}_NX {nx}", f"#define {p}_NU {nu}", f"#define {p}_NY {ny}", f"#define {p}_NQ {nq}",
        f"#define {p}_NP {len(fields)}", "", listing, "",
        f"typedef struct {{\n{struct}\n}} {p}_params;", "", f"{p}_params {p}_params_default(void);",
        *declarations, "", "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""])
    initial = ", ".join(c_literal(v) for v in defaults) or "0.0"
    source = "\n".join([f"/* {p}.c: generated by robodyn {__version__} (see {p}.h). Do not edit. */",
                        "#include <math.h>", f'#include "{p}.h"', "", *bodies,
                        f"{p}_params {p}_params_default(void)\n{{\n    {p}_params p = {{{initial}}};\n"
                        "    return p;\n}\n",
                        *work])
    return header, source, digest


def _stepper(p: str, name: str, nx: int) -> str:
    """One explicit Runge-Kutta step of ``P_f`` from robodyn's tableau (robodyn.integrate.methods.tableaus): RK4, or
    Dormand-Prince 5(4) with the embedded error estimate h sum_i e_i k_i (x5 - x4, for the caller's step control)."""
    from robodyn.integrate.methods.tableaus import DOPRI5, RK4

    tableau = RK4 if name == "step_rk4" else DOPRI5
    stages = len(tableau.b)
    size = max(nx, 1)
    lines = [f"void {p}_{name}(double t, const double *x, const double *u, const {p}_params *p, double h,",
             f"    double *xnext{', double *error' if tableau.e is not None else ''})", "{",
             f"    double k[{stages}][{size}], xs[{size}];", "    int i;"]

    def weighted(weights: Sequence[float] | np.ndarray, upto: int) -> str:
        terms = [f"{c_literal(float(w))} * k[{j}][i]" for j, w in enumerate(weights[:upto]) if w != 0.0]
        return " + ".join(terms) or "0.0"

    for i in range(stages):
        if i == 0:
            lines.append(f"    {p}_f(t, x, u, p, k[0]);")
            continue
        lines.append(f"    for (i = 0; i < {nx}; ++i) xs[i] = x[i] + h * ({weighted(tableau.A[i], i)});")
        lines.append(f"    {p}_f(t + {c_literal(float(tableau.c[i]))} * h, xs, u, p, k[{i}]);")
    lines.append(f"    for (i = 0; i < {nx}; ++i) xnext[i] = x[i] + h * ({weighted(tableau.b, stages)});")
    if tableau.e is not None:
        lines.append(f"    for (i = 0; i < {nx}; ++i) error[i] = h * ({weighted(tableau.e, stages)});")
    lines += ["}", ""]
    return "\n".join(lines)


def _makefile(p: str) -> str:
    return "\n".join([f"# Builds the static library lib{p}.a from {p}.c (generated by robodyn).",
                      "CC ?= cc", "CFLAGS ?= -std=c99 -O2 -Wall -Wextra -pedantic", "",
                      f"lib{p}.a: {p}.o", "\tar rcs $@ $^", "",
                      f"{p}.o: {p}.c {p}.h", "\t$(CC) $(CFLAGS) -c $< -o $@", "", "clean:",
                      f"\trm -f {p}.o lib{p}.a", "", ".PHONY: clean", ""])


def _cmake(p: str) -> str:
    return "\n".join(["cmake_minimum_required(VERSION 3.10)", f"project({p} C)", "set(CMAKE_C_STANDARD 99)",
                      f"add_library({p} STATIC {p}.c)",
                      f"target_include_directories({p} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})",
                      "find_library(MATH_LIBRARY m)", "if(MATH_LIBRARY)",
                      f"  target_link_libraries({p} PUBLIC ${{MATH_LIBRARY}})", "endif()", ""])


def compiler() -> str:
    """The system's C compiler (``cc``, ``gcc`` or ``clang`` on the PATH); InputError when there is none."""
    found = c_compiler()
    if found is not None:
        return found
    raise InputError("export: no C compiler found (cc, gcc or clang on the PATH): install one (Debian: apt install "
                     "gcc) or build the exported files elsewhere", key="build")


def _build(folder: Path, p: str, model: Any, exported: Any, names: _Names, digest: str) -> CLibrary:
    """Compile ``folder/P.c`` into ``folder/libP-<hash>.so`` and bind it (named by the functions' hash: a process
    that loaded one library keeps it, so a changed export must not reuse its name)."""
    target = folder / f"lib{p}-{digest[:16]}.so"
    command = [compiler(), *C_FLAGS, "-shared", str(folder / f"{p}.c"), "-o", str(target), "-lm"]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise NumericalError(f"export: the C compiler failed on {folder / (p + '.c')}: "
                             f"{done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    sizes = {"NX": model.n_states, "NU": model.n_inputs, "NY": model.n_outputs, "NQ": len(exported.coordinates)}
    return CLibrary(target, p, sizes, np.array([float(v) for v in model.parameters.values()]), tuple(names.frames),
                    dict(names.fields), dict(names.frames))
