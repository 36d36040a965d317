"""The FMI 3.0 wrapper of an exported model: C99 implementing the fmi3 API over ``P.c`` (docs/export.md, "FMU").

The FMI 3.0 standard (modelica/fmi-standard, ``fmi3PlatformTypes.h``, ``fmi3FunctionTypes.h`` and the specification,
sections 2.3, 3.2 and 4.2) fixes the types and the functions' names and signatures; the wrapper declares the types
it needs itself. Every function of the standard is defined, on the work of robodyn.export.fmi_common: model
exchange (``fmi3InstantiateModelExchange``: states, derivatives, no event indicators, nominals 1), co-simulation
(``fmi3InstantiateCoSimulation``: ``fmi3DoStep`` by RK4 substeps, no event mode, no early return), the directional
derivatives from the exact Jacobians; the variables are ``Float64`` and ``time`` is readable. The other types,
clocks, FMU states, scheduled execution and adjoint derivatives answer ``fmi3Error`` with a message to the logger.
"""

from __future__ import annotations

from collections.abc import Sequence
from string import Template
from typing import Final

from robodyn.codegen.text import c_identifier
from robodyn.export.fmi_common import instance_source

__all__ = ["fmi3_wrapper"]

_TYPES: Final = r"""
/* The FMI 3.0 types (fmi3PlatformTypes.h, fmi3FunctionTypes.h of the standard), declared here. */
typedef void *fmi3Instance;
typedef void *fmi3InstanceEnvironment;
typedef void *fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef float fmi3Float32;
typedef double fmi3Float64;
typedef int8_t fmi3Int8;
typedef uint8_t fmi3UInt8;
typedef int16_t fmi3Int16;
typedef uint16_t fmi3UInt16;
typedef int32_t fmi3Int32;
typedef uint32_t fmi3UInt32;
typedef int64_t fmi3Int64;
typedef uint64_t fmi3UInt64;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char *fmi3String;
typedef uint8_t fmi3Byte;
typedef const fmi3Byte *fmi3Binary;
typedef bool fmi3Clock;
#define fmi3True true
#define fmi3False false
typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;
typedef enum { fmi3Independent, fmi3Constant, fmi3Fixed, fmi3Tunable, fmi3Discrete, fmi3Dependent }
    fmi3DependencyKind;
typedef enum { fmi3IntervalNotYetKnown, fmi3IntervalUnchanged, fmi3IntervalChanged } fmi3IntervalQualifier;
typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status, fmi3String, fmi3String);
typedef void (*fmi3ClockUpdateCallback)(fmi3InstanceEnvironment);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64, fmi3Boolean, fmi3Boolean,
                                               fmi3Boolean, fmi3Boolean, fmi3Boolean *, fmi3Float64 *);
typedef void (*fmi3LockPreemptionCallback)(void);
typedef void (*fmi3UnlockPreemptionCallback)(void);

#if defined(__GNUC__) || defined(__clang__)
#define FMI_EXPORT __attribute__((visibility("default")))
#else
#define FMI_EXPORT
#endif
"""

_SAY: Final = '    if (m->logger) m->logger(m->environment, fmi3Error, "logStatusError", message);'

