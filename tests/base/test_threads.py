"""robodyn.base.threads: contiguous pieces over the CPUs, errors raised on the caller."""

from __future__ import annotations

import threading

import pytest

from robodyn.base.threads import in_pieces, usable_cpus


def test_the_pieces_cover_the_range_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    seen: list[tuple[int, int, int]] = []
    in_pieces(lambda a, b: seen.append((a, b, threading.get_ident())), 1000, minimum=100)
    assert len(seen) == min(3, usable_cpus())
    assert sorted(i for a, b, _ in seen for i in range(a, b)) == list(range(1000))
    main = [ident for a, _, ident in seen if a == 0]
    assert main == [threading.get_ident()]  # the calling thread takes the first piece


def test_small_ranges_and_one_cpu_stay_on_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[int, int]] = []
    in_pieces(lambda a, b: seen.append((a, b)), 100, minimum=256)
    assert seen == [(0, 100)]
    monkeypatch.setenv("NUMBA_NUM_THREADS", "1")
    seen.clear()
    in_pieces(lambda a, b: seen.append((a, b)), 10_000, minimum=1)
    assert usable_cpus() == 1 and seen == [(0, 10_000)]


def test_an_error_in_any_piece_is_raised_after_all_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUMBA_NUM_THREADS", "2")
    if usable_cpus() < 2:
        pytest.skip("one CPU: no second piece")
    ended: list[int] = []

    def piece(a: int, b: int) -> None:
        if a > 0:
            raise ValueError("second piece")
        ended.append(a)

    with pytest.raises(ValueError, match="second piece"):
        in_pieces(piece, 1000, minimum=10)
    assert ended == [0]
