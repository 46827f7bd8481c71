"""CBA (communication-bound-aware spectrum assignment) on the pipeline-schedule layer (models/optical.md, sec. 4).

One training job of S stages (one GPU each) is mapped once onto datacentres of the optical network.  Every
iteration:

1. **Background traffic.**  For each cross-datacentre stage boundary (a "cross-DC PP event"), with probability
   ``bg_prob`` a burst of ``bg_count`` background lightpath requests arrives (pairs uniform over the ordered
   node pairs, sizes uniform in [bg_min, bg_max] data slots + guard, exponential holding with mean
   ``bg_holding_s``), assigned by the baseline's RSA (KSP-FF or SD-FF).  The bursts come from a stream seeded by
   (seed, iteration) alone, so every scheme sees the same background.
2. **PP requests.**  One lightpath request per cross-DC boundary, held for the whole iteration and carrying
   both directions (one shared fibre per link).  Baseline: ``initial_slots`` data slots, boundary order, the
   policy's path and first fit.  CBA: CB requests first, the size from the sizing rule (eq. 12), the candidate
   paths ranked by eq. 13, then first fit.  A request that finds no block is *blocked* (counted, eq. 8); it
   then waits for background lightpaths to leave until its block fits (the queueing term): its boundary carries
   no transfer before the wait is over (``Boundary.ready_s`` of the pipeline layer).
3. **Iteration time.**  The pipeline layer (bace_opt.pipeline) schedules GPipe or 1F1B with, per boundary,
   latency L = path length / 200,000 km/s (+ wait) and alpha-beta transfer time c = 8 A / 1000 / (n x 75)
   s for n data slots at 75 Gbit/s per slot (eq. 11).  The iteration's lightpaths are released at its end.
4. **CB labels** (Algorithm 1, our reading): boundary b is communication-bound when some task that receives data
   over it (F on stage b+1, or B on stage b), for a micro-batch other than the first, started exactly when its
   data arrived while its stage had been idle: a DCI-induced bubble that more slots could shorten.  With
   ``label_fill=True`` micro-batch 0 counts too (the source's rule; every boundary is then always CB).
5. **Sizing** (eq. 12): blocked last iteration -> n - 1; else CB -> n + 1; else n; bounded to [fs_min, fs_max].

Metrics per run (all from the pipeline schedules, checked by ``pipeline.check_ops``): mean iteration time,
bubble ratio 1 - sum of compute / (S x iteration time), PP request blocking probability, background blocking.
``record_batches=True`` keeps each iteration's PP batch and spectrum state for the exact model (exact.py).
"""
from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass, replace
from typing import Any, NamedTuple, Sequence

from ..builders.profiles import MODELS, GPUS, ModelSpec, stage_time_s
from ..errors import InputError
from ..instance.optical import OpticalNetwork, Path
from ..pipeline import PipelineModel, schedule_model
from ..pipeline.model import Boundary
from .checker import record_of
from .rsa import get_rsa_policy
from .spectrum import Lightpath, SpectrumGrid, free_runs

log = logging.getLogger(__name__)

LLAMA3_8B = ModelSpec("Llama-3-8B", 8.03, 32, 4096, "Dubey et al. 2024 (Llama 3 herd), Table 3")
# CBA's workloads: model -> (architecture, cross-DC message per communication in MB, CBA Sec. 4)
WORKLOADS = {"llama3-8b": (LLAMA3_8B, 512.0), "llama3-70b": (MODELS["Llama-3.1-70B"], 1024.0)}
BASELINES = ("ksp-ff", "sd-ff")
SCHEDULES = ("gpipe", "1f1b")


