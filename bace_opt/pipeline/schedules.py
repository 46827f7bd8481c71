"""Pipeline schedules under the block model (model.py): GPipe, 1F1B, CrossPipe's latency-aware greedy,
and ``check_ops``, the checker every produced schedule must pass.

A schedule is a list of ``Op``: compute blocks (F, B or F, D, W per stage and micro-batch) and transfers
(``XF``: activation over a boundary's ``fwd`` direction, ``XB``: gradient over its ``bwd`` direction).
Makespan (the iteration time) = end of the last op minus start of F(stage 0, micro-batch 0), which every
schedule here puts at t = 0.

Static schedules (GPipe, 1F1B) fix the block order on every stage and are *simulated exactly*: each block
starts as soon as its stage is free and its input has arrived (event-driven, as-soon-as-possible); a transfer
starts when its sender block ends and its link direction is free (FIFO; each direction has one sender stage,
so FIFO is the send order) and its data arrives ``latency_s`` after its bandwidth part ends.

The greedy follows CrossPipe's CrossUDSub (Algorithm 1, sources.md 2.5) with whole blocks (n_sub = 1):
repeatedly take the stage whose earliest schedulable time is smallest, choose its op by phase (warm-up: F;
steady: alternate F and D; tear-down: D before W; W when memory blocks F and no D is ready), ties to the lower
micro-batch, and book each transfer into the earliest free window of its link direction (bw_model).
"""
from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass
from typing import Sequence

from ..errors import BaceOptError
from .model import BWD, FWD, PipelineModel


@dataclass(frozen=True)
class Op:
    """One scheduled block or transfer.

    kind     F, B, D, W (compute on ``stage``) or XF / XB (transfer sent by ``stage``: XF from stage to
             stage + 1 over boundary ``stage``, XB from stage to stage - 1 over boundary ``stage - 1``)
    mb       micro-batch, 0-based
    start_s  start; ``end_s`` end (transfers: end of the bandwidth part); ``arrive_s`` = end_s for compute,
             end_s + latency for transfers (when the receiver may start)
    """
    kind: str
    stage: int
    mb: int
    start_s: float
    end_s: float
    arrive_s: float

    @property
    def is_transfer(self) -> bool:
        return self.kind in ("XF", "XB")

    @property
    def link(self) -> tuple[int, str] | None:
        """(boundary stage index, direction) of a transfer."""
        if self.kind == "XF":
            return (self.stage, FWD)
        if self.kind == "XB":
            return (self.stage - 1, BWD)
        return None


class PipelineDeadlock(BaceOptError):
    """A fixed per-stage order cannot be executed (its dependencies form a cycle)."""


def makespan(ops: Sequence[Op]) -> float:
    """End of the last op minus the start of the first F on stage 0."""
    t0 = min(o.start_s for o in ops if o.kind == "F" and o.stage == 0)
    return max(o.end_s for o in ops) - t0


# ---------------------------------------------------------------------- fixed orders

def gpipe_orders(model: PipelineModel) -> list[list[tuple[str, int]]]:
    """Every stage: all F in micro-batch order, then all backward blocks in micro-batch order."""
    m = model.microbatches
    back = _back_seq(model)
    return [[("F", i) for i in range(m)] + [x for i in range(m) for x in back(i)] for _ in range(model.stages)]


def onefoneb_warmup(model: PipelineModel) -> list[int]:
    """Forward blocks each stage runs before its first backward: min(S - k - 1, m), lowered where the memory
    limit requires it (<= limit - 1) and kept non-increasing along the pipeline so that the order cannot
    deadlock."""
    S, m = model.stages, model.microbatches
    out, prev = [], m
    for k in range(S):
        w = min(S - k - 1, m, model.memory_limit[k] - 1, prev)
        out.append(w)
        prev = w
    return out


def onefoneb_orders(model: PipelineModel) -> list[list[tuple[str, int]]]:
    """1F1B: warm-up w_k forwards, then steady F, B pairs, then the cool-down backwards."""
    m = model.microbatches
    back = _back_seq(model)
    orders = []
    for w in onefoneb_warmup(model):
        seq = [("F", i) for i in range(w)]
        for j in range(m):
            if w + j < m:
                seq.append(("F", w + j))
            seq += back(j)
        orders.append(seq)
    return orders


