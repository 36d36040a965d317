"""The FMI 2.0 wrapper of an exported model: C99 implementing the fmi2 API over ``P.c`` (docs/export.md, "FMU").

The FMI 2.0 standard (modelica/fmi-standard, ``fmi2TypesPlatform.h``, ``fmi2FunctionTypes.h`` and the specification,
sections 2.1, 3.2 and 4.2) fixes the types and the functions' names and signatures; the wrapper declares the types
it needs itself, so ``sources/`` builds with nothing but a C compiler. Every function of the standard is defined,
on the work of robodyn.export.fmi_common: model exchange (states, derivatives, no event indicators, nominals 1),
co-simulation (``fmi2DoStep`` by RK4 substeps), the directional derivatives from the exact Jacobians. What the unit
does not do (FMU states, serialization, input derivatives) answers ``fmi2Error`` with a message to the logger.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Final

from robodyn.codegen.text import c_identifier
from robodyn.export.fmi_common import instance_source

__all__ = ["fmi2_wrapper"]

_TYPES: Final = r"""
/* The FMI 2.0 types (fmi2TypesPlatform.h, fmi2FunctionTypes.h of the standard), declared here. */
typedef void *fmi2Component;
typedef void *fmi2ComponentEnvironment;
typedef void *fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char *fmi2String;
typedef char fmi2Byte;
#define fmi2True 1
#define fmi2False 0
typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;
typedef enum { fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated } fmi2StatusKind;
typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String, fmi2String, ...);
typedef void *(*fmi2CallbackAllocateMemory)(size_t, size_t);
typedef void (*fmi2CallbackFreeMemory)(void *);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment, fmi2Status);
typedef struct {
    const fmi2CallbackLogger logger;
    const fmi2CallbackAllocateMemory allocateMemory;
    const fmi2CallbackFreeMemory freeMemory;
    const fmi2StepFinished stepFinished;
    const fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;
typedef struct {
    fmi2Boolean newDiscreteStatesNeeded;
    fmi2Boolean terminateSimulation;
    fmi2Boolean nominalsOfContinuousStatesChanged;
    fmi2Boolean valuesOfContinuousStatesChanged;
    fmi2Boolean nextEventTimeDefined;
    fmi2Real nextEventTime;
} fmi2EventInfo;

#if defined(__GNUC__) || defined(__clang__)
#define FMI_EXPORT __attribute__((visibility("default")))
#else
#define FMI_EXPORT
#endif
"""

_SAY: Final = ('    if (m->logger) m->logger(m->environment, m->name, fmi2Error, "logStatusError", "%s", message);')

_FUNCTIONS: Final = r"""
#define KIND $kind
#define STATUS(failed) ((failed) ? fmi2Error : fmi2OK)

FMI_EXPORT const char *fmi2GetTypesPlatform(void) { return "default"; }
FMI_EXPORT const char *fmi2GetVersion(void) { return "2.0"; }

FMI_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String categories[])
{
    (void)c; (void)on; (void)n; (void)categories;
    return fmi2OK;
}

FMI_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                         const fmi2CallbackFunctions *functions, fmi2Boolean visible,
                                         fmi2Boolean logging)
{
    Instance *m;
    (void)resources; (void)visible; (void)logging;
    if (!functions) return NULL;
    if (!name || !guid || strcmp(guid, TOKEN) != 0 || (int)type != KIND) {
        if (functions->logger)
            functions->logger(functions->componentEnvironment, name ? name : "?", fmi2Error, "logStatusError", "%s",
                              !guid || strcmp(guid, TOKEN) != 0 ? "the GUID is not this unit's: check the FMU"
                              : "this unit is not of the kind asked for (see its modelDescription.xml)");
        return NULL;
    }
    m = create(name, functions->allocateMemory ? functions->allocateMemory : calloc,
               functions->freeMemory ? functions->freeMemory : free);
    if (!m) return NULL;
    m->logger = functions->logger;
    m->environment = functions->componentEnvironment;
    return m;
}

