"""The online multi-tenant simulator (system-model.md, "Online").

``simulate(inst, policy="bace-pipe", mode="queue", seed=0, **policy_options) -> Schedule``

A discrete-event simulation.  Events: job arrivals, job completions and, while jobs wait in queue mode, the next
price change of a region's hourly (any step) series and the policy's own wake-up (its optional ``wake_at(now)``,
asked after each queue decision: a time after ``now`` at which it wants to decide again though nothing else
happens, or None; what a round-based scheduler or a job held back on purpose needs).  All events at one time are applied
together (completions first, releasing their GPUs and bandwidth; then arrivals), then the policy is called
once with the jobs it may start:

* ``mode="queue"``: every waiting job; a job the policy does not start keeps waiting.
* ``mode="blocking"``: only the jobs arriving now; a job the policy does not start is rejected on the spot
  (status ``blocked``; the evaluator's ``blocking_probability`` = blocked / jobs).

The policy sees a read-only ``ClusterState`` (free GPUs per region, free Gbit/s per link -- equal in both
directions since every hop reserves its bandwidth both ways -- and prices at ``now``) on its read-only view of
the instance (``policies.view.InstanceView``: every resource, and only the jobs that have arrived by ``now``,
appended as they arrive), and returns the plans to start now.  Every call into the policy and every plan it
returns goes through one gate, ``policies.gate``, the same one every other path uses: the return type, rule 1 of the
evaluator, the start time, the job is one it may start (once), GPUs and the summed bandwidth of all its hops fit
the residual, checked against the instance as loaded; a write into the view refused and named, the view's
own fields checked after every call; an exception, exit or stray interrupt inside the policy, or a call past
``decision_time_limit_s``, named as the policy's.  None of it costs more per event with more jobs.  A violation
raises ``PolicyError``: a policy that over-commits is a bug.  A started job finishes at start + run time as
``bace_opt.evaluate.price_plan`` computes it, so the simulation agrees with the evaluator exactly.  Link
reservations are kept per running job and each link's free bandwidth is recomputed with ``math.fsum``, so no
rounding drifts accumulate.  Jobs still waiting when no event is left (no placement exists for them under the
policy's rules) are ``unscheduled``.

The output is ``bace_opt.evaluate.make_schedule(inst, plans, method=policy.name, meta=...)`` with meta:
``mode``, ``policy``, ``policy_options``, ``seed``, ``events`` (events processed), ``decisions`` (policy
calls), ``end_s`` (time of the last event), ``jobs[name] = {"wait_s", "hol_blocked_s", "run_s"}`` and the totals ``total_hol_blocked_s``.

Head-of-line blocked time (our reading, precise): after each decision at time t, a job still waiting is
*HoL-blocked* over [t, t') (t' the next event) if the policy's own placement rule (``policy.place``) finds a
placement for it alone on the resources left free by that decision; it could have started, but the order
the policy processes jobs in held it back behind a job ahead of it.  ``hol_blocked_s`` sums those
intervals; it is part of ``wait_s``.  (For BACE-Pipe, which skips jobs that do not fit, it is zero except
where its greedy rules are not monotone in the free resources.)  Disable with ``track_hol=False`` (it costs
one placement call per waiting job per event).

Deterministic: no randomness besides what a policy does with ``seed`` (the shipped ones are deterministic).

The policy contract (``policies.contract``, docs/policies.md): a policy is checked once (``check_policy``:
``name``, ``options``, ``decide``, ``place``, an ``InputError`` naming what is missing) and its optional members
are called with the defaults of ``PolicyBase``; nothing is probed.

Under contention (issue 15) each event costs what changed, not the queue length.  ``_Run`` is the event loop
with one small handler per step (pop events, release, decide in queue or blocking mode, apply a plan,
head-of-line update, price event).  In queue mode the waiting jobs live in a queue object: the policy's own
``queue_session(inst)`` when it returns one (the ordered policies: ``policies.queue.QueueSession``, which offers
``place`` only the jobs that could fit and keeps the head-of-line set by difference, with decisions
identical to ``decide`` on the whole queue; exact-p1's ``ExactQueue``, which leaves out the jobs proven
unfit since the last release), else ``_GenericQueue``, which offers every waiting job to ``decide`` and every
one that fits by GPU count to ``place``, as before (price-pack, policy objects).  The queue
object keeps the head-of-line time (``hol_update(state, now)``, settled on ``remove(name, now)`` and, for the
jobs still waiting, at the last event by ``finish``): a job's time is added as (leave - enter) per stretch, or
as the difference of its bucket's clock (``policies.queue``), which equals the sum of the inter-event
intervals up to float rounding.  ``tests/reference_sim.py`` keeps the former simulator and
``tests/test_sim_replay.py`` checks that both make the same decisions.
"""
from __future__ import annotations

