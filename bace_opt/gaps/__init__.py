"""How far is a scheduler from optimal?  ``gap(inst, policy)`` (``bace_opt.gap``) and ``bace-opt gap``.

One call answers it for any policy - a registered name, ``package.module:Class``, or a policy object - against
proven figures only: the one-epoch P1 gap with its selection and placement parts (``decompose``), and with
``online=True`` the policy's whole-run mean JCT and cost against a certified P2 lower bound.
"""
from __future__ import annotations

from .decompose import (GapDecomposition, Solve, decompose, heuristic_epoch, own_set_optimum, p1_cost,
                        solve_p1, split_gap)
from .report import GapReport, OnlineGap, PolicyGap, gap

__all__ = ["gap", "GapReport", "PolicyGap", "OnlineGap", "GapDecomposition", "Solve", "decompose",
           "heuristic_epoch", "own_set_optimum", "p1_cost", "solve_p1", "split_gap"]