def _back_seq(model: PipelineModel):
    if model.split:
        return lambda i: [("D", i), ("W", i)]
    return lambda i: [("B", i)]


def simulate_orders(model: PipelineModel, orders: Sequence[Sequence[tuple[str, int]]]) -> list[Op]:
    """As-soon-as-possible execution of fixed per-stage block orders (exact, event-driven).

    Each stage runs its blocks one at a time in the given order; a block starts at
    max(its stage is free, its input has arrived); transfers queue FIFO per link direction.
    Raises PipelineDeadlock if the orders cannot be executed.
    """
    S, m = model.stages, model.microbatches
    bk = model.back_kind
    _check_orders(model, orders)
    arr_f = [[None] * m for _ in range(S)]     # when F(k, i)'s input is available
    arr_b = [[None] * m for _ in range(S)]     # when B/D(k, i)'s input (gradient) is available
    end_f = [[None] * m for _ in range(S)]
    end_d = [[None] * m for _ in range(S)]
    for i in range(m):
        arr_f[0][i] = 0.0
    free = [0.0] * S
    pos = [0] * S
    link_free: dict[tuple[int, str], float] = {}
    ops: list[Op] = []
    todo = list(range(S - 1, -1, -1))
    queued = [True] * S
    while todo:
        k = todo.pop()
        queued[k] = False
        seq = orders[k]
        while pos[k] < len(seq):
            kind, i = seq[pos[k]]
            if kind == "F":
                ready = arr_f[k][i]
            elif kind == bk:
                ready = end_f[k][i] if k == S - 1 else arr_b[k][i]
                if ready is not None and end_f[k][i] is None:
                    ready = None
            else:  # W
                ready = end_d[k][i]
            if ready is None:
                break
            st = max(free[k], ready)
            en = st + model.duration(kind, k)
            free[k] = en
            pos[k] += 1
            ops.append(Op(kind, k, i, st, en, en))
            if kind == "F":
                end_f[k][i] = en
                if k < S - 1:
                    arr_f[k + 1][i] = _send(model, ops, link_free, "XF", k, i, en)
                    if not queued[k + 1]:
                        todo.append(k + 1)
                        queued[k + 1] = True
            elif kind == bk:
                end_d[k][i] = en
                if k > 0:
                    arr_b[k - 1][i] = _send(model, ops, link_free, "XB", k, i, en)
                    if not queued[k - 1]:
                        todo.append(k - 1)
                        queued[k - 1] = True
    if any(pos[k] < len(orders[k]) for k in range(S)):
        stuck = [f"stage {k} at {orders[k][pos[k]]}" for k in range(S) if pos[k] < len(orders[k])]
        raise PipelineDeadlock("pipeline order cannot be executed (cyclic wait): " + "; ".join(stuck[:5]))
    return ops


def _send(model: PipelineModel, ops: list, link_free: dict, kind: str, k: int, i: int, t: float) -> float:
    """Record the transfer of micro-batch i sent by stage k at time t; return its arrival time."""
    b = model.boundary(k if kind == "XF" else k - 1)
    if b is None:
        return t
    key = (b.stage, FWD if kind == "XF" else BWD)
    if b.transfer_s > 0:
        st = max(t, link_free.get(key, b.ready_s))
        en = st + b.transfer_s
        link_free[key] = en
    else:
        st = en = t
    ops.append(Op(kind, k, i, st, en, en + b.latency_s))
    return en + b.latency_s


def _check_orders(model: PipelineModel, orders) -> None:
    want = sorted((kd, i) for kd in model.kinds for i in range(model.microbatches))
    if len(orders) != model.stages:
        raise BaceOptError(f"pipeline orders: {len(orders)} stage orders for {model.stages} stages")
    for k, seq in enumerate(orders):
        if sorted(seq) != want:
            raise BaceOptError(f"pipeline orders: stage {k} must run each of {model.kinds} once per micro-batch")


def gpipe(model: PipelineModel) -> list[Op]:
    return simulate_orders(model, gpipe_orders(model))


