"""NumPy's ``default_rng(seed)`` stream for many seeds at once, in vectorized numpy.

The scalar engine draws its setup from ``np.random.default_rng(seed)`` (a ``PCG64`` bit
generator seeded through a ``SeedSequence``). To deal thousands of games a second with the same
cards, this module recomputes that generator's output for a whole array of seeds without
creating a ``Generator`` per game:

- :func:`pcg64_seed` is ``SeedSequence(seed).generate_state(4, uint64)`` and PCG64's seeding,
  giving each seed's 128-bit ``state`` and ``inc`` as (high, low) uint64 pairs;
- :func:`uint32_stream` is what successive ``next_uint32`` calls return: PCG64 steps its 128-bit
  LCG and outputs 64 bits (XSL-RR), which ``next_uint32`` hands out low half first, then high
  half (NumPy buffers the high half in ``has_uint32``/``uinteger``). Every draw MegaGem's setup
  makes (``shuffle``, ``permutation`` and small ``integers``) consumes only ``next_uint32``
  values, so one uint32 stream per game reproduces them all.

The draws themselves (Fisher-Yates with masked rejection, Lemire's bounded integers) are in
:mod:`gemenvs.megagem.batched.deal`. ``tests/test_megagem_batched.py`` checks the stream against
``np.random.default_rng`` for many seeds.
"""
from __future__ import annotations

import numpy as np

_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)

# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_XSHIFT = np.uint32(16)
_POOL_SIZE = 4

# PCG64's 128-bit multiplier (pcg64.h: PCG_DEFAULT_MULTIPLIER_128), as (high, low)
_MUL_HI = np.uint64(2549297995355413924)
_MUL_LO = np.uint64(4865540595714422341)
_MUL_LO0, _MUL_LO1 = _MUL_LO & _M32, _MUL_LO >> _S32


def _hashmix(value: np.ndarray, hash_const: list[int]) -> np.ndarray:
    """SeedSequence's ``hashmix`` on a uint32 array (``hash_const`` is one shared int, advanced)."""
    value = value ^ np.uint32(hash_const[0])
    hash_const[0] = (hash_const[0] * _MULT_A) & 0xFFFFFFFF
    value = value * np.uint32(hash_const[0])
    return value ^ (value >> _XSHIFT)


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """SeedSequence's ``mix`` of two uint32 arrays."""
    result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
    return result ^ (result >> _XSHIFT)


def seed_sequence_pool(seeds: np.ndarray) -> list[np.ndarray]:
    """The four uint32 pool words of ``SeedSequence(seed)`` for each int seed in 0..2**64-1.

    A seed is its little-endian 32-bit words; SeedSequence hashes missing pool words as zeros,
    so every such seed reads as ``[low, high, 0, 0]``.
    """
    seeds = np.asarray(seeds, dtype=np.uint64)
    entropy = [(seeds & _M32).astype(np.uint32), (seeds >> _S32).astype(np.uint32)]
    entropy += [np.zeros_like(entropy[0])] * (_POOL_SIZE - 2)
    hash_const = [_INIT_A]
    mixer = [_hashmix(entropy[i], hash_const) for i in range(_POOL_SIZE)]
    for i_src in range(_POOL_SIZE):
        for i_dst in range(_POOL_SIZE):
            if i_src != i_dst:
                mixer[i_dst] = _mix(mixer[i_dst], _hashmix(mixer[i_src], hash_const))
    return mixer


def pcg64_seed(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PCG64's state right after ``np.random.default_rng(seed)``: (state_hi, state_lo, inc_hi, inc_lo)."""
    pool = seed_sequence_pool(seeds)
    hash_const = _INIT_B
    words = []
    for i in range(8):  # generate_state(4, uint64): 8 uint32 words, cycling over the pool
        value = pool[i % _POOL_SIZE] ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_B) & 0xFFFFFFFF
        value = value * np.uint32(hash_const)
        words.append(value ^ (value >> _XSHIFT))
    w64 = [words[2 * k].astype(np.uint64) | (words[2 * k + 1].astype(np.uint64) << _S32) for k in range(4)]
    init_hi, init_lo, seq_hi, seq_lo = w64  # pcg64_set_seed: state = (w0, w1), sequence = (w2, w3)
    inc_hi = (seq_hi << np.uint64(1)) | (seq_lo >> np.uint64(63))
    inc_lo = (seq_lo << np.uint64(1)) | np.uint64(1)
    # pcg_setseq_128_srandom_r: state = 0; step; state += initstate; step
    hi, lo = inc_hi.copy(), inc_lo.copy()  # 0 * M + inc
    lo2 = lo + init_lo
    hi = hi + init_hi + (lo2 < lo).astype(np.uint64)
    hi, lo = _step(hi, lo2, inc_hi, inc_lo)
    return hi, lo, inc_hi, inc_lo


