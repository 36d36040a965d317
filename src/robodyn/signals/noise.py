"""Seeded white noise held per sample: :class:`WhiteNoise`, reproducible whatever steps the integrator takes.

On the k-th sample interval [start + k T, start + (k + 1) T) the value is mean + std * N_k, where N_k is a
standard normal number that is a pure function of (seed, k): no generator state is carried from one evaluation to
the next, so the same instant gives the same number however often, in whatever order and on whichever path (the
compiled input evaluator, the interpreted one, ``WhiteNoise(t)``) it is asked.

N_k is made by a counter-based generator: Philox4x32-10 (Salmon, Moraes, Dror & Shaw, "Parallel random numbers: as
easy as 1, 2, 3", SC '11, 2011; the Random123 library's reference), counter (k mod 2^64 as two 32-bit words, 0, 0)
and key (the seed's two 32-bit words), gives four 32-bit words; two 53-bit uniforms u1 in (0, 1] and u2 in [0, 1)
are made from them, and N_k = sqrt(-2 ln u1) cos(2 pi u2) (Box & Muller, "A note on the generation of random normal
deviates", Ann. Math. Statist. 29(2), 1958). The same arithmetic is written three times: vectorized with numpy here
(for ``WhiteNoise(t)`` on arrays of times), on Python's ints here (one time: :func:`standard_normal`) and on plain
integers in the evaluator template ``signals/kernel.py`` (numba's
int64 or Python's ints: every product fits in 63 bits), the logarithm and cosine from the C library on both paths,
so both give the same bits (tests/signals/test_noise.py checks them against each other and Philox against the
Random123 known-answer vectors).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from robodyn.base.errors import InputError
from robodyn.base.numbers import finite_number, is_real_number
from robodyn.signals.core import MAX_EDGES, Array, Signal, _set

__all__ = ["MAX_SEED", "WhiteNoise", "philox4x32", "standard_normal", "standard_normals"]

#: Seeds are integers in [0, MAX_SEED): exact in a float64 (the compiled evaluator reads its numbers as floats).
MAX_SEED: Final = 2 ** 53
_MASK: Final = 0xFFFFFFFF
_M0: Final = 0xD2511F53  # Philox4x32's multipliers and Weyl key increments (Salmon et al. 2011, table 2)
_M1: Final = 0xCD9E8D57
_W0: Final = 0x9E3779B9
_W1: Final = 0xBB67AE85
ROUNDS: Final = 10
_TWO_53: Final = 2.0 ** -53

Words = NDArray[np.uint64]


def _mulhilo(a: int, b: Words) -> tuple[Words, Words]:
    product = np.uint64(a) * b  # < 2^64: exact in uint64
    return product >> np.uint64(32), product & np.uint64(_MASK)


def philox4x32(counter: tuple[Words, Words, Words, Words], key: tuple[Words, Words], rounds: int = ROUNDS
               ) -> tuple[Words, Words, Words, Words]:
    """Philox4x32-``rounds`` of the 32-bit words ``counter`` and ``key`` (uint64 arrays holding 32-bit values, all
    of one shape): the four output words (Salmon et al. 2011, section 3.2)."""
    x0, x1, x2, x3 = (np.asarray(c, dtype=np.uint64) for c in counter)
    k0, k1 = (np.asarray(k, dtype=np.uint64) for k in key)
    for r in range(rounds):
        if r:
            k0 = (k0 + np.uint64(_W0)) & np.uint64(_MASK)
            k1 = (k1 + np.uint64(_W1)) & np.uint64(_MASK)
        hi0, lo0 = _mulhilo(_M0, x0)
        hi1, lo1 = _mulhilo(_M1, x2)
        x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
    return x0, x1, x2, x3


def standard_normals(seed: int, k: NDArray[np.int64]) -> Array:
    """N_k (same shape as ``k``) of the stream ``seed`` (see the module docstring)."""
    k = np.asarray(k, dtype=np.int64)
    bits = k.astype(np.uint64)  # two's complement: k mod 2^64
    words = (bits & np.uint64(_MASK), bits >> np.uint64(32), np.zeros_like(bits), np.zeros_like(bits))
    key = (np.full_like(bits, seed & _MASK), np.full_like(bits, seed >> 32))
    r0, r1, r2, r3 = philox4x32(words, key)
    first = (r0 >> np.uint64(5)).astype(np.float64) * 67108864.0 + (r1 >> np.uint64(6)).astype(np.float64)
    second = (r2 >> np.uint64(5)).astype(np.float64) * 67108864.0 + (r3 >> np.uint64(6)).astype(np.float64)
    u1 = 1.0 - first * _TWO_53  # (0, 1]: its logarithm is finite
    u2 = second * _TWO_53
    # the C library's log and cos, as the compiled evaluator calls them (numpy's own SIMD loops may differ by an ulp)
    logs = np.fromiter((math.log(v) for v in u1.ravel()), float, u1.size).reshape(u1.shape)
    cosines = np.fromiter((math.cos(2.0 * math.pi * v) for v in u2.ravel()), float, u2.size).reshape(u2.shape)
    return np.sqrt(-2.0 * logs) * cosines


@functools.lru_cache(maxsize=64)
def _round_keys(seed: int) -> tuple[tuple[int, int], ...]:
    """Philox4x32's key of each round for the key ``seed`` (its two words bumped by the Weyl increments)."""
    k0, k1 = seed & _MASK, seed >> 32
    keys = [(k0, k1)]
    for _ in range(ROUNDS - 1):
        k0, k1 = (k0 + _W0) & _MASK, (k1 + _W1) & _MASK
        keys.append((k0, k1))
    return tuple(keys)


