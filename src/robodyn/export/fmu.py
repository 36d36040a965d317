"""A model as a Functional Mock-up Unit (FMI 2.0 or 3.0): ``robodyn export MODEL --lang fmu`` (docs/export.md, "FMU").

:func:`export_fmu` writes the model's C (robodyn.export.c: ``P_f``, ``P_h``, ``P_linearize``, ``P_step_rk4``), the
FMI wrapper over it (robodyn.export.fmi2_c, robodyn.export.fmi3_c), compiles both with the system's C compiler into
``binaries/<platform>/P.so``, describes the unit (robodyn.export.fmu_description) and zips ``modelDescription.xml``,
the binary and ``sources/`` into the ``.fmu``, written atomically once everything succeeded. The modelIdentifier is
the export's prefix; the GUID is a hash of what the unit computes and declares, so the same model gives the same
unit.
"""

from __future__ import annotations

import hashlib
import io
import math
import platform
import subprocess
import tempfile
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from robodyn.base.atomic import check_output_path, write_files_atomic
from robodyn.base.errors import InputError, NumericalError
from robodyn.base.version import __version__
from robodyn.export.c import c_sources, compiler
from robodyn.export.fmi2_c import fmi2_wrapper
from robodyn.export.fmi3_c import fmi3_wrapper
from robodyn.export.fmu_description import FmuVariable, Unit, fmu_variables, model_description, tape_dependencies

__all__ = ["FMI_VERSIONS", "FMU_KINDS", "FmuExport", "export_fmu"]

#: The FMI versions and kinds of unit :func:`export_fmu` writes (``me``: model exchange, ``cs``: co-simulation).
FMI_VERSIONS: Final = (2, 3)
FMU_KINDS: Final = ("me", "cs")
#: The default longest RK4 substep of a co-simulation unit's ``fmi2DoStep`` (``fmi3DoStep``), in seconds.
DEFAULT_STEP: Final = 1e-3
_FLAGS: Final = ("-std=c99", "-O2", "-fPIC", "-shared", "-fvisibility=hidden")
#: The binaries' folders (FMI 2.0 section 2.3, FMI 3.0 section 2.5.1.1) of the platforms units are built on.
_PLATFORMS: Final = {("Linux", "x86_64"): {2: "linux64", 3: "x86_64-linux"}}
_SUFFIX: Final = {"Linux": ".so"}


@dataclass(frozen=True, slots=True)
class FmuExport:
    """What :func:`export_fmu` wrote: the ``.fmu``'s ``path``, its ``model_identifier`` (the C prefix), the ``fmi``
    version, the ``kind`` (``me`` or ``cs``), the ``guid``, the co-simulation substep ``step`` and the unit's
    ``variables`` (robodyn.export.fmu_description.FmuVariable: name, value reference, causality, start, unit)."""

    path: Path
    model_identifier: str
    fmi: int
    kind: str
    guid: str
    step: float
    variables: tuple[FmuVariable, ...]


def _checked(fmi: Any, kind: Any, step: Any) -> tuple[int, str, float]:
    if fmi not in FMI_VERSIONS or isinstance(fmi, bool):
        raise InputError(f"export: FMI version {fmi!r} is not written: choose {', '.join(map(str, FMI_VERSIONS))}",
                         key="fmi")
    if kind not in FMU_KINDS:
        raise InputError(f"export: FMU kind {kind!r} is not known: choose me (model exchange) or cs (co-simulation)",
                         key="kind")
    if isinstance(step, bool) or not isinstance(step, (int, float)) or not math.isfinite(step) or step <= 0:
        raise InputError(f"export: the co-simulation step {step!r} is not a finite number > 0: give the longest RK4 "
                         "substep in seconds (default 1e-3)", key="step")
    return int(fmi), str(kind), float(step)


def _platform(fmi: int) -> tuple[str, str]:
    """The binaries' folder for this machine (FMI's platform name) and the shared library's suffix."""
    system, machine = platform.system(), platform.machine()
    folder = _PLATFORMS.get((system, machine), {}).get(fmi)
    if folder is None:
        raise InputError(f"export: FMUs are built for Linux on x86_64 only, and this machine is {system} on {machine}: "
                         "export the C (--lang c) and build it with the FMI headers there", key="lang")
    return folder, _SUFFIX[system]


def _refuse_sampled(model: Any) -> None:
    sampling = model.sampling()
    if sampling is not None:
        raise InputError(f"export: model {model.name!r} has sampled blocks (base period {sampling.base!r} s): an FMU "
                         "from robodyn holds continuous-time dynamics only (no clocks or discrete states); export the "
                         "continuous plant and close the sampled loop in the importing tool", key="model")


