"""The light reader of plain first-order model files: their record made without sympy
(:mod:`~robodyn.files.light.record`), the rewrites sympy would make told without it (:mod:`~robodyn.files.light.shape`)
and the rounding bounds that decide when it declines (:mod:`~robodyn.files.light.bounds`).
"""