def standard_normal(seed: int, k: int) -> float:
    """N_k of the stream ``seed`` for one integer k: :func:`standard_normals`' arithmetic on Python's ints (the
    evaluator template's too), bit for bit, without its arrays — a time at a time (a sampled loop's instants) costs
    microseconds instead of a hundred numpy calls."""
    x0, x1, x2, x3 = k & _MASK, (k >> 32) & _MASK, 0, 0  # k mod 2^64 as two words, as the uint64 cast
    for k0, k1 in _round_keys(seed):
        product0, product1 = _M0 * x0, _M1 * x2  # < 2^64: exact
        x0, x1, x2, x3 = (product1 >> 32) ^ x1 ^ k0, product1 & _MASK, (product0 >> 32) ^ x3 ^ k1, product0 & _MASK
    u1 = 1.0 - (float(x0 >> 5) * 67108864.0 + float(x1 >> 6)) * _TWO_53
    u2 = (float(x2 >> 5) * 67108864.0 + float(x3 >> 6)) * _TWO_53
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def _seed(value: object) -> int:
    if not is_real_number(value) or (isinstance(value, float | np.floating) and not (
            math.isfinite(value) and float(value).is_integer())):
        raise InputError(f"WhiteNoise seed must be an integer in [0, 2**53), got {value!r}: give a whole number")
    seed = int(value)  # type: ignore[call-overload]
    if not 0 <= seed < MAX_SEED or seed != value:
        raise InputError(f"WhiteNoise seed must be an integer in [0, 2**53), got {value!r}: give a whole number")
    return seed


@dataclass(frozen=True, slots=True, init=False)
class WhiteNoise(Signal):
    """White noise held per sample: u(t) = mean + std * N_k on [start + k T, start + (k + 1) T).

    Parameters
    ----------
    std
        The standard deviation (>= 0).
    sample
        The hold period T in s (> 0).
    seed
        An integer in [0, 2**53): the stream. Two seeds give independent streams; one seed the same numbers in
        every run.
    mean
        The mean value.
    start
        Where the sample intervals are counted from (the intervals also extend before it).

    A sampled block that reads it at its instants t_k = start + k T sees one independent N_k per instant: white
    noise of variance std**2 per sample (a continuous white noise of intensity q held over T has std = sqrt(q / T)).
    Every interval's start is a breakpoint, so integrators stop there.

    Examples
    --------
    >>> noise = WhiteNoise(0.1, 0.01, seed=7)
    >>> noise(0.012) == noise(0.0199)
    True
    """

    std: float
    sample: float
    seed: int
    mean: float
    start: float

    def __init__(self, std: float, sample: float, seed: float, mean: float = 0.0, start: float = 0.0):
        _set(self, "std", finite_number(std, "WhiteNoise std", nonnegative="{what} must be >= 0, got {number}"))
        _set(self, "sample", finite_number(sample, "WhiteNoise sample (the hold period)",
                                           positive="{what} must be > 0, got {number}"))
        _set(self, "seed", _seed(seed))
        _set(self, "mean", finite_number(mean, "WhiteNoise mean"))
        _set(self, "start", finite_number(start, "WhiteNoise start"))

    def index(self, tp: Array) -> NDArray[np.int64]:
        """k of the sample interval [start + k T, start + (k + 1) T) holding each time of ``tp`` (the interval's
        edges computed as the breakpoints are, so both sides agree at an edge)."""
        k = np.floor((tp - self.start) / self.sample)
        before = tp < self.start + k * self.sample
        after = ~before & (tp >= self.start + (k + 1) * self.sample)
        return np.where(before, k - 1, np.where(after, k + 1, k)).astype(np.int64)

    def _eval(self, t: Array, tp: Array) -> Array:
        times = np.asarray(tp, dtype=float)
        if times.ndim == 0:  # one time: the integer path, the same bits (tests/signals/test_noise.py)
            return np.asarray(self.mean + self.std * standard_normal(self.seed, self._one_index(float(times))))
        return self.mean + self.std * standard_normals(self.seed, self.index(times))

    def _one_index(self, t: float) -> int:
        """:meth:`index` of one time, the same float operations on Python's floats."""
        k = float(math.floor((t - self.start) / self.sample))
        if t < self.start + k * self.sample:
            return int(k) - 1
        return int(k) + 1 if t >= self.start + (k + 1.0) * self.sample else int(k)

    def _breaks(self, t0: float, t1: float) -> Array:
        first = math.floor((t0 - self.start) / self.sample) - 1.0
        last = math.floor((t1 - self.start) / self.sample) + 1.0
        if last - first > MAX_EDGES:
            raise InputError(f"WhiteNoise with sample {self.sample:g} s has more than {MAX_EDGES} intervals in "
                             f"({t0}, {t1}): shorten the interval or lengthen the sample period")
        return self.start + np.arange(first, last + 1.0) * self.sample
