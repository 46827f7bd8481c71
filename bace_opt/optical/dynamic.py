"""Dynamic RSA simulation: the classic blocking-probability experiment (models/optical.md, section 3).

Requests arrive as a Poisson process of rate lambda = load / mean holding time (load in Erlang, eq. 7), hold
an exponential time (optionally truncated at a multiple of the mean), pick a source / destination pair uniformly
over the ordered pairs of ``nodes`` (or from ``pairs``), and ask for a number of slots drawn from ``sizes``:

    fixed:N        N data slots
    uniform:A:B    an integer uniform in [A, B] data slots
    gbps:A:B       an integer bit rate uniform in [A, B] Gbit/s, converted per candidate path by the format its
                   length allows (eq. 3)
plus the network's guard slots.  The RSA policy (rsa.py) picks a path and a block or blocks the request.
The first ``warmup`` requests are discarded; blocking probability (eq. 8) = blocked / offered over the rest.
Every draw comes from ``random.Random(str)``'s ``random()`` only, so a seed gives the same run on every
platform; a request's pair, size and holding time are drawn whether or not it is admitted (common random
numbers across policies).  ``estimate`` repeats the run over seeds and gives a Student-t confidence interval
(eq. 9); ``erlang_b`` is the reference for one link with one-slot requests.

The inner loop works on Python-int slot bitsets (spectrum.py) and precomputed candidate link lists; a
100,000-request NSFNET run takes about 2 s.
"""
from __future__ import annotations

import heapq
import logging
import math
import random
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

from ..errors import InputError
from ..instance.optical import OpticalNetwork
from .rsa import RsaPolicy, get_rsa_policy
from .spectrum import Lightpath, SpectrumGrid

log = logging.getLogger(__name__)

# Student t quantiles t_{0.975, df} for df = 1..30 (two-sided 95 %); beyond 30 the normal 1.96 is within 2 %.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
         2.042)


def t975(df: int) -> float:
    return _T975[df - 1] if 1 <= df <= len(_T975) else 1.96


def erlang_b(servers: int, load_erlang: float) -> float:
    """Erlang-B blocking of ``servers`` circuits offered ``load_erlang`` (eq. 10, stable recursion)."""
    b = 1.0
    for c in range(1, servers + 1):
        b = load_erlang * b / (c + load_erlang * b)
    return b


#: the most requests a run takes per seed (10^12 was accepted before: a 47-day run with no progress output)
MAX_REQUESTS = 100_000_000


@dataclass(frozen=True)
class RequestSizes:
    kind: str            # fixed | uniform | gbps
    lo: int
    hi: int

    @staticmethod
    def parse(text: str) -> "RequestSizes":
        parts = str(text).split(":")
        try:
            if parts[0] == "fixed" and len(parts) == 2:
                s = RequestSizes("fixed", int(parts[1]), int(parts[1]))
            elif parts[0] in ("uniform", "gbps") and len(parts) == 3:
                s = RequestSizes(parts[0], int(parts[1]), int(parts[2]))
            else:
                raise ValueError
        except ValueError:
            raise InputError(f"request sizes must be fixed:N, uniform:A:B (slots) or gbps:A:B (Gbit/s), "
                             f"got {text!r}") from None
        if not (1 <= s.lo <= s.hi):
            raise InputError(f"request sizes {text!r}: need 1 <= A <= B")
        return s

    def __str__(self) -> str:
        return f"fixed:{self.lo}" if self.kind == "fixed" else f"{self.kind}:{self.lo}:{self.hi}"


