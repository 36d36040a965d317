"""Standalone code of a model's functions: C99 (robodyn.export.c), for controllers and observers without Python."""
