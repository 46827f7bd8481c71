"""Dynamic RSA simulation: the classic blocking-probability experiment (models/optical.md, section 3).

Requests arrive as a Poisson process of rate lambda = load / mean holding time (load in Erlang, eq. 7), hold
an exponential time (optionally truncated at a multiple of the mean: clipped there, or redrawn until below it,
which makes the real mean 0.687 x nominal at 2 x the mean), pick a source / destination pair uniformly
over the ordered pairs of ``nodes`` (or from ``pairs``), and ask for a number of slots drawn from ``sizes``:

    fixed:N        N data slots
    uniform:A:B    an integer uniform in [A, B] data slots
    gbps:A:B       an integer bit rate uniform in [A, B] Gbit/s, converted per candidate path by the format its
                   length allows (eq. 3)
plus the network's guard slots.  The RSA policy (rsa.py) picks a path and a block or blocks the request.
The first ``warmup`` requests are discarded; blocking probability (eq. 8) = blocked / offered over the rest.
Every draw comes from numpy's PCG64 seeded by the seed (engine.py); a request's pair, size and holding time are
drawn whether or not it is admitted (common random numbers across policies).  Candidate paths come from the
network (metric, order, tie rule) or from a path table (paths.py).  ``estimate`` repeats the run over seeds and gives a Student-t confidence interval
(eq. 9); ``erlang_b`` is the reference for one link with one-slot requests.

The inner loop (engine.py) works on Python-int slot bitsets and precomputed candidate entries; its speed is
measured by ``python -m benchmarks.bench_optical``.
"""
from __future__ import annotations

import logging
import math
import time

import numpy as np
from dataclasses import dataclass, field, replace
from typing import Sequence

from ..errors import InputError
from ..instance.optical import OpticalNetwork
from . import engine
from .paths import PathTable
from .rsa import RsaPolicy, get_rsa_policy
from .spectrum import SpectrumGrid

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


#: the most requests a run takes per seed (10^12 was accepted before: a 47-day run with no progress output);
#: 10^8 requests are about 5-10 CPU-minutes at the measured speed (benchmarks/bench_optical.py)
MAX_REQUESTS = 100_000_000
#: the largest request size (slots or Gbit/s) a run takes
MAX_SIZE = 1_000_000


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
        if not (1 <= s.lo <= s.hi <= MAX_SIZE):
            raise InputError(f"request sizes {text!r}: need 1 <= A <= B <= {MAX_SIZE:,}")
        return s

    def __str__(self) -> str:
        return f"fixed:{self.lo}" if self.kind == "fixed" else f"{self.kind}:{self.lo}:{self.hi}"


@dataclass(frozen=True)
class DynamicOptions:
    """One dynamic experiment.  ``k`` None: the network's k_paths.  ``metric`` / ``order`` / ``tie``: eq. 2 and
    the tie rule of equal-cost paths (SP-FF and SD-FF fix their metric and order).  ``directed``: each
    direction of a link a separate fibre.  ``truncate``: holding times truncated at this multiple of the mean
    (None: not cut), ``truncate_mode`` "clip" (cut at it) or "redraw" (drawn again until below it).
    ``nodes``: the datacentres requests run between (None: every node); ``pairs``: explicit (src, dst) pairs
    instead.  ``path_table``: candidate paths from a table (paths.py) instead of the network."""
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
    tie: str = "km"
    truncate_mode: str = "clip"
    path_table: PathTable | None = field(default=None, compare=False)

    def __post_init__(self):
        if isinstance(self.sizes, str):
            object.__setattr__(self, "sizes", RequestSizes.parse(self.sizes))
        probs = []
        if not (self.load_erlang > 0 and math.isfinite(self.load_erlang)):
            probs.append(f"load must be > 0 Erlang, got {self.load_erlang}")
        if not (self.holding_s > 0 and math.isfinite(self.holding_s)):
            probs.append(f"holding must be > 0 s, got {self.holding_s}")
        if not 1 <= self.requests <= MAX_REQUESTS:
            probs.append(f"requests must be in 1..{MAX_REQUESTS:,} per seed (10^8 requests take about 5-10 "
                         f"CPU-minutes), got {self.requests:,}")
        if not 0 <= self.warmup <= MAX_REQUESTS:
            probs.append(f"warmup must be in 0..{MAX_REQUESTS:,}, got {self.warmup:,}")
        if self.k is not None and self.k < 1:
            probs.append(f"k must be >= 1, got {self.k}")
        if self.truncate is not None and not (self.truncate > 0 and math.isfinite(self.truncate)):
            probs.append(f"truncate must be a finite number > 0 (a multiple of the mean holding time), "
                         f"got {self.truncate}")
        if self.truncate_mode not in engine.HOLD_MODES:
            probs.append(f"truncate mode must be one of {', '.join(engine.HOLD_MODES)}, got {self.truncate_mode!r}")
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
    cpu_s: float = 0.0

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
    seeds: tuple[int, ...] = ()
    cpu_s: float = 0.0

    @property
    def low(self) -> float:
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        return self.mean + self.half_width

    def to_dict(self) -> dict:
        return {"load_erlang": self.load_erlang, "policy": self.policy, "blocking": self.mean,
                "ci95_low": self.low, "ci95_high": self.high, "half_width": self.half_width,
                "seeds": len(self.per_seed), "requests_per_seed": self.requests, "wall_s": self.wall_s,
                "cpu_s": self.cpu_s, "seed_list": list(self.seeds), "per_seed": list(self.per_seed)}