FMI_EXPORT void fmi2FreeInstance(fmi2Component c) { destroy((Instance *)c); }

FMI_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                                          fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    (void)toleranceDefined; (void)tolerance; (void)stopTimeDefined; (void)stopTime;
    ((Instance *)c)->t = startTime;
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
FMI_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
FMI_EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
FMI_EXPORT fmi2Status fmi2Reset(fmi2Component c) { defaults((Instance *)c); return fmi2OK; }

FMI_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[])
{ return STATUS(get_values((Instance *)c, vr, n, value)); }
FMI_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real value[])
{ return STATUS(set_values((Instance *)c, vr, n, value)); }

static fmi2Status none(fmi2Component c, size_t n, const char *message)
{
    if (n == 0) return fmi2OK;
    say((Instance *)c, message);
    return fmi2Error;
}

static fmi2Status unsupported(fmi2Component c, const char *message)
{
    if (c) say((Instance *)c, message);
    return fmi2Error;
}
FMI_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer value[])
{ (void)vr; (void)value; return none(c, n, "fmi2GetInteger: the unit has no Integer variables"); }
FMI_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean value[])
{ (void)vr; (void)value; return none(c, n, "fmi2GetBoolean: the unit has no Boolean variables"); }
FMI_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String value[])
{ (void)vr; (void)value; return none(c, n, "fmi2GetString: the unit has no String variables"); }
FMI_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     const fmi2Integer value[])
{ (void)vr; (void)value; return none(c, n, "fmi2SetInteger: the unit has no Integer variables"); }
FMI_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                     const fmi2Boolean value[])
{ (void)vr; (void)value; return none(c, n, "fmi2SetBoolean: the unit has no Boolean variables"); }
FMI_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String value[])
{ (void)vr; (void)value; return none(c, n, "fmi2SetString: the unit has no String variables"); }

FMI_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *state)
{ (void)state; return unsupported(c, "fmi2GetFMUstate: canGetAndSetFMUstate is false"); }
FMI_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state)
{ (void)state; return unsupported(c, "fmi2SetFMUstate: canGetAndSetFMUstate is false"); }
FMI_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *state)
{ (void)state; return unsupported(c, "fmi2FreeFMUstate: canGetAndSetFMUstate is false"); }
FMI_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t *size)
{ (void)state; (void)size; return unsupported(c, "fmi2SerializedFMUstateSize: canSerializeFMUstate is false"); }
FMI_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[], size_t size)
{ (void)state; (void)bytes; (void)size; return unsupported(c, "fmi2SerializeFMUstate: canSerializeFMUstate is false"); }
FMI_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                              fmi2FMUstate *state)
{ (void)bytes; (void)size; (void)state;
  return unsupported(c, "fmi2DeSerializeFMUstate: canSerializeFMUstate is false"); }

FMI_EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference unknown[], size_t nu,
                                                   const fmi2ValueReference known[], size_t nk,
                                                   const fmi2Real dknown[], fmi2Real dunknown[])
{ return STATUS(directional((Instance *)c, unknown, nu, known, nk, dknown, dunknown)); }

/* Model exchange */
FMI_EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI_EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo *info)
{
    (void)c;
    info->newDiscreteStatesNeeded = fmi2False;
    info->terminateSimulation = fmi2False;
    info->nominalsOfContinuousStatesChanged = fmi2False;
    info->valuesOfContinuousStatesChanged = fmi2False;
    info->nextEventTimeDefined = fmi2False;
    info->nextEventTime = 0.0;
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }

FMI_EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSetFMUStatePriorToCurrentPoint,
                                                  fmi2Boolean *enterEventMode, fmi2Boolean *terminateSimulation)
{
    (void)c; (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi2False;
    *terminateSimulation = fmi2False;
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real time) { ((Instance *)c)->t = time; return fmi2OK; }

FMI_EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (sized(m, n, "fmi2SetContinuousStates: the number of states is not the unit's")) return fmi2Error;
    for (i = 0; i < n; ++i) m->x[i] = x[i];
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real derivatives[], size_t n)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (sized(m, n, "fmi2GetDerivatives: the number of states is not the unit's")) return fmi2Error;
    evaluate_f(m, m->work);
    for (i = 0; i < n; ++i) derivatives[i] = m->work[i];
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real indicators[], size_t n)
{ (void)indicators; return none(c, n, "fmi2GetEventIndicators: the unit has no event indicators"); }

