"""The policy contract: what the simulator calls on a policy, when, with what, and what it must return
(docs/policies.md is the guide, with an example that runs).

Required (``Policy``, checked by ``check_policy`` before a run):

``name: str``
    Goes into the schedule's ``method`` and its meta.
``options: Mapping``
    Goes into the schedule's meta (``policy_options``); the settings that reproduce the run.
``decide(now, queue, state) -> list[JobPlan]``
    Called once per scheduling event.  ``queue``: the jobs the policy may start now (every waiting job in
    queue mode, the jobs arriving now in blocking mode); ``state``: a read-only ``ClusterState`` at ``now``,
    whose ``inst`` is the policy's read-only view (``policies.view.InstanceView``): every resource, and only
    the jobs that have arrived by ``now`` (non-anticipative: docs/policies.md, "What a policy may know").
    Returns the plans to start now: status ``done``, ``start_s == now``, one per job of ``queue`` at most,
    together fitting the free resources (a policy starting several jobs works on ``state.copy()`` and
    ``commit``s each plan to it).  The simulator checks every plan and raises ``PolicyError`` on one that
    over-commits or is not for a job it may start.
``place(job, state) -> JobPlan | None``
    The placement the policy's own rules give ``job`` alone on ``state`` (``start_s == state.now``), or
    None.  The simulator calls it after each decision, for every waiting job that fits by GPU count, to
    measure head-of-line blocking (``track_hol``); the tests use it to check rejected jobs.

Optional, with the defaults of ``PolicyBase`` (a policy inheriting ``PolicyBase`` overrides what it needs; an
object that only has the required members gets these defaults):

``queue_session(inst) -> QueueSessionProtocol | None``  (default None)
    ``inst``: the same view, with no job yet (they are ``add``ed as they arrive).  An incremental queue-mode
    decider for one run (the ordered policies' ``policies.queue.QueueSession``,
    exact-p1's ``ExactQueue``): an object with the ``QueueSessionProtocol`` members, making the decisions that
    ``decide`` makes on the whole queue.  None: the simulator offers every waiting job to ``decide`` and every
    one that fits by GPU count to ``place`` (``WaitingQueue`` does the bookkeeping).
``wake_at(now) -> float | None``  (absent by default: no wake-ups)
    Queue mode: asked (on the queue session, else on the policy) after each decision that leaves jobs waiting:
    a time after ``now`` at which the policy wants to decide again although no job arrives or ends and no
    price changes (a round-based scheduler; a job held back on purpose), or None.  It knows only what the
    policy knows.  Anything but None or a finite time after ``now`` is a ``PolicyError``; wake-ups that start
    nothing, ``sim.MAX_IDLE_WAKES`` in a row with no other event, are ignored from then on.
``extra_meta``  (default None: no statistics)
    A method ``extra_meta() -> dict`` whose result the simulator copies into the schedule's meta as
    ``policy_stats`` at the end of the run (exact-p1: its solver calls).  A policy without statistics leaves
    it None, and its schedule has no ``policy_stats``.

``QueueTraits`` are facts about an ordered policy's ``place`` that let its queue session skip placement calls
(``OrderedPolicy.queue_traits``): declared once, frozen, never probed.

What a policy may cache: anything that is a function of the instance, the job and the state it is given (the
shipped ones keep per-instance tables on ``inst.__dict__`` and per-state caches keyed by the state object);
``decide`` and ``place`` must not depend on earlier calls otherwise, since the simulator and the
head-of-line measurement call them in an order of their own.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence, runtime_checkable

from ..errors import InputError
from ..instance import Instance, Job
from ..schedule import JobPlan
from .base import ClusterState

#: the members every policy has (``Policy``)
REQUIRED = ("name", "options", "decide", "place")
_CALLABLE = ("decide", "place")


@runtime_checkable
class Policy(Protocol):
    """What the simulator calls.  ``name`` goes into the schedule's ``method``; ``options`` into its meta."""

    name: str
    options: Mapping

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        """Plans (status done, start_s == now) for the jobs of ``queue`` to start now."""
        ...

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        """The placement this policy's rules give ``job`` alone on ``state`` (start_s = state.now), or None."""
        ...


@runtime_checkable
class QueueSessionProtocol(Protocol):
    """The queue object of one queue-mode run (``queue_session``).  The simulator ``add``s each arriving job,
    ``remove``s each started one, says when a finished job ``released`` resources, asks ``decide(now, state)``
    at every event and, after it, ``hol_update(state, now)`` with the resources left; ``finish(now)`` at the
    last event.  It reads ``waiting`` (name -> job), ``hol_s`` (name -> head-of-line-blocked time settled)
    and ``place_calls`` (placement calls made, a statistic)."""

    waiting: Mapping[str, Job]
    hol_s: Mapping[str, float]
    place_calls: int

    def add(self, job: Job, now: float = 0.0) -> None: ...

    def remove(self, name: str, now: float = 0.0) -> None: ...

    def released(self) -> None: ...

    def decide(self, now: float, state: ClusterState) -> list[JobPlan]: ...

    def hol_update(self, state: ClusterState, now: float = 0.0) -> None: ...

    def finish(self, now: float) -> None: ...


