"""Generic code generation: sympy expressions and straight-line tapes to numba source, C and LLVM IR, and the private
cache that keeps what was compiled. Knows nothing of models, integrators or signals.

- source text: :mod:`~robodyn.codegen.source` (sympy to straight-line Python for numba),
  :mod:`~robodyn.codegen.straight_line` (generated functions read as one list of statements),
  :mod:`~robodyn.codegen.forward` (their forward-mode derivatives), :mod:`~robodyn.codegen.fragments` (fragments
  side by side in one module), :mod:`~robodyn.codegen.c_source` (a tape as C99), :mod:`~robodyn.codegen.printer`
  (the one number printer) and :mod:`~robodyn.codegen.text` (the C comment escaper and checked identifiers);
- generated modules: :mod:`~robodyn.codegen.module` (their common text and machine code by address),
  :mod:`~robodyn.codegen.loader` (the one module loader), :mod:`~robodyn.codegen.indirect` (calls through an address
  from numba code), :mod:`~robodyn.codegen.linalg` (small dense and sparse solves for generated code);
- what is kept: :mod:`~robodyn.codegen.cache` (the private on-disk cache, a trust boundary),
  :mod:`~robodyn.codegen.objects` (numba's machine code as object files), :mod:`~robodyn.codegen.libraries` (and as
  shared libraries, opened without LLVM), :mod:`~robodyn.codegen.kept` (results of pure computations as JSON);
- :mod:`robodyn.codegen.llvm` — tapes and straight-line code to LLVM IR and machine code.

The package imports none of its modules: each is imported where it is used (numba, sympy and llvmlite only by the
modules that need them).
"""