#: The functions that only refuse, as (name, parameters after the instance, the message's reason).
_REFUSED: Final = (
    ("GetNumberOfVariableDependencies", "fmi3ValueReference vr, size_t *n", "the model structure lists them"),
    ("GetVariableDependencies", "fmi3ValueReference dependent, size_t elements[], fmi3ValueReference independents[], "
     "size_t independentElements[], fmi3DependencyKind kinds[], size_t n", "the model structure lists them"),
    ("GetFMUState", "fmi3FMUState *state", "canGetAndSetFMUState is false"),
    ("SetFMUState", "fmi3FMUState state", "canGetAndSetFMUState is false"),
    ("FreeFMUState", "fmi3FMUState *state", "canGetAndSetFMUState is false"),
    ("SerializedFMUStateSize", "fmi3FMUState state, size_t *size", "canSerializeFMUState is false"),
    ("SerializeFMUState", "fmi3FMUState state, fmi3Byte bytes[], size_t size", "canSerializeFMUState is false"),
    ("DeserializeFMUState", "const fmi3Byte bytes[], size_t size, fmi3FMUState *state",
     "canSerializeFMUState is false"),
    ("GetAdjointDerivative", "const fmi3ValueReference unknowns[], size_t nu, const fmi3ValueReference knowns[], "
     "size_t nk, const fmi3Float64 seed[], size_t ns, fmi3Float64 sensitivity[], size_t nr",
     "providesAdjointDerivatives is false"),
    ("EnterConfigurationMode", "", "the unit has no structural parameters"),
    ("ExitConfigurationMode", "", "the unit has no structural parameters"),
    ("GetIntervalDecimal", "const fmi3ValueReference vr[], size_t n, fmi3Float64 intervals[], "
     "fmi3IntervalQualifier qualifiers[]", "the unit has no clocks"),
    ("GetIntervalFraction", "const fmi3ValueReference vr[], size_t n, fmi3UInt64 counters[], fmi3UInt64 resolutions[], "
     "fmi3IntervalQualifier qualifiers[]", "the unit has no clocks"),
    ("GetShiftDecimal", "const fmi3ValueReference vr[], size_t n, fmi3Float64 shifts[]", "the unit has no clocks"),
    ("GetShiftFraction", "const fmi3ValueReference vr[], size_t n, fmi3UInt64 counters[], fmi3UInt64 resolutions[]",
     "the unit has no clocks"),
    ("SetIntervalDecimal", "const fmi3ValueReference vr[], size_t n, const fmi3Float64 intervals[]",
     "the unit has no clocks"),
    ("SetIntervalFraction", "const fmi3ValueReference vr[], size_t n, const fmi3UInt64 counters[], "
     "const fmi3UInt64 resolutions[]", "the unit has no clocks"),
    ("SetShiftDecimal", "const fmi3ValueReference vr[], size_t n, const fmi3Float64 shifts[]",
     "the unit has no clocks"),
    ("SetShiftFraction", "const fmi3ValueReference vr[], size_t n, const fmi3UInt64 counters[], "
     "const fmi3UInt64 resolutions[]", "the unit has no clocks"),
    ("GetOutputDerivatives", "const fmi3ValueReference vr[], size_t n, const fmi3Int32 orders[], fmi3Float64 values[], "
     "size_t nValues", "maxOutputDerivativeOrder is 0"),
    ("ActivateModelPartition", "fmi3ValueReference clock, fmi3Float64 time", "the unit has no clocks"),
    ("GetClock", "const fmi3ValueReference vr[], size_t n, fmi3Clock values[]", "the unit has no clocks"),
    ("SetClock", "const fmi3ValueReference vr[], size_t n, const fmi3Clock values[]", "the unit has no clocks"),
)
#: The variable types the unit has none of (it has only Float64 variables).
_OTHER_TYPES: Final = ("Float32", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64", "Boolean",
                       "String")

