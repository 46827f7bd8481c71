"""The dynamic experiment's inner loop: the request stream and the event loop (models/optical.md, section 3).

Request stream (``request_chunks``): numpy's PCG64 seeded by (seed, stream tag) draws, per chunk of
``CHUNK`` requests and in this order, the inter-arrival times (exponential, rate = load / mean holding), the
pair indices (uniform), the sizes (uniform integers in [lo, hi]) and one uniform number per holding time,
turned into an exponential holding time of the given mean, either uncut, clipped at ``cap`` (``clip``:
min(h, cap)) or drawn conditionally below ``cap`` (``redraw``: redrawing until h < cap, done exactly by the
inverse of the truncated distribution, h = -m ln(1 - u (1 - e^(-cap/m))), so one uniform number per request
whatever the policy: common random numbers).  Memory is one chunk, whatever the number of requests.

Event loop: per link a Python-int slot bitset (bit s = slot s in use); per key (pair, size) the candidate
entries (link ids, width mask 2^w - 1, doubling shifts) are built once; a block of w slots fits where
``m = free & free >> 1 & ...`` (w - 1 shifts done by doubling) has a bit; first fit takes ``m & -m`` and the
block's mask is that bit times (2^w - 1).  Departures sit in a heap.  KSP-FF / SP-FF / SD-FF run in
``ff_loop``, KSP-LF / FF-KSP / LF-KSP in ``across_loop``; the other policies call ``RsaPolicy.choose`` on the
same stream (``policy_loop``), which also records lightpaths for the checker.
"""
from __future__ import annotations

import heapq
import math
from typing import Callable, Iterator

import numpy as np

from .rsa import RsaPolicy
from .spectrum import Lightpath, SpectrumGrid

CHUNK = 8192
INF = math.inf
HOLD_MODES = ("clip", "redraw")


def request_chunks(seed: int, total: int, rate: float, n_pairs: int, lo: int, hi: int, hold_mean: float,
                   cap: float | None, mode: str = "clip") -> Iterator[tuple[list, list, list, np.ndarray]]:
    """Chunks (arrival times, keys, holding times, keys as an array) of ``total`` requests (module docstring);
    key = pair index x (hi - lo + 1) + size - lo."""
    g = np.random.Generator(np.random.PCG64(np.random.SeedSequence([int(seed), 31])))
    t0 = 0.0
    done = 0
    span = hi - lo + 1
    scale = None if cap is None or mode != "redraw" else -math.expm1(-cap / hold_mean)
    while done < total:
        n = min(CHUNK, total - done)
        t = np.cumsum(g.standard_exponential(n) / rate) + t0
        t0 = float(t[-1])
        keys = g.integers(0, n_pairs, n) * span + (g.integers(lo, hi + 1, n) - lo)
        u = g.random(n)
        if scale is not None:
            hold = -hold_mean * np.log1p(-u * scale)
        else:
            hold = -hold_mean * np.log1p(-u)
            if cap is not None:
                np.minimum(hold, cap, out=hold)
        yield t.tolist(), keys.tolist(), hold.tolist(), keys
        done += n


def doubling_shifts(w: int) -> tuple[int, ...]:
    """The shifts s1, s2, ... with m &= m >> s_i turning a free mask into the starts of free w-slot runs."""
    out = []
    have = 1
    while have < w:
        step = min(have, w - have)
        out.append(step)
        have += step
    return tuple(out)


class State:
    """The loop's state between calls (warm-up, then the measured requests): occupancy, departures, clock."""

    def __init__(self, grid: SpectrumGrid):
        self.grid = grid
        self.heap: list = []
        self.seq = 0
        self.pending = None
        self.first_width = None      # keys (numpy) -> block widths on the first candidate (offered slots)
        self.offered_slots = 0
        self.blocked_slots = 0
        self.blocked_keys: list[int] = []

    def count(self, keys) -> None:
        """Add a chunk's offered slots and the blocked slots of the keys blocked so far (then forget them)."""
        if self.first_width is not None:
            self.offered_slots += int(self.first_width(keys).sum())
            if self.blocked_keys:
                self.blocked_slots += int(self.first_width(np.array(self.blocked_keys)).sum())
        self.blocked_keys.clear()

    def take(self, chunks, left: int):
        """The next at most ``left`` requests of the stream (a chunk, or the rest of a split one)."""
        pend = self.pending if self.pending is not None else next(chunks)
        if len(pend[0]) > left:
            self.pending = tuple(x[left:] for x in pend)
            return tuple(x[:left] for x in pend)
        self.pending = None
        return pend


