"""The report's operating points: the equilibria, one per continuous family (robodyn.linearization.families), or a
robot's
configuration held by its torques; each flagged when it lies outside the joints' position limits.

A continuous family (a base yaw gravity does not act along, a cart's position on a level track) is one row: its
member nearest the origin along the family, marked "continuous" with the names it extends along and how many of the
points found it stands for. Points inside the joint limits are analysed first.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from robodyn.base.errors import RobodynError
from robodyn.display.page import number, table
from robodyn.integrate.limits import LIMIT_TOLERANCE

if TYPE_CHECKING:
    from robodyn.linearization.points import OperatingPoint
    from robodyn.model.protocol import ModelContract

__all__ = ["Found", "csv_row", "limits_text", "operating_points"]

STARTS = 8  # random starts of the equilibrium search


@dataclass(frozen=True, slots=True)
class Found:
    """The operating points to analyse (``points``) and a JSON record of each (``records``: family, limits)."""

    points: list[OperatingPoint]
    records: list[dict[str, Any]]


def limits_text(model: ModelContract, x: Any) -> str | None:
    """``shoulder = 3.14159 is above its upper limit 2; ...`` for the coordinates of ``x`` outside the model's
    position limits (URDF ``<limit>``), or None when every one is inside."""
    outside = []
    for name, (lower, upper) in model.position_limits().items():
        value = float(x[model.states.index(name)])
        for bound, sign, words in ((upper, 1.0, "above its upper"), (lower, -1.0, "below its lower")):
            if bound is not None and sign * (value - bound) > LIMIT_TOLERANCE * max(1.0, abs(bound)):
                outside.append(f"{name} = {number(value)} is {words} limit {number(bound)}")
    return "; ".join(outside) or None


def _equilibria(model: ModelContract, given: dict[str, float]) -> tuple[str, list[OperatingPoint],
                                                                        list[dict[str, Any]]]:
    """The equilibria with the inputs fixed (0 unless given), one per family, and what was done in words."""
    from robodyn.linearization.equilibrium import find_equilibrium
    from robodyn.linearization.families import families

    fixed = {name: given.get(name, 0.0) for name in model.inputs} | {k: v for k, v in given.items()
                                                                       if k in model.states}
    # a loop with an estimator or a predictive controller (roles) rests where its blocks say (find_equilibrium's
    # first start, the model's rest_state): a filter's covariance at random is no start, and each costs seconds
    starts = 1 if model.roles() else STARTS
    points = list(find_equilibrium(model, fix=fixed, starts=starts))
    how = "f(x, u) = 0 with " + (", ".join(f"{k} = {number(v)}" for k, v in fixed.items()) or "nothing fixed")
    try:
        found = families(model, points, list(fixed))
    except RobodynError:  # the Jacobian or f failed near a point: every point alone
        return f"{len(points)} point(s): {how}", points, [{"continuous_in": [], "members": 1} for _ in points]
    records = [{"continuous_in": list(f.moving), "members": f.members} for f in found]
    text = f"{len(points)} point(s) found from {starts} start(s): {how}"
    if starts == 1:
        text += " (a closed loop with an estimator or a predictive controller: from the rest state of its blocks)"
    moving = sorted({name for f in found for name in f.moving})
    if moving:
        text += (f"; {len(found)} distinct up to continuous families: f does not change along {', '.join(moving)} "
                 "at the rows marked continuous, so every value of it is an equilibrium alike (a continuous family, "
                 "not a point): each family is shown once, by its member nearest 0 along it")
    return text, [f.point for f in found], records


def operating_points(model: ModelContract, given: dict[str, float], robot: bool) -> tuple[str, Found]:
    """The section's body and the points: equilibria (one per family), or a robot's configuration (``robot``)."""
    n = model.n_states // 2 if model.order == 2 else model.n_states
    if robot:  # a robot has a continuum of rest points: the one at the given angles, held by its torques
        from robodyn.linearization.equilibrium import find_equilibrium

        fixed = {name: given.get(name, 0.0) for name in model.states}
        if model.constraints() is not None:  # closed loops: the angles given held, the others assembled
            from robodyn.mechanisms.loops.assembly import completed

            state = completed(model, {k: v for k, v in given.items() if k in model.states})
            fixed = dict(zip(model.states, state.tolist()))
        points = list(find_equilibrium(model, fix=fixed))
        how = f"{len(points)} point(s): the given joint angles (others 0) at rest, with the inputs that hold them"
        records: list[dict[str, Any]] = [{"continuous_in": [], "members": 1} for _ in points]
    else:
        how, points, records = _equilibria(model, given)
    for record, point in zip(records, points):
        record["outside_limits"] = limits_text(model, point.x)
    order = sorted(range(len(points)), key=lambda k: records[k]["outside_limits"] is not None)  # inside first
    points, records = [points[k] for k in order], [records[k] for k in order]
    header = ["#", *model.states[:n], *model.inputs, "residual", "family", "joint limits"]
    rows = [[k, *p.x[:n].tolist(), *p.u.tolist(), p.residual, _family_cell(r), r["outside_limits"] or "within"]
            for k, (p, r) in enumerate(zip(points, records))]
    flagged = sum(r["outside_limits"] is not None for r in records)
    note = (f" Outside the joints' position limits: {flagged} of the {len(records)} (the limits are not forces: the "
            "equations hold there, but the robot cannot reach them); they come last." if flagged else "")
    body = f"<p>{html.escape(how)}.{html.escape(note)}</p>" + table(header, rows)
    return body, Found(points, records)


def _family_cell(record: dict[str, Any]) -> str:
    if not record["continuous_in"]:
        return "isolated"
    found = f", {record['members']} found" if record["members"] > 1 else ""
    return f"continuous in {', '.join(record['continuous_in'])}{found}"


def csv_row(model: ModelContract, point: Any, k: int, record: dict[str, Any]) -> dict[str, Any]:
    """One line of points.csv: the point's states, inputs and residual, its family and the limits it is outside."""
    return {"point": k, **dict(zip(model.states, point.x.tolist())), **dict(zip(model.inputs, point.u.tolist())),
            "residual": point.residual, "continuous_in": " ".join(record.get("continuous_in", [])),
            "outside_limits": record.get("outside_limits") or ""}
