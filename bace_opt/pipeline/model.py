"""Block-level pipeline model of one job's placement (models/pipeline.md, section 1).

A placement ((r_1, n_1), ..., (r_q, n_q)) with hops (route_i, w_i) becomes S = sum n_i stages, indexed
0..S-1 here (the spec's stage k is index k-1).  Per micro-batch i (0..m-1) every stage runs:

    F  forward                 T_F(k) = phi * t_j / f_r(k)              (phi = forward_fraction, default 1/3)
    B  backward                T_B(k) = (1 - phi) * t_j / f_r(k)
       or, with ``split_backward``, B = D + W (Zero-Bubble style):
    D  input-gradient ("dgrad") T_D(k) = (1 - psi) * T_B(k)              (psi = wgrad_fraction, default 1/2)
    W  weight-gradient          T_W(k) = psi * T_B(k)

Stage boundary k (between stages k and k+1) is *cross-region* when the two stages lie in different blocks;
then it is hop h(k) of the placement with one-way route latency L_h (s) and bandwidth time
c_h = 8 * A_j / 1000 / w_h (s, formulas.transfer_s).  A boundary inside one region costs nothing (our reading:
intra-region interconnect is fast enough to ignore).  Each cross-region boundary has two link directions,
``fwd`` (activations k -> k+1, sent after F(k, i)) and ``bwd`` (gradients k+1 -> k, sent after B/D(k+1, i));
a transfer occupies its direction for c_h (bandwidth part: one message at a time per direction, FIFO) and the
data arrives L_h later (latency part: pipelined, messages overlap in flight).  Every hop has its own reserved
bandwidth, so directions of different hops never share capacity.

Memory (our reading, counted in micro-batches): micro-batch i is *in flight* on stage k from the start of
F(k, i) to the end of its last backward block (B, or W when split).  ``memory_limit[k]`` bounds the number
in flight; the default is 1F1B's peak, S - k for 0-based k (S - k + 1 for the spec's 1-based k).

Everything here is plain numbers: ``PipelineModel`` is frozen and hashable, so results can be cached on it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

from .. import formulas as F
from ..errors import InputError
from ..instance import Instance, Job

FWD = "fwd"
BWD = "bwd"


@dataclass(frozen=True)
class Boundary:
    """A cross-region stage boundary: between stage ``stage`` and ``stage + 1``, realised by hop ``hop``."""
    stage: int
    hop: int
    latency_s: float      # one-way route latency L_h / 1000
    transfer_s: float     # bandwidth time c_h of one message (activation or gradient)
    ready_s: float = 0.0  # no transfer starts before this time (a link set up late, e.g. a blocked lightpath)


@dataclass(frozen=True)
class PipelineOptions:
    """How a placement is turned into blocks and how schedules are built.

    forward_fraction  phi: T_F = phi * stage time, T_B = (1 - phi) * stage time (our reading: 1/3, the usual
                      "backward costs twice the forward").
    split_backward    split B into D (input gradient) and W (weight gradient), as CrossPipe / Zero-Bubble do.
    wgrad_fraction    psi: T_W = psi * T_B, T_D = (1 - psi) * T_B.
    memory_limit      in-flight micro-batches per stage: None (1F1B's S - k), an int for every stage, or one
                      int per stage.  GPipe ignores it (it needs m in flight by construction).
    time_limit_s, threads, seed, resolution_s, hint: the CP-SAT optimum (see optimal.py).
    """
    forward_fraction: float = 1.0 / 3.0
    split_backward: bool = False
    wgrad_fraction: float = 0.5
    memory_limit: int | tuple[int, ...] | None = None
    time_limit_s: float = 60.0
    threads: int = 1
    seed: int = 0
    resolution_s: float | None = None
    hint: bool = True

    def __post_init__(self):
        if isinstance(self.memory_limit, list):
            object.__setattr__(self, "memory_limit", tuple(self.memory_limit))
        probs = []
        if not (0.0 < self.forward_fraction < 1.0):
            probs.append(f"forward_fraction must be in (0, 1), got {self.forward_fraction}")
        if not (0.0 < self.wgrad_fraction < 1.0):
            probs.append(f"wgrad_fraction must be in (0, 1), got {self.wgrad_fraction}")
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            probs.append(f"time_limit_s must be > 0, got {self.time_limit_s}")
        if self.threads is not None and self.threads < 1:
            probs.append(f"threads must be >= 1, got {self.threads}")
        if self.resolution_s is not None and not self.resolution_s > 0:
            probs.append(f"resolution_s must be > 0, got {self.resolution_s}")
        ml = self.memory_limit
        vals = () if ml is None else (ml,) if isinstance(ml, int) else ml
        if any((not isinstance(v, int)) or v < 1 for v in vals):
            probs.append(f"memory_limit must be None, an int >= 1 or one int >= 1 per stage, got {ml!r}")
        if probs:
            raise InputError(["pipeline options: " + p for p in probs])


@dataclass(frozen=True)
class PipelineModel:
    """Numbers of one placement's pipeline (all times in seconds, stages 0-based).

    ``t_f[k]``, ``t_b[k]`` forward / backward time per micro-batch on stage k; with ``split`` the backward is
    run as D (``t_d``) then W (``t_w``) with t_d + t_w = t_b.  ``boundaries`` lists the cross-region stage
    boundaries only.  ``memory_limit[k]`` in-flight micro-batches on stage k.
    """
    stages: int
    microbatches: int
    t_f: tuple[float, ...]
    t_b: tuple[float, ...]
    split: bool = False
    wgrad_fraction: float = 0.5
    boundaries: tuple[Boundary, ...] = ()
    memory_limit: tuple[int, ...] = ()
    stage_region: tuple[str, ...] = ()
    hop_label: tuple[str, ...] = ()
    _by_stage: dict = field(default=None, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        S, m = self.stages, self.microbatches
        probs = []
        if S < 1 or m < 1:
            probs.append(f"needs >= 1 stage and >= 1 micro-batch, got S={S}, m={m}")
        object.__setattr__(self, "t_f", tuple(float(x) for x in self.t_f))
        object.__setattr__(self, "t_b", tuple(float(x) for x in self.t_b))
        object.__setattr__(self, "boundaries", tuple(self.boundaries))
        if len(self.t_f) != S or len(self.t_b) != S:
            probs.append(f"t_f and t_b need one value per stage ({S})")
        if any(not (x > 0 and math.isfinite(x)) for x in self.t_f + self.t_b):
            probs.append("block times must be finite and > 0")
        ml = tuple(self.memory_limit) or default_memory_limit(S)
        if len(ml) != S or any(int(v) < 1 for v in ml):
            probs.append(f"memory_limit needs one int >= 1 per stage, got {ml!r}")
        object.__setattr__(self, "memory_limit", tuple(int(v) for v in ml))
        if not self.stage_region:
            object.__setattr__(self, "stage_region", ("",) * S)
        by = {}
        for b in self.boundaries:
            if not (0 <= b.stage < S - 1) or b.stage in by:
                probs.append(f"boundary at stage {b.stage} is out of range or repeated")
            if b.latency_s < 0 or b.transfer_s < 0 or b.ready_s < 0 or \
                    not math.isfinite(b.latency_s + b.transfer_s + b.ready_s):
                probs.append(f"boundary at stage {b.stage}: latency and transfer time must be finite and >= 0")
            by[b.stage] = b
        if probs:
            raise InputError(["pipeline model: " + p for p in probs])
        object.__setattr__(self, "_by_stage", by)

    # ------------------------------------------------------------------ views
    def boundary(self, k: int) -> Boundary | None:
        """The cross-region boundary between stage k and k + 1, or None (same region: zero cost)."""
        return self._by_stage.get(k)

    @property
    def t_d(self) -> tuple[float, ...]:
        return tuple((1.0 - self.wgrad_fraction) * b for b in self.t_b)

    @property
    def t_w(self) -> tuple[float, ...]:
        return tuple(self.wgrad_fraction * b for b in self.t_b)

    @property
    def kinds(self) -> tuple[str, ...]:
        """Compute block kinds per micro-batch: (F, B) or (F, D, W)."""
        return ("F", "D", "W") if self.split else ("F", "B")

    def duration(self, kind: str, k: int) -> float:
        if kind == "F":
            return self.t_f[k]
        if kind == "B":
            return self.t_b[k]
        if kind == "D":
            return (1.0 - self.wgrad_fraction) * self.t_b[k]
        if kind == "W":
            return self.wgrad_fraction * self.t_b[k]
        raise ValueError(kind)

    @property
    def back_kind(self) -> str:
        """The block that sends the gradient upstream: B, or D when split."""
        return "D" if self.split else "B"

    @property
    def last_kind(self) -> str:
        """The block that ends a micro-batch on a stage (frees its memory): B, or W when split."""
        return "W" if self.split else "B"

    @property
    def tau_s(self) -> float:
        """Slowest stage's F + B (the analytic model's tau)."""
        return max(f + b for f, b in zip(self.t_f, self.t_b))

    def with_memory_limit(self, limit) -> "PipelineModel":
        from dataclasses import replace
        return replace(self, memory_limit=_limit_tuple(limit, self.stages, self.microbatches))

    def scaled(self, unit_s: float) -> "PipelineModel":
        """The same model with every duration rounded UP to a whole number of ``unit_s`` (still in seconds)."""
        from dataclasses import replace

        def up(x):
            return math.ceil(x / unit_s - 1e-9) * unit_s
        return replace(self, t_f=tuple(up(x) for x in self.t_f), t_b=tuple(up(x) for x in self.t_b),
                       boundaries=tuple(Boundary(b.stage, b.hop, up(b.latency_s), up(b.transfer_s), up(b.ready_s))
                                        for b in self.boundaries))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def uniform(cls, stages: int, microbatches: int, t_f: float, t_b: float, *, cross: Sequence[int] = (),
                latency_s: float = 0.0, transfer_s: float = 0.0, split: bool = False, wgrad_fraction: float = 0.5,
                memory_limit=None) -> "PipelineModel":
        """A model with identical stages and identical cross-region boundaries after the stages in ``cross``
        (0-based: boundary k joins stage k and k+1).  Handy for tests and benchmarks."""
        bnds = tuple(Boundary(k, h, latency_s, transfer_s) for h, k in enumerate(sorted(cross)))
        return cls(stages, microbatches, (t_f,) * stages, (t_b,) * stages, split=split,
                   wgrad_fraction=wgrad_fraction, boundaries=bnds,
                   memory_limit=_limit_tuple(memory_limit, stages, microbatches))


def default_memory_limit(stages: int) -> tuple[int, ...]:
    """1F1B's peak in-flight micro-batches: S - k for 0-based stage k."""
    return tuple(stages - k for k in range(stages))


