"""The step controller's two forms (robodyn.integrate.methods.controller): the shared numba kernel
(kernel_template.py) and the fused batch kernels' LLVM IR (fused_ir.py) read one set of constants and take the same
steps: the same accepted and rejected attempts, evaluations and states, on problems that reject often.
"""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn.integrate.kernels import fused as fused_module
from robodyn.integrate.kernels.fused_ir import fused_ir
from robodyn.integrate.kernels.module import kernel_module_text
from robodyn.integrate.methods import controller
from robodyn.integrate.methods.registry import TABLEAUS

pytestmark = pytest.mark.filterwarnings("ignore::robodyn.base.errors.RobodynWarning")

VAN_DER_POL = """name: vdp_controller
kind: first_order
states: [y, z]
parameters: {mu: 8.0}
dynamics:
  y: z
  z: mu*(1 - y**2)*z - y
"""

LORENZ = """name: lorenz_controller
kind: first_order
states: [a, b, c]
parameters: {s: 10.0, r: 28.0, q: 2.6666666666666665}
dynamics:
  a: s*(b - a)
  b: a*(r - c) - b
  c: a*b - q*c
"""


def _both(monkeypatch: pytest.MonkeyPatch, *args, **kwargs):
    """The batch run by the IR form (checked that it was) and by the numba form (``ROBODYN_FUSED=0``)."""
    calls = []
    original = fused_module.FusedBatch.chunk

    def spy(self, *a):
        calls.append(a[:2])
        return original(self, *a)

    monkeypatch.setattr(fused_module.FusedBatch, "chunk", spy)
    monkeypatch.setenv("ROBODYN_FUSED", "1")
    ir_form = robodyn.simulate(*args, **kwargs)
    assert calls, "the batch did not run the fused kernel"
    monkeypatch.setenv("ROBODYN_FUSED", "0")
    calls.clear()
    numba_form = robodyn.simulate(*args, **kwargs)
    assert not calls
    return ir_form, numba_form


@pytest.mark.parametrize("text, t_final, x0, rtol, atol", [
    (VAN_DER_POL, 20.0, {"y": np.linspace(-2.0, 2.0, 12), "z": np.linspace(0.5, -0.5, 12)}, 1e-4, 1e-7),
    (LORENZ, 5.0, {"a": np.linspace(-8.0, 8.0, 10), "b": np.linspace(1.0, 9.0, 10), "c": 27.0}, 1e-8, 1e-10),
    (LORENZ, 3.0, {"a": np.linspace(1.0, 2.0, 6), "b": 1.0, "c": 1.0}, 1e-2, 1e-3),  # loose: large factors
])
def test_both_forms_take_the_same_steps(monkeypatch, tmp_path, text, t_final, x0, rtol, atol):
    path = tmp_path / "model.yaml"
    path.write_text(text, encoding="utf-8")
    model = robodyn.load(str(path))
    t_eval = np.linspace(0.0, t_final, 41)
    a, b = _both(monkeypatch, model, t_final, x0, method="dopri5", rtol=rtol, atol=atol, t_eval=t_eval)
    assert (a.stats.steps, a.stats.rejected, a.stats.nfev) == (b.stats.steps, b.stats.rejected, b.stats.nfev)
    assert a.stats.rejected > 0  # the rejection branch decided steps too
    np.testing.assert_allclose(a.t, b.t, rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(a.x, b.x, rtol=1e-12, atol=1e-12)


def test_both_forms_read_the_constants_of_one_description(monkeypatch):
    """The IR is written from the controller's constants and the kernel module's text spells them out (numba's
    cache changes with them); the template defines none of its own."""
    from robodyn.model.compiled import rhs_ir

    found = rhs_ir(robodyn.load("pendulum"))
    assert found is not None
    table, _ = TABLEAUS["dopri5"].kernel_method()

    def ir_text() -> str:
        return fused_ir(*found, 2, 1, 4, table)[0]

    def hex_of(value: float) -> str:
        return "0x" + np.float64(value).tobytes()[::-1].hex().upper()

    before, module_before = ir_text(), kernel_module_text()
    assert hex_of(controller.SAFETY) in before and hex_of(controller.step_exponent(4)) in before
    assert "'SAFETY': 0.9" in module_before
    assert "from robodyn.integrate.methods.controller import" in module_before
    assert "\nSAFETY = " not in module_before and "\nMAX_FACTOR = " not in module_before
    monkeypatch.setattr(controller, "SAFETY", 0.875)
    monkeypatch.setattr(controller, "MAX_FACTOR", 5.0)
    after = ir_text()
    assert hex_of(0.875) in after and hex_of(0.875) not in before
    assert hex_of(5.0) in after and after != before
    assert "'SAFETY': 0.875" in kernel_module_text()