@dataclass(frozen=True)
class CbaConfig:
    """One CBA experiment (defaults: CBA's setup, sources.md 3.3; docs/decisions.md for our readings)."""
    workload: str = "llama3-8b"
    schedule: str = "gpipe"
    microbatches: int = 64
    iterations: int = 20
    baseline: str = "ksp-ff"
    cba: bool = True
    stages: int = 8
    datacenters: int = 6
    gpu: str = "A100-80GB"
    mfu: float = 0.4
    seq_len: int = 2048
    initial_slots: int = 1
    fs_min: int = 1
    fs_max: int = 6
    bg_prob: float = 0.95
    bg_count: int = 60
    bg_min: int = 4
    bg_max: int = 20
    bg_holding_s: float = 0.2
    label_fill: bool = False
    cb_weight: float = 2.0
    seed: int = 1
    paths: str = "length"     # KSP-FF's candidates: "length" (k shortest by km) or "xlron" (XLRON's reference:
    #                           k fewest hops ordered by hops / SE, XLRON's tie rule; issue 31)

    def __post_init__(self):
        probs = []
        if self.workload not in WORKLOADS:
            probs.append(f"workload must be one of {', '.join(WORKLOADS)}, got {self.workload!r}")
        if self.schedule not in SCHEDULES:
            probs.append(f"schedule must be one of {', '.join(SCHEDULES)}, got {self.schedule!r}")
        if self.baseline not in BASELINES:
            probs.append(f"baseline must be one of {', '.join(BASELINES)}, got {self.baseline!r}")
        if self.gpu not in GPUS:
            probs.append(f"gpu must be one of {', '.join(GPUS)}, got {self.gpu!r}")
        for name in ("microbatches", "iterations", "stages", "datacenters", "bg_count"):
            if getattr(self, name) < (0 if name == "bg_count" else 1):
                probs.append(f"{name} must be >= {0 if name == 'bg_count' else 1}, got {getattr(self, name)}")
        if not (1 <= self.fs_min <= self.initial_slots <= self.fs_max):
            probs.append(f"need 1 <= fs_min <= initial_slots <= fs_max, got {self.fs_min}, {self.initial_slots}, "
                         f"{self.fs_max}")
        if not (1 <= self.bg_min <= self.bg_max):
            probs.append(f"need 1 <= bg_min <= bg_max, got {self.bg_min}, {self.bg_max}")
        if not (0.0 <= self.bg_prob <= 1.0):
            probs.append(f"bg_prob must be in [0, 1], got {self.bg_prob}")
        if self.paths not in ("length", "xlron"):
            probs.append(f"paths must be length or xlron, got {self.paths!r}")
        if not (self.bg_holding_s > 0 and 0 < self.mfu <= 1 and self.cb_weight >= 1):
            probs.append("bg_holding_s must be > 0, mfu in (0, 1], cb_weight >= 1")
        if probs:
            raise InputError(["cba: " + p for p in probs])

    @property
    def label(self) -> str:
        return f"{self.baseline}{'+cba' if self.cba else ''}"


@dataclass(frozen=True)
class PpRequest:
    """One PP lightpath request of an iteration's batch (for the exact model)."""
    boundary: int
    src: str
    dst: str
    data_slots: int
    cb: bool
    weight: float


@dataclass
class IterationRecord:
    iteration: int
    start_s: float
    iteration_s: float
    bubble_ratio: float
    sizes: tuple[int, ...]
    cb: tuple[bool, ...]
    blocked: tuple[bool, ...]
    waits_s: tuple[float, ...]
    bg_offered: int
    bg_blocked: int
    accepted_weight: float
    max_slot: int                     # highest slot (1-based) the iteration's first-attempt PP lightpaths use
    batch: tuple[PpRequest, ...] = ()
    occupancy: tuple[int, ...] = ()   # link bitsets before the PP batch (record_batches)
    lightpaths: tuple = ()            # checker records of every admitted lightpath (record_batches)


