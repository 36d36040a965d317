"""A diagram compiled as one model (robodyn.diagrams.code): the composed rhs and out_fn against the blocks
evaluated one by one, tapes inlined bit for bit, blocks called, the forward-mode Jacobian, the fused batch kernel
and the parsed-model cache."""

from __future__ import annotations

import numpy as np
import pytest

import robodyn
from robodyn import blocks
from robodyn.model.compiled import rhs_ir

pytestmark = pytest.mark.filterwarnings("ignore::robodyn.base.errors.RobodynWarning")

MOTOR = {"R": 1.0, "L": 1e-3, "kt": 0.5, "ke": 0.5, "N": 10.0}
PID = {"kp": 50.0, "ki": 10.0, "kd": 5.0, "tf": 0.01}


def arm_loop(arm: robodyn.Model | None = None) -> robodyn.Diagram:
    """The two-link arm (a chain: its tape) with a motor and a PID at each joint."""
    made = {"arm": arm or robodyn.load("two_link_arm"), "m1": blocks.dc_motor(**MOTOR),
            "m2": blocks.dc_motor(**MOTOR), "c1": blocks.pid(**PID), "c2": blocks.pid(**PID)}
    wires = ["c1.u -> m1.v", "c2.u -> m2.v", "m1.tau -> arm.shoulder_tau", "m2.tau -> arm.elbow_tau",
             "arm.shoulder -> c1.y", "arm.elbow -> c2.y", "arm.shoulder_dot -> m1.omega", "arm.elbow_dot -> m2.omega"]
    return robodyn.Diagram(made, wires, inputs={"r1": "c1.r", "r2": "c2.r"},
                           outputs={"y1": "arm.shoulder", "current": "m2.i", "u1": "c1.u"}, name="arm_loop")