def onefoneb(model: PipelineModel) -> list[Op]:
    return simulate_orders(model, onefoneb_orders(model))


def orders_of(ops: Sequence[Op], stages: int) -> list[list[tuple[str, int]]]:
    """Per-stage block order of a schedule (by start time)."""
    out = [[] for _ in range(stages)]
    for o in sorted((o for o in ops if not o.is_transfer), key=lambda o: (o.start_s, o.end_s)):
        out[o.stage].append((o.kind, o.mb))
    return out


# ---------------------------------------------------------------------- the greedy (CrossUDSub, n_sub = 1)

class _LinkBook:
    """CrossPipe's bw_model: busy windows of one link direction, sorted; a message of length d ready at t goes
    into the earliest free window of length d at or after t."""

    __slots__ = ("starts", "ends")

    def __init__(self):
        self.starts: list[float] = []
        self.ends: list[float] = []

    def book(self, t: float, d: float) -> float:
        """Reserve [s, s + d) with s >= t the earliest fit; return s."""
        starts, ends = self.starts, self.ends
        if not starts or t >= ends[-1]:
            starts.append(t)
            ends.append(t + d)
            return t
        j = bisect.bisect_right(ends, t)   # first window ending after t
        s = t
        while j < len(starts):
            if s + d <= starts[j]:
                break
            s = max(s, ends[j])
            j += 1
        starts.insert(j, s)
        ends.insert(j, s + d)
        return s


def greedy(model: PipelineModel) -> list[Op]:
    """CrossPipe-style latency-aware greedy schedule (whole blocks; see the module docstring).

    Stage selection: the stage whose earliest schedulable time max(stage free, earliest ready op) is smallest
    (ties: lower stage).  Op selection at that time t among the ops ready by t:
      warm-up (fewer than S - k - 1 forwards issued on 0-based stage k, as 1F1B's warm-up): F, even if a
      backward is ready;
      F and D both ready: alternate (after an F take D, after a D take F);
      only one of F, D ready: that one (so D comes before W in the tear-down);
      neither: W (lowest micro-batch), which also frees memory when the limit blocks F.
    F is ready only while the stage's in-flight micro-batches are below its memory limit.
    """
    S, m = model.stages, model.microbatches
    split = model.split
    bk = model.back_kind
    lim = model.memory_limit
    INF = math.inf
    free = [0.0] * S
    nf = [0] * S                      # next forward micro-batch per stage
    arr_f = [[INF] * m for _ in range(S)]
    for i in range(m):
        arr_f[0][i] = 0.0
    end_f = [[INF] * m for _ in range(S)]
    dq: list[list[tuple[float, int]]] = [[] for _ in range(S)]   # ready backward (arrival, mb), heap
    wq: list[list[tuple[float, int]]] = [[] for _ in range(S)]   # ready W (ready time, mb), heap
    inflight = [0] * S
    last_was_f = [False] * S
    books: dict[tuple[int, str], _LinkBook] = {}
    ops: list[Op] = []
    total = len(model.kinds) * m * S
    est = [INF] * S

    def f_ready(k):
        i = nf[k]
        if i >= m or inflight[k] >= lim[k]:
            return INF
        return arr_f[k][i]

    def earliest(k):
        r = f_ready(k)
        if dq[k] and dq[k][0][0] < r:
            r = dq[k][0][0]
        if wq[k] and wq[k][0][0] < r:
            r = wq[k][0][0]
        return r if r == INF else max(free[k], r)

    def send(kind, k, i, t):
        b = model.boundary(k if kind == "XF" else k - 1)
        if b is None:
            return t
        if b.transfer_s > 0:
            key = (b.stage, FWD if kind == "XF" else BWD)
            book = books.get(key)
            if book is None:
                book = books[key] = _LinkBook()
            st = book.book(max(t, b.ready_s), b.transfer_s)
            en = st + b.transfer_s
        else:
            st = en = t
        ops.append(Op(kind, k, i, st, en, en + b.latency_s))
        return en + b.latency_s

    for k in range(S):
        est[k] = earliest(k)
    done = 0
    while done < total:
        t = min(est)
        if t == INF:
            raise PipelineDeadlock("greedy pipeline schedule is stuck (memory limit too small?)")
        k = est.index(t)
        fr = f_ready(k) <= t
        # lowest micro-batch among ready backward blocks
        d_i = _lowest_ready(dq[k], t)
        if fr and d_i is not None:
            warm = nf[k] < S - k - 1
            take = "F" if (warm or not last_was_f[k]) else bk
        elif d_i is not None:
            take = bk
        elif fr:
            take = "F"
        else:
            take = "W"
        if take == "F":
            i = nf[k]
            nf[k] += 1
            inflight[k] += 1
            d = model.t_f[k]
            st = t
            en = st + d
            end_f[k][i] = en
            last_was_f[k] = True
            ops.append(Op("F", k, i, st, en, en))
            if k < S - 1:
                arr_f[k + 1][i] = send("XF", k, i, en)
                est[k + 1] = earliest(k + 1)
            else:
                heapq.heappush(dq[k], (en, i))
        elif take == bk:
            _remove(dq[k], d_i)
            i = d_i
            st = t
            en = st + model.duration(bk, k)
            last_was_f[k] = False
            ops.append(Op(bk, k, i, st, en, en))
            if split:
                heapq.heappush(wq[k], (en, i))
            else:
                inflight[k] -= 1
            if k > 0:
                heapq.heappush(dq[k - 1], (send("XB", k, i, en), i))
                est[k - 1] = earliest(k - 1)
        else:
            i = _lowest_ready(wq[k], t)
            _remove(wq[k], i)
            st = t
            en = st + model.duration("W", k)
            inflight[k] -= 1
            ops.append(Op("W", k, i, st, en, en))
        free[k] = en
        done += 1
        est[k] = earliest(k)
    return ops