def _step(hi: np.ndarray, lo: np.ndarray, inc_hi: np.ndarray, inc_lo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One PCG64 LCG step, state * multiplier + inc (mod 2**128), on (high, low) uint64 arrays."""
    # the high half of lo * multiplier_low, from 32-bit halves
    a0, a1 = lo & _M32, lo >> _S32
    p00, p01, p10, p11 = a0 * _MUL_LO0, a0 * _MUL_LO1, a1 * _MUL_LO0, a1 * _MUL_LO1
    mid = (p00 >> _S32) + (p01 & _M32) + (p10 & _M32)
    new_hi = p11 + (p01 >> _S32) + (p10 >> _S32) + (mid >> _S32) + lo * _MUL_HI + hi * _MUL_LO
    new_lo = lo * _MUL_LO
    out_lo = new_lo + inc_lo
    out_hi = new_hi + inc_hi + (out_lo < new_lo)
    return out_hi, out_lo


def uint32_stream(state: tuple[np.ndarray, ...], count: int) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:
    """The next ``count`` (even) ``next_uint32`` values of each generator (none buffered), position by
    position, and the generators' state after them: returns ((count, G) uint32, (hi, lo, inc_hi, inc_lo))."""
    if count % 2:
        raise ValueError("uint32_stream draws whole 64-bit outputs: count must be even")
    gen = PCG64Batch(state)
    out = np.empty((count, gen.hi.shape[0]), dtype=np.uint32)
    gen.fill(out)
    return out, gen.state


class PCG64Batch:
    """G PCG64 generators stepped together in place: PCG64's 128-bit LCG step (as :func:`_step`) and its
    XSL-RR output (rotate-right of high ^ low by high >> 58), with every intermediate in preallocated
    scratch arrays (a generator step is about 25 numpy calls; new arrays for each would cost as much again)."""

    def __init__(self, state: tuple[np.ndarray, ...]):
        hi, lo, inc_hi, inc_lo = state
        self.hi, self.lo = hi.astype(np.uint64, copy=True), lo.astype(np.uint64, copy=True)
        self.inc_hi, self.inc_lo = inc_hi, inc_lo
        self._scratch = np.empty((6, hi.shape[0]), np.uint64)
        self._carry = np.empty(hi.shape[0], np.bool_)

    @property
    def state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(hi, lo, inc_hi, inc_lo), copies."""
        return self.hi.copy(), self.lo.copy(), self.inc_hi, self.inc_lo

    def fill(self, out: np.ndarray) -> None:
        """Write the next ``len(out)`` (even) ``next_uint32`` values of every generator into ``out`` (rows, G)."""
        if len(out) % 2:
            raise ValueError("PCG64Batch.fill draws whole 64-bit outputs: an even number of rows")
        hi, lo, inc_hi, inc_lo, carry = self.hi, self.lo, self.inc_hi, self.inc_lo, self._carry
        a0, a1, p01, p10, t, x = self._scratch
        rsh, lsh, band, mul = np.right_shift, np.left_shift, np.bitwise_and, np.multiply
        for k in range(0, len(out), 2):
            # state = state * multiplier + inc (mod 2**128); the high half of lo * multiplier_low from 32-bit halves
            band(lo, _M32, out=a0)
            rsh(lo, _S32, out=a1)
            mul(a0, _MUL_LO0, out=t)
            rsh(t, _S32, out=t)            # mid = (p00 >> 32) + (p01 & M32) + (p10 & M32)
            mul(a0, _MUL_LO1, out=p01)
            mul(a1, _MUL_LO0, out=p10)
            band(p01, _M32, out=a0)
            t += a0
            band(p10, _M32, out=a0)
            t += a0
            rsh(t, _S32, out=t)
            rsh(p01, _S32, out=p01)
            rsh(p10, _S32, out=p10)
            mul(a1, _MUL_LO1, out=a1)      # p11
            a1 += p01
            a1 += p10
            a1 += t                        # the high half of lo * multiplier_low
            mul(hi, _MUL_LO, out=hi)
            hi += a1
            mul(lo, _MUL_HI, out=t)
            hi += t
            mul(lo, _MUL_LO, out=lo)
            lo += inc_lo
            hi += inc_hi
            np.less(lo, inc_lo, out=carry)
            hi += carry
            # XSL-RR output: rotate-right(high ^ low, high >> 58)
            np.bitwise_xor(hi, lo, out=x)
            rsh(hi, _ROT, out=a0)
            rsh(x, a0, out=a1)
            np.subtract(_64, a0, out=a0)
            a0 &= _63
            lsh(x, a0, out=x)
            x |= a1
            np.copyto(out[k], x, casting="unsafe")  # next_uint32: the low half first, then the high half
            rsh(x, _S32, out=x)
            np.copyto(out[k + 1], x, casting="unsafe")


_ROT, _64, _63 = np.uint64(58), np.uint64(64), np.uint64(63)


__all__ = ["PCG64Batch", "pcg64_seed", "seed_sequence_pool", "uint32_stream"]
