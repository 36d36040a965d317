"""C export (robodyn.export.c): the code compiles under gcc's strictest C99 flags (and clang's where installed), and a
C program and the ctypes-bound library give robodyn's own numbers — f, A, B, C, D, M, inverse and forward
dynamics, forward kinematics, the centre of mass — to 1e-13 of the largest entry, for chains and URDF robots."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tests.cli_run import one_line, run
from tests.pinocchio_reference import ROBOTS

import robodyn
from robodyn.base.errors import InputError
from robodyn.export.c import export_c

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

ROOT = Path(__file__).resolve().parents[2]
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
MODELS = {"puma560 chain": ROOT / "tests" / "data" / "puma560.yaml",
          "two-link arm URDF": ROOT / "examples" / "two_link_arm.urdf",
          "arm with a tip output (chain file)": ROOT / "examples" / "arm_with_tip.yaml",
          "two-link arm (the catalog's chain)": Path("two_link_arm")}  # a catalog name, not a path
if ROBOTS is not None:
    MODELS["panda URDF"] = ROBOTS / "panda_description" / "urdf" / "panda.urdf"
    MODELS["ur5 URDF"] = ROBOTS / "ur_description" / "urdf" / "ur5_robot.urdf"
MODELS_BY_NAME: dict[str, Path] = {}


def _close(mine: np.ndarray, theirs: np.ndarray) -> None:
    """Equal to 1e-13 of the largest entry (the same operations; the math library's functions may round apart)."""
    scale = max(1.0, float(np.abs(theirs).max(initial=0.0)))
    assert np.abs(np.asarray(mine) - np.asarray(theirs)).max(initial=0.0) <= 1e-13 * scale


def _load(path: Path) -> object:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = robodyn.load(str(path))
    MODELS_BY_NAME[model.name] = path
    return model


#: the Panda's C (the largest: ~30 s cold) is exported and run by docs/export.md's C++ example below by default
SLOW_MODELS = {"panda URDF"}


@pytest.fixture(scope="module", params=[pytest.param(name, marks=pytest.mark.slow) if name in SLOW_MODELS else name
                                        for name in sorted(MODELS)])
def exported(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[object, object]:
    model = _load(MODELS[request.param])
    folder = tmp_path_factory.mktemp("export")
    return model, export_c(model, folder, build=True)


def test_the_library_gives_robodyns_numbers(exported: tuple[object, object]) -> None:
    model, export = exported
    lib = export.library
    rng = np.random.default_rng(7)
    n = model.n_coordinates
    frames = robodyn.Kinematics(model)
    for _ in range(3):
        x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        q, qd, qdd = x[:n], x[n:], rng.uniform(-1, 1, n)
        _close(lib.f(0.3, x, u), model.f(0.3, x, u))
        _close(lib.h(0.3, x, u), model.h(0.3, x, u))
        linear = robodyn.linearize(model, x, u, t=0.3)
        for mine, theirs in zip(lib.linearize(0.3, x, u), (linear.A, linear.B, linear.C, linear.D)):
            _close(mine, theirs)
        _close(lib.mass(q), model.mass_matrix(q))
        tau = model.inverse_dynamics(q, qd, qdd)
        _close(lib.rnea(q, qd, qdd), tau)
        _close(lib.aba(q, qd, tau), qdd)  # forward dynamics undoes inverse dynamics
        for frame in frames.frames:
            position, rotation, jacobian = lib.fk(frame, q)
            pose = frames.pose(q, frame)
            _close(position, pose.position)
            _close(rotation, pose.rotation)
            _close(jacobian, frames.jacobian(q, frame))
        if str(MODELS_BY_NAME[model.name]).endswith(".urdf"):
            _close(lib.com(q), _pinocchio_com(MODELS_BY_NAME[model.name], model, q))


def _pinocchio_com(path: Path, model: object, q: np.ndarray) -> np.ndarray:
    """Pinocchio's centerOfMass of the URDF (every link's mass, the base's too) at robodyn's coordinates."""
    pin = pytest.importorskip("pinocchio")
    from tests.pinocchio_reference import configuration, coupling

    reference = pin.buildModelFromUrdf(str(path))
    G, offset = coupling(path, reference, model.coordinates)
    return np.array(pin.centerOfMass(reference, reference.createData(), configuration(reference, G @ q + offset)))


def test_a_c_program_compiled_with_the_strictest_flags_prints_the_same(exported: tuple[object, object],
                                                                         tmp_path: Path) -> None:
    model, export = exported
    check_c_program(model, export, tmp_path)


def check_c_program(model: object, export: object, folder: Path, params: np.ndarray | None = None) -> None:
    """``gcc -std=c99 -Wall -Wextra -Werror -pedantic`` at -O2 and at -O3 -march=native (and clang where installed)
    compiles the export and a program calling, at a random point, P_f, P_linearize and — when the export has them —
    P_mass, P_rnea, P_aba and P_fk of its last frame; what it prints (%.17g) is robodyn's to 1e-13: f and A, B, C, D
    from the model, M its mass matrix, inverse dynamics M (q'' - a0) with a0 the model's own acceleration at u = 0
    (the generalized force beyond the model's own, as for a chain), forward dynamics undoing it, the frame's pose
    and Jacobian from robodyn.Kinematics. ``params`` (in the model's order) are set field by field in C."""
    p = export.prefix
    rng = np.random.default_rng(3)
    x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
    overrides = None if params is None else dict(zip(model.parameters, params))
    nx, nu, ny = model.n_states, model.n_inputs, model.n_outputs

    def array(name: str, values: np.ndarray) -> str:
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in values) or '0.0'}}};"

    setting = [] if params is None else [f"    p.{name} = {float(v)!r};" for name, v in zip(export.fields, params)]
    calls = [f"    {p}_f(0.3, x, u, &p, xdot); show(xdot, {nx});",
             f"    {p}_linearize(0.3, x, u, &p, A, B, C, D); show(A, {nx * nx}); show(B, {nx * nu});",
             f"    show(C, {ny * nx}); show(D, {ny * nu});"]
    linear = robodyn.linearize(model, x, u, t=0.3, params=overrides)
    expected = [model.f(0.3, x, u, overrides), *(m.ravel() for m in (linear.A, linear.B, linear.C, linear.D))]
    declarations = [f"    double xdot[{nx}], A[{nx * nx}], B[{max(nx * nu, 1)}], C[{max(ny * nx, 1)}], "
                    f"D[{max(ny * nu, 1)}];"]
    extra = []
    if f"{p}_mass" in export.functions:
        n = model.n_coordinates
        q, qdd = x[:n], rng.uniform(-1, 1, n)
        extra.append(array("qdd", qdd))
        mass = model.mass_matrix(q, overrides)
        own = model.f(0.3, x, np.zeros(nu), overrides)[n:]
        tau = mass @ (qdd - own)
        declarations.append(f"    double M[{n * n}], tau[{n}], acc[{n}];")
        calls += [f"    {p}_mass(x, &p, M); show(M, {n * n});",
                  f"    {p}_rnea(x, x + {n}, qdd, &p, tau); show(tau, {n});",
                  f"    {p}_aba(x, x + {n}, tau, &p, acc); show(acc, {n});"]
        expected += [mass.ravel(), tau, qdd]
        c_frames = [name for name in export.functions if name.startswith(f"{p}_fk_")]
        if c_frames:
            frames, frame = robodyn.Kinematics(model), export.frames[-1]
            declarations.append(f"    double pos[3], rot[9], J[{6 * n}];")
            calls.append(f"    {c_frames[-1]}(x, &p, pos, rot, J); show(pos, 3); show(rot, 9); show(J, {6 * n});")
            pose = frames.pose(q, frame, params=overrides)
            expected += [pose.position, pose.rotation.ravel(), frames.jacobian(q, frame, params=overrides).ravel()]
    program = "\n".join([
        "#include <stdio.h>", f'#include "{p}.h"', array("x", x), array("u", u), *extra,
        "static void show(const double *v, int k) { int i; for (i = 0; i < k; ++i) printf(\"%.17g\\n\", v[i]); }",
        "int main(void)", "{", f"    {p}_params p = {p}_params_default();", *declarations, *setting, *calls,
        "    return 0;", "}", ""])
    (folder / "main.c").write_text(program)
    compilers = [("gcc", "-O2"), ("gcc", "-O3 -march=native")]
    if shutil.which("clang"):
        compilers += [("clang", "-O2"), ("clang", "-O3 -march=native")]
    for compiler, optimization in compilers:
        binary = folder / f"main_{compiler}"
        done = subprocess.run([compiler, *STRICT, *optimization.split(), f"-I{export.directory}",
                               str(folder / "main.c"), str(export.directory / f"{p}.c"), "-o", str(binary), "-lm"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        printed = np.array(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split(),
                           dtype=float)
        assert printed.size == sum(block.size for block in expected)
        start = 0
        for block in expected:  # each block at its own scale
            _close(printed[start:start + block.size], block)
            start += block.size


def test_the_export_writes_its_files_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    model = _load(MODELS["puma560 chain"])
    export = export_c(model, tmp_path / "out", functions=["f", "linearize"], prefix="puma")
    assert sorted(f.name for f in export.files) == ["CMakeLists.txt", "Makefile", "puma.c", "puma.h"]
    header = (tmp_path / "out" / "puma.h").read_text()
    assert "#define puma_NX 12" in header and "void puma_f(" in header and "puma_mass" not in header
    assert "/* states: q1, q2" in header and "functions' hash: sha256" in header
    assert "/* model file: none (built in Python) */" in header
    with pytest.raises(InputError, match="neither a file nor a catalog model"):
        export_c(model, tmp_path / "s", source=tmp_path / "missing.yaml")
    assert not (tmp_path / "s").exists()
    assert export.functions == ("puma_params_default", "puma_f", "puma_linearize")
    with pytest.raises(InputError, match="no straight-line functions to export"):
        export_c(robodyn.load(str(ROOT / "examples" / "arm_gravity_pd.yaml")), tmp_path / "p")  # discrete time
    with pytest.raises(InputError, match="Python callables have no source to export"):
        export_c(robodyn.System(lambda t, x, u, p: -x, ["x"], []), tmp_path / "s")
    with pytest.raises(InputError, match="jerk not available for 'puma560': choose from f, h, linearize"):
        export_c(model, tmp_path / "q", functions=["jerk"])
    with pytest.raises(InputError, match="prefix '1abc' is not a C identifier"):
        export_c(model, tmp_path / "q", prefix="1abc")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is a file, not a folder"):
        export_c(model, tmp_path / "file")


def test_robodyn_export_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "export", str(MODELS["puma560 chain"]), "--lang", "c", "--out", str(tmp_path / "c"),
                       "--functions", "f,mass,fk", "--prefix", "arm")
    assert code == 0 and "arm.h" in out and (tmp_path / "c" / "arm.c").is_file()
    header = (tmp_path / "c" / "arm.h").read_text()
    assert "void arm_fk_" in header
    import hashlib

    digest = hashlib.sha256(MODELS["puma560 chain"].read_bytes()).hexdigest()
    assert f"/* model file: puma560.yaml, sha256 {digest} */" in header  # the file the code came from
    done = subprocess.run(["make", "-C", str(tmp_path / "c")], capture_output=True, text=True)
    assert done.returncode == 0 and (tmp_path / "c" / "libarm.a").is_file(), done.stderr
    code, _, err = run(capsys, "export", str(MODELS["puma560 chain"]), "--lang", "rust", "--out", str(tmp_path / "r"))
    assert code == 2 and "rust" in one_line(err)
    code, _, err = run(capsys, "export", str(ROOT / "examples" / "arm_gravity_pd.yaml"), "--out", str(tmp_path / "p"))
    assert code == 2 and "no straight-line functions to export" in one_line(err)


def test_the_c_example_of_docs_export_md_compiles_and_holds_the_puma(tmp_path: Path) -> None:
    """docs/export.md's program (a PD law on the exported Puma, explicit Euler for 1 s): compiled with the strict
    flags it prints the tool's position that the same Euler steps on robodyn's f give, to the six decimals it
    prints (2e-6 m: half a unit of the last, and the loop's sums, which may round apart)."""
    import re

    text = (ROOT / "docs" / "export.md").read_text()
    program = next(block for block in re.findall(r"```c\n(.*?)```", text, flags=re.S) if "int main" in block)
    (tmp_path / "main.c").write_text(program)
    model = _load(MODELS["puma560 chain"])
    export_c(model, tmp_path / "puma_c", prefix="puma")
    binary = tmp_path / "main"
    done = subprocess.run(["gcc", *STRICT, "-O2", str(tmp_path / "main.c"), str(tmp_path / "puma_c" / "puma.c"),
                           f"-I{tmp_path / 'puma_c'}", "-lm", "-o", str(binary)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = np.array(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split()[2:],
                       dtype=float)
    x, h, n = np.zeros(model.n_states), 1e-4, model.n_coordinates
    for k in range(10000):
        u = -50.0 * (x[:n] - 0.3) - 5.0 * x[n:]
        x = x + h * model.f(k * h, x, u)
    np.testing.assert_allclose(printed, robodyn.Kinematics(model).pose(x[:n], "link6").position, rtol=0, atol=2e-6)


def _check_state_functions(model: object, lib: object, t: float, x: np.ndarray, u: np.ndarray,
                           params: np.ndarray | None) -> None:
    """The library's f, h and A, B, C, D at (t, x, u) and ``params`` (the model's order; None: the defaults) are
    the model's to 1e-13."""
    overrides = None if params is None else dict(zip(model.parameters, params))
    _close(lib.f(t, x, u, params), model.f(t, x, u, overrides))
    _close(lib.h(t, x, u, params), model.h(t, x, u, overrides))
    linear = robodyn.linearize(model, x, u, t=t, params=overrides)
    for mine, theirs in zip(lib.linearize(t, x, u, params), (linear.A, linear.B, linear.C, linear.D)):
        _close(mine, theirs)


@pytest.mark.parametrize("name", [*sorted(set(robodyn.CATALOG) - {"two_link_arm"}), "decay"])
def test_symbolic_models_export_their_tapes_from_sympy(name: str, tmp_path: Path) -> None:
    """The catalog's Lagrangian and mechanical models (and a first-order file): strict C99 (a C program, as
    check_c_program, at the defaults and with the parameters set in C), f, h and the exact A, B, C, D equal
    robodyn's to 1e-13 at the defaults and with parameters overridden; for second-order models M equals
    the mass matrix, rnea(q'') - rnea(0) = M q'', rnea vanishes at the model's own acceleration (no force beyond
    its own), aba undoes rnea, and the named points' positions and Jacobians are robodyn's kinematics'."""
    model = robodyn.load(str(ROOT / "examples" / "decay.yaml")) if name == "decay" else robodyn.load(name)
    export = export_c(model, tmp_path / "c", build=True)
    done = subprocess.run(["gcc", *STRICT, "-O2", "-c", str(export.directory / f"{export.prefix}.c"), "-o",
                           str(tmp_path / "x.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    lib = export.library
    rng = np.random.default_rng(11)
    defaults = model.parameter_vector(None)
    for k, params in enumerate((None, defaults * rng.uniform(0.5, 1.5, defaults.size))):
        (tmp_path / f"program{k}").mkdir()
        check_c_program(model, export, tmp_path / f"program{k}", params)
        x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        overrides = None if params is None else dict(zip(model.parameters, params))
        _check_state_functions(model, lib, 0.2, x, u, params)
        if model.order == 2:
            n = model.n_coordinates
            q, qd, qdd = x[:n], x[n:], rng.uniform(-1, 1, n)
            mass = model.mass_matrix(q, overrides)
            _close(lib.mass(q, params), mass)
            _close(lib.rnea(q, qd, qdd, params) - lib.rnea(q, qd, np.zeros(n), params), mass @ qdd)
            own = model.f(0.2, x, np.zeros(model.n_inputs), overrides)[n:]
            _close(lib.rnea(q, qd, own, params), np.zeros(n))
            _close(lib.aba(q, qd, lib.rnea(q, qd, qdd, params), params), qdd)
            if model.kinematics() is not None:  # a Lagrangian model's named points: R = I, angular rows 0
                frames = robodyn.Kinematics(model)
                for frame in frames.frames:
                    position, rotation, jacobian = lib.fk(frame, q, params)
                    _close(position, frames.pose(q, frame, params=overrides).position)
                    _close(rotation, np.eye(3))
                    _close(jacobian, frames.jacobian(q, frame, params=overrides))


def test_the_steppers_take_robodyns_rk4_and_dopri5_steps(tmp_path: Path) -> None:
    """P_step_rk4 is one step of robodyn's rk4 (simulate with dt = h over one step, 1e-13); P_step_dopri5 is the
    Dormand-Prince step written out from robodyn's tableau in numpy on model.f, its error estimate h sum e_i k_i,
    which shrinks like h^5 (its ratio at h and h / 2 near 2^5)."""
    from robodyn.integrate.methods.tableaus import DOPRI5

    model = _load(MODELS["puma560 chain"])
    export = export_c(model, tmp_path / "c", functions=["step_rk4", "step_dopri5"], build=True)
    assert f"{export.prefix}_f" in export.functions  # the steppers call P_f
    lib = export.library
    rng = np.random.default_rng(5)
    x, u, h = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs), 1e-2
    reference = robodyn.simulate(model, (0.1, 0.1 + h), x, u, method="rk4", dt=h).x[-1]
    _close(lib.step_rk4(0.1, x, u, h), reference)
    stages = []
    for i in range(len(DOPRI5.b)):
        stages.append(model.f(0.1 + DOPRI5.c[i] * h, x + h * sum(DOPRI5.A[i, j] * stages[j] for j in range(i)), u)
                      if i else model.f(0.1, x, u))
    xnext, error = lib.step_dopri5(0.1, x, u, h)
    _close(xnext, x + h * sum(b * k for b, k in zip(DOPRI5.b, stages)))
    _close(error, h * sum(e * k for e, k in zip(DOPRI5.e, stages)))
    ratio = np.abs(error).max() / np.abs(lib.step_dopri5(0.1, x, u, h / 2)[1]).max()
    assert 20 < ratio < 45


@pytest.mark.skipif(ROBOTS is None or shutil.which("g++") is None, reason="example-robot-data or g++ missing")
def test_the_cpp_example_of_docs_export_md_integrates_the_panda(tmp_path: Path) -> None:
    """docs/export.md's C++ program (the Panda falling for 1 s by P_step_rk4, 1 ms steps) compiles with g++ against
    the C object and prints where robodyn's own rk4 at the same steps puts the hand (2e-9 m: the nine decimals
    printed, and 1,000 steps' rounding)."""
    import re

    text = (ROOT / "docs" / "export.md").read_text()
    program = next(iter(re.findall(r"```cpp\n(.*?)```", text, flags=re.S)))
    (tmp_path / "main.cpp").write_text(program)
    model = _load(MODELS["panda URDF"])
    export_c(model, tmp_path / "panda_c")
    source, objects = tmp_path / "panda_c" / "panda.c", tmp_path / "panda.o"
    subprocess.run(["gcc", *STRICT, "-O2", "-c", str(source), "-o", str(objects)], check=True, capture_output=True)
    binary = tmp_path / "main"
    done = subprocess.run(["g++", "-std=c++11", "-Wall", "-Wextra", "-Werror", "-O2", str(tmp_path / "main.cpp"),
                           str(objects), f"-I{tmp_path / 'panda_c'}", "-lm", "-o", str(binary)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = np.array(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split()[2:],
                       dtype=float)
    run = robodyn.simulate(model, 1.0, np.zeros(model.n_states), method="rk4", dt=1e-3, limits="ignore")
    n = model.n_coordinates
    hand = robodyn.Kinematics(model).pose(run.x[-1, :n], "panda_hand").position
    np.testing.assert_allclose(printed, hand, rtol=0, atol=2e-9)


def test_export_c_refuses_what_is_not_a_model(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="export_c"):
        export_c("pendulum", tmp_path / "c")


def test_the_steppers_reproduce_robodyns_trajectories_step_by_step(tmp_path: Path) -> None:
    """Along 0.5 s of the Puma under constant torques: P_step_rk4 with robodyn's dt gives simulate's rk4 rows, and
    P_step_dopri5 from each accepted dopri5 step to the next (the same steps, read from the trajectory's rows)
    gives the next row, to 1e-12 of the state's size."""
    model = _load(MODELS["puma560 chain"])
    lib = export_c(model, tmp_path / "c", functions=["step_rk4", "step_dopri5"], build=True).library
    rng = np.random.default_rng(9)
    x0, u = rng.uniform(-0.5, 0.5, model.n_states), rng.uniform(-1, 1, model.n_inputs)
    fixed = robodyn.simulate(model, 0.5, x0, u, method="rk4", dt=0.01)
    x = x0
    for k in range(fixed.t.size - 1):
        x = lib.step_rk4(fixed.t[k], x, u, fixed.t[k + 1] - fixed.t[k])
        assert np.abs(x - fixed.x[k + 1]).max() <= 1e-12 * max(1.0, np.abs(fixed.x[k + 1]).max())
    adaptive = robodyn.simulate(model, 0.5, x0, u, method="dopri5", rtol=1e-8, atol=1e-10)
    assert adaptive.t.size > 5
    for k in range(adaptive.t.size - 1):
        xnext, _ = lib.step_dopri5(adaptive.t[k], adaptive.x[k], u, adaptive.t[k + 1] - adaptive.t[k])
        assert np.abs(xnext - adaptive.x[k + 1]).max() <= 1e-12 * max(1.0, np.abs(adaptive.x[k + 1]).max())


DIAGRAMS = ("arm_motors", "joint_pi", "motor_joint_pid", "pendulum_lqr_diagram")


@pytest.mark.parametrize("name", DIAGRAMS)
def test_diagrams_export_flattened(name: str, tmp_path: Path) -> None:
    """A continuous-time diagram exports as one model (robodyn.diagrams.export): its blocks' tapes replayed on
    one, wired in the diagram's order. A C program and the library give the diagram's f, h and exact A, B, C, D to
    1e-13, at the defaults and with every parameter changed; the steppers take its rk4 steps."""
    model = _load(ROOT / "examples" / f"{name}.yaml")
    export = export_c(model, tmp_path / "c", build=True)
    assert export.functions[1:] == tuple(f"{export.prefix}_{f}" for f in ("f", "h", "linearize", "step_rk4",
                                                                            "step_dopri5"))
    header = (tmp_path / "c" / f"{export.prefix}.h").read_text()
    assert f"/* states: {', '.join(model.states)} */" in header
    lib = export.library
    rng = np.random.default_rng(2)
    defaults = model.parameter_vector(None)
    for k, params in enumerate((None, defaults * rng.uniform(0.8, 1.2, defaults.size))):
        (tmp_path / f"program{k}").mkdir()
        check_c_program(model, export, tmp_path / f"program{k}", params)
        x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        _check_state_functions(model, lib, 0.1, x, u, params)
    x0 = rng.uniform(-0.2, 0.2, model.n_states)
    u = rng.uniform(-1, 1, model.n_inputs)
    fixed = robodyn.simulate(model, 0.05, x0, u, method="rk4", dt=0.005)
    x = x0
    for k in range(fixed.t.size - 1):
        x = lib.step_rk4(fixed.t[k], x, u, fixed.t[k + 1] - fixed.t[k])
    _close(x, fixed.x[-1])


def test_diagrams_that_cannot_export_are_refused(tmp_path: Path) -> None:
    """A sampled diagram (a discrete controller) and one with a quantizer (floor has no straight-line code) are
    refused with the reason; nothing is written."""
    from robodyn import blocks

    with pytest.raises(InputError, match=r"no straight-line functions to export.*sampled"):
        export_c(_load(ROOT / "examples" / "arm_motors_pd.yaml"), tmp_path / "a")
    plant = robodyn.load("joint")
    loop = robodyn.Diagram({"plant": plant, "encoder": blocks.quantizer(0.01)}, ["plant.q -> encoder.u"],
                           inputs={"tau": "plant.u"})
    with pytest.raises(InputError, match=r"export: model 'quantizer'.*floor"):
        export_c(loop, tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--functions", "f,jerk"], "jerk not available for 'puma560'"),
    (["--frames", "link9"], "frame 'link9' does not exist in 'puma560'; did you mean 'link6'?"),
    (["--prefix", "1arm"], "prefix '1arm' is not a C identifier"),
    (["--prefix", "while"], "prefix 'while' is not a C identifier"),
    (["--out", "/proc/robodyn-export"], "cannot write in /proc"),
    (["--out", "FILE"], "is a file, not a folder"),
])
def test_bad_export_requests_are_one_line_and_write_nothing(extra: list[str], message: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown function, a frame that does not exist, a prefix that is not a C identifier (a keyword
    included), an output folder that cannot be written or is a file: one line naming it, exit code 2, nothing
    written."""
    (tmp_path / "FILE").write_text("kept")
    arguments = ["--out", str(tmp_path / "out"), *(str(tmp_path / "FILE") if a == "FILE" else a for a in extra)]
    code, out, err = run(capsys, "export", str(MODELS["puma560 chain"]), *arguments)
    assert code == 2 and out == "" and message in one_line(err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"] and (tmp_path / "FILE").read_text() == "kept"


def test_frames_choose_the_kinematics_functions(tmp_path: Path) -> None:
    """``frames=`` writes P_fk for those frames only, in the order given (fk implied), and they give robodyn's
    poses; the library knows only them."""
    model = _load(MODELS["puma560 chain"])
    export = export_c(model, tmp_path / "c", functions=["f"], frames=["link3", "link1"], build=True)
    assert export.functions == ("puma560_params_default", "puma560_f", "puma560_fk_link3", "puma560_fk_link1")
    assert export.frames == ("link3", "link1") and export.library.frames == ("link3", "link1")
    q = np.linspace(-1, 1, model.n_coordinates)
    _close(export.library.fk("link3", q)[0], robodyn.Kinematics(model).pose(q, "link3").position)
    with pytest.raises(InputError, match="frames must be a non-empty list"):
        export_c(model, tmp_path / "d", frames="link3")
