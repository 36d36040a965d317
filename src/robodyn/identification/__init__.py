"""Identification: a model's parameters from measurements.

- grey-box output error on any model: :mod:`~robodyn.identification.identify` (the problem
  :mod:`~robodyn.identification.problem`, the fit :mod:`~robodyn.identification.fit`, its result
  :class:`Identification` and what the fit shares with it :mod:`~robodyn.identification.result`, the data
  :mod:`~robodyn.identification.measured`, what the data determine :mod:`~robodyn.identification.estimates`);
- rigid bodies: the regressor (:mod:`~robodyn.identification.regressor`), base parameters
  (:mod:`~robodyn.identification.base_parameters`), excitation (:mod:`~robodyn.identification.excitation`), the fit
  (:mod:`~robodyn.identification.rigid`, data :mod:`~robodyn.identification.rigid_data`) and physically consistent
  parameters (:mod:`~robodyn.identification.consistency`);
- the fit report, one HTML page: :mod:`~robodyn.identification.report`.

Not called ``identify``, as the function ``robodyn.identify`` is.
"""
