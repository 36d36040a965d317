"""Standalone code of a model's functions, for controllers and observers without Python: C99
(:mod:`~robodyn.export.c`: ``P.h``, ``P.c``, a Makefile and a CMakeLists.txt, from the tape a model offers), the C
names of a model's names (:mod:`~robodyn.export.c_names`) and the names C and C++ keep for themselves
(:mod:`~robodyn.export.c_reserved`); the model as a Functional Mock-up Unit (:mod:`~robodyn.export.fmu`: the FMI 2.0
and 3.0 wrappers :mod:`~robodyn.export.fmi2_c` and :mod:`~robodyn.export.fmi3_c` over the C, on what they share,
:mod:`~robodyn.export.fmi_common`; the ``modelDescription.xml`` of :mod:`~robodyn.export.fmu_description`).
"""
