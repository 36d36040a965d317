"""The compiled kernels: their templates (:mod:`~robodyn.integrate.kernels.kernel_template`,
``implicit_template``, ``work_template``: sources a loader executes, never imported), the generated module
(:mod:`~robodyn.integrate.kernels.module`), running them (:mod:`~robodyn.integrate.kernels.run`), their machine-code
entry (:mod:`~robodyn.integrate.kernels.entry`, its arguments :mod:`~robodyn.integrate.kernels.entry_arguments`,
:mod:`~robodyn.integrate.kernels.native`), fused batches (:mod:`~robodyn.integrate.kernels.fused`, ``fused_ir``) and
warm-run images (:mod:`~robodyn.integrate.kernels.run_image`); what a kernel runs with: ``setup``. The old module
``robodyn.integrate.kernels`` (now ``run``) still answers its names, with a DeprecationWarning. No numba at import.
"""

from robodyn.base.lazy import forwarded_names

__getattr__, __dir__ = forwarded_names(__name__, "robodyn.integrate.kernels.run", (
    "KernelSetup", "adaptive_batch", "add_setup", "fixed_batch", "kernel_module", "run_adaptive", "run_batch",
    "run_fixed", "run_implicit_fixed"))
