"""Online scheduling policies: BACE-Pipe, its ablations, price-pack, select-pack and the paper's baselines.

``make_policy(name, **options)`` builds one by name (``registry``; also ``"package.module:Class"``);
``available()`` lists the names; ``describe(name)`` gives a one-line description.  Every policy follows the
contract of ``policies.contract`` (``decide(now, queue, state)`` and ``place(job, state)``, optional members
with the defaults of ``PolicyBase``; docs/policies.md); the simulator never branches on which one it runs.
The exact-P1 reference policy (``exact-p1``) lives with the exact models, ``bace_opt.exact.online``.

The modules, in import order: ``base`` (the residual resources), ``contract``, ``priority``, ``pathfinder``,
``plans``, ``allocators``, ``chain_tables``, ``chain_search``, ``greedy_chains``, the incremental queue
(``queue_data``, ``queue_state``, ``queue_hol``, ``queue``), ``ordered``, ``bace_pipe``, ``baselines``,
``price_pack``, ``select_pack``, ``registry``.
"""
from __future__ import annotations

from .allocators import allocate, allocate_even, allocate_fill
from .bace_pipe import BacePipe
from .base import ClusterState, PolicyError, Residual
from .contract import Policy, PolicyBase, QueueTraits
from .pathfinder import Chain, find_chains, grow_chain
from .price_pack import PricePack
from .priority import prioritize, priorities
from .registry import ABLATIONS, HEURISTICS, REGISTRY, available, describe, get_policy, make_policy, resolve

__all__ = ["available", "describe", "make_policy", "get_policy", "resolve", "REGISTRY", "HEURISTICS", "ABLATIONS",
           "ClusterState", "Residual", "Policy", "PolicyBase", "QueueTraits", "PolicyError", "BacePipe",
           "PricePack", "Chain", "prioritize", "priorities", "find_chains", "grow_chain", "allocate",
           "allocate_even", "allocate_fill"]