def _limit_tuple(limit, stages: int, microbatches: int) -> tuple[int, ...]:
    if limit is None:
        return default_memory_limit(stages)
    if isinstance(limit, int):
        return (limit,) * stages
    limit = tuple(int(v) for v in limit)
    if len(limit) != stages:
        raise InputError(f"memory_limit: {len(limit)} values given for {stages} stages")
    return limit


# ---------------------------------------------------------------------- from an instance

def normalize_placement(blocks, hops) -> tuple[tuple[tuple[str, int], ...], tuple[tuple[tuple[str, ...], float], ...]]:
    """Blocks as ((region, stages), ...) and hops as ((route, reserved_gbps), ...); accepts
    bace_opt.schedule.Block / Hop objects, tuples or dicts."""
    out_b, out_h = [], []
    for i, b in enumerate(blocks):
        if hasattr(b, "region"):
            out_b.append((b.region, int(b.stages)))
        elif isinstance(b, dict):
            out_b.append((b["region"], int(b["stages"])))
        else:
            r, n = b
            out_b.append((r, int(n)))
    for i, h in enumerate(hops):
        if hasattr(h, "route"):
            out_h.append((tuple(h.route), float(h.reserved_gbps)))
        elif isinstance(h, dict):
            out_h.append((tuple(h["route"]), float(h["reserved_gbps"])))
        else:
            r, w = h
            out_h.append((tuple(r), float(w)))
    return tuple(out_b), tuple(out_h)