@dataclass(frozen=True)
class DynamicOptions:
    """One dynamic experiment.  ``k`` None: the network's k_paths.  ``metric`` / ``order``: eq. 2 (SP-FF and
    SD-FF fix their own).  ``directed``: each direction of a link a separate fibre.  ``truncate``: holding
    times cut at this multiple of the mean (None: not cut).  ``nodes``: the datacentres requests run between
    (None: every node); ``pairs``: explicit (src, dst) pairs instead."""
    load_erlang: float
    holding_s: float = 1.0
    requests: int = 100_000
    warmup: int = 10_000
    policy: str = "ksp-ff"
    sizes: RequestSizes = RequestSizes("fixed", 1, 1)
    k: int | None = None
    metric: str = "length"
    order: str = "length"
    directed: bool = False
    truncate: float | None = None
    nodes: tuple[str, ...] | None = None
    pairs: tuple[tuple[str, str], ...] | None = None

    def __post_init__(self):
        if isinstance(self.sizes, str):
            object.__setattr__(self, "sizes", RequestSizes.parse(self.sizes))
        probs = []
        if not (self.load_erlang > 0 and math.isfinite(self.load_erlang)):
            probs.append(f"load must be > 0 Erlang, got {self.load_erlang}")
        if not (self.holding_s > 0 and math.isfinite(self.holding_s)):
            probs.append(f"holding must be > 0 s, got {self.holding_s}")
        if not 1 <= self.requests <= MAX_REQUESTS:
            probs.append(f"requests must be in 1..{MAX_REQUESTS:,} per seed (about two minutes per 10^7 at the "
                         f"measured 130k requests per CPU-second), got {self.requests:,}")
        if not 0 <= self.warmup <= MAX_REQUESTS:
            probs.append(f"warmup must be in 0..{MAX_REQUESTS:,}, got {self.warmup:,}")
        if self.k is not None and self.k < 1:
            probs.append(f"k must be >= 1, got {self.k}")
        if self.truncate is not None and not self.truncate > 0:
            probs.append(f"truncate must be > 0 (a multiple of the mean holding time), got {self.truncate}")
        if probs:
            raise InputError(probs)


@dataclass
class DynamicRun:
    seed: int
    offered: int
    blocked: int
    offered_slots: int
    blocked_slots: int
    wall_s: float
    lightpaths: list = field(default_factory=list)   # (Lightpath, start_s, end_s) when recorded

    @property
    def blocking(self) -> float:
        return self.blocked / self.offered if self.offered else 0.0


@dataclass(frozen=True)
class BlockingEstimate:
    load_erlang: float
    policy: str
    mean: float
    half_width: float
    per_seed: tuple[float, ...]
    requests: int
    wall_s: float

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def to_dict(self) -> dict:
        return {"load_erlang": self.load_erlang, "policy": self.policy, "blocking": self.mean,
                "ci95_low": self.low, "ci95_high": self.high, "half_width": self.half_width,
                "seeds": len(self.per_seed), "requests_per_seed": self.requests, "wall_s": self.wall_s}


def _prepare(network: OpticalNetwork, opt: DynamicOptions, policy: RsaPolicy, grid: SpectrumGrid):
    """Pairs and, per pair, the candidate link tuples and a width function."""
    if opt.pairs is not None:
        pairs = [tuple(p) for p in opt.pairs]
    else:
        nodes = list(opt.nodes) if opt.nodes is not None else list(network.nodes)
        for n in nodes:
            if n not in network.graph:
                raise InputError(f"node {n!r} is not in the optical network")
        pairs = [(a, b) for a in nodes for b in nodes if a != b]
    if not pairs:
        raise InputError("dynamic simulation needs at least one source/destination pair")
    metric, order = policy.paths or (opt.metric, opt.order)
    k = network.k_paths if opt.k is None else opt.k
    cands = []
    for a, b in pairs:
        paths = network.candidate_paths(a, b, k=k, metric=metric, order=order)
        if policy.max_paths is not None:
            paths = paths[:policy.max_paths]
        if not paths:
            raise InputError(f"no path from {a!r} to {b!r} (unreachable pair)")
        cands.append((paths, [grid.links_of(p.nodes) for p in paths]))
    return pairs, cands


