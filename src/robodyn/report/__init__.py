"""The analyze report: a model's whole story on one self-contained HTML page, with its data as JSON and CSV.

:func:`analyze` runs, in order, each analysis robodyn has — equations (typeset), classification, the equilibria
(or, for a robot, the operating point at the given joint angles with the holding torques), and at each point the
linearization (A, B, C, D), its modes and stability verdict, the pole map, the controllability and observability
verdicts, the exact step-response metrics (margins only for a diagram's loops), the validity of the linear model,
free and step responses of the nonlinear model with the linear model's overlaid, a phase portrait for two-state
models, the existence/uniqueness summary and, for robots, a picture of the mechanism — and keeps every figure
as inline SVG. The page needs no network; a robot whose file has shapes or meshes is shown in 3-D at its operating
points instead of the stick picture (robodyn.viewer's page, written into the report as a sandboxed
``<iframe srcdoc>``: the only JavaScript, and it asks for nothing).

A section that cannot be computed for the model says why on the page (and in the JSON) instead of stopping
the report: a report is for reading, and a partial one with the reason beats none.

Modules: ``analyze`` (the order of the story, :class:`Report`), ``points`` (the operating points: one per continuous
family of equilibria, joint limits flagged), ``point`` (one operating point), ``figures`` (responses, phase
portrait, the mechanism), ``diagram`` (a diagram's drawing and its loops' margins), ``closed_loop`` (a loop's
estimators and predictive controllers, asked of the model's ``roles()``: the estimate against the truth and the
constraints' activity along a run), ``workers`` (where the independent parts run: here or in forked processes),
``kept`` (sections kept in the private cache for a model a file determines), ``views`` (the robot in 3-D in a report:
at the operating points, or a run playing); ``optimize`` is the report of an optimal control solve (``robodyn
optimize --report``). The page's pieces (tables, numbers, strict JSON) are robodyn.display.page; the fit report of
``robodyn.identify`` is robodyn.identification.report.
"""

from robodyn.report.analyze import MAX_POINTS, Report, analyze

__all__ = ["MAX_POINTS", "Report", "analyze"]
