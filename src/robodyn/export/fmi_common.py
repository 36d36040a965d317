"""What the FMI 2.0 and 3.0 wrappers of an exported model share: the value references, the instance and the work
behind the calls, as C99 over ``P.c`` (robodyn.export.fmi2_c and robodyn.export.fmi3_c put the standard's names
and signatures on it).

Value references: states 0 .. NX-1, their derivatives NX .. 2 NX-1, inputs, outputs, parameters, in that order
(:func:`value_references`); FMI 3's independent variable ``time`` is the one after the last parameter. The work:
reading (a derivative is ``P_f``, an output ``P_h`` at the instance's time, states, inputs and parameters) and
writing variables, the directional derivative d(x', y) = [[A, B], [C, D]] d(x, u) from ``P_linearize`` (the exact
Jacobians), and a co-simulation step: ceil(h / MAX_STEP) equal RK4 substeps of ``P_step_rk4``, the inputs held.

The only text spliced into the C is the prefix (a checked C identifier), the parameters' fields (C names of
robodyn.export.c_names), numbers and the instantiation token (hexadecimal digits and ``-``, checked).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template
from typing import Final

from robodyn.base.errors import InputError
from robodyn.codegen.c_source import c_literal
from robodyn.codegen.text import c_identifier

__all__ = ["ValueReferences", "instance_source", "value_references"]

_GUID: Final = re.compile(r"\{[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}\Z")


@dataclass(frozen=True, slots=True)
class ValueReferences:
    """The first value reference of each group of variables: ``states``, ``derivatives``, ``inputs``, ``outputs``,
    ``parameters`` (each group contiguous, in the model's order), and ``end`` past the last (FMI 3's ``time``)."""

    states: int
    derivatives: int
    inputs: int
    outputs: int
    parameters: int
    end: int


def value_references(nx: int, nu: int, ny: int, np_: int) -> ValueReferences:
    """The value references of a unit of ``nx`` states, ``nu`` inputs, ``ny`` outputs and ``np_`` parameters."""
    return ValueReferences(0, nx, 2 * nx, 2 * nx + nu, 2 * nx + nu + ny, 2 * nx + nu + ny + np_)


_INSTANCE: Final = Template(r"""
#define NX $nx
#define NU $nu
#define NY $ny
#define NP $np
#define VR_DER $vr_der
#define VR_U $vr_u
#define VR_Y $vr_y
#define VR_P $vr_p
#define VR_END $vr_end
#define HAS_TIME $has_time
#define MAX_STEP $max_step
static const char TOKEN[] = "$guid";

typedef $vr_type VR;

typedef struct {
    void *(*allocate)(size_t, size_t);
    void (*release)(void *);
    $logger_type logger;
    void *environment;
    char *name;
    double t;
    double x[NX > 0 ? NX : 1];
    double u[NU > 0 ? NU : 1];
    double p[NP > 0 ? NP : 1];
    double work[NX > 0 ? NX : 1];
    double A[NX * NX > 0 ? NX * NX : 1];
    double B[NX * NU > 0 ? NX * NU : 1];
    double C[NY * NX > 0 ? NY * NX : 1];
    double D[NY * NU > 0 ? NY * NU : 1];
} Instance;

static void defaults(Instance *m)
{
    int i;
    ${prefix}_params d = ${prefix}_params_default();
    m->t = 0.0;
    for (i = 0; i < NX; ++i) m->x[i] = 0.0;
    for (i = 0; i < NU; ++i) m->u[i] = 0.0;
$defaults
    (void)d;
}

static ${prefix}_params parameters(const Instance *m)
{
    ${prefix}_params s = ${prefix}_params_default();
$fields
    return s;
}

static void say(const Instance *m, const char *message)
{
$say
}

/* A new instance named `name` (copied), or NULL when memory is short. */
static Instance *create(const char *name, void *(*allocate)(size_t, size_t), void (*release)(void *))
{
    size_t length = strlen(name);
    Instance *m = (Instance *)allocate(1, sizeof(Instance));
    if (!m) return NULL;
    m->name = (char *)allocate(length + 1, 1);
    if (!m->name) {
        release(m);
        return NULL;
    }
    memcpy(m->name, name, length + 1);
    m->allocate = allocate;
    m->release = release;
    defaults(m);
    return m;
}

static void destroy(Instance *m)
{
    if (!m) return;
    m->release(m->name);
    m->release(m);
}

static void evaluate_f(Instance *m, double *xdot)
{
    ${prefix}_params s = parameters(m);
    ${prefix}_f(m->t, m->x, m->u, &s, xdot);
}

static void evaluate_h(Instance *m, double *y)
{
    ${prefix}_params s = parameters(m);
    ${prefix}_h(m->t, m->x, m->u, &s, y);
}

/* 0, or 1 after telling the logger which reference is not a variable. */
static int get_values(Instance *m, const VR vr[], size_t n, double value[])
{
    double xdot[NX > 0 ? NX : 1], y[NY > 0 ? NY : 1];
    int have_f = 0, have_h = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        VR r = vr[i];
        if (r < VR_DER) value[i] = m->x[r];
        else if (r < VR_U) {
            if (!have_f) { evaluate_f(m, xdot); have_f = 1; }
            value[i] = xdot[r - VR_DER];
        } else if (r < VR_Y) value[i] = m->u[r - VR_U];
        else if (r < VR_P) {
            if (!have_h) { evaluate_h(m, y); have_h = 1; }
            value[i] = y[r - VR_Y];
        } else if (r < VR_END) value[i] = m->p[r - VR_P];
        else if (HAS_TIME && r == VR_END) value[i] = m->t;
        else {
            say(m, "get: a value reference beyond the unit's variables");
            return 1;
        }
    }
    return 0;
}

