"""Block diagrams: models made of models, their outputs wired to inputs.

:mod:`~robodyn.diagrams.diagram` (:class:`Diagram`), built by :mod:`~robodyn.diagrams.build`, compiled by
:mod:`~robodyn.diagrams.code`, exported by :mod:`~robodyn.diagrams.export`; df/dp through the wires
(:mod:`~robodyn.diagrams.parameters`), corners as events (:mod:`~robodyn.diagrams.switching`), sampled blocks
(:mod:`~robodyn.diagrams.sampled`), the blocks' rest states and roles assembled (:mod:`~robodyn.diagrams.rest`); the
block library in :mod:`robodyn.diagrams.blocks`.
"""
