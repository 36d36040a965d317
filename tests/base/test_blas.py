"""robodyn.base.blas: one BLAS thread while robodyn's loops of small factorizations run, the process's setting given
back
after them (OpenBLAS's thread hand-offs cost 0.5-20 ms per small QR on two cores, against 0.14 ms of arithmetic)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

threadpoolctl = pytest.importorskip("threadpoolctl")

from robodyn.base.blas import one_blas_thread  # noqa: E402
from robodyn.identification import base_parameters as base_module  # noqa: E402


def _blas_threads() -> list[int]:
    return [entry["num_threads"] for entry in threadpoolctl.threadpool_info() if entry["user_api"] == "blas"]


@pytest.fixture()
def two_threads():
    """BLAS on two threads around the test (the machine may have one core: then there is nothing to limit)."""
    if not _blas_threads():
        pytest.skip("no BLAS library found by threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        if max(_blas_threads()) < 2:
            pytest.skip("BLAS runs one thread here")
        yield


def test_the_block_runs_on_one_thread_and_the_setting_comes_back(two_threads):
    before = _blas_threads()
    with one_blas_thread():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before
    with pytest.raises(RuntimeError), one_blas_thread():  # given back when the block raises too
        raise RuntimeError("inside")
    assert _blas_threads() == before


def test_the_identifications_factorizations_run_on_one_thread(two_threads, monkeypatch):
    seen: list[list[int]] = []
    original = scipy.linalg.qr

    def recording(*args, **kwargs):
        seen.append(_blas_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(base_module.scipy.linalg, "qr", recording)
    A = np.random.default_rng(0).standard_normal((450, 12))
    R = base_module.triangular_factor(A)
    rank, _, _ = base_module.regressor_rank(A)
    assert len(seen) >= 5 and all(set(threads) == {1} for threads in seen)
    assert max(_blas_threads()) >= 2
    # the factor is A's: R^T R = A^T A (rounding of a 450-row sum of products, relative to its size)
    np.testing.assert_allclose(R.T @ R, A.T @ A, rtol=0, atol=1e-12 * np.abs(A.T @ A).max())
    assert rank == 12


def test_the_command_line_runs_blas_on_one_thread_unless_told(monkeypatch, capsys):
    """numpy reads OPENBLAS_NUM_THREADS when it loads: a command sets it before, and keeps the user's own."""
    import os
    import subprocess
    import sys

    from robodyn.cli import main

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    assert main(["classify", "joint", "--json"]) == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "1"
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    assert main(["classify", "joint", "--json"]) == 0
    assert os.environ["OPENBLAS_NUM_THREADS"] == "2"
    capsys.readouterr()
    probe = ("import sys; from robodyn.cli import main; main(['classify', 'joint', '--json']); "
             "import threadpoolctl; print(max(e['num_threads'] for e in threadpoolctl.threadpool_info() "
             "if e['user_api'] == 'blas'), file=sys.stderr)")
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=environment, check=True)
    assert done.stderr.strip().splitlines()[-1] == "1"


def test_a_blas_loaded_after_the_first_limit_is_limited_too() -> None:
    """scipy's own OpenBLAS loads with scipy.linalg: a fresh process that limits BLAS first and imports scipy after
    still runs scipy's factorizations on one thread."""
    import json
    import subprocess
    import sys

    script = ("import json, threadpoolctl\nfrom robodyn.base.blas import one_blas_thread\n"
              "with one_blas_thread():\n    pass\nimport scipy.linalg\n"
              "with threadpoolctl.threadpool_limits(limits=2, user_api='blas'):\n    with one_blas_thread():\n"
              "        print(json.dumps([e['num_threads'] for e in threadpoolctl.threadpool_info()"
              " if e['user_api'] == 'blas']))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert set(json.loads(done.stdout.splitlines()[-1])) == {1}