@dataclass
class CbaRun:
    config: CbaConfig
    mapping: tuple[str, ...]
    boundaries: tuple[tuple[int, str, str], ...]
    iterations: list[IterationRecord]
    last_result: Any = None          # the last iteration's pipeline.PipelineResult (model, ops, memory limit)

    @property
    def mean_iteration_s(self) -> float:
        return sum(r.iteration_s for r in self.iterations) / len(self.iterations)

    @property
    def mean_bubble_ratio(self) -> float:
        return sum(r.bubble_ratio for r in self.iterations) / len(self.iterations)

    @property
    def pp_requests(self) -> int:
        return sum(len(r.sizes) for r in self.iterations)

    @property
    def pp_blocking(self) -> float:
        n = self.pp_requests
        return sum(sum(r.blocked) for r in self.iterations) / n if n else 0.0

    @property
    def bg_blocking(self) -> float:
        n = sum(r.bg_offered for r in self.iterations)
        return sum(r.bg_blocked for r in self.iterations) / n if n else 0.0

    def summary(self) -> dict:
        c = self.config
        return {"workload": c.workload, "schedule": c.schedule, "microbatches": c.microbatches,
                "policy": c.label, "seed": c.seed, "iterations": len(self.iterations),
                "cross_dc_boundaries": len(self.boundaries),
                "mean_iteration_s": self.mean_iteration_s, "mean_bubble_ratio": self.mean_bubble_ratio,
                "pp_blocking": self.pp_blocking, "bg_blocking": self.bg_blocking,
                "mean_slots": (sum(sum(r.sizes) for r in self.iterations) / self.pp_requests
                               if self.pp_requests else 0.0)}


# ---------------------------------------------------------------------- set-up

def stage_mapping(network: OpticalNetwork, cfg: CbaConfig) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(datacentres, stage -> datacentre): ``datacenters`` nodes drawn, then each stage mapped uniformly; seeded
    by ``seed`` only, so every scheme of one seed uses the same mapping."""
    nodes = list(network.nodes)
    if cfg.datacenters > len(nodes):
        raise InputError(f"cba: {cfg.datacenters} datacentres but the network has {len(nodes)} nodes")
    r = random.Random(f"bace-opt/optical/cba/mapping/{cfg.seed}").random
    pool = list(nodes)
    dcs = []
    for _ in range(cfg.datacenters):
        dcs.append(pool.pop(int(r() * len(pool))))
    mapping = tuple(dcs[int(r() * len(dcs))] for _ in range(cfg.stages))
    return tuple(dcs), mapping


def stage_times_s(cfg: CbaConfig) -> tuple[float, float]:
    """(T_F, T_B) of one micro-batch on one stage: the profile's 6 P b s k / L / F, split 1/3 : 2/3."""
    spec, _ = WORKLOADS[cfg.workload]
    t = stage_time_s(spec, GPUS[cfg.gpu], cfg.stages, seq_len=cfg.seq_len, mfu=cfg.mfu)
    return t / 3.0, 2.0 * t / 3.0


def transfer_s(message_mb: float, data_slots: int, gbps_per_slot: float) -> float:
    """Eq. 11: beta term of one message over n data slots."""
    return 8.0 * message_mb / 1000.0 / (data_slots * gbps_per_slot)


# ---------------------------------------------------------------------- path ranking (eq. 13)

def rank_paths(grid: SpectrumGrid, paths: Sequence[Path], links: Sequence[tuple[int, ...]]) -> list[int]:
    """CBA's candidate order (eq. 13, our weights): length / shortest length + path utilisation + fragmentation
    (1 - largest free run / free slots on the path's common free mask); ties keep the candidate order."""
    if not paths:
        return []
    l0 = min(p.length_km for p in paths)
    scores = []
    for i, (p, ls) in enumerate(zip(paths, links)):
        free = grid.free_mask(ls)
        runs = free_runs(free)
        nfree = sum(r for _, r in runs)
        frag = 1.0 - (max(r for _, r in runs) / nfree) if nfree else 1.0
        scores.append((p.length_km / l0 + grid.utilisation(ls) + frag, i))
    return [i for _, i in sorted(scores)]


# ---------------------------------------------------------------------- the run