import heapq
import logging
import math
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from .errors import InputError
from .evaluate import ITERATION_MODELS, make_schedule, price_plan
from .formulas import price_curves
from .instance import Instance
from .options import Opt, check_options
from .policies import make_policy
from .policies.base import ClusterState
from .policies.contract import PolicyBase, QueueSessionProtocol, WaitingQueue, check_policy
from .policies.gate import Described, PolicyRunner, check_decision, violation
from .schedule import JobPlan, Schedule

log = logging.getLogger(__name__)

MODES = ("queue", "blocking")
#: the simulator's own options (the policy's are declared by its registry entry: ``check_policy_options``)
SIM_OPTIONS = {"mode": Opt("choice", choices=MODES), "seed": Opt("int"), "track_hol": Opt("bool"),
               "iteration_model": Opt("choice", choices=ITERATION_MODELS),
               "decision_time_limit_s": Opt("float", gt=0, le=1e9, help="limit on one call into the policy, s")}
#: a progress display is refreshed at most this often, s of wall time
PROGRESS_EVERY_S = 0.5

# event kinds, in the order they are applied at one time
_DONE, _ARRIVE, _PRICE, _WAKE = 0, 1, 2, 3
#: a policy's wake-ups (``wake_at``) that start nothing, in a row with no other event, before further ones are
#: ignored (a policy asking again and again on a state no event changes would never let the run end)
MAX_IDLE_WAKES = 1000


@dataclass
class SimStats:
    """Run statistics that are not part of the (deterministic) schedule: wall-clock timings."""
    events: int = 0
    decisions: int = 0
    wall_s: float = 0.0
    decide_s: list[float] = field(default_factory=list)    # wall time of each policy call
    decide_cpu_s: list[float] = field(default_factory=list)  # CPU time of this thread in each policy call
    cpu_s: float = 0.0                                       # CPU time of this process over the run
    place_calls: int = 0

    @property
    def events_per_s(self) -> float:
        return self.events / self.wall_s if self.wall_s > 0 else math.inf

    @property
    def median_decide_s(self) -> float | None:
        return statistics.median(self.decide_s) if self.decide_s else None

    @property
    def median_decide_cpu_s(self) -> float | None:
        return statistics.median(self.decide_cpu_s) if self.decide_cpu_s else None


def simulate(inst: Instance, policy: Any = "bace-pipe", mode: str = "queue", seed: int = 0,
             track_hol: bool = True, iteration_model: str = "analytic", decision_time_limit_s: float | None = None,
             progress: Any = None, **policy_options) -> Schedule:
    """Simulate ``policy`` (a registered name or a ``Policy`` object) on ``inst``; return the priced
    Schedule (see module doc).  ``iteration_model``: ``analytic`` (default) or a pipeline schedule kind
    (gpipe, 1f1b, greedy) that sets every job's iteration time, hence its finish time.
    ``decision_time_limit_s``: the limit on one call into the policy (default
    ``policies.gate.DECISION_TIME_LIMIT_S``); a call past it is the policy's error.  ``progress``: None or
    False (default) shows nothing; True a bar on stderr (tqdm, the ``progress`` extra; else an INFO log line every
    10 s); a callable gets ``(jobs settled, jobs, simulated time)`` at most every ``PROGRESS_EVERY_S``."""
    return run_simulation(inst, policy, mode=mode, seed=seed, track_hol=track_hol, iteration_model=iteration_model,
                          decision_time_limit_s=decision_time_limit_s, progress=progress, **policy_options)[0]


