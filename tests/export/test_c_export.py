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
from robodyn.errors import InputError
from robodyn.export.c import export_c

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")

ROOT = Path(__file__).resolve().parents[2]
STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
MODELS = {"puma560 chain": ROOT / "tests" / "data" / "puma560.yaml",
          "two-link arm URDF": ROOT / "examples" / "two_link_arm.urdf",
          "arm with a tip output (chain file)": ROOT / "examples" / "arm_with_tip.yaml"}
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


@pytest.fixture(scope="module", params=sorted(MODELS))
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
    """``gcc -std=c99 -Wall -Wextra -Werror -pedantic`` at -O2 and at -O3 -march=native (and clang where installed)
    compiles the export and a program calling P_f, P_linearize, P_mass, P_rnea, P_aba and P_fk of its first frame;
    what it prints (%.17g) is robodyn's to 1e-13."""
    model, export = exported
    p, n = export.prefix, model.n_coordinates
    rng = np.random.default_rng(3)
    x, u, qdd = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs), rng.uniform(-1, 1, n)
    frame = robodyn.Kinematics(model).frames[-1]
    c_frame = [name for name in export.functions if name.startswith(f"{p}_fk_")][-1]  # the frames in order

    def array(name: str, values: np.ndarray) -> str:
        return f"static const double {name}[] = {{{', '.join(repr(float(v)) for v in values) or '0.0'}}};"

    nx, nu, ny = model.n_states, model.n_inputs, model.n_outputs
    program = "\n".join([
        "#include <stdio.h>", f'#include "{p}.h"', array("x", x), array("u", u), array("qdd", qdd),
        "static void show(const double *v, int k) { int i; for (i = 0; i < k; ++i) printf(\"%.17g\\n\", v[i]); }",
        "int main(void)", "{",
        f"    {p}_params p = {p}_params_default();",
        f"    double xdot[{nx}], A[{nx * nx}], B[{max(nx * nu, 1)}], C[{ny * nx}], D[{max(ny * nu, 1)}];",
        f"    double M[{n * n}], tau[{n}], acc[{n}], pos[3], rot[9], J[{6 * n}];",
        f"    {p}_f(0.3, x, u, &p, xdot); show(xdot, {nx});",
        f"    {p}_linearize(0.3, x, u, &p, A, B, C, D); show(A, {nx * nx}); show(B, {nx * nu});",
        f"    show(C, {ny * nx}); show(D, {ny * nu});",
        f"    {p}_mass(x, &p, M); show(M, {n * n});",
        f"    {p}_rnea(x, x + {n}, qdd, &p, tau); show(tau, {n});",
        f"    {p}_aba(x, x + {n}, tau, &p, acc); show(acc, {n});",
        f"    {c_frame}(x, &p, pos, rot, J); show(pos, 3); show(rot, 9); show(J, {6 * n});",
        "    return 0;", "}", ""])
    (tmp_path / "main.c").write_text(program)
    linear = robodyn.linearize(model, x, u, t=0.3)
    frames = robodyn.Kinematics(model)
    q = x[:n]
    tau = model.inverse_dynamics(q, x[n:], qdd)
    pose = frames.pose(q, frame)
    expected = np.concatenate([model.f(0.3, x, u), *(m.ravel() for m in (linear.A, linear.B, linear.C, linear.D)),
                               model.mass_matrix(q).ravel(), tau, qdd, pose.position, pose.rotation.ravel(),
                               frames.jacobian(q, frame).ravel()])
    compilers = [("gcc", "-O2"), ("gcc", "-O3 -march=native")]
    if shutil.which("clang"):
        compilers.append(("clang", "-O2"))
    for compiler, optimization in compilers:
        binary = tmp_path / f"main_{compiler}"
        done = subprocess.run([compiler, *STRICT, *optimization.split(), f"-I{export.directory}",
                               str(tmp_path / "main.c"), str(export.directory / f"{p}.c"), "-o", str(binary), "-lm"],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-3000:]
        printed = np.array(subprocess.run([str(binary)], capture_output=True, text=True, check=True).stdout.split(),
                           dtype=float)
        assert printed.size == expected.size
        for start, stop in _blocks(model, n):
            _close(printed[start:stop], expected[start:stop])


def _blocks(model: object, n: int) -> list[tuple[int, int]]:
    """The printed blocks' bounds (each compared at its own scale)."""
    nx, nu, ny = model.n_states, model.n_inputs, model.n_outputs
    sizes = [nx, nx * nx, nx * nu, ny * nx, ny * nu, n * n, n, n, 3, 9, 6 * n]
    bounds, start = [], 0
    for size in sizes:
        bounds.append((start, start + size))
        start += size
    return bounds


def test_the_export_writes_its_files_and_refuses_what_it_cannot(tmp_path: Path) -> None:
    model = _load(MODELS["puma560 chain"])
    export = export_c(model, tmp_path / "out", functions=["f", "linearize"], prefix="puma")
    assert sorted(f.name for f in export.files) == ["CMakeLists.txt", "Makefile", "puma.c", "puma.h"]
    header = (tmp_path / "out" / "puma.h").read_text()
    assert "#define puma_NX 12" in header and "void puma_f(" in header and "puma_mass" not in header
    assert "/* states: q1, q2" in header and "functions' hash: sha256" in header
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
    assert "void arm_fk_" in (tmp_path / "c" / "arm.h").read_text()
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


@pytest.mark.parametrize("name", [*sorted(set(robodyn.CATALOG) - {"two_link_arm"}), "decay"])
def test_symbolic_models_export_their_tapes_from_sympy(name: str, tmp_path: Path) -> None:
    """The catalog's Lagrangian and mechanical models (and a first-order file): strict C99, f, h and the exact A, B,
    C, D equal robodyn's to 1e-13 at the defaults and with parameters overridden; for second-order models M equals
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
    for params in (None, defaults * rng.uniform(0.5, 1.5, defaults.size)):
        x, u = rng.uniform(-1, 1, model.n_states), rng.uniform(-1, 1, model.n_inputs)
        overrides = None if params is None else dict(zip(model.parameters, params))
        _close(lib.f(0.2, x, u, params), model.f(0.2, x, u, overrides))
        _close(lib.h(0.2, x, u, params), model.h(0.2, x, u, overrides))
        linear = robodyn.linearize(model, x, u, t=0.2, params=overrides)
        for mine, theirs in zip(lib.linearize(0.2, x, u, params), (linear.A, linear.B, linear.C, linear.D)):
            _close(mine, theirs)
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
    from robodyn.integrate.tableaus import DOPRI5

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
