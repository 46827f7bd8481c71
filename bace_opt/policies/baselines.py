"""The paper's baselines (system-model.md, "Baselines from the paper"): LCF, LDF, CR-LCF, CR-LDF; and FIFO,
our reference (BACE-Pipe's placement in arrival order), which is not one of the paper's four.

All are FIFO (arrival order, ties by instance order).  Our reading of FIFO for a job that does not fit:
strict head-of-line blocking (``hol="block"``, default: the round stops at the first job that does not fit,
which is the behaviour behind the paper's HoL-blocking discussion); ``hol="skip"`` tries the later jobs
instead.  A job that does not fit even on the empty cluster under the baseline's rules (e.g. LCF with a
job larger than every region) never blocks the queue: it is skipped and ends ``unscheduled``.

``lcf``     single region: the cheapest (price at now) region that holds all S_j stages.
``ldf``     single region: the region with the most free GPUs, if it holds all S_j stages.
``cr-lcf``  cross-region: hosting regions in ascending price, each filled to its free GPUs, until S_j
            stages are placed (``greedy_chains.price_chain`` + fill).  No bandwidth check: each hop reserves
            min(b_j, residual), so the pipeline may stall; a region whose hop from the chain's tail has no
            link or no residual bandwidth at all is skipped (a reservation must be > 0).
``cr-ldf``  cross-region: start at the region with the most free GPUs, repeatedly append the region with
            the most free GPUs (ties: more residual bandwidth on the hop), fill in chain order
            (``greedy_chains.capacity_chain`` + fill); reservations as CR-LCF.
``fifo``    BACE-Pipe's placement (pathfinder + cost-min allocator) in FIFO order with HoL blocking.
"""
from __future__ import annotations

from ..instance import Job
from ..schedule import Block, JobPlan
from .allocators import allocate_fill
from .bace_pipe import BacePipe
from .base import ClusterState
from .contract import QueueTraits
from .greedy_chains import capacity_chain, greedy_chain_bounds, greedy_chain_fits, greedy_demand_rule, price_chain
from .ordered import OrderedPolicy
from .pathfinder import host_stages
from .plans import make_plan


class SingleRegion(OrderedPolicy):
    """LCF (``rule="price"``) or LDF (``rule="free"``)."""

    def __init__(self, name: str, rule: str, order: str = "fifo", hol: str = "block", seed: int = 0):
        if rule not in ("price", "free"):
            raise ValueError(f"rule must be 'price' or 'free', got {rule!r}")
        super().__init__(name, order=order, hol=hol, rule=rule)
        self.rule = rule

    def queue_traits(self) -> QueueTraits:
        """Only a job one region holds is placed, and always."""
        return QueueTraits(order=self.order, hol=self.hol, single_region_places=True, single_region_only=True)

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place`` returns a plan: some region holds all S_j stages (for LDF the region with the
        most free GPUs then does too)."""
        return any(n >= job.stages for n in host_stages(job, state).values())

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        hosts = host_stages(job, state)
        if not hosts:
            return None
        if self.rule == "price":
            fits = [r for r, n in hosts.items() if n >= job.stages]
            if not fits:
                return None
            r = min(fits, key=lambda r: (state.price(r), r))
        else:
            r = min(hosts, key=lambda r: (-state.free(r), state.price(r), r))
            if hosts[r] < job.stages:
                return None
        return JobPlan(job.name, "done", state.now, (Block(r, job.stages),), ())


class CrossRegion(OrderedPolicy):
    """CR-LCF (``rule="price"``) or CR-LDF (``rule="free"``)."""

    def __init__(self, name: str, rule: str, order: str = "fifo", hol: str = "block", via: str = "auto",
                 seed: int = 0):
        if rule not in ("price", "free"):
            raise ValueError(f"rule must be 'price' or 'free', got {rule!r}")
        if via not in ("auto", "links", "routes"):
            raise ValueError(f"via must be 'auto', 'links' or 'routes', got {via!r}")
        super().__init__(name, order=order, hol=hol, rule=rule, via=via)
        self.rule, self.via = rule, via

    def queue_traits(self) -> QueueTraits:
        """CR-LDF seeds at the region with the most free GPUs, which holds the job alone if any region does; both
        are greedy chains with a demand rule and group bounds."""
        return QueueTraits(order=self.order, hol=self.hol, single_region_places=self.rule == "free",
                           demand_rule=self.demand_rule, group_bounds=self.group_bounds)

    def group_bounds(self, job: Job, state: ClusterState) -> tuple[int, int]:
        """See ``queue_hol.HolSession.hol_bounds``."""
        return greedy_chain_bounds(job, state, self.rule == "free", self.via, self._state_cache(state))

    def fits(self, job: Job, state: ClusterState) -> bool:
        """Whether ``place`` returns a plan, from the chain grown once per residual state and job group."""
        return greedy_chain_fits(job, state, self.rule == "free", self.via, self._state_cache(state))

    def demand_rule(self, job: Job, S: int, state: ClusterState):
        """See ``greedy_chains.greedy_demand_rule`` (the queue uses it for the head-of-line set)."""
        return greedy_demand_rule(job, S, state, self.rule == "free", self.via, self._state_cache(state))

    def place(self, job: Job, state: ClusterState) -> JobPlan | None:
        chain = (price_chain if self.rule == "price" else capacity_chain)(job, state, via=self.via)
        if chain is None:
            return None
        blocks = allocate_fill(job, chain, state)
        if blocks is None:
            return None
        return make_plan(state.inst, job, chain, blocks, state.now)


def lcf(**kw) -> SingleRegion:
    return SingleRegion("lcf", "price", **kw)


def ldf(**kw) -> SingleRegion:
    return SingleRegion("ldf", "free", **kw)


def cr_lcf(**kw) -> CrossRegion:
    return CrossRegion("cr-lcf", "price", **kw)


def cr_ldf(**kw) -> CrossRegion:
    return CrossRegion("cr-ldf", "free", **kw)


def fifo(**kw) -> BacePipe:
    kw.setdefault("order", "fifo")
    kw.setdefault("hol", "block")
    return BacePipe(name="fifo", **kw)