def ff_loop(state: State, chunks, n: int, table, tick: Callable | None = None) -> int:
    """KSP-FF (and SP-FF / SD-FF, whose tables hold one path): ``n`` requests from ``chunks``; ``table[key]``
    holds the candidate entries (links, width mask, shifts).  Returns the number blocked."""
    occ = state.grid.occ
    full = state.grid.full
    heap = state.heap
    push, pop = heapq.heappush, heapq.heappop
    blocked = 0
    seq = state.seq
    nxt = heap[0][0] if heap else INF
    left = n
    while left > 0:
        t_l, k_l, h_l, keys = state.take(chunks, left)
        left -= len(t_l)
        state.count(keys)
        for t, key, hold in zip(t_l, k_l, h_l):
            if nxt <= t:                              # departures first
                while heap and heap[0][0] <= t:
                    _, _, ls, mask = pop(heap)
                    for e in ls:
                        occ[e] ^= mask
                nxt = heap[0][0] if heap else INF
            for ls, wm, steps in table[key]:
                o = 0
                for e in ls:
                    o |= occ[e]
                m = full ^ o
                for st in steps:
                    m &= m >> st
                if m:
                    mask = (m & -m) * wm
                    for e in ls:
                        occ[e] |= mask
                    seq += 1
                    end = t + hold
                    push(heap, (end, seq, ls, mask))
                    if end < nxt:
                        nxt = end
                    break
            else:
                blocked += 1
                state.blocked_keys.append(key)
        if tick is not None:
            tick(len(t_l))
    state.seq = seq
    return blocked


def across_loop(state: State, chunks, n: int, table, last: bool, across: bool, tick: Callable | None = None) -> int:
    """KSP-LF (``last``), FF-KSP (``across``) and LF-KSP (both); as ``ff_loop``."""
    occ = state.grid.occ
    full = state.grid.full
    heap = state.heap
    push, pop = heapq.heappush, heapq.heappop
    blocked = 0
    seq = state.seq
    nxt = heap[0][0] if heap else INF
    left = n
    while left > 0:
        t_l, k_l, h_l, keys = state.take(chunks, left)
        left -= len(t_l)
        state.count(keys)
        for t, key, hold in zip(t_l, k_l, h_l):
            if nxt <= t:
                while heap and heap[0][0] <= t:
                    _, _, ls, mask = pop(heap)
                    for e in ls:
                        occ[e] ^= mask
                nxt = heap[0][0] if heap else INF
            best = best_f = 0
            for ls, wm, steps in table[key]:
                o = 0
                for e in ls:
                    o |= occ[e]
                m = full ^ o
                for st in steps:
                    m &= m >> st
                if m:
                    f = (1 << (m.bit_length() - 1)) if last else (m & -m)
                    if not best or (f > best_f if last else f < best_f):
                        best, best_f, bls = f * wm, f, ls
                        if not across:
                            break
            if not best:
                blocked += 1
                state.blocked_keys.append(key)
                continue
            for e in bls:
                occ[e] |= best
            seq += 1
            end = t + hold
            push(heap, (end, seq, bls, best))
            if end < nxt:
                nxt = end
        if tick is not None:
            tick(len(t_l))
    state.seq = seq
    return blocked


def policy_loop(state: State, chunks, n: int, table, widths, policy: RsaPolicy, paths_of: Callable,
                guard: int, record: list | None, first_id: int, tick: Callable | None = None) -> int:
    """As ``ff_loop`` for any policy (``policy.choose``; ``widths[key]``: the block width per candidate);
    ``record``: append (Lightpath, start, end) of every admitted request (``paths_of(key)`` gives its Path
    objects)."""
    grid = state.grid
    occ = grid.occ
    heap = state.heap
    push, pop = heapq.heappush, heapq.heappop
    blocked = 0
    choose = policy.choose
    left = n
    rid = first_id
    while left > 0:
        t_l, k_l, h_l, keys = state.take(chunks, left)
        left -= len(t_l)
        state.count(keys)
        for t, key, hold in zip(t_l, k_l, h_l):
            while heap and heap[0][0] <= t:
                _, _, ls, mask = pop(heap)
                for e in ls:
                    occ[e] ^= mask
            cand, ws = table[key], widths[key]
            c = choose(grid, [x[0] for x in cand], ws)
            rid += 1
            if c is None:
                blocked += 1
                state.blocked_keys.append(key)
                continue
            j, f = c
            ls, w = cand[j][0], ws[j]
            mask = ((1 << w) - 1) << f
            for e in ls:
                occ[e] |= mask
            state.seq += 1
            push(heap, (t + hold, state.seq, ls, mask))
            if record is not None:
                record.append((Lightpath(rid - 1, paths_of(key)[j].nodes, f, w - guard, guard), t, t + hold))
        if tick is not None:
            tick(len(t_l))
    return blocked
