"""C export speed (docs/export.md): the exported functions per call in a C loop, against their peers, same run.

- **Panda forward dynamics**: ``panda_aba`` exported by robodyn from the stock example-robot-data URDF, timed in a
  C loop over 1,000 random points, against Pinocchio's ``pinocchio::aba`` on the same URDF timed in a C++ loop
  (compiled here against the ``pin`` wheel's headers and libraries, with cmeel-eigen and cmeel-urdfdom-headers
  from the ``bench`` extra; -O3 -DNDEBUG). When the headers are missing the peer is ``pinocchio.aba`` from
  Python, and the binding's call overhead (a call of ``pinocchio.neutral``, next to no work) is reported.
- **Pendulum f**: the catalog pendulum's exported ``pendulum_f`` against a hand-written C function of the same
  equation (theta'' = (tau - m g l sin theta) / (m l^2)), each in its own translation unit, same loop.

Both C programs are compiled with ``gcc -std=c99 -O2`` (the export's Makefile default) and with
``-O3 -march=native``; rounds alternate and the medians' ratios are printed (robodyn / peer: below 1 is faster).
Run: ``.venv/bin/python benchmarks/bench_export.py`` (``make bench`` runs it with the others).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import statistics
import subprocess
import tempfile
import warnings
from pathlib import Path

import numpy as np

import robodyn
from robodyn.export.c import export_c

ROUNDS = 5
LOOP = """#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "{p}.h"
#define K 1000
#define R {repeats}
{declaration}
static double a0[K][{n}], a1[K][{n}], a2[K][{n}];
int main(void)
{{
    {p}_params p = {p}_params_default();
    double out[{out}], sink = 0.0;
    int k, r, i;
    struct timespec s, e;
    srand(1);
    for (k = 0; k < K; ++k) for (i = 0; i < {n}; ++i) {{
        a0[k][i] = 2.0 * rand() / RAND_MAX - 1.0; a1[k][i] = 2.0 * rand() / RAND_MAX - 1.0;
        a2[k][i] = 2.0 * rand() / RAND_MAX - 1.0;
    }}
    clock_gettime(CLOCK_MONOTONIC, &s);
    for (r = 0; r < R; ++r) for (k = 0; k < K; ++k) {{ {call}; sink += out[0]; }}
    clock_gettime(CLOCK_MONOTONIC, &e);
    printf("%.4f %g\\n", ((e.tv_sec - s.tv_sec) * 1e9 + (e.tv_nsec - s.tv_nsec)) / ((double)R * K), sink);
    return 0;
}}
"""
HAND = """#include <math.h>
#include "pendulum.h"
void hand_f(double t, const double *x, const double *u, const pendulum_params *p, double *xdot)
{
    (void)t;
    xdot[0] = x[1];
    xdot[1] = (u[0] - p->m * p->g * p->l * sin(x[0])) / (p->m * p->l * p->l);
}
"""
PINOCCHIO = r"""#include <pinocchio/parsers/urdf.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char **argv)
{
    (void)argc;
    pinocchio::Model model;
    pinocchio::urdf::buildModel(argv[1], model);
    pinocchio::Data data(model);
    const int K = 1000, R = std::atoi(argv[2]);
    std::srand(1);
    std::vector<Eigen::VectorXd> q(K), v(K), tau(K);
    for (int k = 0; k < K; ++k) {
        q[k] = Eigen::VectorXd::Random(model.nq); v[k] = Eigen::VectorXd::Random(model.nv);
        tau[k] = Eigen::VectorXd::Random(model.nv);
    }
    double sink = 0.0;
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < R; ++r) for (int k = 0; k < K; ++k) {
        pinocchio::aba(model, data, q[k], v[k], tau[k]); sink += data.ddq[0];
    }
    auto stop = std::chrono::steady_clock::now();
    std::printf("%.4f %g\n", std::chrono::duration<double, std::nano>(stop - start).count() / (double(R) * K), sink);
    return 0;
}
"""
FLAGS = (("-O2",), ("-O3", "-march=native"))


def _compile(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"compile failed: {' '.join(command)}\n{done.stderr[-3000:]}")


def _time(binary: Path, *arguments: str) -> float:
    """ns per call printed by ``binary``."""
    done = subprocess.run([str(binary), *arguments], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[0])


def _loop(folder: Path, p: str, n: int, out: int, call: str, declaration: str, repeats: int, extra: list[Path],
          flags: tuple[str, ...], name: str) -> Path:
    source = folder / f"{name}.c"
    source.write_text(LOOP.format(p=p, n=n, out=out, call=call, declaration=declaration, repeats=repeats))
    binary = folder / name
    _compile(["gcc", "-std=c99", "-D_POSIX_C_SOURCE=199309L", *flags, f"-I{folder / p}", str(source),
              str(folder / p / f"{p}.c"), *map(str, extra), "-o", str(binary), "-lm"])
    return binary


def _pinocchio_binary(urdf: Path) -> Path | None:
    """The C++ loop against the pin wheel's headers (cached by the source's hash), or None without them."""
    import importlib.metadata

    try:
        prefix = Path(str(importlib.metadata.distribution("pin").locate_file("cmeel.prefix")))
    except importlib.metadata.PackageNotFoundError:
        return None
    include = prefix / "include"
    needed = [include / "pinocchio", include / "eigen3" / "Eigen", include / "urdfdom_headers" / "urdf_model"]
    if shutil.which("g++") is None or not all(path.exists() for path in needed):
        return None
    flags = ["-std=c++17", "-O3", "-DNDEBUG", "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
             "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]
    digest = hashlib.sha256((PINOCCHIO + " ".join(flags) + str(prefix)).encode()).hexdigest()[:16]
    binary = Path(tempfile.gettempdir()) / f"robodyn-bench-pinocchio-aba-{digest}"
    if not binary.exists():
        print("compiling Pinocchio's aba loop (C++, about a minute once) ...", flush=True)
        source = binary.with_suffix(".cpp")
        source.write_text(PINOCCHIO)
        _compile(["g++", *flags, str(source), f"-I{include}", f"-I{include / 'eigen3'}",
                  f"-I{include / 'urdfdom_headers'}", f"-L{prefix / 'lib'}", f"-Wl,-rpath,{prefix / 'lib'}",
                  "-lpinocchio_default", "-lpinocchio_parsers", "-lurdfdom_model", "-lconsole_bridge", "-o",
                  str(binary) + ".tmp"])
        os.replace(str(binary) + ".tmp", binary)
    return binary


def main() -> None:
    import importlib.metadata

    robots = importlib.metadata.distribution("example-robot-data").locate_file(
        "cmeel.prefix/share/example-robot-data/robots")
    urdf = Path(str(robots)) / "panda_description" / "urdf" / "panda.urdf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        panda = robodyn.load(str(urdf))
    pendulum = robodyn.load("pendulum")
    load = os.getloadavg()[0]
    print(f"load {load:.2f}; Panda {panda.n_coordinates} coordinates; rounds {ROUNDS}")
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        export_c(panda, folder / "panda", functions=["aba"])
        export_c(pendulum, folder / "pendulum", functions=["f"])
        (folder / "hand.c").write_text(HAND)
        n = panda.n_coordinates
        binaries = {}
        for flags in FLAGS:
            label = " ".join(flags)
            binaries[("panda", label)] = _loop(folder, "panda", n, n, "panda_aba(a0[k], a1[k], a2[k], &p, out)", "",
                                               200, [], flags, f"panda{len(binaries)}")
            binaries[("pendulum", label)] = _loop(folder, "pendulum", 2, 2, "pendulum_f(0.0, a0[k], a1[k], &p, out)",
                                                  "", 20000, [], flags, f"pendulum{len(binaries)}")
            binaries[("hand", label)] = _loop(
                folder, "pendulum", 2, 2, "hand_f(0.0, a0[k], a1[k], &p, out)",
                "void hand_f(double, const double *, const double *, const pendulum_params *, double *);", 20000,
                [folder / "hand.c"], flags, f"hand{len(binaries)}")
        peer = _pinocchio_binary(urdf)
        times: dict[str, list[float]] = {}
        for _ in range(ROUNDS):
            for (what, label), binary in binaries.items():
                times.setdefault(f"{what} {label}", []).append(_time(binary))
            if peer is not None:
                times.setdefault("pinocchio", []).append(_time(peer, str(urdf), "200"))
        if peer is None:
            times.update(_pinocchio_python(urdf))
    median = {key: statistics.median(values) for key, values in times.items()}
    for key, value in median.items():
        print(f"  {key:28s} {value:9.1f} ns/call  (rounds {', '.join(f'{v:.0f}' for v in times[key])})")
    reference = "pinocchio" if "pinocchio" in median else "pinocchio.aba from Python"
    for label in (" ".join(flags) for flags in FLAGS):
        print(f"Panda aba, exported C ({label}) / {reference}: {median['panda ' + label] / median[reference]:.2f}"
              "  (goal <= 1)")
        print(f"pendulum f, exported / hand-written C ({label}): "
              f"{median['pendulum ' + label] / median['hand ' + label]:.2f}  (goal <= 2)")
    print(f"load after {os.getloadavg()[0]:.2f}")


def _pinocchio_python(urdf: Path) -> dict[str, list[float]]:
    """``pinocchio.aba`` called from Python per call, and the binding's overhead (``pinocchio.neutral``)."""
    import time

    import pinocchio

    model = pinocchio.buildModelFromUrdf(str(urdf))
    data = model.createData()
    rng = np.random.default_rng(1)
    points = [(pinocchio.randomConfiguration(model), rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv))
              for _ in range(1000)]
    found: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for q, v, tau in points:
            pinocchio.aba(model, data, q, v, tau)
        found.setdefault("pinocchio.aba from Python", []).append((time.perf_counter() - start) / 1000 * 1e9)
        start = time.perf_counter()
        for _ in points:
            pinocchio.neutral(model)
        found.setdefault("binding overhead (neutral)", []).append((time.perf_counter() - start) / 1000 * 1e9)
    return found


if __name__ == "__main__":
    main()