_FUNCTIONS: Final = r"""
#define KIND $kind
#define STATUS(failed) ((failed) ? fmi3Error : fmi3OK)

FMI_EXPORT const char *fmi3GetVersion(void) { return "3.0"; }

FMI_EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String categories[])
{
    (void)c; (void)on; (void)n; (void)categories;
    return fmi3OK;
}

static fmi3Instance instantiate(int kind, fmi3String name, fmi3String token, fmi3InstanceEnvironment environment,
                                fmi3LogMessageCallback logger)
{
    Instance *m;
    if (!name || !token || strcmp(token, TOKEN) != 0 || kind != KIND) {
        if (logger)
            logger(environment, fmi3Error, "logStatusError",
                   !token || strcmp(token, TOKEN) != 0 ? "the instantiation token is not this unit's: check the FMU"
                   : "this unit is not of the kind asked for (see its modelDescription.xml)");
        return NULL;
    }
    m = create(name, calloc, free);
    if (!m) return NULL;
    m->logger = logger;
    m->environment = environment;
    return m;
}

FMI_EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                                     fmi3Boolean visible, fmi3Boolean logging,
                                                     fmi3InstanceEnvironment environment,
                                                     fmi3LogMessageCallback logger)
{
    (void)resources; (void)visible; (void)logging;
    return instantiate(0, name, token, environment, logger);
}

FMI_EXPORT fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                                    fmi3Boolean visible, fmi3Boolean logging, fmi3Boolean eventMode,
                                                    fmi3Boolean earlyReturn, const fmi3ValueReference required[],
                                                    size_t nRequired, fmi3InstanceEnvironment environment,
                                                    fmi3LogMessageCallback logger,
                                                    fmi3IntermediateUpdateCallback update)
{
    (void)resources; (void)visible; (void)logging; (void)eventMode; (void)earlyReturn; (void)required;
    (void)nRequired; (void)update;
    return instantiate(1, name, token, environment, logger);
}

FMI_EXPORT fmi3Instance fmi3InstantiateScheduledExecution(fmi3String name, fmi3String token, fmi3String resources,
                                                          fmi3Boolean visible, fmi3Boolean logging,
                                                          fmi3InstanceEnvironment environment,
                                                          fmi3LogMessageCallback logger,
                                                          fmi3ClockUpdateCallback clockUpdate,
                                                          fmi3LockPreemptionCallback lock,
                                                          fmi3UnlockPreemptionCallback unlock)
{
    (void)name; (void)token; (void)resources; (void)visible; (void)logging; (void)clockUpdate; (void)lock;
    (void)unlock;
    if (logger) logger(environment, fmi3Error, "logStatusError", "the unit has no scheduled execution");
    return NULL;
}

FMI_EXPORT void fmi3FreeInstance(fmi3Instance c) { destroy((Instance *)c); }

FMI_EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                                  fmi3Float64 startTime, fmi3Boolean stopTimeDefined,
                                                  fmi3Float64 stopTime)
{
    (void)toleranceDefined; (void)tolerance; (void)stopTimeDefined; (void)stopTime;
    ((Instance *)c)->t = startTime;
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) { (void)c; return fmi3OK; }
FMI_EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance c) { (void)c; return fmi3OK; }
FMI_EXPORT fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }
FMI_EXPORT fmi3Status fmi3Reset(fmi3Instance c) { defaults((Instance *)c); return fmi3OK; }

static int scalars(Instance *m, size_t n, size_t values)
{
    if (n == values) return 0;
    say(m, "get/set: the unit's variables are scalars: give one value per value reference");
    return 1;
}

FMI_EXPORT fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Float64 values[],
                                     size_t nValues)
{
    Instance *m = (Instance *)c;
    return STATUS(scalars(m, n, nValues) || get_values(m, vr, n, values));
}

FMI_EXPORT fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                     const fmi3Float64 values[], size_t nValues)
{
    Instance *m = (Instance *)c;
    return STATUS(scalars(m, n, nValues) || set_values(m, vr, n, values));
}

static fmi3Status none(fmi3Instance c, size_t n, const char *message)
{
    if (n == 0) return fmi3OK;
    say((Instance *)c, message);
    return fmi3Error;
}

static fmi3Status unsupported(fmi3Instance c, const char *message)
{
    if (c) say((Instance *)c, message);
    return fmi3Error;
}

$typed

FMI_EXPORT fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n, size_t sizes[],
                                    fmi3Binary values[], size_t nValues)
{ (void)vr; (void)sizes; (void)values; (void)nValues;
  return none(c, n, "fmi3GetBinary: the unit has no Binary variables"); }
FMI_EXPORT fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const size_t sizes[],
                                    const fmi3Binary values[], size_t nValues)
{ (void)vr; (void)sizes; (void)values; (void)nValues;
  return none(c, n, "fmi3SetBinary: the unit has no Binary variables"); }

$refused

FMI_EXPORT fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference unknowns[], size_t nu,
                                                   const fmi3ValueReference knowns[], size_t nk,
                                                   const fmi3Float64 seed[], size_t ns, fmi3Float64 sensitivity[],
                                                   size_t nr)
{
    Instance *m = (Instance *)c;
    if (ns != nk || nr != nu) {
        say(m, "fmi3GetDirectionalDerivative: give one seed per known and room for one sensitivity per unknown");
        return fmi3Error;
    }
    return STATUS(directional(m, unknowns, nu, knowns, nk, seed, sensitivity));
}

/* Model exchange */
FMI_EXPORT fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) { (void)c; return fmi3OK; }

FMI_EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean *update, fmi3Boolean *terminate,
                                               fmi3Boolean *nominalsChanged, fmi3Boolean *valuesChanged,
                                               fmi3Boolean *nextEventTimeDefined, fmi3Float64 *nextEventTime)
{
    (void)c;
    if (update) *update = fmi3False;
    if (terminate) *terminate = fmi3False;
    if (nominalsChanged) *nominalsChanged = fmi3False;
    if (valuesChanged) *valuesChanged = fmi3False;
    if (nextEventTimeDefined) *nextEventTimeDefined = fmi3False;
    if (nextEventTime) *nextEventTime = 0.0;
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { (void)c; return fmi3OK; }

FMI_EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                  fmi3Boolean *enterEventMode, fmi3Boolean *terminateSimulation)
{
    (void)c; (void)noSetFMUStatePriorToCurrentPoint;
    *enterEventMode = fmi3False;
    *terminateSimulation = fmi3False;
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 time) { ((Instance *)c)->t = time; return fmi3OK; }

FMI_EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (sized(m, n, "fmi3SetContinuousStates: the number of states is not the unit's")) return fmi3Error;
    for (i = 0; i < n; ++i) m->x[i] = x[i];
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 derivatives[], size_t n)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (sized(m, n, "fmi3GetContinuousStateDerivatives: the number of states is not the unit's")) return fmi3Error;
    evaluate_f(m, m->work);
    for (i = 0; i < n; ++i) derivatives[i] = m->work[i];
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 indicators[], size_t n)
{ (void)indicators; return none(c, n, "fmi3GetEventIndicators: the unit has no event indicators"); }

FMI_EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n)
{
    Instance *m = (Instance *)c;
    size_t i;
    if (sized(m, n, "fmi3GetContinuousStates: the number of states is not the unit's")) return fmi3Error;
    for (i = 0; i < n; ++i) x[i] = m->x[i];
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 nominals[], size_t n)
{
    size_t i;
    if (sized((Instance *)c, n, "fmi3GetNominalsOfContinuousStates: the number of states is not the unit's"))
        return fmi3Error;
    for (i = 0; i < n; ++i) nominals[i] = 1.0;
    return fmi3OK;
}

FMI_EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t *n) { (void)c; *n = 0; return fmi3OK; }
FMI_EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t *n) { (void)c; *n = NX; return fmi3OK; }

/* Co-simulation: RK4 substeps of at most MAX_STEP, the inputs held; no events, no early return. */
FMI_EXPORT fmi3Status fmi3EnterStepMode(fmi3Instance c) { (void)c; return fmi3OK; }

FMI_EXPORT fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h,
                                 fmi3Boolean noSetFMUStatePriorToCurrentPoint, fmi3Boolean *eventHandlingNeeded,
                                 fmi3Boolean *terminateSimulation, fmi3Boolean *earlyReturn,
                                 fmi3Float64 *lastSuccessfulTime)
{
    Instance *m = (Instance *)c;
    int failed;
    (void)noSetFMUStatePriorToCurrentPoint;
    failed = step(m, t, h);
    if (eventHandlingNeeded) *eventHandlingNeeded = fmi3False;
    if (terminateSimulation) *terminateSimulation = fmi3False;
    if (earlyReturn) *earlyReturn = fmi3False;
    if (lastSuccessfulTime) *lastSuccessfulTime = m->t;
    return STATUS(failed);
}
"""