class PolicyBase:
    """A base class for policies: the optional members with their defaults (module doc).  A subclass sets
    ``name`` and ``options`` and defines ``decide`` and ``place``."""

    name: str
    options: Mapping

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        raise NotImplementedError(f"{type(self).__name__} does not define decide(now, queue, state)")

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        raise NotImplementedError(f"{type(self).__name__} does not define place(job, state)")

    def queue_session(self, inst: Instance) -> QueueSessionProtocol | None:
        """An incremental queue-mode decider for a run on ``inst``, or None (the simulator's generic path)."""
        return None

    #: a method returning run statistics for the schedule's meta (``policy_stats``), or None: no statistics
    extra_meta: Callable[[], dict] | None = None


@dataclass(frozen=True)
class QueueTraits:
    """What an ordered policy tells its queue session (``policies.queue``) about its ``place`` rule.

    ``order``, ``hol``: the policy's order ("priority" or "fifo") and what a job that does not fit does
    ("skip" or "block").  ``single_region_places``: a job that one free region can hold is always placed.
    ``single_region_only``: only such jobs are ever placed.  ``bandwidth_checked``: every hop of a multi-region
    chain needs residual >= the job's smallest demand (so a component bound applies).  ``fits_first``: ask
    ``fits`` before ``place`` for a job one region cannot hold (``fits`` much cheaper where it fails).
    ``demand_rule(job, S, state)``: the rule of greedy chains, ``(speed, replay)`` or None (see
    ``greedy_chains.greedy_demand_rule``), or None when the policy has none.  ``group_bounds(job, state)``:
    ``(sure, limit)`` stage counts of the job's group (see ``queue_hol.HolSession.hol_bounds``), or None."""

    order: str = "priority"
    hol: str = "skip"
    single_region_places: bool = False
    single_region_only: bool = False
    bandwidth_checked: bool = False
    fits_first: bool = True
    demand_rule: Callable | None = None
    group_bounds: Callable | None = None


class _Bound(PolicyBase):
    """A policy object that does not inherit ``PolicyBase``: its required members, and the defaults."""

    def __init__(self, pol):
        self.name = pol.name
        self.options = pol.options
        self.decide = pol.decide
        self.place = pol.place


def check_policy(obj) -> PolicyBase:
    """``obj`` as the simulator uses it: itself when it inherits ``PolicyBase``, else a view with its required
    members and the optional members' defaults.  Raises ``InputError`` naming every required member that is
    missing (or not callable), a ``name`` that is not a non-empty string, or ``options`` that are not a mapping
    of JSON data (before, such a policy's run wrote a schedule that ``evaluate`` refuses, or crashed)."""
    missing = [m for m in REQUIRED if not hasattr(obj, m)]
    missing += [m for m in _CALLABLE if m not in missing and not callable(getattr(obj, m))]
    if missing:
        raise InputError(f"policy must be a registered name or an object with name, options, decide(now, queue, "
                         f"state) and place(job, state); {type(obj).__name__} has no "
                         + ", ".join(f"callable {m!r}" if m in _CALLABLE else repr(m) for m in missing))
    who = type(obj).__name__
    if not isinstance(obj.name, str) or not obj.name:
        raise InputError(f"{who}.name must be a non-empty string (the schedule's method), got {obj.name!r}")
    if not isinstance(obj.options, Mapping):
        raise InputError(f"{who}.options must be a mapping (the schedule's meta.policy_options), got "
                         f"{type(obj.options).__name__} {obj.options!r}"[:300])
    try:        # (a non-finite number is refused where the schedule is written, naming its field)
        json.dumps(dict(obj.options))
    except (TypeError, ValueError) as e:
        raise InputError(f"{who}.options must be JSON data (the schedule's meta.policy_options: text, numbers, "
                         f"lists, objects): {e}"[:300]) from None
    return obj if isinstance(obj, PolicyBase) else _Bound(obj)


class WaitingQueue:
    """The waiting jobs of a queue-mode session and their head-of-line-blocked time (the bookkeeping the
    simulator's generic session and ``exact-p1``'s share): ``since`` holds when each job in the head-of-line
    set joined it; ``hol_s`` a job's settled blocked time, added when it leaves the set, starts, or the run
    ends.  Subclasses give ``decide(now, state)`` and ``hol_update(state, now)`` (``QueueSessionProtocol``)."""

    def __init__(self) -> None:
        self.waiting: dict[str, Job] = {}
        self.since: dict[str, float] = {}       # head-of-line-blocked job -> since when
        self.hol_s: dict[str, float] = {}       # settled head-of-line-blocked time
        self.place_calls = 0

    def add(self, job: Job, now: float = 0.0) -> None:
        self.waiting[job.name] = job

    def _leave(self, name: str, now: float) -> None:
        t0 = self.since.pop(name, None)
        if t0 is not None:
            self.hol_s[name] = self.hol_s.get(name, 0.0) + (now - t0)

    def _mark(self, name: str, blocked: bool, now: float) -> None:
        if blocked:
            self.since.setdefault(name, now)
        else:
            self._leave(name, now)

    def remove(self, name: str, now: float = 0.0) -> None:
        del self.waiting[name]
        self._leave(name, now)

    def finish(self, now: float) -> None:
        for name in list(self.since):
            self._leave(name, now)

    def released(self) -> None:
        pass