def run_cba(network: OpticalNetwork, cfg: CbaConfig, record_batches: bool = False) -> CbaRun:
    """Run ``cfg.iterations`` training iterations of one scheme (baseline with or without CBA)."""
    if network.modulation_for(0.0) is None:
        raise InputError("cba: the network has no modulation format")
    dcs, mapping = stage_mapping(network, cfg)
    spec, msg_mb = WORKLOADS[cfg.workload]
    t_f, t_b = stage_times_s(cfg)
    S, m = cfg.stages, cfg.microbatches
    bounds = tuple((k, mapping[k], mapping[k + 1]) for k in range(S - 1) if mapping[k] != mapping[k + 1])
    policy = get_rsa_policy(cfg.baseline)
    grid = SpectrumGrid(network)
    guard = network.guard_slots
    paths = _candidate_paths(network, policy, bounds, grid, cfg.paths)
    pp_cands, pp_links = paths.pp_cands, paths.pp_links

    sizes = [cfg.initial_slots] * len(bounds)
    cb = [False] * len(bounds)
    blocked_prev = [False] * len(bounds)
    t = 0.0
    active: list[tuple[float, tuple[int, ...], int]] = []      # background (end, links, mask)
    records: list[IterationRecord] = []
    run = CbaRun(cfg, mapping, bounds, records)
    for it in range(cfg.iterations):
        active = _release_background(grid, active, t)
        lp_records = []
        # 1. background bursts (same stream for every scheme)
        bg_off, bg_blk = _background_bursts(cfg, it, t, len(bounds), grid, policy, paths, active,
                                            lp_records if record_batches else None)
        # 2. PP batch
        if cfg.cba and it > 0:
            for i in range(len(bounds)):
                if blocked_prev[i]:
                    sizes[i] = max(cfg.fs_min, sizes[i] - 1)
                elif cb[i]:
                    sizes[i] = min(cfg.fs_max, sizes[i] + 1)
        weights = [cfg.cb_weight if cb[i] else 1.0 for i in range(len(bounds))]
        batch = tuple(PpRequest(k, a, b, sizes[i], cb[i], weights[i]) for i, (k, a, b) in enumerate(bounds))
        occ_before = tuple(grid.occ) if record_batches else ()
        order_idx = sorted(range(len(bounds)), key=lambda i: (not cb[i], i)) if cfg.cba else list(range(len(bounds)))
        placed: dict[int, tuple[int, int, int]] = {}     # request -> (path idx, first, width)
        blocked = [False] * len(bounds)
        for i in order_idx:
            w = sizes[i] + guard
            links = pp_links[i]
            if cfg.cba:
                rk = rank_paths(grid, pp_cands[i], links)
                c = policy.choose(grid, [links[j] for j in rk], [w] * len(rk))
                c = None if c is None else (rk[c[0]], c[1])
            else:
                c = policy.choose(grid, links, [w] * len(links))
            if c is None:
                blocked[i] = True
                continue
            j, f = c
            grid.allocate(links[j], f, w)
            placed[i] = (j, f, w)
        accepted_weight = sum(weights[i] for i in placed)
        max_slot = max((f + w for _, f, w in placed.values()), default=0)
        # 2b. blocked requests wait for background departures (the queueing term)
        waits = _wait_for_background(grid, policy, pp_links, bounds, sizes, guard, blocked, placed, active, t)
        # 3. iteration time on the pipeline layer
        bnds = []
        for i, (k, a, b) in enumerate(bounds):
            j, f, w = placed[i]
            p = pp_cands[i][j]
            bnds.append(Boundary(k, i, p.latency_s, transfer_s(msg_mb, sizes[i], p.modulation.gbps_per_slot),
                                 ready_s=waits[i]))
        model = PipelineModel(S, m, (t_f,) * S, (t_b,) * S, boundaries=tuple(bnds), stage_region=mapping)
        res = schedule_model(model, cfg.schedule)
        T = res.iteration_s
        if record_batches:
            for i, (k, a, b) in enumerate(bounds):
                j, f, w = placed[i]
                lp_records.append(record_of(Lightpath(("pp", it, k), pp_cands[i][j].nodes, f, sizes[i], guard),
                                            start_s=t + waits[i], end_s=t + T))
        busy = sum(o.end_s - o.start_s for o in res.ops if not o.is_transfer)
        new_cb = label_cb(model, res.ops, cfg.label_fill)
        records.append(IterationRecord(it, t, T, 1.0 - busy / (S * T), tuple(sizes), tuple(cb), tuple(blocked),
                                       tuple(waits), bg_off, bg_blk, accepted_weight, max_slot,
                                       batch if record_batches else (), occ_before, tuple(lp_records)))
        run.last_result = res
        # release the PP lightpaths at the iteration's end
        for i, (j, f, w) in placed.items():
            grid.release(pp_links[i][j], f, w)
        cb = [new_cb.get(k, False) for k, _, _ in bounds]
        blocked_prev = blocked
        t += T
    return run