def _lowest_ready(heap: list[tuple[float, int]], t: float) -> int | None:
    """Lowest micro-batch among the heap's entries ready by t (entries are few: scan)."""
    best = None
    for r, i in heap:
        if r <= t and (best is None or i < best):
            best = i
    return best


def _remove(heap: list[tuple[float, int]], i: int) -> None:
    for j, (_, x) in enumerate(heap):
        if x == i:
            heap[j] = heap[-1]
            heap.pop()
            if j < len(heap):
                heapq.heapify(heap)
            return
    raise AssertionError("micro-batch not in the ready set")


# ---------------------------------------------------------------------- the checker

def check_ops(model: PipelineModel, ops: Sequence[Op], memory_limit: Sequence[int] | None = None,
              tol: float = 1e-9) -> list[str]:
    """Every rule of the block model a schedule must satisfy; returns the violations (empty: valid).

    1 each compute block (kind, stage, mb) exactly once with its model duration; each cross-region transfer
      exactly once with duration c and arrival end + latency; no transfer over a same-region boundary
    2 data dependencies: F(k,i) after F(k-1,i) arrives; B/D(k,i) after F(k,i) and after B/D(k+1,i) arrives;
      W(k,i) after D(k,i); a transfer starts after its sender block ends
    3 no overlap on a stage, nor on a link direction
    4 memory: in-flight micro-batches on stage k (F started, last backward block not ended) <= limit[k]
      (``memory_limit`` defaults to the model's)
    """
    S, m = model.stages, model.microbatches
    bk = model.back_kind
    out: list[str] = []
    scale = max([1.0] + [abs(o.end_s) for o in ops])
    eps = tol * scale
    comp: dict[tuple[str, int, int], Op] = {}
    xfer: dict[tuple[str, int, int], Op] = {}
    for o in ops:
        key = (o.kind, o.stage, o.mb)
        target = xfer if o.is_transfer else comp
        if key in target:
            out.append(f"{key} scheduled twice")
        target[key] = o
        if not (0 <= o.stage < S and 0 <= o.mb < m):
            out.append(f"{key} out of range")
            continue
        if o.is_transfer:
            b = model.boundary(o.link[0]) if 0 <= o.link[0] < S - 1 else None
            if b is None:
                out.append(f"{key}: transfer over boundary {o.link[0]}, which is not cross-region")
                continue
            if abs(o.end_s - o.start_s - b.transfer_s) > eps or abs(o.arrive_s - o.end_s - b.latency_s) > eps:
                out.append(f"{key}: transfer duration/latency differ from the model")
            if b.transfer_s > 0 and o.start_s < b.ready_s - eps:
                out.append(f"{key}: transfer starts at {o.start_s} before its link is ready at {b.ready_s}")
        else:
            if o.kind not in model.kinds:
                out.append(f"{key}: block kind {o.kind} not in this model {model.kinds}")
                continue
            if abs(o.end_s - o.start_s - model.duration(o.kind, o.stage)) > eps:
                out.append(f"{key}: duration {o.end_s - o.start_s} != model {model.duration(o.kind, o.stage)}")
    for kd in model.kinds:
        for k in range(S):
            for i in range(m):
                if (kd, k, i) not in comp:
                    out.append(f"{(kd, k, i)} missing")
    for k in range(S - 1):
        if model.boundary(k) is not None:
            for i in range(m):
                if ("XF", k, i) not in xfer:
                    out.append(f"transfer XF of mb {i} over boundary {k} missing")
                if ("XB", k + 1, i) not in xfer:
                    out.append(f"transfer XB of mb {i} over boundary {k} missing")
    if out:
        return out

    def arrival(kind_x, sender, i, sender_kind):
        x = xfer.get((kind_x, sender, i))
        src = comp[(sender_kind, sender, i)]
        if x is None:
            return src.end_s
        if x.start_s < src.end_s - eps:
            out.append(f"{(kind_x, sender, i)} starts at {x.start_s} before its sender ends at {src.end_s}")
        return x.arrive_s

    for k in range(S):
        for i in range(m):
            f = comp[("F", k, i)]
            if k > 0:
                a = arrival("XF", k - 1, i, "F")
                if f.start_s < a - eps:
                    out.append(f"F(stage {k}, mb {i}) starts at {f.start_s} before its input arrives at {a}")
            b = comp[(bk, k, i)]
            if b.start_s < f.end_s - eps:
                out.append(f"{bk}(stage {k}, mb {i}) starts before F(stage {k}, mb {i}) ends")
            if k < S - 1:
                a = arrival("XB", k + 1, i, bk)
                if b.start_s < a - eps:
                    out.append(f"{bk}(stage {k}, mb {i}) starts at {b.start_s} before its gradient arrives at {a}")
            if model.split:
                w = comp[("W", k, i)]
                if w.start_s < b.end_s - eps:
                    out.append(f"W(stage {k}, mb {i}) starts before D(stage {k}, mb {i}) ends")
    # no overlap per stage and per link direction
    res: dict = {}
    for o in ops:
        if o.is_transfer:
            if o.end_s > o.start_s:
                res.setdefault(("link",) + o.link, []).append(o)
        else:
            res.setdefault(("stage", o.stage), []).append(o)
    for key, lst in res.items():
        lst.sort(key=lambda o: (o.start_s, o.end_s))
        for a, b in zip(lst, lst[1:]):
            if b.start_s < a.end_s - eps:
                out.append(f"{key}: {(a.kind, a.mb)} [{a.start_s}, {a.end_s}) overlaps {(b.kind, b.mb)} "
                           f"[{b.start_s}, {b.end_s})")
    # memory
    lim = tuple(memory_limit) if memory_limit is not None else model.memory_limit
    for k, peak in enumerate(peak_inflight(model, ops)):
        if peak > lim[k]:
            out.append(f"stage {k}: {peak} micro-batches in flight > memory limit {lim[k]}")
    return out


def peak_inflight(model: PipelineModel, ops: Sequence[Op]) -> list[int]:
    """Peak in-flight micro-batches per stage (F start +1, end of the last backward block -1; an end at the
    same instant as a start frees first)."""
    lk = model.last_kind
    ev: list[list[tuple[float, int]]] = [[] for _ in range(model.stages)]
    for o in ops:
        if o.kind == "F":
            ev[o.stage].append((o.start_s, 1))
        elif o.kind == lk:
            ev[o.stage].append((o.end_s, -1))
    out = []
    for lst in ev:
        lst.sort()
        cur = peak = 0
        for _, d in lst:
            cur += d
            peak = max(peak, cur)
        out.append(peak)
    return out
