"""The FMI 3.0 wrapper (robodyn.export.fmi3_c): it compiles under gcc's strictest C99 flags, the binary exports
exactly the standard's fmi3 functions, reads the time, and refuses what the standard says it must (a foreign
instantiation token, the other kind of unit, a value reference it does not have) through FMPy's calls."""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

import robodyn
from robodyn.export.fmi_common import value_references
from robodyn.export.fmu import export_fmu

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None, reason="no gcc or nm")
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-fPIC", "-shared"]
_TYPES = ("Float32", "Float64", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64", "Boolean",
          "String", "Binary", "Clock")
#: FMI 3.0.2, section 2.3: every function a unit defines.
FMI3_FUNCTIONS = frozenset("""fmi3GetVersion fmi3SetDebugLogging fmi3InstantiateModelExchange
fmi3InstantiateCoSimulation fmi3InstantiateScheduledExecution fmi3FreeInstance fmi3EnterInitializationMode
fmi3ExitInitializationMode fmi3EnterEventMode fmi3Terminate fmi3Reset fmi3GetNumberOfVariableDependencies
fmi3GetVariableDependencies fmi3GetFMUState fmi3SetFMUState fmi3FreeFMUState fmi3SerializedFMUStateSize
fmi3SerializeFMUState fmi3DeserializeFMUState fmi3GetDirectionalDerivative fmi3GetAdjointDerivative
fmi3EnterConfigurationMode fmi3ExitConfigurationMode fmi3GetIntervalDecimal fmi3GetIntervalFraction
fmi3GetShiftDecimal fmi3GetShiftFraction fmi3SetIntervalDecimal fmi3SetIntervalFraction fmi3SetShiftDecimal
fmi3SetShiftFraction fmi3EvaluateDiscreteStates fmi3UpdateDiscreteStates fmi3EnterContinuousTimeMode
fmi3CompletedIntegratorStep fmi3SetTime fmi3SetContinuousStates fmi3GetContinuousStateDerivatives
fmi3GetEventIndicators fmi3GetContinuousStates fmi3GetNominalsOfContinuousStates fmi3GetNumberOfEventIndicators
fmi3GetNumberOfContinuousStates fmi3EnterStepMode fmi3GetOutputDerivatives fmi3DoStep
fmi3ActivateModelPartition""".split()) | {f"fmi3{verb}{t}" for verb in ("Get", "Set") for t in _TYPES}


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return export_fmu(robodyn.load("two_link_arm"), tmp_path_factory.mktemp("fmi3") / "arm.fmu", fmi=3)


def test_the_sources_compile_strictly_and_export_only_fmi3(unit: Any, tmp_path: Path) -> None:
    """sources/ builds with ``-std=c99 -Wall -Wextra -Werror -pedantic``; the binary in the unit defines the
    standard's functions and nothing else."""
    with zipfile.ZipFile(unit.path) as archive:
        archive.extractall(tmp_path)
    p = unit.model_identifier
    sources = [str(tmp_path / "sources" / f"{p}.c"), str(tmp_path / "sources" / f"{p}_fmi3.c")]
    done = subprocess.run(["gcc", *STRICT, *sources, "-o", str(tmp_path / "strict.so"), "-lm"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(tmp_path / "binaries" / "x86_64-linux" / f"{p}.so")],
                             capture_output=True, text=True, check=True).stdout
    assert {line.split()[-1] for line in symbols.splitlines() if " T " in line} == FMI3_FUNCTIONS


def _model(unit: Any, token: str | None = None) -> Any:
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Model

    description = read_model_description(str(unit.path))
    return FMU3Model(guid=token or description.guid, unzipDirectory=extract(str(unit.path)),
                     modelIdentifier=unit.model_identifier, instanceName="x")


def test_instantiation_checks_the_token_and_the_kind(unit: Any) -> None:
    """fmi3InstantiateModelExchange returns NULL (FMPy raises) for a token that is not the unit's;
    fmi3InstantiateCoSimulation on a model-exchange unit too."""
    from fmpy import extract, read_model_description
    from fmpy.fmi3 import FMU3Slave

    model = _model(unit, "{00000000-0000-0000-0000-000000000000}")
    with pytest.raises(Exception, match="Failed to instantiate"):
        model.instantiate()
    slave = FMU3Slave(guid=read_model_description(str(unit.path)).guid, unzipDirectory=extract(str(unit.path)),
                      modelIdentifier=unit.model_identifier, instanceName="x")
    with pytest.raises(Exception, match="Failed to instantiate"):
        slave.instantiate()


def test_time_reads_and_bad_references_are_errors(unit: Any) -> None:
    """The independent variable ``time`` (the reference after the parameters) reads the time set; setting an output,
    reading beyond ``time``, and a directional derivative in a parameter are fmi3Error (FMPy raises)."""
    from fmpy.fmi1 import FMICallException

    model = _model(unit)
    model.instantiate()
    model.enterInitializationMode(startTime=0.25)
    model.exitInitializationMode()
    refs = value_references(4, 2, 4, 6)
    assert model.getFloat64([refs.end]) == [0.25]
    model.setTime(1.5)
    assert model.getFloat64([refs.end, refs.parameters]) == [1.5, 2.0]  # m1 of the two-link arm
    for call in (lambda: model.setFloat64([refs.outputs], [1.0]), lambda: model.getFloat64([refs.end + 1]),
                 lambda: model.getDirectionalDerivative([refs.derivatives], [refs.parameters], [1.0])):
        with pytest.raises(FMICallException):
            call()
    model.terminate()
    model.freeInstance()