def run_simulation(inst: Instance, policy: Any = "bace-pipe", mode: str = "queue", seed: int = 0,
                   track_hol: bool = True, iteration_model: str = "analytic",
                   decision_time_limit_s: float | None = None, progress: Any = None,
                   **policy_options) -> tuple[Schedule, SimStats]:
    """``simulate`` plus the run's wall-clock statistics."""
    opts = {"mode": mode, "seed": seed, "track_hol": track_hol, "iteration_model": iteration_model}
    if decision_time_limit_s is not None:
        opts["decision_time_limit_s"] = decision_time_limit_s
    check_options("simulate", SIM_OPTIONS, opts)
    if isinstance(policy, str):
        pol = check_policy(make_policy(policy, seed=seed, **policy_options))
    else:
        if policy_options:
            raise InputError(f"policy options {sorted(policy_options)} given with a policy object; "
                             "configure the object instead")
        pol = check_policy(policy)
    stats = SimStats()
    t_wall = time.perf_counter()
    t_cpu = time.process_time()
    with PolicyRunner(pol, inst, decision_time_limit_s) as guard, SimProgress(len(inst.jobs), progress) as bar:
        run = _Run(inst, pol, mode, track_hol, iteration_model, stats, guard)
        run.loop(bar)
        sched = run.schedule(seed)
    stats.wall_s = time.perf_counter() - t_wall
    stats.cpu_s = time.process_time() - t_cpu
    log.info("simulated %s (%s mode) on %s: %d events, %d decisions, %.3f s", pol.name, mode, inst.name,
             stats.events, stats.decisions, stats.wall_s)
    return sched, stats


class SimProgress:
    """The progress of one run (``simulate``'s ``progress``): jobs settled (started, blocked) of all, refreshed
    at most every ``PROGRESS_EVERY_S`` s of wall time."""

    def __init__(self, total: int, how: Any):
        self.total, self.how, self.bar = total, how, None
        self.last = time.monotonic()
        self.logged = self.last
        if how is True:
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="job", desc="simulate", file=sys.stderr, leave=False)
            except ImportError:
                self.bar = None

    def __enter__(self) -> "SimProgress":
        return self

    def update(self, done: int, t: float) -> None:
        if not self.how:
            return
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY_S:
            return
        self.last = now
        if callable(self.how):
            self.how(done, self.total, t)
        elif self.bar is not None:
            self.bar.n = done
            self.bar.set_postfix_str(f"t={t:,.0f} s", refresh=False)
            self.bar.refresh()
        elif now - self.logged >= 10.0:
            self.logged = now
            log.info("simulating: %d of %d jobs settled, simulated time %.0f s", done, self.total, t)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()


class _GenericQueue(WaitingQueue):
    """Queue-mode decisions for a policy without ``queue_session``: every waiting job is offered to
    ``decide``, and every waiting job that fits by GPU count to ``place`` for the head-of-line set."""

    def __init__(self, pol: PolicyBase):
        super().__init__()
        self.pol = pol

    def decide(self, now: float, state: ClusterState) -> list[JobPlan]:
        return self.pol.decide(now, list(self.waiting.values()), state)

    def hol_update(self, state: ClusterState, now: float = 0.0) -> None:
        tot = state.total_free_gpus()
        for n, job in self.waiting.items():
            m = False
            if job.gpus <= tot:
                self.place_calls += 1
                m = self.pol.place(job, state) is not None
            self._mark(n, m, now)