class _Paths(NamedTuple):
    """Candidate paths of one run, with their link ids (built once): background between every node pair, PP
    over every pipeline boundary."""
    bg_pairs: list[tuple[str, str]]
    bg_cands: dict[tuple[str, str], tuple[Path, ...]]
    bg_links: dict[tuple[str, str], list]
    pp_cands: list[tuple[Path, ...]]
    pp_links: list[list]


def _candidate_paths(network: OpticalNetwork, policy, bounds, grid: SpectrumGrid, rule: str = "length") -> _Paths:
    """The policy's candidate paths (its metric and order, at most ``max_paths``) for background and PP;
    ``rule`` "xlron": KSP-FF takes XLRON's (fewest hops, by hops / SE, XLRON's tie rule)."""
    metric, order = policy.paths or (("hops", "hops-per-se") if rule == "xlron" else ("length", "length"))
    tie = "xlron" if rule == "xlron" and not policy.paths else "km"
    all_nodes = list(network.nodes)
    bg_pairs = [(a, b) for a in all_nodes for b in all_nodes if a != b]
    bg_cands = {}
    for a, b in bg_pairs:
        ps = network.candidate_paths(a, b, metric=metric, order=order, tie=tie)
        if policy.max_paths:
            ps = ps[:policy.max_paths]
        bg_cands[(a, b)] = ps
    pp_cands = []
    for k, a, b in bounds:
        ps = network.candidate_paths(a, b, metric=metric, order=order, tie=tie)
        if not ps:
            raise InputError(f"cba: datacentres {a!r} and {b!r} are not connected")
        pp_cands.append(ps[:policy.max_paths] if policy.max_paths else ps)
    bg_links = {key: [grid.links_of(p.nodes) for p in ps] for key, ps in bg_cands.items()}
    pp_links = [[grid.links_of(p.nodes) for p in ps] for ps in pp_cands]
    return _Paths(bg_pairs, bg_cands, bg_links, pp_cands, pp_links)


def _release_background(grid: SpectrumGrid, active: list, t: float) -> list:
    """Free the background lightpaths that left before ``t``; the ones still active."""
    keep = []
    for end, ls, mask in active:
        if end <= t:
            for e in ls:
                grid.occ[e] &= ~mask
        else:
            keep.append((end, ls, mask))
    return keep


