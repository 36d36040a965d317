"""MJCF robots against MuJoCo, side by side in one run (issue 50's speed goals).

- Loading the DeepMind control suite's humanoid (a free-floating base and 21 hinges) and its first ``f`` in a new
  process: cold (an empty robodyn cache: the tape compiled) and warm (the same cache, as a user's second run; goal
  <= 3 s), beside MuJoCo's ``MjModel.from_xml_path`` and first ``mj_forward`` in a new process;
- the forward dynamics of the Kinova Jaco arm per call from Python, ``model.f(t, x, u)`` against ``mujoco.mj_forward``
  on the same model with contact, limits and frictionloss disabled (the physics robodyn computes; goal: robodyn's call
  no slower).

Needs ``mujoco`` and ``dm_control`` (their model files), both in the test extra.

    python benchmarks/bench_mjcf.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
from timing import best_of  # benchmarks/timing.py

ROOT = Path(__file__).resolve().parents[1]

ROBODYN_FIRST = textwrap.dedent("""
    import json, sys, time, warnings
    start = time.perf_counter()
    import numpy as np
    import robodyn
    warnings.simplefilter("ignore")
    model = robodyn.load(sys.argv[1])
    x = np.zeros(len(model.states)); x[6] = 1.0; x[2] = 1.3
    model.f(0.0, x, np.zeros(len(model.inputs)))
    print(json.dumps({"first": time.perf_counter() - start}))
""")
MUJOCO_FIRST = textwrap.dedent("""
    import json, sys, time
    start = time.perf_counter()
    import mujoco
    model = mujoco.MjModel.from_xml_path(sys.argv[1])
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    print(json.dumps({"first": time.perf_counter() - start}))
""")


def package_folder() -> Path:
    spec = importlib.util.find_spec("dm_control")
    if spec is None or spec.origin is None:
        raise SystemExit("bench_mjcf.py needs dm_control (pip install dm_control)")
    return Path(spec.origin).parent


def run(script: str, path: Path, cache: str) -> float:
    """Seconds from start to the first evaluation, in a new process with the robodyn cache ``cache``."""
    env = {**os.environ, "ROBODYN_CACHE_DIR": cache,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark process failed:\n{done.stderr}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["first"])


def first_call(rounds: int) -> None:
    path = package_folder() / "suite" / "humanoid.xml"
    with tempfile.TemporaryDirectory() as cache:
        cold = run(ROBODYN_FIRST, path, cache)
        warm = min(run(ROBODYN_FIRST, path, cache) for _ in range(rounds))
    peer = min(run(MUJOCO_FIRST, path, "") for _ in range(rounds))
    print(f"humanoid: load + first f, new process: cold {cold:.2f} s, warm {warm:.2f} s (goal <= 3 s); MuJoCo "
          f"load + first mj_forward {peer:.2f} s; warm / MuJoCo = {warm / peer:.1f}")


def per_call(quick: bool) -> None:
    import mujoco

    sys.path.insert(0, str(ROOT / "src"))
    import robodyn

    folder = Path(tempfile.mkdtemp())
    shutil.copytree(package_folder() / "third_party" / "kinova", folder, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    path = folder / "jaco_arm.xml"  # both sides without contact, limits and dry friction: the same physics
    flags = '<option><flag contact="disable" limit="disable" frictionloss="disable"/></option>'
    path.write_text(path.read_text().replace('<mujoco model="jaco_arm">', '<mujoco model="jaco_arm">' + flags, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = robodyn.load(str(path))
    model = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(model)
    rng = np.random.default_rng(0)
    q, v = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)
    data.qpos[:], data.qvel[:] = q, v
    x, u = np.concatenate([q, v]), np.zeros(len(robot.inputs))
    robot.f(0.0, x, u)  # compiled once, outside the timing
    number, repeat = (2_000, 3) if quick else (20_000, 7)
    # this thread's CPU time: on a shared machine other processes stretch wall time, not it
    ours = best_of(lambda: robot.f(0.0, x, u), repeat, number, clock=time.thread_time)
    theirs = best_of(lambda: mujoco.mj_forward(model, data), repeat, number, clock=time.thread_time)
    print(f"Jaco forward dynamics per call (CPU time): robodyn model.f {ours * 1e6:.2f} us, mujoco.mj_forward "
          f"{theirs * 1e6:.2f} us; MuJoCo / robodyn = {theirs / ours:.2f} (goal >= 1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}  load: {os.getloadavg()[0]:.2f}")
    per_call(args.quick)
    first_call(1 if args.quick else 3)


if __name__ == "__main__":
    main()