class _Run:
    """One simulation: the event loop and a handler per event kind (see module doc)."""

    def __init__(self, inst: Instance, pol: PolicyBase, mode: str, track_hol: bool, iteration_model: str,
                 stats: SimStats, guard: PolicyRunner):
        self.inst, self.pol, self.mode, self.track_hol = inst, pol, mode, track_hol
        self.iteration_model, self.stats = iteration_model, stats
        self.guard = guard                       # every call into the policy, and its view of the instance
        self.name = pol.name
        self.jobs = {j.name: j for j in inst.jobs}
        self.waiting: dict[str, None] = {}       # the jobs the policy may start (kept here, not by the policy)
        self.links = inst.links
        self.li = inst.link_index
        self.free_gpus = {r.name: r.gpus for r in inst.regions}
        self.link_res: list[dict[str, float]] = [dict() for _ in self.links]   # link -> {job: reserved Gbit/s}
        self.free_bw = [l.bandwidth_gbps for l in self.links]
        self.in_use: set[int] = set()                                          # links with a reservation
        self.curves = [c for c in price_curves(inst).values() if c.values is not None and len(c.values) > 1]
        self.heap: list[tuple] = []
        self.seq = 0
        for j in sorted(inst.jobs, key=lambda j: (j.arrival_s, inst.job_index[j.name])):
            self.heap.append((j.arrival_s, _ARRIVE, self.seq, j.name))
            self.seq += 1
        heapq.heapify(self.heap)
        self.queue: QueueSessionProtocol | None = None
        if mode == "queue":
            self.queue = guard.call(pol.queue_session, 0.0, "opening its queue session", guard.view) \
                or _GenericQueue(pol)
        self.plans: dict[str, JobPlan] = {}
        self.status: dict[str, str] = {}
        self.run_s: dict[str, float] = {}
        self.price_pushed: set[float] = set()
        self.next_change = [-math.inf, None]      # [valid until t <, next price change time]
        self.last_t = None
        self.unchanged: ClusterState | None = None   # the decision's state when the decision started nothing
        # the policy's wake-ups: its queue session's ``wake_at``, or the policy's own on the generic path
        who = self.queue.pol if isinstance(self.queue, _GenericQueue) else self.queue
        self.wake_fn = getattr(who, "wake_at", None) if who is not None else None
        self.wakes: set[float] = set()            # wake-up times in the heap
        self.idle_wakes = 0                       # wake-ups in a row that started nothing, no other event between
        self.only_wakes = False                   # the events just applied were wake-ups only
        self.wakes_capped = False                 # the cap on idle wake-ups was hit (said once)

    # ------------------------------------------------------------------ the loop
    def loop(self, bar: "SimProgress | None" = None) -> None:
        while self.heap:
            t = self.heap[0][0]
            if bar is not None:
                bar.update(len(self.status), t)
            new = self.pop_events(t)
            self.last_t = t
            if self.mode == "queue":
                started = self.decide_queue(t, new)
                self.idle_wakes = self.idle_wakes + 1 if self.only_wakes and not started else 0
            elif new:
                self.decide_blocking(t, new)
            if self.mode == "queue" and self.waiting:
                if self.track_hol:
                    self.update_hol(t)
                if self.curves:
                    self.push_price_event(t)
                if self.wake_fn is not None:
                    self.push_wake(t)

    def pop_events(self, t: float) -> list[str]:
        """Apply every event at time t (completions release, arrivals are returned, price events are
        markers); return the arriving jobs."""
        new: list[str] = []
        heap = self.heap
        wakes_only = True
        while heap and heap[0][0] == t:
            _, kind, _, payload = heapq.heappop(heap)
            self.stats.events += 1
            wakes_only = wakes_only and kind == _WAKE
            if kind == _DONE:
                self.release(payload)
            elif kind == _ARRIVE:
                new.append(payload)
            elif kind == _PRICE:
                self.price_pushed.discard(t)
            else:
                self.wakes.discard(t)
        self.only_wakes = wakes_only
        return new

    # ------------------------------------------------------------------ decisions
    def call_policy(self, decide, t: float, jobs, *args) -> list[JobPlan]:
        """One decision through the gate (``policies.gate``): the call guarded, the view checked."""
        stats = self.stats
        c0 = time.thread_time()
        t0 = time.perf_counter()
        out = self.guard.call(decide, t, Described("deciding on", jobs), t, *args)
        stats.decide_s.append(time.perf_counter() - t0)
        stats.decide_cpu_s.append(time.thread_time() - c0)
        stats.decisions += 1
        return out

    def state(self, t: float, hint: bool = True) -> ClusterState:
        """The state the policy sees (on its view of the instance)."""
        return ClusterState(self.guard.view, t, self.free_gpus, self.free_bw, links_in_use=self.in_use if hint else None)

    def decide_queue(self, t: float, new: list[str]) -> int:
        """The queue decision at t; returns how many jobs it started."""
        q, g = self.queue, self.guard
        self.unchanged = None
        for n in new:
            self.waiting[n] = None
            g.call(q.add, t, f"adding job {n!r} to its queue", g.arrive(n), t)
        if not self.waiting:
            return 0
        state = self.state(t)
        out = self.call_policy(q.decide, t, self.waiting, state)
        started = self.start(out, t, self.waiting)
        for n in started:
            del self.waiting[n]
            g.call(q.remove, t, f"removing job {n!r} from its queue", n, t)
        # nothing started: the head-of-line measurement reads the same residual state (and its caches)
        self.unchanged = None if started else state
        return len(started)

    def decide_blocking(self, t: float, new: list[str]) -> None:
        out = self.call_policy(self.pol.decide, t, new, [self.guard.arrive(n) for n in new], self.state(t))
        self.start(out, t, dict.fromkeys(new))
        for n in new:
            if n not in self.status:
                self.status[n] = "blocked"

    def start(self, out, now: float, allowed) -> list[str]:
        """Check the decision at the gate (every plan against the instance as loaded and the resources left
        by the plans before it; a violation is the policy's ``PolicyError``) and start its plans."""
        if out is None or (type(out) in (list, tuple) and not out):
            return []                # nothing to check (a wrong type, even empty, goes to the gate)
        checked = ClusterState(self.inst, now, self.free_gpus, self.free_bw)
        ok = check_decision(self.inst, self.guard.label, now, out, allowed, checked)
        for job, p in ok:
            self.apply(job, p)
        return [p.name for _, p in ok]

    def apply(self, job, p: JobPlan) -> None:
        """Start a plan the gate accepted: take its GPUs and bandwidth, schedule its completion."""
        for b in p.blocks:
            self.free_gpus[b.region] -= job.gpus_per_stage * b.stages
        touched = set()
        for h in p.hops:
            for u, w in zip(h.route, h.route[1:]):
                k = self.li[(u, w)]
                self.link_res[k][p.name] = self.link_res[k].get(p.name, 0.0) + h.reserved_gbps
                touched.add(k)
        for k in touched:
            self.free_bw[k] = self.links[k].bandwidth_gbps - math.fsum(self.link_res[k].values())
            self.in_use.add(k)
        f = price_plan(self.inst, p, self.iteration_model)
        self.plans[p.name] = p
        self.status[p.name] = "done"
        self.run_s[p.name] = f.run_s
        heapq.heappush(self.heap, (f.finish_s, _DONE, self.seq, p.name))
        self.seq += 1

    def release(self, jname: str) -> None:
        job = self.jobs[jname]
        p = self.plans[jname]
        for b in p.blocks:
            self.free_gpus[b.region] += job.gpus_per_stage * b.stages
        touched = set()
        for h in p.hops:
            for u, v in zip(h.route, h.route[1:]):
                k = self.li[(u, v)]
                self.link_res[k].pop(jname, None)
                touched.add(k)
        for k in touched:
            self.free_bw[k] = self.links[k].bandwidth_gbps - math.fsum(self.link_res[k].values())
            if not self.link_res[k]:
                self.free_bw[k] = self.links[k].bandwidth_gbps
                self.in_use.discard(k)
        if self.queue is not None:
            self.guard.call(self.queue.released, self.last_t or 0.0, "releasing resources in its queue")

    # ------------------------------------------------------------------ head-of-line blocking, prices
    def update_hol(self, t: float) -> None:
        """After the decision at t: the waiting jobs the policy's ``place`` would start alone on what is
        left are HoL-blocked from t until they leave that set (their blocked time accrues when they do)."""
        q = self.queue
        before = q.place_calls
        state = self.unchanged or self.state(t, hint=False)
        what = Described("placing", self.waiting, " alone (head-of-line measurement)")
        self.guard.call(q.hol_update, t, what, state, t)
        self.stats.place_calls += q.place_calls - before

    def push_price_event(self, t: float) -> None:
        if not t < self.next_change[0]:
            nxt = _next_price_change(self.curves, t)
            self.next_change[:] = [math.inf if nxt is None else nxt, nxt]
        nxt = self.next_change[1]
        if nxt is not None and nxt not in self.price_pushed:
            self.price_pushed.add(nxt)
            heapq.heappush(self.heap, (nxt, _PRICE, self.seq, None))
            self.seq += 1

    def push_wake(self, t: float) -> None:
        """Ask the policy (``wake_at``, through the gate) when it wants to decide again with no event, and put
        that time on the heap: a time after ``t``, or None.  After ``MAX_IDLE_WAKES`` wake-ups in a row that
        started nothing, further ones are ignored until another event (logged once a run)."""
        w = self.guard.call(self.wake_fn, t, "asking when to decide again (wake_at)", t)
        if w is None:
            return
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or not w > t:
            raise violation(self.guard.label, t, "wake-up time",
                            f"wake_at returned {w!r}: a finite time after now ({t:g} s), or None")
        w = float(w)
        if w in self.wakes:
            return
        if self.idle_wakes >= MAX_IDLE_WAKES:
            if not self.wakes_capped:
                log.warning("%s: %d wake-ups in a row started nothing: its further wake-ups are ignored until "
                            "another event (said once)", self.guard.label, MAX_IDLE_WAKES)
                self.wakes_capped = True
            return
        self.wakes.add(w)
        heapq.heappush(self.heap, (w, _WAKE, self.seq, None))
        self.seq += 1

    # ------------------------------------------------------------------ the schedule
    def schedule(self, seed: int) -> Schedule:
        inst, status, stats = self.inst, self.status, self.stats
        hol_s = {j.name: 0.0 for j in inst.jobs}
        if self.queue is not None:
            for n in self.waiting:
                status.setdefault(n, "unscheduled")
            if self.last_t is not None:             # settle the jobs still waiting, up to the last event
                self.guard.call(self.queue.finish, self.last_t, "closing its queue session", self.last_t)
            hol_s.update(self.queue.hol_s)
        out_plans = []
        per_job: dict[str, dict] = {}
        for j in inst.jobs:
            st = status.get(j.name, "unscheduled")
            if st == "done":
                p = self.plans[j.name]
                out_plans.append(p)
                per_job[j.name] = {"wait_s": p.start_s - j.arrival_s, "hol_blocked_s": hol_s[j.name],
                                   "run_s": self.run_s[j.name]}
            else:
                out_plans.append(JobPlan(j.name, st))
                per_job[j.name] = {"wait_s": 0.0 if st == "blocked" else None,
                                   "hol_blocked_s": hol_s[j.name], "run_s": None}
        pol = self.pol
        opts = dict(pol.options or {})
        meta: dict[str, Any] = {"mode": self.mode, "policy": self.name, "policy_options": opts, "seed": seed,
                                "events": stats.events, "decisions": stats.decisions, "end_s": self.last_t,
                                "track_hol": self.track_hol,
                                "total_hol_blocked_s": math.fsum(hol_s.values()), "jobs": per_job}
        if pol.extra_meta is not None:
            meta["policy_stats"] = self.guard.call(pol.extra_meta, self.last_t or 0.0, "reporting its statistics")
        return make_schedule(inst, out_plans, method=self.name, meta=meta, iteration_model=self.iteration_model)


def _next_price_change(curves, t: float) -> float | None:
    """The earliest time > t at which some region's price steps."""
    best = None
    for c in curves:
        n = len(c.values)
        k = max(1, math.floor((t - c.start) / c.step) + 1)
        if k <= n - 1:
            tc = c.start + k * c.step
            if tc <= t:       # floating point guard
                k += 1
                if k > n - 1:
                    continue
                tc = c.start + k * c.step
            if best is None or tc < best:
                best = tc
    return best