def simulate_dynamic(network: OpticalNetwork, options: DynamicOptions, seed: int = 0,
                     record: bool = False) -> DynamicRun:
    """One seeded run (eqs. 7-8).  ``record``: keep every admitted lightpath with its [start, end) for the
    checker (slower; tests)."""
    opt = options
    policy = get_rsa_policy(opt.policy)
    grid = SpectrumGrid(network, directed=opt.directed)
    pairs, cands = _prepare(network, opt, policy, grid)
    guard = network.guard_slots
    sz = opt.sizes
    gbps_mode = sz.kind == "gbps"
    rng = random.Random(f"bace-opt/optical/dynamic/{seed}")
    r = rng.random
    rate = opt.load_erlang / opt.holding_s
    hold_mean = opt.holding_s
    cap = math.inf if opt.truncate is None else opt.truncate * hold_mean
    n_pairs = len(pairs)
    span = sz.hi - sz.lo + 1
    occ = grid.occ
    heap: list = []
    push, pop = heapq.heappush, heapq.heappop
    choose = policy.choose
    t = 0.0
    offered = blocked = off_slots = blk_slots = 0
    total = opt.warmup + opt.requests
    lps: list = []
    log_ = math.log
    t_wall = time.perf_counter()
    for i in range(total):
        t += -log_(1.0 - r()) / rate
        while heap and heap[0][0] <= t:
            _, _, links, mask = pop(heap)
            inv = ~mask
            for e in links:
                occ[e] &= inv
        pi = int(r() * n_pairs)
        size = sz.lo + min(int(r() * span), span - 1)
        hold = min(-log_(1.0 - r()) * hold_mean, cap)
        paths, links = cands[pi]
        if gbps_mode:
            widths = [network.slots_for_gbps(size, p) + guard for p in paths]
        else:
            widths = [size + guard] * len(paths)
        c = choose(grid, links, widths)
        measured = i >= opt.warmup
        if measured:
            offered += 1
            off_slots += widths[0]
        if c is None:
            if measured:
                blocked += 1
                blk_slots += widths[0]
            continue
        j, f = c
        w = widths[j]
        mask = ((1 << w) - 1) << f
        ls = links[j]
        for e in ls:
            occ[e] |= mask
        push(heap, (t + hold, i, ls, mask))
        if record:
            lps.append((Lightpath(i, paths[j].nodes, f, w - guard, guard), t, t + hold))
    wall = time.perf_counter() - t_wall
    log.info("dynamic %s load %.4g seed %d: %d/%d blocked in %.2f s", opt.policy, opt.load_erlang, seed, blocked,
             offered, wall)
    return DynamicRun(seed, offered, blocked, off_slots, blk_slots, wall, lps)


def estimate(network: OpticalNetwork, options: DynamicOptions, seeds: Sequence[int] = (1, 2, 3, 4, 5)) -> BlockingEstimate:
    """Blocking probability over independent seeded runs with its 95 % Student-t interval (eq. 9)."""
    seeds = list(seeds)
    if not seeds:
        raise InputError("estimate needs at least one seed")
    t = time.perf_counter()
    vals = [simulate_dynamic(network, options, s).blocking for s in seeds]
    n = len(vals)
    mean = sum(vals) / n
    if n > 1:
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
        hw = t975(n - 1) * sd / math.sqrt(n)
    else:
        hw = math.inf
    return BlockingEstimate(options.load_erlang, options.policy, mean, hw, tuple(vals), options.requests,
                            time.perf_counter() - t)


def sweep(network: OpticalNetwork, options: DynamicOptions, loads: Sequence[float],
          seeds: Sequence[int] = (1, 2, 3, 4, 5), policies: Sequence[str] | None = None) -> list[BlockingEstimate]:
    """Blocking versus load (every load x policy), the same seeds for every point."""
    out = []
    for pol in (policies or [options.policy]):
        for load in loads:
            out.append(estimate(network, replace(options, load_erlang=float(load), policy=pol), seeds))
    return out


def sweep_frame(estimates: Sequence[BlockingEstimate]):
    import pandas as pd
    return pd.DataFrame([e.to_dict() for e in estimates])
