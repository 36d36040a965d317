"""Linear time-invariant systems as a control engineer reads them: modes and stability
(:mod:`~robodyn.linear.modes`), responses (:mod:`~robodyn.linear.lti`, :mod:`~robodyn.linear.response`,
:mod:`~robodyn.linear.step_metrics`), frequency responses and margins (:mod:`~robodyn.linear.crossings`,
:mod:`~robodyn.linear.margins`, :mod:`~robodyn.linear.plots`), controllability and observability
(:mod:`~robodyn.linear.controllability`, :mod:`~robodyn.linear.balancing`), exact responses and discretizations by
matrix exponentials (:mod:`~robodyn.linear.exact`, with the exponentials of many steps shared:
:mod:`~robodyn.linear.exact_steps`), system norms (:mod:`~robodyn.linear.norms`: H-infinity and H2).

This folder sits below the models: it works on matrices and on any object with them
(:class:`~robodyn.linear.systems.StateSpace`); :class:`robodyn.LinearSystem` (a model kind) calls down into it for
its methods, and :mod:`~robodyn.linear.systems` turns what an analysis is given into a linear system
(:func:`~robodyn.linear.systems.as_linear`: a model's exact linear model, or an error saying how to make one).
"""