def _background_bursts(cfg: CbaConfig, it: int, t: float, n_bounds: int, grid: SpectrumGrid, policy, paths: _Paths,
                       active: list, lp_records: list | None) -> tuple[int, int]:
    """Step 1 of an iteration: per boundary, with probability ``bg_prob``, a burst of ``bg_count`` background
    requests (the same seeded stream for every scheme), admitted by the policy into ``active``; the lightpaths
    are appended to ``lp_records`` unless it is None.  Returns (offered, blocked)."""
    guard = grid.network.guard_slots
    r = random.Random(f"bace-opt/optical/cba/background/{cfg.seed}/{it}").random
    bg_off = bg_blk = 0
    span = cfg.bg_max - cfg.bg_min + 1
    for _ in range(n_bounds):
        if r() >= cfg.bg_prob:
            continue
        for q in range(cfg.bg_count):
            a, b = paths.bg_pairs[int(r() * len(paths.bg_pairs))]
            n = cfg.bg_min + min(int(r() * span), span - 1)
            hold = -math.log(1.0 - r()) * cfg.bg_holding_s
            links = paths.bg_links[(a, b)]
            bg_off += 1
            c = policy.choose(grid, links, [n + guard] * len(links))
            if c is None:
                bg_blk += 1
                continue
            j, f = c
            mask = ((1 << (n + guard)) - 1) << f
            for e in links[j]:
                grid.occ[e] |= mask
            active.append((t + hold, links[j], mask))
            if lp_records is not None:
                lp_records.append(record_of(Lightpath(("bg", it, len(lp_records)), paths.bg_cands[(a, b)][j].nodes,
                                                      f, n, guard), start_s=t, end_s=t + hold))
    return bg_off, bg_blk


def _wait_for_background(grid: SpectrumGrid, policy, pp_links, bounds, sizes, guard: int, blocked, placed: dict,
                         active: list, t: float) -> list[float]:
    """Step 2b: each blocked PP request waits for background departures (in order of their end times) until
    it fits, then is placed; its wait (s) is the queueing term of the iteration."""
    waits = [0.0] * len(bounds)
    if any(blocked):
        active.sort(key=lambda x: x[0])
        now = t                      # the wait clock: background leaves in order of its end time
        for i in range(len(bounds)):
            if not blocked[i]:
                continue
            w = sizes[i] + guard
            links = pp_links[i]
            while True:
                c = policy.choose(grid, links, [w] * len(links)) if len(links) else None
                if c is not None or not active:
                    break
                end, ls, mask = active.pop(0)
                for e in ls:
                    grid.occ[e] &= ~mask
                now = max(now, end)
            waits[i] = now - t
            if c is None:
                raise InputError(f"cba: request over boundary {bounds[i][0]} cannot fit even on empty spectrum")
            j, f = c
            grid.allocate(links[j], f, w)
            placed[i] = (j, f, w)
    return waits


def label_cb(model: PipelineModel, ops, label_fill: bool = False, tol_s: float = 1e-9) -> dict[int, bool]:
    """Algorithm 1 (our reading): boundary stage k -> True if a task receiving over it had a DCI-induced bubble
    (started at its data's arrival while its stage was idle), micro-batch 0 excluded unless ``label_fill``."""
    arrive = {}
    for o in ops:
        if o.kind == "XF":
            arrive[("F", o.stage + 1, o.mb)] = (o.arrive_s, o.stage)
        elif o.kind == "XB":
            arrive[(model.back_kind, o.stage - 1, o.mb)] = (o.arrive_s, o.stage - 1)
    by_stage: dict[int, list] = {}
    for o in ops:
        if not o.is_transfer:
            by_stage.setdefault(o.stage, []).append(o)
    out: dict[int, bool] = {b.stage: False for b in model.boundaries}
    for k, seq in by_stage.items():
        seq.sort(key=lambda o: o.start_s)
        prev_end = 0.0
        for o in seq:
            hit = arrive.get((o.kind, o.stage, o.mb))
            if hit is not None and (label_fill or o.mb > 0):
                arr, bstage = hit
                if model.boundary(bstage) is not None and abs(o.start_s - arr) <= tol_s \
                        and o.start_s > prev_end + tol_s:
                    out[bstage] = True
            prev_end = o.end_s
    return out


def compare(network: OpticalNetwork, base: CbaConfig, record_batches: bool = False) -> dict[str, CbaRun]:
    """The four schemes (KSP-FF, SD-FF, each with and without CBA) on one configuration."""
    return {f"{bl}{'+cba' if c else ''}": run_cba(network, replace(base, baseline=bl, cba=c), record_batches)
            for bl in BASELINES for c in (False, True)}