def export_fmu(model: Any, path: str | Path, *, fmi: int = 2, kind: str = "me", prefix: str | None = None,
               step: float = DEFAULT_STEP, source: str | Path | None = None) -> FmuExport:
    """Write ``model`` as an FMU at ``path`` (see the module docstring and docs/export.md, "FMU").

    Parameters
    ----------
    model
        A model with exported functions f, h and linearize (robodyn.export.c: chains, URDF robots on a fixed base,
        symbolic models, continuous-time diagrams of them).
    path
        The ``.fmu`` file, written atomically after the build succeeded.
    fmi
        The FMI version: 2 or 3 (3: ``Float64`` variables, the independent variable ``time``, the instantiation
        token for the GUID).
    kind
        ``"me"`` (model exchange: the importer integrates x' = f) or ``"cs"`` (co-simulation: ``fmiXDoStep``
        integrates with RK4 in equal substeps of at most ``step``, the inputs held over the step).
    prefix
        The modelIdentifier and C prefix (default: the model's name made a safe C name, robodyn.export.c_names).
    step
        The longest RK4 substep of co-simulation, seconds (> 0).
    source
        The model file, named with its sha256 in the C header (as :func:`robodyn.export_c`).
    """
    from robodyn.model.system import require_model

    require_model(model, "export_fmu")
    fmi, kind, step = _checked(fmi, kind, step)
    target = check_output_path(path, "export: cannot write")
    _refuse_sampled(model)
    folder, suffix = _platform(fmi)
    cc = compiler()  # before the model's C is made: a missing compiler is said at once
    c = c_sources(model, functions=["f", "h", "linearize", "step_rk4"], prefix=prefix, source=source)
    variables = fmu_variables(model)
    p, co_simulation = c.prefix, kind == "cs"
    wrapper_name = f"{p}_fmi{fmi}.c"
    sources = (f"{p}.c", wrapper_name)
    unit = Unit(p, fmi, co_simulation, model.name, "", step, sources, _dependencies(model, c.exported, variables))
    guid = _guid(c.digest, model_description(variables, unit))
    unit = replace(unit, guid=guid)
    wrapper = (fmi3_wrapper if fmi == 3 else fmi2_wrapper)(
        p, (model.n_states, model.n_inputs, model.n_outputs), list(c.names.fields.values()), guid=guid,
        co_simulation=co_simulation, max_step=step, starts=[v.start or 0.0 for v in variables if v.group == "state"])
    texts = {f"{p}.h": c.header, f"{p}.c": c.code, wrapper_name: wrapper}
    binary = _compile(cc, texts, p, sources, suffix)
    files = {"modelDescription.xml": model_description(variables, unit), f"binaries/{folder}/{p}{suffix}": binary,
             **{f"sources/{name}": text.encode() for name, text in texts.items()}}
    write_files_atomic({target: _zip(files)}, "export: cannot write")
    return FmuExport(target, p, fmi, kind, guid, step, variables)


def _dependencies(model: Any, exported: Any, variables: tuple[FmuVariable, ...]) -> dict[int, tuple[int, ...]]:
    """Each derivative's and output's dependencies as 1-based indices of states and inputs among ``variables``."""
    nx = model.n_states
    first_input = 2 * nx
    reads = tape_dependencies(exported.tape, [*exported.functions["f"], *exported.functions["h"]], nx)
    unknowns = [v for v in variables if v.group == "derivative"] + [v for v in variables if v.group == "output"]
    return {v.reference + 1: tuple(k + 1 if k < nx else first_input + (k - nx) + 1 for k in leaves)
            for v, leaves in zip(unknowns, reads)}


def _guid(digest: str, description: bytes) -> str:
    """A GUID from the functions' hash and the description: ``{8-4-4-4-12}`` hexadecimal digits."""
    h = hashlib.sha256(f"robodyn FMU {__version__}\n{digest}\n".encode() + description).hexdigest()
    return f"{{{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}}}"


def _compile(cc: str, texts: dict[str, str], p: str, sources: tuple[str, ...], suffix: str) -> bytes:
    """The shared library built from ``texts`` in a temporary folder by the C compiler ``cc``."""
    with tempfile.TemporaryDirectory(prefix="robodyn-fmu-") as work:
        folder = Path(work)
        for name, text in texts.items():
            (folder / name).write_text(text)
        library = folder / f"{p}{suffix}"
        command = [cc, *_FLAGS, *(str(folder / name) for name in sources), "-o", str(library), "-lm"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
            raise NumericalError(f"export: the C compiler failed on the FMU's sources: {last}")
        return library.read_bytes()


def _zip(files: dict[str, bytes]) -> bytes:
    """The ``.fmu``: a zip of ``files`` (deflated, fixed dates, the library executable), the same bytes each time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name.startswith("binaries/") else 0o644) << 16
            archive.writestr(info, data)
    return buffer.getvalue()