def _typed() -> str:
    """fmi3Get<T> and fmi3Set<T> of the types the unit has no variables of: fine for none, an error otherwise."""
    lines = []
    for name in _OTHER_TYPES:
        for verb, const in (("Get", ""), ("Set", "const ")):
            lines += [f"FMI_EXPORT fmi3Status fmi3{verb}{name}(fmi3Instance c, const fmi3ValueReference vr[], "
                      f"size_t n, {const}fmi3{name} values[], size_t nValues)",
                      f'{{ (void)vr; (void)values; (void)nValues; return none(c, n, "fmi3{verb}{name}: the unit has no '
                      f'{name} variables"); }}']
    return "\n".join(lines)


def _refused() -> str:
    lines = []
    for name, parameters, reason in _REFUSED:
        names = [part.strip().split()[-1].lstrip("*").split("[")[0] for part in parameters.split(",") if part.strip()]
        lines += [f"FMI_EXPORT fmi3Status fmi3{name}(fmi3Instance c{', ' + parameters if parameters else ''})",
                  f"{{ {' '.join(f'(void){n};' for n in names)} return unsupported(c, \"fmi3{name}: {reason}\"); }}"]
    return "\n".join(lines)


def fmi3_wrapper(prefix: str, sizes: tuple[int, int, int], fields: Sequence[str], *, guid: str,
                 co_simulation: bool, max_step: float, starts: Sequence[float] = ()) -> str:
    """The C source of the FMI 3.0 wrapper of the export ``P.h`` with ``prefix`` P.

    Parameters
    ----------
    prefix, sizes, fields, guid, max_step, starts
        As robodyn.export.fmi_common.instance_source: the prefix, (NX, NU, NY), the parameters' fields, the
        instantiation token and the longest RK4 substep of ``fmi3DoStep``, the states' start values.
    co_simulation
        Whether the unit instantiates by ``fmi3InstantiateCoSimulation`` (else ``fmi3InstantiateModelExchange``).
    """
    prefix = c_identifier(prefix)
    shared = instance_source(prefix, sizes, fields, guid=guid, max_step=max_step, starts=starts,
                             vr_type="fmi3ValueReference", logger_type="fmi3LogMessageCallback", say=_SAY,
                             has_time=True)
    functions = Template(_FUNCTIONS).substitute(kind=1 if co_simulation else 0, typed=_typed(), refused=_refused())
    return "\n".join([f"/* {prefix}_fmi3.c: the FMI 3.0 interface of {prefix}.c, generated by robodyn. Do not edit. */",
                      "#include <math.h>", "#include <stdbool.h>", "#include <stdint.h>", "#include <stdlib.h>",
                      "#include <string.h>", f'#include "{prefix}.h"', _TYPES, shared, functions])
