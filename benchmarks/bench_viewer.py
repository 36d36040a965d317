"""The 3-D view (issue 49): which three.js build goes into the page, how long a page takes to write and to become
interactive, and whether a 10 s run at 1 kHz plays at real time.

Run: ``python benchmarks/bench_viewer.py`` (needs example-robot-data, the viewer extra and chromium).

1. Library: the Panda's page with each build of :data:`robodyn.viewer.page.LIBRARIES` — its size, and the time from
   navigation to the first rendered frame in headless Chromium (SwiftShader), median of ``--rounds`` openings.
2. Writing: the Talos (reduced, 94 STL meshes) and Panda pages, cold (the first in this process: fk compiled, meshes
   read) and warm (the same page again: what a notebook user who re-runs a cell waits).
3. Playing: the Panda along a 10 s run sampled at 1 kHz (10,001 samples, shown at 601 instants); the page's clock
   read after 3 s of wall time from pressing play.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "viewer"))

from chromium_session import Chromium, available  # noqa: E402

import robodyn  # noqa: E402
from pinocchio_reference import ROBOTS  # noqa: E402
from robodyn.viewer.page import LIBRARIES  # noqa: E402
from robodyn.viewer.view import view  # noqa: E402

PANDA = "panda_description/urdf/panda.urdf"
TALOS = "talos_data/robots/talos_reduced.urdf"


def _interactive(browser: Chromium, page: Path) -> float:
    browser.open(page)
    browser.wait_for("window.robodynView && window.robodynView.rendered >= 1")
    return float(browser.evaluate("window.robodynView.interactiveAt")) / 1000


def libraries(folder: Path, rounds: int) -> None:
    model = robodyn.load(str(ROBOTS / PANDA))
    print(f"1. the Panda's page by three.js build, median of {rounds} openings in headless Chromium")
    with Chromium(1000, 700) as browser:
        for name, (package, file, what) in LIBRARIES.items():
            try:
                page = view(model, library=name).write(folder / f"panda-{name}.html")
            except robodyn.InputError:
                print(f"   {name:10s} not installed (pip install {package})")
                continue
            times = [_interactive(browser, page) for _ in range(rounds)]
            print(f"   {name:10s} {page.stat().st_size / 1e6:6.2f} MB  interactive in {statistics.median(times):.2f} s "
                  f"(min {min(times):.2f}, max {max(times):.2f})  [{what}: {package}/{file.split('/', 1)[1]}]")


def writing(folder: Path) -> None:
    print("2. writing a page (the file included)")
    for name, file in (("talos", TALOS), ("panda", PANDA)):
        model = robodyn.load(str(ROBOTS / file))
        for label in ("cold", "warm", "warm"):
            start = time.perf_counter()
            page = view(model, out=folder / f"{name}.html")
            print(f"   {name:6s} {label}: {time.perf_counter() - start:6.2f} s  {len(page.html) / 1e6:.2f} MB, "
                  f"{len(page.scene.links)} links")


def playing(folder: Path) -> None:
    model = robodyn.load(str(ROBOTS / PANDA))
    n = len(model.states) // 2
    t = np.linspace(0.0, 10.0, 10_001)
    q = np.zeros((len(t), n))
    q[:, 0] = np.sin(t)
    run = SimpleNamespace(t=t, x=np.hstack([q, np.zeros_like(q)]), states=model.states)
    start = time.perf_counter()
    page = view(model, trajectory=run).write(folder / "panda-run.html")
    print(f"3. a 10 s run at 1 kHz: page written in {time.perf_counter() - start:.2f} s, "
          f"{page.stat().st_size / 1e6:.2f} MB")
    with Chromium(1000, 700) as browser:
        _interactive(browser, page)
        browser.evaluate("window.robodynView.play()")
        wall = time.perf_counter()
        time.sleep(3.0)
        shown = float(browser.evaluate("window.robodynView.time"))
        elapsed = time.perf_counter() - wall
        frames = browser.evaluate("window.robodynView.rendered")
    print(f"   after {elapsed:.2f} s of wall time the page shows t = {shown:.2f} s (ratio {shown / elapsed:.3f}); "
          f"{frames} frames rendered")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if ROBOTS is None or not available():
        raise SystemExit("needs example-robot-data and chromium")
    folder = (Path("robodyn-out") / "bench_viewer").resolve()
    folder.mkdir(parents=True, exist_ok=True)
    writing(folder)
    libraries(folder, args.rounds)
    playing(folder)


if __name__ == "__main__":
    main()