def block_by_block(diagram: robodyn.Diagram, x: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """f and h evaluated through each block's own f_raw and h_raw in the evaluation order (the interpreted way)."""
    p = diagram.parameter_vector()
    at = 0
    states, params = {}, {}
    ap = 0
    for label, block in diagram.blocks.items():
        states[label], params[label] = x[at:at + block.n_states], p[ap:ap + len(block.parameters)]
        at, ap = at + block.n_states, ap + len(block.parameters)
    wires = [(w.split("->")[0].strip(), w.split("->")[1].strip()) for w in WIRES[diagram.name]]
    inputs = INPUTS[diagram.name]
    ys: dict[str, np.ndarray] = {}

    def block_input(label: str) -> np.ndarray:
        block = diagram.blocks[label]
        value = np.zeros(block.n_inputs)
        for source, target in wires:
            b, port = target.split(".")
            s, out = source.split(".")
            if b == label and s in ys:
                value[block.inputs.index(port)] = ys[s][diagram.blocks[s].outputs.index(out)]
        for k, target in enumerate(inputs):
            b, port = target.split(".")
            if b == label:
                value[block.inputs.index(port)] = u[k]
        return value

    for _ in range(len(diagram.blocks)):  # until every block's output is known (fixed point: no feedthrough loop)
        for label, block in diagram.blocks.items():
            ys[label] = block.h_raw(0.0, states[label], block_input(label), params[label])
    f = np.concatenate([b.f_raw(0.0, states[k], block_input(k), params[k]) for k, b in diagram.blocks.items()])
    return f, ys


WIRES = {"arm_loop": ["c1.u -> m1.v", "c2.u -> m2.v", "m1.tau -> arm.shoulder_tau", "m2.tau -> arm.elbow_tau",
                      "arm.shoulder -> c1.y", "arm.elbow -> c2.y", "arm.shoulder_dot -> m1.omega",
                      "arm.elbow_dot -> m2.omega"]}
INPUTS = {"arm_loop": ["c1.r", "c2.r"]}


def test_the_composed_functions_equal_the_blocks_one_by_one() -> None:
    diagram = arm_loop()
    assert diagram.compilable and rhs_ir(diagram) is not None  # straight-line: the arm's tape inlined
    rng = np.random.default_rng(0)
    for _ in range(5):
        x, u = rng.normal(size=10), rng.normal(size=2)
        f, ys = block_by_block(diagram, x, u)
        np.testing.assert_allclose(diagram.f_raw(0.0, x, u, diagram.parameter_vector()), f, rtol=1e-13, atol=1e-12)
        h = diagram.h_raw(0.0, x, u, diagram.parameter_vector())
        np.testing.assert_allclose(h, [ys["arm"][0], ys["m2"][1], ys["c1"][0]], rtol=1e-13, atol=1e-12)


def test_an_inlined_tape_computes_the_chains_bits() -> None:
    """The tape written as straight-line code performs the tape's LLVM operations: the same bits."""
    arm = robodyn.load("two_link_arm")
    alone = robodyn.Diagram({"arm": arm}, inputs={"t1": "arm.shoulder_tau", "t2": "arm.elbow_tau"})
    assert rhs_ir(alone) is not None
    rng = np.random.default_rng(1)
    for _ in range(20):
        x, u = rng.normal(size=4) * 2, rng.normal(size=2) * 5
        np.testing.assert_array_equal(alone.f_raw(0.0, x, u, alone.parameter_vector()),
                                      arm.f_raw(0.0, x, u, arm.parameter_vector()))


def test_a_block_that_is_not_straight_line_is_called() -> None:
    """A chain whose tape is too large to inline (the nine-coordinate arm) is called on views of the arrays."""
    arm = robodyn.load(str(pytest.importorskip("pathlib").Path(__file__).parents[2] / "examples" /
                           "nine_dof_arm.urdf"))
    made: dict[str, robodyn.Model] = {"arm": arm}
    wires = []
    for k, joint in enumerate(arm.inputs[:2]):
        made[f"c{k}"] = blocks.pid(kp=10.0, kd=1.0)
        wires += [f"c{k}.u -> arm.{joint}", f"arm.{arm.states[k]} -> c{k}.y"]
    inputs = {f"r{k}": f"c{k}.r" for k in range(2)} | {j: f"arm.{j}" for j in arm.inputs[2:]}
    diagram = robodyn.Diagram(made, wires, inputs=inputs, name="nine")
    assert diagram.compilable and rhs_ir(diagram) is None  # a call: numba compiles it
    rng = np.random.default_rng(2)
    x, u = rng.normal(size=diagram.n_states) * 0.3, rng.normal(size=diagram.n_inputs)
    p = diagram.parameter_vector()
    expected = np.concatenate([arm.f_raw(0.0, x[:18], np.concatenate([
        [made["c0"].h_raw(0.0, x[18:19], np.array([u[0], x[0]]), p[-6:-3])[0],
         made["c1"].h_raw(0.0, x[19:20], np.array([u[1], x[1]]), p[-3:])[0]], u[2:]]), p[:-6]),
        made["c0"].f_raw(0.0, x[18:19], np.array([u[0], x[0]]), p[-6:-3]),
        made["c1"].f_raw(0.0, x[19:20], np.array([u[1], x[1]]), p[-3:])])
    np.testing.assert_allclose(diagram.f_raw(0.0, x, u, p), expected, rtol=1e-12, atol=1e-12)
    lin = robodyn.linearize(diagram, x, u)  # the chain rule through the blocks (no composed derivative)
    step = 1e-6
    column = (diagram.f_raw(0.0, x + step * np.eye(x.size)[0], u, p)
              - diagram.f_raw(0.0, x - step * np.eye(x.size)[0], u, p)) / (2 * step)
    np.testing.assert_allclose(lin.A[:, 0], column, rtol=1e-6, atol=1e-6)


def test_the_composed_jacobian_equals_the_chain_rule_through_the_blocks() -> None:
    """Forward-mode derivatives of the composed code against the blocks' own exact Jacobians chained."""
    diagram = arm_loop()
    assert diagram.kernel_jacobian_source() is not None
    rng = np.random.default_rng(3)
    for _ in range(5):
        x, u = rng.normal(size=10), rng.normal(size=2)
        fast = robodyn.linearize(diagram, x, u)
        A, B, C, D = _chain_rule(diagram, x, u)
        for got, want in zip((fast.A, fast.B, fast.C, fast.D), (A, B, C, D)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * np.abs(want).max())
        assert np.abs(fast.A).max() > 1e3  # the motors' fast electrical poles are in it


def _chain_rule(diagram: robodyn.Diagram, x: np.ndarray, u: np.ndarray):
    """A, B, C, D of the same diagram made of copies of the blocks that are not compilable (the interpreted path
    chains the blocks' exact Jacobians)."""
    from robodyn.model.kinds.callables import System

    def opaque(block):
        copy = block.with_parameters()
        return _Opaque(copy)

    class _Opaque(System):
        def __init__(self, inner):
            super().__init__(lambda t, x, u, p: inner.f_raw(t, x, u, p), inner.states, inner.inputs,
                             parameters=dict(inner.parameters), outputs=[f"{y}_" for y in inner.outputs],
                             h=lambda t, x, u, p: inner.h_raw(t, x, u, p), name=inner.name)
            self.outputs = inner.outputs  # the same port names (System refuses an output named like a state)
            self.inner = inner

        @property
        def jacobian_method(self):
            return "symbolic"

        def jacobians_raw(self, t, x, u, p):
            return self.inner.jacobians_raw(t, x, u, p)

        def output_jacobians_raw(self, t, x, u, p):
            return self.inner.output_jacobians_raw(t, x, u, p)

    copies = {label: opaque(block) for label, block in diagram.blocks.items()}
    other = robodyn.Diagram(copies, WIRES["arm_loop"], inputs={"r1": "c1.r", "r2": "c2.r"},
                            outputs={"y1": "arm.shoulder", "current": "m2.i", "u1": "c1.u"})
    assert not other.compilable and other.jacobian_method == "diagram"
    lin = robodyn.linearize(other, x, u)
    return lin.A, lin.B, lin.C, lin.D


def test_a_batch_of_diagrams_runs_the_fused_kernel(monkeypatch) -> None:
    """Straight-line composed code goes into the fused batch kernel: the same bits as the shared kernel."""
    from robodyn.integrate.kernels import fused as fused_module

    calls = []
    original = fused_module.FusedBatch.chunk

    def spy(self, *a):
        calls.append(a[:2])
        return original(self, *a)

    monkeypatch.setattr(fused_module.FusedBatch, "chunk", spy)
    diagram = arm_loop()
    x0 = np.random.default_rng(4).uniform(-0.5, 0.5, (20, 10))
    options = dict(method="dopri5", rtol=1e-7, atol=1e-9, t_eval=np.linspace(0.0, 0.5, 6))
    fused = robodyn.simulate(diagram, 0.5, x0, {"r1": 0.5, "r2": -0.3}, **options)
    assert calls, "the batch did not run the fused kernel"
    monkeypatch.setenv("ROBODYN_FUSED", "0")
    shared = robodyn.simulate(diagram, 0.5, x0, {"r1": 0.5, "r2": -0.3}, **options)
    np.testing.assert_array_equal(fused.x, shared.x)
    assert (fused.stats.steps, fused.stats.nfev) == (shared.stats.steps, shared.stats.nfev)


def test_implicit_methods_use_the_composed_jacobian() -> None:
    diagram = arm_loop()
    x0 = np.zeros(10)
    stiff = robodyn.simulate(diagram, 1.0, x0, {"r1": 0.5, "r2": -0.3}, method="radau", rtol=1e-9, atol=1e-11,
                             t_eval=np.linspace(0.0, 1.0, 11))
    explicit = robodyn.simulate(diagram, 1.0, x0, {"r1": 0.5, "r2": -0.3}, method="dop853", rtol=1e-11, atol=1e-13,
                                t_eval=np.linspace(0.0, 1.0, 11))
    np.testing.assert_allclose(stiff.x, explicit.x, atol=1e-6)
    assert stiff.stats.njev > 0


def test_a_diagram_file_is_not_kept_by_the_parsed_model_cache(tmp_path) -> None:
    """Its blocks live in other files: an edited block file is read again."""
    from robodyn.files.cached import load_cached

    (tmp_path / "gain.yaml").write_text("name: lag\nkind: first_order\nstates: [y]\ninputs: [u]\n"
                                        "parameters: {a: 1.0}\ndynamics: {y: -a*y + u}\n")
    (tmp_path / "loop.yaml").write_text("name: loop\nkind: diagram\nblocks: {plant: joint, lag: gain.yaml}\n"
                                        "connect: [lag.y -> plant.u, plant.q -> lag.u]\n")
    first = load_cached(tmp_path / "loop.yaml")
    assert first.parameters["lag.a"] == 1.0 and first.compilable
    (tmp_path / "gain.yaml").write_text((tmp_path / "gain.yaml").read_text().replace("a: 1.0", "a: 3.0"))
    assert load_cached(tmp_path / "loop.yaml").parameters["lag.a"] == 3.0


# --- a LinearSystem as a block: compiled as its lti block (robodyn.diagrams.code.code_blocks) -------------------
def hinf_controller() -> tuple[robodyn.LinearSystem, robodyn.LinearSystem]:
    """Skogestad & Postlethwaite's example 2.11 plant 200 / ((10 s + 1)(0.05 s + 1)^2) and its mixed-sensitivity
    controller (W1 = (s / 1.5 + 10) / (s + 1e-3) on S, W2 = 0.01 on K S): K has 4 states, one pole at ~ -2.6e4."""
    import scipy.signal

    A, B, C, D = scipy.signal.tf2ss([200.0], np.polymul([10.0, 1.0], np.polymul([0.05, 1.0], [0.05, 1.0])))
    G = robodyn.LinearSystem(A, B, C, D, inputs=["u"], outputs=["y"], name="G")
    W1 = robodyn.LinearSystem([[-1e-3]], [[1.0]], [[10.0 - 1e-3 / 1.5]], [[1.0 / 1.5]], name="W1")
    return G, robodyn.mixsyn(G, W1, 0.01).K


def hinf_loop(G: robodyn.Model, K: robodyn.Model) -> robodyn.Diagram:
    """r -> err = r - y -> K -> u -> G -> y (mixsyn's K maps the error to the input)."""
    error = blocks.lti(D=[[1.0, -1.0]], inputs=["r", "y"], outputs=["err"])
    return robodyn.Diagram({"G": G, "K": K, "sum": error}, ["sum.err -> K.e1", "K.u -> G.u", "G.y -> sum.y"],
                           inputs={"r": "sum.r"}, outputs={"y": "G.y", "u": "K.u"}, name="hinf_loop")


def in_python(K: robodyn.LinearSystem) -> robodyn.Model:
    """The same controller as Python callables (no code: its diagram runs interpreted)."""
    return robodyn.System(lambda t, x, u, p: K.A @ x + K.B @ u, K.states, K.inputs,
                          h=lambda t, x, u, p: K.C @ x + K.D @ u, outputs=K.outputs, name="K", sample=K.dt)


def feedback(G: robodyn.LinearSystem, K: robodyn.LinearSystem) -> tuple[np.ndarray, ...]:
    """The loop's A, B (r), C (y, u) by hand: u = C_K x_K + D_K (r - C_G x_G) (D_G = 0), continuous or sampled."""
    AG, BG, CG = G.A, G.B, G.C
    A = np.block([[AG - BG @ K.D @ CG, BG @ K.C], [-K.B @ CG, K.A]])
    B = np.vstack([BG @ K.D, K.B])
    C = np.block([[CG, np.zeros((1, K.A.shape[0]))], [-K.D @ CG, K.C]])
    return A, B, C, np.vstack([np.zeros((1, 1)), K.D])


def test_a_linear_system_block_compiles_and_equals_its_interpretation() -> None:
    G, K = hinf_controller()
    loop = hinf_loop(G, K)
    assert not K.compilable and loop.compilable  # K has no code of its own: the diagram composes its lti block's
    # rk4 with the same steps (the fast pole needs dt < 2.78 / 2.6e4 = 1.07e-4; half of it keeps the fast mode's
    # amplification of rounding low): the two differ only by the order of the sums. K's output C_K x_K cancels terms
    # ~1e4 times |u| (entries of C_K up to 6e8): measured 4e-13 of |u|, the states within 2e-14 of their largest
    options = dict(method="rk4", dt=5e-5)
    run = robodyn.simulate(loop, 0.05, np.zeros(7), {"r": 1.0}, **options)
    reference = robodyn.simulate(hinf_loop(G, in_python(K)), 0.05, np.zeros(7), {"r": 1.0}, **options)
    assert run.stats.path == "compiled" and reference.stats.path == "interpreted"
    for ours, theirs in ((run.x, reference.x), (run.y, reference.y)):
        assert np.all(np.abs(ours - theirs) <= 1e-12 * np.abs(theirs).max(axis=0))
    assert run.y[-1, 0] > 0.4  # the step followed (0.45 after 50 ms)
    linear = robodyn.linearize(loop, np.zeros(7), [0.0])
    for ours, expected in zip((linear.A, linear.B, linear.C, linear.D), feedback(G, K), strict=True):
        np.testing.assert_allclose(ours, expected, rtol=1e-13, atol=1e-12)  # the same products, other sums


def test_a_sampled_linear_system_block_compiles() -> None:
    """K held exactly over 2 ms (K.discretize: its own A, B are the update); G between the instants."""
    G, K = hinf_controller()
    T = 2e-3
    Kd = K.discretize(T)
    loop = hinf_loop(G, Kd)
    options = dict(rtol=1e-10, atol=1e-12, t_eval=np.linspace(0.0, 1.0, 101))
    run = robodyn.simulate(loop, 1.0, np.zeros(7), {"r": 1.0}, **options)
    reference = robodyn.simulate(hinf_loop(G, in_python(Kd)), 1.0, np.zeros(7), {"r": 1.0}, **options)
    # the instants (K's update, the held signals) are compiled, as the flow between them (G): the run says so
    sampling, python = loop.sampling(), hinf_loop(G, in_python(Kd)).sampling()
    assert sampling is not None and python is not None
    assert sampling._compiled_instant(frozenset(sampling.every)) is not None and run.stats.path == "compiled"
    assert python._compiled_instant(frozenset(python.every)) is None
    # The same flow (G compiled in both); at each instant u = C_K x_K differs by the order of its sums, ~1e-16 of
    # its terms: C_K's entries reach 6e8, so ~1e-16 * 6e8 |x_K| ~ 3e-12 of the largest |u| from the first instants
    # (measured), which the loop carries on (K's pole at -1e-3 rad/s sums them): measured 2.3e-11 of each signal's
    # largest value over the 500 instants. Not 1e-12: this controller's realization, not the code, sets it
    for ours, theirs in ((run.x, reference.x), (run.y, reference.y)):
        assert np.all(np.abs(ours - theirs) <= 1e-10 * np.abs(theirs).max(axis=0))
    # the loop over one period: G held exactly (its ZOH) under the controller's update, by hand
    linear = robodyn.linearize(loop, np.zeros(7), [0.0])
    A, B, C, D = feedback(G.discretize(T), Kd)
    assert linear.dt == pytest.approx(T)
    for ours, expected in zip((linear.A, linear.B, linear.C, linear.D), (A, B, C, D), strict=True):
        np.testing.assert_allclose(ours, expected, rtol=1e-13, atol=1e-12)  # the same products, other sums