static int set_values(Instance *m, const VR vr[], size_t n, const double value[])
{
    size_t i;
    for (i = 0; i < n; ++i) {
        VR r = vr[i];
        if (r < VR_DER) m->x[r] = value[i];
        else if (r >= VR_U && r < VR_Y) m->u[r - VR_U] = value[i];
        else if (r >= VR_P && r < VR_END) m->p[r - VR_P] = value[i];
        else {
            say(m, "set: only states, inputs and parameters can be set");
            return 1;
        }
    }
    return 0;
}

/* d(unknowns) = J d(knowns), J the exact Jacobian of (x', y) in (x, u): A, B, C, D of P_linearize. */
static int directional(Instance *m, const VR unknown[], size_t nu, const VR known[], size_t nk, const double seed[],
                       double out[])
{
    ${prefix}_params s = parameters(m);
    size_t i, j;
    for (j = 0; j < nk; ++j)
        if (known[j] >= VR_DER && !(known[j] >= VR_U && known[j] < VR_Y)) {
            say(m, "directional derivative: the knowns must be states or inputs");
            return 1;
        }
    ${prefix}_linearize(m->t, m->x, m->u, &s, m->A, m->B, m->C, m->D);
    for (i = 0; i < nu; ++i) {
        VR r = unknown[i];
        const double *row_x, *row_u;
        double sum = 0.0;
        if (r >= VR_DER && r < VR_U) { row_x = m->A + (r - VR_DER) * NX; row_u = m->B + (r - VR_DER) * NU; }
        else if (r >= VR_Y && r < VR_P) { row_x = m->C + (r - VR_Y) * NX; row_u = m->D + (r - VR_Y) * NU; }
        else {
            say(m, "directional derivative: the unknowns must be derivatives or outputs");
            return 1;
        }
        for (j = 0; j < nk; ++j)
            sum += (known[j] < VR_DER ? row_x[known[j]] : row_u[known[j] - VR_U]) * seed[j];
        out[i] = sum;
    }
    return 0;
}

/* The states from t to t + h by ceil(h / MAX_STEP) equal RK4 substeps, the inputs held. */
static int step(Instance *m, double t, double h)
{
    ${prefix}_params s = parameters(m);
    double next[NX > 0 ? NX : 1], dt;
    long k, steps;
    int i;
    if (!(h >= 0.0) || h > 1e300) {
        say(m, "do step: the communication step must be a finite number >= 0");
        return 1;
    }
    steps = (long)ceil(h / MAX_STEP - 1e-9);
    if (steps < 1) steps = 1;
    dt = h / (double)steps;
    for (k = 0; k < steps; ++k) {
        ${prefix}_step_rk4(t + (double)k * dt, m->x, m->u, &s, dt, next);
        for (i = 0; i < NX; ++i) m->x[i] = next[i];
    }
    m->t = t + h;
    return 0;
}

static int sized(Instance *m, size_t n, const char *message)
{
    if (n == (size_t)NX) return 0;
    say(m, message);
    return 1;
}
""")


def instance_source(prefix: str, sizes: tuple[int, int, int], fields: Sequence[str], *, guid: str, max_step: float,
                    vr_type: str, logger_type: str, say: str, has_time: bool, starts: Sequence[float] = ()) -> str:
    """The C shared by the wrappers (the module docstring), for the export ``P.h`` of ``prefix`` P.

    Parameters
    ----------
    prefix
        The export's prefix (a safe C identifier: robodyn.export.c_names).
    sizes
        (NX, NU, NY).
    fields
        The ``P_params`` fields, in the model's parameter order (C names).
    guid
        The unit's GUID or instantiation token, ``{8-4-4-4-12}`` lowercase hexadecimal digits (checked): ``TOKEN``.
    max_step
        The longest RK4 substep of a co-simulation step (> 0).
    vr_type, logger_type, say
        The version's value-reference type, logger type, and the body of ``say(m, message)`` (fixed text of the
        wrapper modules, never from a model).
    has_time
        Whether the reference after the parameters reads the time (FMI 3's independent variable).
    starts
        The states an instance starts from (NX finite numbers: the model's initial state; empty: zeros), until
        the importer sets others.
    """
    prefix = c_identifier(prefix)
    checked = [c_identifier(name) for name in fields]
    if not _GUID.match(guid):
        raise InputError(f"FMU export: GUID {guid!r} is not of the form {{8-4-4-4-12}} in lowercase hexadecimal digits")
    nx, nu, ny = sizes
    starts = [float(v) for v in starts] if len(starts) else [0.0] * nx
    if len(starts) != nx or not all(math.isfinite(v) for v in starts):
        raise InputError(f"FMU export: the states' start values must be {nx} finite numbers, got {starts!r}")
    refs = value_references(nx, nu, ny, len(checked))
    return _INSTANCE.substitute(
        nx=nx, nu=nu, ny=ny, np=len(checked), vr_der=refs.derivatives, vr_u=refs.inputs, vr_y=refs.outputs,
        vr_p=refs.parameters, vr_end=refs.end, has_time=int(has_time), max_step=c_literal(float(max_step)), guid=guid,
        prefix=prefix, vr_type=vr_type, logger_type=logger_type, say=say,
        defaults="\n".join([*(f"    m->x[{k}] = {c_literal(v)};" for k, v in enumerate(starts) if v != 0.0),
                            *(f"    m->p[{k}] = d.{name};" for k, name in enumerate(checked))]),
        fields="\n".join(f"    s.{name} = m->p[{k}];" for k, name in enumerate(checked)))
