"""Online scheduling policies: BACE-Pipe, its ablations, the paper's baselines and the exact-P1 reference.

``make_policy(name, **options)`` builds one by name; ``available()`` lists the names; ``describe(name)`` gives
a one-line description.  Every policy follows the ``Policy`` protocol of ``bace_opt.policies.base``
(``decide(now, queue, state)`` and ``place(job, state)``); the simulator never branches on which one it runs.
"""
from __future__ import annotations

from typing import Callable

from ..errors import InputError
from .bace_pipe import BacePipe, Chain, allocate, allocate_even, allocate_fill, find_chains, grow_chain, prioritize, priorities
from .base import ClusterState, Policy, PolicyError, Residual
from .baselines import cr_ldf, cr_lcf, fifo, lcf, ldf
from .exact_online import ExactP1
from .price_pack import PricePack


def _bace(name, **fixed):
    def factory(**kw):
        opts = {**fixed, **kw}
        return BacePipe(name=name, **opts)
    return factory


REGISTRY: dict[str, tuple[Callable, str]] = {
    "bace-pipe": (_bace("bace-pipe"), "BACE-Pipe: dynamic priority, bandwidth-aware pathfinder, cost-min allocator"),
    "bace-pipe-no-priority": (_bace("bace-pipe-no-priority", order="fifo"),
                              "ablation: FIFO order (jobs that do not fit are still skipped)"),
    "bace-pipe-no-pathfinder": (_bace("bace-pipe-no-pathfinder", pathfinder="price"),
                                "ablation: chain by price, bandwidth unchecked (reserves what is left, may stall)"),
    "bace-pipe-no-costmin": (_bace("bace-pipe-no-costmin", allocator="even"),
                             "ablation: stages spread evenly over the chain"),
    "price-pack": (lambda **kw: PricePack(**kw),
                   "price-aware chain enumeration, long jobs packed first into cheap GPUs, local search over the "
                   "packing order (never fewer jobs than BACE-Pipe)"),
    "price-pack-no-enum": (lambda **kw: PricePack(**{"name": "price-pack-no-enum", "chains": "bace", **kw}),
                           "ablation: BACE-Pipe's pathfinder and allocator instead of the chain enumeration"),
    "price-pack-no-order": (lambda **kw: PricePack(**{"name": "price-pack-no-order", "order": "priority", **kw}),
                            "ablation: BACE-Pipe's priority order instead of the cost order"),
    "price-pack-no-search": (lambda **kw: PricePack(**{"name": "price-pack-no-search", "search": False, **kw}),
                             "ablation: no local search over the packing order"),
    "fifo": (fifo, "BACE-Pipe placement in FIFO order with head-of-line blocking"),
    "lcf": (lcf, "baseline: single region, cheapest with room (FIFO)"),
    "ldf": (ldf, "baseline: single region, most free GPUs (FIFO)"),
    "cr-lcf": (cr_lcf, "baseline: cross-region, regions in ascending price, no bandwidth check (FIFO)"),
    "cr-ldf": (cr_ldf, "baseline: cross-region, greedy by free GPUs and link bandwidth (FIFO)"),
    "exact-p1": (ExactP1, "reference: solve P1 exactly on the residual resources at every event"),
}

#: the paper's comparison set (heuristics only; exact-p1 needs the exact models and a solver)
HEURISTICS = ("bace-pipe", "lcf", "ldf", "cr-lcf", "cr-ldf", "fifo")
ABLATIONS = ("bace-pipe-no-priority", "bace-pipe-no-pathfinder", "bace-pipe-no-costmin")


def available() -> list[str]:
    return list(REGISTRY)


def describe(name: str) -> str:
    return REGISTRY[name][1]


def make_policy(name: str, **options):
    """Build the policy called ``name`` with ``options`` (keyword arguments of its class)."""
    if name not in REGISTRY:
        raise InputError(f"unknown policy {name!r} (available: {', '.join(REGISTRY)})")
    try:
        return REGISTRY[name][0](**options)
    except (TypeError, ValueError) as e:
        raise InputError(f"policy {name!r}: bad options {options}: {e}") from e


#: the same as ``make_policy`` (the name other modules use)
get_policy = make_policy

__all__ = ["available", "describe", "make_policy", "get_policy", "REGISTRY", "HEURISTICS", "ABLATIONS",
           "ClusterState", "Residual", "Policy", "PolicyError", "BacePipe", "ExactP1", "PricePack", "Chain",
           "prioritize", "priorities", "find_chains", "grow_chain", "allocate", "allocate_even", "allocate_fill"]