FMI_EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (sized(m, n, "fmi2GetContinuousStates: the number of states is not the unit's")) return fmi2Error;
    for (i = 0; i < n; ++i) x[i] = m->x[i];
    return fmi2OK;
}

FMI_EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real nominals[], size_t n)
{
    size_t i;
    if (sized((Instance *)c, n, "fmi2GetNominalsOfContinuousStates: the number of states is not the unit's"))
        return fmi2Error;
    for (i = 0; i < n; ++i) nominals[i] = 1.0;
    return fmi2OK;
}

/* Co-simulation: RK4 substeps of at most MAX_STEP, the inputs held. */
FMI_EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    (void)noSetFMUStatePriorToCurrentPoint;
    return STATUS(step((Instance *)c, t, h));
}

FMI_EXPORT fmi2Status fmi2CancelStep(fmi2Component c)
{ return unsupported(c, "fmi2CancelStep: fmi2DoStep never returns fmi2Pending"); }
FMI_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                                  const fmi2Integer order[], const fmi2Real value[])
{ (void)vr; (void)order; (void)value;
  return none(c, n, "fmi2SetRealInputDerivatives: canInterpolateInputs is false"); }
FMI_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                                   const fmi2Integer order[], fmi2Real value[])
{ (void)vr; (void)order; (void)value;
  return none(c, n, "fmi2GetRealOutputDerivatives: maxOutputDerivativeOrder is 0"); }
FMI_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Status *value)
{ (void)kind; (void)value; return unsupported(c, "fmi2GetStatus: fmi2DoStep never returns fmi2Pending"); }
FMI_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Real *value)
{
    if (kind != fmi2LastSuccessfulTime) return unsupported(c, "fmi2GetRealStatus: only fmi2LastSuccessfulTime");
    *value = ((Instance *)c)->t;
    return fmi2OK;
}
FMI_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Integer *value)
{ (void)kind; (void)value; return unsupported(c, "fmi2GetIntegerStatus: no integer status"); }
FMI_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind kind, fmi2Boolean *value)
{ (void)kind; (void)value; return unsupported(c, "fmi2GetBooleanStatus: no boolean status"); }
FMI_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind kind, fmi2String *value)
{ (void)kind; (void)value; return unsupported(c, "fmi2GetStringStatus: no string status"); }
"""


def fmi2_wrapper(prefix: str, sizes: tuple[int, int, int], fields: Sequence[str], *, guid: str,
                 co_simulation: bool, max_step: float, starts: Sequence[float] = ()) -> str:
    """The C source of the FMI 2.0 wrapper of the export ``P.h`` with ``prefix`` P.

    Parameters
    ----------
    prefix, sizes, fields, guid, max_step, starts
        As robodyn.export.fmi_common.instance_source: the prefix, (NX, NU, NY), the parameters' fields, the GUID and
        the longest RK4 substep of ``fmi2DoStep``, the states' start values.
    co_simulation
        Whether ``fmi2Instantiate`` accepts ``fmi2CoSimulation`` (else ``fmi2ModelExchange``).
    """
    prefix = c_identifier(prefix)
    shared = instance_source(prefix, sizes, fields, guid=guid, max_step=max_step, starts=starts,
                             vr_type="fmi2ValueReference", logger_type="fmi2CallbackLogger", say=_SAY, has_time=False)
    return "\n".join([f"/* {prefix}_fmi2.c: the FMI 2.0 interface of {prefix}.c, generated by robodyn. Do not edit. */",
                      "#include <math.h>", "#include <stdlib.h>", "#include <string.h>", f'#include "{prefix}.h"',
                      _TYPES, shared, Template(_FUNCTIONS).substitute(kind=1 if co_simulation else 0)])
