"""Linear time-invariant systems as a control engineer reads them: modes and stability
(:mod:`~robodyn.linear.modes`), responses (:mod:`~robodyn.linear.lti`, :mod:`~robodyn.linear.response`,
:mod:`~robodyn.linear.step_metrics`), frequency responses and margins (:mod:`~robodyn.linear.crossings`,
:mod:`~robodyn.linear.margins`, :mod:`~robodyn.linear.plots`), controllability and observability
(:mod:`~robodyn.linear.controllability`, :mod:`~robodyn.linear.balancing`). The system itself is
:class:`robodyn.model.kinds.linear.LinearSystem`, whose methods delegate here; :mod:`~robodyn.linear.systems` turns
what an analysis is given into one (:func:`~robodyn.linear.systems.as_linear`).
"""
