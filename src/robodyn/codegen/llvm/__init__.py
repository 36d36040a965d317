"""Machine code through LLVM: a tape's IR (:mod:`~robodyn.codegen.llvm.tape`), linked into numba functions or compiled
directly with llvmlite's MCJIT and called through ctypes (:mod:`~robodyn.codegen.llvm.native`), generated
straight-line Python compiled to IR without numba (:mod:`~robodyn.codegen.llvm.pyir`), the lean paths' row call
(:mod:`~robodyn.codegen.llvm.rowcall`), ``model.f``'s whole lean call as one CPython builtin
(:mod:`~robodyn.codegen.llvm.rowbuiltin`) and the sparse solve of a tree's factor (:mod:`~robodyn.codegen.llvm.solve`).
"""
