"""Models made from a model: forward sensitivities (:mod:`~robodyn.model.derived.sensitivity`, their
generated code :mod:`~robodyn.model.derived.sensitivity_code`).
"""
