"""The ordered policies' common rule: order the jobs that may start, then place them one by one (BACE-Pipe, its
ablations and the baselines are ordered policies; price-pack inherits the placement interface and decides on
its own).  An ordered policy tells its queue session what it knows about its ``place`` rule through one
declared, frozen ``QueueTraits`` (``queue_traits``).
"""
from __future__ import annotations

from typing import Sequence

from .. import formulas as F
from ..instance import Instance, Job
from ..schedule import JobPlan
from .base import ClusterState
from .contract import PolicyBase, QueueTraits
from .priority import fifo_order, job_profile, prioritize
from .queue import QueueSession

ORDERS = ("priority", "fifo")
HOL = ("skip", "block")


class OrderedPolicy(PolicyBase):
    """A policy that orders the jobs it may start and places them one by one with its placement rule.

    ``hol="skip"``: a job that does not fit is skipped and later jobs are still tried (BACE-Pipe).
    ``hol="block"``: strict head-of-line blocking, the first job that does not fit stops the round
    (the baselines' FIFO, our reading) -- except a job that would not fit even on the empty cluster under
    the policy's rules, which can never start and is skipped rather than blocking the queue forever.
    """

    def __init__(self, name: str, order: str = "priority", hol: str = "skip", **options):
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        if hol not in HOL:
            raise ValueError(f"hol must be one of {HOL}, got {hol!r}")
        self.name = name
        self.order = order
        self.hol = hol
        self.options = {"order": order, "hol": hol, **options}
        self._never: dict = {}

    def ordered(self, queue: Sequence[Job], state: ClusterState) -> list[Job]:
        if self.order == "priority":
            return prioritize(queue, state)
        return fifo_order(queue, state.inst)

    def decide(self, now: float, queue: Sequence[Job], state: ClusterState) -> list[JobPlan]:
        if not queue:
            return []
        inst = state.inst
        free_total = state.total_free_gpus()
        if free_total < min(job_profile(inst, j)[2] for j in queue):
            return []          # nothing fits by GPU count alone, whatever the order
        res = state.copy()
        out = []
        for job in self.ordered(queue, state):
            need = job_profile(inst, job)[2]
            plan = None if need > free_total else self.place(job, res)
            if plan is None:
                if self.hol == "block" and not self.never_fits(job, state):
                    break
                continue
            res.commit(job, plan)
            free_total -= need
            out.append(plan)
        return out

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place(job, state)`` returns a plan (subclasses answer faster where they can)."""
        return self.place(job, state) is not None

    def _state_cache(self, state: ClusterState) -> dict:
        """A dict private to ``state`` (the object itself is kept, so a later state cannot reuse its id)."""
        c = self.__dict__.get("_fits_cache")
        if c is None or c[0] is not state:
            c = self.__dict__["_fits_cache"] = (state, {})
        return c[1]

    def queue_traits(self) -> QueueTraits:
        """What this policy's ``place`` rule lets its queue session skip (``contract.QueueTraits``); the base
        declares nothing beyond the order and the head-of-line rule."""
        return QueueTraits(order=self.order, hol=self.hol)

    def queue_session(self, inst: Instance) -> QueueSession | None:
        """An incremental queue-mode decider making the same decisions as ``decide`` on the whole queue
        (``policies.queue``); None for priority order with head-of-line blocking, which it does not cover."""
        if self.order == "priority" and self.hol == "block":
            return None
        if type(self).decide is not OrderedPolicy.decide:
            return None        # a subclass with its own decide (e.g. price-pack): the simulator's generic path
        return QueueSession(self, inst)

    def never_fits(self, job: Job, state: ClusterState) -> bool:
        """True if the policy's rules place ``job`` nowhere even with every resource free (prices at now)."""
        inst = state.inst
        key = (id(inst), job.name, tuple(F.price_at(inst, r.name, state.now) for r in inst.regions))
        v = self._never.get(key)
        if v is None:
            v = self._never[key] = self.place(job, ClusterState.empty(inst, state.now)) is None
        return v