def _prepare(network: OpticalNetwork, opt: DynamicOptions, policy: RsaPolicy):
    """The pairs and, per pair, its candidate paths (from the path table or the network)."""
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
        if opt.path_table is not None:
            if (a, b) not in opt.path_table:
                raise InputError(f"--paths: the path table has no entry for the pair {a!r} -> {b!r}")
            paths = opt.path_table[(a, b)][:k]
        else:
            paths = network.candidate_paths(a, b, k=k, metric=metric, order=order, tie=opt.tie)
        if policy.max_paths is not None:
            paths = paths[:policy.max_paths]
        if not paths:
            raise InputError(f"no path from {a!r} to {b!r} (unreachable pair)")
        cands.append(paths)
    return pairs, cands


class _Table(dict):
    """key -> candidate entries (links, width mask, shifts) or, with ``widths``, the block widths; built on
    first use (key = pair index x span + size - lo)."""

    def __init__(self, network: OpticalNetwork, cands, links, opt: DynamicOptions, widths: bool = False):
        super().__init__()
        self.cands, self.links, self.widths = cands, links, widths
        self.span = opt.sizes.hi - opt.sizes.lo + 1
        self.lo, self.gbps, self.guard = opt.sizes.lo, opt.sizes.kind == "gbps", network.guard_slots
        self.caps = [tuple(p.modulation.gbps_per_slot for p in ps) for ps in cands]
        self.memo: dict = {}

    def width_list(self, key: int) -> list[int]:
        """Eq. 3 per candidate: data slots (ceil(Gbit/s / capacity per slot), at least 1) + guard slots."""
        pi, size = divmod(key, self.span)
        size += self.lo
        g = self.guard
        if self.gbps:
            return [max(1, math.ceil(size / c - 1e-9)) + g for c in self.caps[pi]]
        return [size + g] * len(self.caps[pi])

    def __missing__(self, key: int):
        ws = self.width_list(key)
        if self.widths:
            v = ws
        else:
            mk = (key // self.span, tuple(ws))
            v = self.memo.get(mk)
            if v is None:
                v = self.memo[mk] = tuple((ls, (1 << w) - 1, engine.doubling_shifts(w))
                                          for ls, w in zip(self.links[key // self.span], ws))
        self[key] = v
        return v

    def first_widths(self, keys):
        """Block widths on the first candidate of many keys at once (numpy)."""
        pi, size = np.divmod(keys, self.span)
        size = size + self.lo
        g = self.guard
        if not self.gbps:
            return size + g
        cap = np.array([c[0] for c in self.caps])[pi]
        return np.maximum(1, np.ceil(size / cap - 1e-9)).astype(np.int64) + g


def simulate_dynamic(network: OpticalNetwork, options: DynamicOptions, seed: int = 0,
                     record: bool = False, tick=None) -> DynamicRun:
    """One seeded run (eqs. 7-8).  ``record``: keep every admitted lightpath with its [start, end) for the
    checker (slower; tests).  ``tick(n)``: called after every chunk of n requests (progress, stop checks)."""
    opt = options
    if seed < 0:
        raise InputError(f"seed must be >= 0, got {seed}")
    policy = get_rsa_policy(opt.policy)
    grid = SpectrumGrid(network, directed=opt.directed)
    pairs, cands = _prepare(network, opt, policy)
    links = [[grid.links_of(p.nodes) for p in ps] for ps in cands]
    table = _Table(network, cands, links, opt)
    sz = opt.sizes
    cap = None if opt.truncate is None else opt.truncate * opt.holding_s
    chunks = engine.request_chunks(seed, opt.warmup + opt.requests, opt.load_erlang / opt.holding_s, len(pairs),
                                   sz.lo, sz.hi, opt.holding_s, cap, opt.truncate_mode)
    state = engine.State(grid)
    lps: list = []
    t_wall, t_cpu = time.perf_counter(), time.process_time()
    name = policy.name
    fast = not record and name in ("ksp-ff", "sp-ff", "sd-ff", "ksp-lf", "ff-ksp", "lf-ksp")
    widths = None if fast else _Table(network, cands, links, opt, widths=True)
    blocked = 0
    for n, first in ((opt.warmup, 0), (opt.requests, opt.warmup)):
        if first:                      # the measured part: count offered and blocked slots from here
            state.first_width = table.first_widths
            state.blocked_keys.clear()
        if not n:
            continue
        if fast and name in ("ksp-ff", "sp-ff", "sd-ff"):
            blocked = engine.ff_loop(state, chunks, n, table, tick)
        elif fast:
            blocked = engine.across_loop(state, chunks, n, table, name.startswith("lf") or name == "ksp-lf",
                                         name.endswith("-ksp"), tick)
        else:
            blocked = engine.policy_loop(state, chunks, n, table, widths, policy,
                                         lambda key: cands[key // table.span], network.guard_slots,
                                         lps if record else None, first, tick)
    state.count(np.zeros(0, dtype=np.int64))
    wall, cpu = time.perf_counter() - t_wall, time.process_time() - t_cpu
    log.info("dynamic %s load %.4g seed %d: %d/%d blocked in %.2f s", opt.policy, opt.load_erlang, seed, blocked,
             opt.requests, wall)
    return DynamicRun(seed, opt.requests, blocked, state.offered_slots, state.blocked_slots, wall, lps, cpu)


def estimate(network: OpticalNetwork, options: DynamicOptions, seeds: Sequence[int] = (1, 2, 3, 4, 5),
             tick=None, on_seed=None) -> BlockingEstimate:
    """Blocking probability over independent seeded runs with its 95 % Student-t interval (eq. 9).
    ``tick``: passed to every run; ``on_seed(options, run)``: called after each finished seed."""
    seeds = list(seeds)
    if not seeds:
        raise InputError("estimate needs at least one seed")
    t = time.perf_counter()
    vals, cpu = [], 0.0
    for s in seeds:
        run = simulate_dynamic(network, options, s, tick=tick)
        vals.append(run.blocking)
        cpu += run.cpu_s
        if on_seed is not None:
            on_seed(options, run)
    n = len(vals)
    mean = sum(vals) / n
    if n > 1:
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (n - 1))
        hw = t975(n - 1) * sd / math.sqrt(n)
    else:
        hw = math.inf
    return BlockingEstimate(options.load_erlang, options.policy, mean, hw, tuple(vals), options.requests,
                            time.perf_counter() - t, tuple(seeds), cpu)


def sweep(network: OpticalNetwork, options: DynamicOptions, loads: Sequence[float],
          seeds: Sequence[int] = (1, 2, 3, 4, 5), policies: Sequence[str] | None = None,
          tick=None, on_seed=None) -> list[BlockingEstimate]:
    """Blocking versus load (every load x policy), the same seeds for every point."""
    out = []
    for pol in (policies or [options.policy]):
        for load in loads:
            out.append(estimate(network, replace(options, load_erlang=float(load), policy=pol), seeds, tick,
                                on_seed))
    return out


def sweep_frame(estimates: Sequence[BlockingEstimate]):
    import pandas as pd
    return pd.DataFrame([e.to_dict() for e in estimates])