def build_model(inst: Instance, job: Job | str, blocks, hops, options: PipelineOptions | None = None) -> PipelineModel:
    """The pipeline model of ``job`` placed as ``blocks`` with ``hops`` (see the module docstring).

    Raises InputError naming the part of the placement at fault.
    """
    opt = options or PipelineOptions()
    if isinstance(job, str):
        if job not in inst.job_index:
            raise InputError(f"job {job!r} is not in instance {inst.name!r}")
        job = inst.job(job)
    blocks, hops = normalize_placement(blocks, hops)
    probs = []
    where = f"placement of job {job.name!r}"
    if not blocks:
        raise InputError(f"{where}: no blocks")
    for i, (r, n) in enumerate(blocks):
        if r not in inst.region_index:
            probs.append(f"{where}: blocks[{i}].region {r!r} is not a region of instance {inst.name!r}")
        if n < 1:
            probs.append(f"{where}: blocks[{i}].stages must be >= 1, got {n}")
        if i and r == blocks[i - 1][0]:
            probs.append(f"{where}: blocks[{i - 1}] and blocks[{i}] are both in {r!r}")
    if sum(n for _, n in blocks) != job.stages:
        probs.append(f"{where}: blocks hold {sum(n for _, n in blocks)} stages, the job has {job.stages}")
    if len(hops) != len(blocks) - 1:
        probs.append(f"{where}: {len(blocks)} blocks need {len(blocks) - 1} hops, got {len(hops)}")
    if probs:
        raise InputError(probs)
    routes = []
    for i, (route, w) in enumerate(hops):
        src, dst = blocks[i][0], blocks[i + 1][0]
        if len(route) < 2 or route[0] != src or route[-1] != dst:
            probs.append(f"{where}: hops[{i}].route must run from {src!r} to {dst!r}, got {list(route)}")
            continue
        missing = [f"{u}-{v}" for u, v in zip(route, route[1:]) if (u, v) not in inst.link_index]
        if missing:
            probs.append(f"{where}: hops[{i}].route uses {', '.join(missing)}, not a link of the instance")
            continue
        if not (w > 0 and math.isfinite(w)):
            probs.append(f"{where}: hops[{i}].reserved_gbps must be finite and > 0, got {w}")
            continue
        routes.append(inst.route(route))
    if probs:
        raise InputError(probs)

    phi = opt.forward_fraction
    t_f, t_b, regions = [], [], []
    for r, n in blocks:
        t = job.stage_time_s / inst.speed[r]
        t_f += [phi * t] * n
        t_b += [(1.0 - phi) * t] * n
        regions += [r] * n
    bnds, k = [], 0
    for i, (route, w) in enumerate(hops):
        k += blocks[i][1]
        bnds.append(Boundary(k - 1, i, routes[i].latency_ms / 1000.0, F.transfer_s(job, w)))
    labels = tuple("-".join(route) for route, _ in hops)
    return PipelineModel(job.stages, job.microbatches, tuple(t_f), tuple(t_b), split=opt.split_backward,
                         wgrad_fraction=opt.wgrad_fraction, boundaries=tuple(bnds),
                         memory_limit=_limit_tuple(opt.memory_limit, job.stages, job.microbatches),
                         stage_region=tuple(regions), hop_label=labels)


def analytic_iteration_s(inst: Instance, job: Job, blocks, hops) -> float:
    """The system model's T_iter for the same placement (formulas.iteration_s)."""
    blocks, hops = normalize_placement(blocks, hops)
    tau = F.tau_s(inst, job, [r for r, _ in blocks])
    return F.iteration_s(job, tau, [w for _, w in hops], [inst.route(r).latency_ms for r, _ in hops])
