"""The FMI 2.0 wrapper (robodyn.export.fmi2_c): it compiles under gcc's strictest C99 flags (and clang's where
installed), the binary exports exactly the standard's fmi2 functions, and it refuses what the standard says it must
(a foreign GUID, the other kind of unit, value references it does not have) through FMPy's calls."""

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
#: FMI 2.0.4, sections 2.1, 3.2.2 and 4.2.2: every function a unit of both kinds defines.
FMI2_FUNCTIONS = frozenset("""fmi2GetTypesPlatform fmi2GetVersion fmi2SetDebugLogging fmi2Instantiate fmi2FreeInstance
fmi2SetupExperiment fmi2EnterInitializationMode fmi2ExitInitializationMode fmi2Terminate fmi2Reset fmi2GetReal
fmi2GetInteger fmi2GetBoolean fmi2GetString fmi2SetReal fmi2SetInteger fmi2SetBoolean fmi2SetString fmi2GetFMUstate
fmi2SetFMUstate fmi2FreeFMUstate fmi2SerializedFMUstateSize fmi2SerializeFMUstate fmi2DeSerializeFMUstate
fmi2GetDirectionalDerivative fmi2EnterEventMode fmi2NewDiscreteStates fmi2EnterContinuousTimeMode
fmi2CompletedIntegratorStep fmi2SetTime fmi2SetContinuousStates fmi2GetDerivatives fmi2GetEventIndicators
fmi2GetContinuousStates fmi2GetNominalsOfContinuousStates fmi2SetRealInputDerivatives fmi2GetRealOutputDerivatives
fmi2DoStep fmi2CancelStep fmi2GetStatus fmi2GetRealStatus fmi2GetIntegerStatus fmi2GetBooleanStatus
fmi2GetStringStatus""".split())


@pytest.fixture(scope="module")
def unit(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return export_fmu(robodyn.load("two_link_arm"), tmp_path_factory.mktemp("fmi2") / "arm.fmu")


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_the_sources_compile_strictly_and_export_only_fmi2(unit: Any, compiler: str, tmp_path: Path) -> None:
    """sources/ builds with ``-std=c99 -Wall -Wextra -Werror -pedantic``; the binary in the unit defines the 44
    functions of the standard and nothing else (the model's own functions are hidden)."""
    if shutil.which(compiler) is None:
        pytest.skip(f"no {compiler}")
    with zipfile.ZipFile(unit.path) as archive:
        archive.extractall(tmp_path)
    p = unit.model_identifier
    sources = [str(tmp_path / "sources" / f"{p}.c"), str(tmp_path / "sources" / f"{p}_fmi2.c")]
    done = subprocess.run([compiler, *STRICT, *sources, "-o", str(tmp_path / "strict.so"), "-lm"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    symbols = subprocess.run(["nm", "-D", "--defined-only", str(tmp_path / "binaries" / "linux64" / f"{p}.so")],
                             capture_output=True, text=True, check=True).stdout
    assert {line.split()[-1] for line in symbols.splitlines() if " T " in line} == FMI2_FUNCTIONS


def test_instantiation_checks_the_guid_and_the_kind(unit: Any) -> None:
    """fmi2Instantiate returns NULL (FMPy raises) for a GUID that is not the unit's and for co-simulation on a
    model-exchange unit, after telling the logger why."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Model, FMU2Slave

    description = read_model_description(str(unit.path))
    folder = extract(str(unit.path))
    messages: list[bytes] = []

    def logger(component: Any, instance: Any, status: Any, category: Any, message: Any) -> None:
        messages.append(message)

    for cls, guid in ((FMU2Model, "{00000000-0000-0000-0000-000000000000}"), (FMU2Slave, description.guid)):
        model = cls(guid=guid, unzipDirectory=folder, modelIdentifier=unit.model_identifier, instanceName="x",
                    fmiCallLogger=None)
        with pytest.raises(Exception, match="Failed to instantiate"):
            model.instantiate(loggingOn=True)
        model.freeLibrary()


def test_value_references_it_does_not_have_are_errors(unit: Any) -> None:
    """Setting an output or a derivative, reading beyond the last variable, a directional derivative whose known is
    a parameter: fmi2Error (FMPy raises its FMICallException); the unit stays usable."""
    from fmpy import extract, read_model_description
    from fmpy.fmi1 import FMICallException
    from fmpy.fmi2 import FMU2Model

    description = read_model_description(str(unit.path))
    model = FMU2Model(guid=description.guid, unzipDirectory=extract(str(unit.path)),
                      modelIdentifier=unit.model_identifier, instanceName="x")
    model.instantiate()
    refs = value_references(4, 2, 4, 6)
    for call in (lambda: model.setReal([refs.outputs], [1.0]), lambda: model.setReal([refs.derivatives], [1.0]),
                 lambda: model.getReal([refs.end]),
                 lambda: model.getDirectionalDerivative([refs.derivatives], [refs.parameters], [1.0]),
                 lambda: model.getDirectionalDerivative([refs.states], [refs.states], [1.0])):
        with pytest.raises(FMICallException):
            call()
    assert model.getReal([refs.parameters]) == [2.0]  # m1 of the two-link arm
    model.freeInstance()
