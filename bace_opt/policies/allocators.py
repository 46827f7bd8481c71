"""The allocators (stage 3 of system-model.md, "BACE-Pipe"): how many stages each region of a chain hosts.

``allocate(job, chain, state)``
    One stage per chain region, then the remaining stages to the chain's regions in ascending price (at
    ``state.now``; ties by chain position), each up to its free GPUs.  Blocks follow the chain order, so the
    hops are the chain's hops; every hop reserves w = b_j of the final placement (no stall).
``allocate_even``
    The no-cost-min ablation: stages spread evenly over the chain, leftovers to the regions with the most free
    stage slots.
``allocate_fill``
    The baselines': the chain's regions filled in chain order.

Each has an integer twin (``counts_costmin``, ``counts_even``, ``counts_fill``) that ``chain_search`` runs on
region numbers with the same decisions.
"""
from __future__ import annotations

from ..instance import Job
from .base import ClusterState
from .pathfinder import Chain


def allocate(job: Job, chain: Chain, state: ClusterState) -> list[tuple[str, int]] | None:
    """Cost-min allocation: one stage per chain region, the rest in ascending price up to free GPUs.
    Returns blocks (region, stages) in chain order, or None if the chain cannot hold S_j stages."""
    k = len(chain.regions)
    if k > job.stages:
        return None
    cap = [state.free_stages(job, r) for r in chain.regions]
    if any(c < 1 for c in cap) or sum(cap) < job.stages:
        return None
    n = [1] * k
    left = job.stages - k
    for i in sorted(range(k), key=lambda i: (state.price(chain.regions[i]), i)):
        if left == 0:
            break
        add = min(cap[i] - 1, left)
        n[i] += add
        left -= add
    return list(zip(chain.regions, n))


def allocate_even(job: Job, chain: Chain, state: ClusterState) -> list[tuple[str, int]] | None:
    """No-cost-min ablation: S_j / k stages per chain region (capped by free GPUs), leftovers one at a time to
    the regions with the most free stage slots left (ties: chain position)."""
    k = len(chain.regions)
    if k > job.stages:
        return None
    cap = [state.free_stages(job, r) for r in chain.regions]
    if any(c < 1 for c in cap) or sum(cap) < job.stages:
        return None
    n = [min(c, job.stages // k) for c in cap]
    left = job.stages - sum(n)
    while left > 0:
        i = max(range(k), key=lambda i: (cap[i] - n[i], -i))
        n[i] += 1
        left -= 1
    return list(zip(chain.regions, n))


def allocate_fill(job: Job, chain: Chain, state: ClusterState) -> list[tuple[str, int]] | None:
    """Baselines' allocation: fill the chain's regions in chain order, each up to its free GPUs.  Regions the
    job no longer needs are dropped from the end."""
    left = job.stages
    out = []
    for r in chain.regions:
        if left == 0:
            break
        n = min(state.free_stages(job, r), left)
        if n < 1:
            return None
        out.append((r, n))
        left -= n
    return out if left == 0 else None


#: the allocators by name (``BacePipe(allocator=...)``)
ALLOCATE = {"costmin": allocate, "even": allocate_even, "fill": allocate_fill}


# ---------------------------------------------------------------------- the same on integers

def _slot_caps(S: int, chain: list, hosts: dict):
    """Stages each chain region can host, or None when the chain cannot take S stages (one per region at least,
    at most what each hosts)."""
    if len(chain) > S:
        return None
    cap = [hosts[r] for r in chain]
    return cap if sum(cap) >= S else None


def counts_costmin(S: int, chain: list, hosts: dict, price: list) -> list[int] | None:
    """``allocate`` on integers: stages per region of ``chain`` (ints), ``hosts[r]`` stages free in r, ``price[r]``."""
    cap = _slot_caps(S, chain, hosts)
    if cap is None:
        return None
    k = len(chain)
    n = [1] * k
    left = S - k
    for i in sorted(range(k), key=lambda i: (price[chain[i]], i)):
        if left == 0:
            break
        add = min(cap[i] - 1, left)
        n[i] += add
        left -= add
    return n


def counts_even(S: int, chain: list, hosts: dict, price: list) -> list[int] | None:
    """``allocate_even`` on integers (``price`` unused)."""
    cap = _slot_caps(S, chain, hosts)
    if cap is None:
        return None
    k = len(chain)
    n = [min(c, S // k) for c in cap]
    left = S - sum(n)
    while left > 0:
        i = max(range(k), key=lambda i: (cap[i] - n[i], -i))
        n[i] += 1
        left -= 1
    return n


def counts_fill(S: int, chain: list, hosts: dict, price: list) -> list[int] | None:
    """``allocate_fill`` on integers (``price`` unused)."""
    left = S
    out = []
    for r in chain:
        if left == 0:
            break
        n = min(hosts[r], left)
        out.append(n)
        left -= n
    return out if left == 0 else None


#: the integer allocators by name (``chain_search``)
ALLOCATE_COUNTS = {"costmin": counts_costmin, "even": counts_even, "fill": counts_fill}
