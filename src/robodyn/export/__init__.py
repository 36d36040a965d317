"""Standalone code of a model's functions, for controllers and observers without Python: C99
(:mod:`~robodyn.export.c`: ``P.h``, ``P.c``, a Makefile and a CMakeLists.txt, from the tape a model offers), the C
names of a model's names (:mod:`~robodyn.export.c_names`) and the names C and C++ keep for themselves
(:mod:`~robodyn.export.c_reserved`).
"""
