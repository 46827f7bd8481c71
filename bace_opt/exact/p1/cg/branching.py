"""Branching of P1's branch-and-price (issue 37): what a node fixes per job, which columns it allows, and how a
fractional master solution is split.

A node fixes, per job j, any of: x_j (0: the job does not start; 1: it starts), regions it does not use
(u_jr = 0), regions it uses (u_jr = 1, which implies x_j = 1), and bounds on its stages in a region
(n_jr <= k or n_jr >= k, the second implying u_jr = 1 and x_j = 1).  The rule on a master LP solution lambda:

1. x_j = sum_{p of j} lambda_p fractional (the most fractional job first): x_j = 0 | x_j = 1;
2. else u_jr = sum_{p of j using r} lambda_p fractional: u_jr = 0 | u_jr = 1 (the second branch also starts j:
   with every x integral, u_jr > 0 means x_j = 1; a job that does not start lies in the first branch);
3. else, for a started job whose placements in the support differ in their stages in some region r: with t the
   least of those stage counts, sum_{p: n_pr <= t} lambda_p lies strictly between 0 and 1: n_jr <= t (which
   includes not using r, or not starting) | n_jr >= t+1 (which implies both);
4. else every started job's placements in the support have the same regions and stages; those that differ only
   in their routes are split the same way on a link e the job crosses in some but not all of them
   (``route_split``): not branched, the node is left open (it keeps its bound; the level can then not be
   proven optimal) unless the placements use the same resources, when any one of them is as good (an
   integral solution of the same value).

Each branch is a partition of the parent's integral solutions (x_j = 0 and x_j = 1; u_jr = 0 and "starts and uses
r"; n_jr <= t and n_jr >= t + 1, both with the job started), so the tree is exact.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ..data import JobData
from .columns import Column

FRAC = 1e-6


@dataclass(frozen=True)
class JobBranch:
    """A node's restrictions of one job."""
    x: int | None = None                   # 0: not started; 1: started
    forbid: frozenset = frozenset()        # regions not used
    need: frozenset = frozenset()          # regions used (implies started)
    nmax: dict = field(default_factory=dict, hash=False)    # region -> most stages
    nmin: dict = field(default_factory=dict, hash=False)    # region -> least stages (>= 1: implies used)

    @property
    def started(self) -> bool:
        return self.x == 1 or bool(self.need) or any(k >= 1 for k in self.nmin.values())

    def allows(self, col: Column) -> bool:
        if self.x == 0:
            return False
        st = dict(zip(col.chain, col.stages))
        if any(r in st for r in self.forbid) or any(r not in st for r in self.need):
            return False
        return all(st.get(r, 0) <= k for r, k in self.nmax.items()) and \
            all(st.get(r, 0) >= k for r, k in self.nmin.items())


FREE = JobBranch()


@dataclass
class Node:
    """A node of the tree: its branches (job -> JobBranch, unlisted jobs are free), its proven lower bound, its
    depth and a sequence number (the tie-break of best-first order)."""
    branches: dict
    bound: float
    depth: int = 0
    seq: int = 0
    label: str = "root"

    def job(self, j: int) -> JobBranch:
        return self.branches.get(j, FREE)

    def child(self, j: int, br: JobBranch, seq: int, label: str) -> "Node":
        b = dict(self.branches)
        b[j] = br
        return Node(b, self.bound, self.depth + 1, seq, label)


def restricted_job(d: JobData, br: JobBranch) -> JobData:
    """A copy of job ``d`` without the regions the branch forbids, its caps lowered to the branch's bounds (for
    the heuristic pricer)."""
    if br is FREE or (not br.forbid and not br.nmax):
        return d
    regions = [r for r in d.regions if r not in br.forbid and br.nmax.get(r, 1) >= 1]
    cap = {r: min(d.cap[r], br.nmax.get(r, d.cap[r])) for r in regions}
    return dataclasses.replace(d, regions=regions, cap=cap, cls_of={r: d.cls_of[r] for r in regions})


def split(node: Node, support: list[tuple[Column, float]]) -> tuple[str, list[tuple[int, JobBranch, str]]] | None:
    """The branches of a node whose master LP solution is ``support`` ((column, value) pairs, values > 0): (kind,
    [(job, branch, label)]), or None when the rule finds nothing fractional to branch on (see the module
    docstring, case 4)."""
    by: dict[int, list[tuple[Column, float]]] = {}
    for c, v in support:
        by.setdefault(c.j, []).append((c, v))
    xs = {j: sum(v for _, v in cv) for j, cv in by.items()}
    frac = [(abs(x - 0.5), j) for j, x in xs.items() if FRAC < x < 1 - FRAC
            and node.job(j).x is None and not node.job(j).started]      # a fixed job's shortfall is artificial
    if frac:
        _, j = min(frac)
        br = node.job(j)
        return "x", [(j, dataclasses.replace(br, x=0), f"x{j}=0"), (j, dataclasses.replace(br, x=1), f"x{j}=1")]
    best = None
    for j, cv in sorted(by.items()):
        use: dict[int, float] = {}
        for c, v in cv:
            for r in c.chain:
                use[r] = use.get(r, 0.0) + v
        for r, u in sorted(use.items()):
            if FRAC < u < 1 - FRAC and (best is None or abs(u - 0.5) < best[0]):
                best = (abs(u - 0.5), j, r)
    if best is not None:
        _, j, r = best
        br = node.job(j)
        return "u", [(j, dataclasses.replace(br, forbid=br.forbid | {r}), f"u{j},{r}=0"),
                     (j, dataclasses.replace(br, x=1, need=br.need | {r}), f"u{j},{r}=1")]
    for j, cv in sorted(by.items()):
        if len(cv) < 2:
            continue
        for r in sorted(cv[0][0].chain):
            ns = sorted({dict(zip(c.chain, c.stages)).get(r, 0) for c, _ in cv})
            if len(ns) > 1:
                t = ns[0]
                br = node.job(j)
                lo = dict(br.nmin)
                lo[r] = t + 1
                hi = dict(br.nmax)
                hi[r] = t
                return "n", [(j, dataclasses.replace(br, nmax=hi), f"n{j},{r}<={t}"),
                             (j, dataclasses.replace(br, nmin=lo), f"n{j},{r}>={t + 1}")]
    return None


def same_resources(support: list[tuple[Column, float]]) -> bool:
    """Every job's placements in the support use the same GPUs per region, the same links as often, the same
    speed class, cost and run time (to 1e-9 relative): one of them per job is an integral solution of the LP's
    value (case 4 of the rule)."""
    by: dict[int, list[Column]] = {}
    for c, _ in support:
        by.setdefault(c.j, []).append(c)
    for cs in by.values():
        a = cs[0]
        for c in cs[1:]:
            if c.gpus != a.gpus or c.links != a.links or c.cls != a.cls or \
                    abs(c.cost - a.cost) > 1e-9 * max(1.0, abs(a.cost)) or \
                    abs(c.run_s - a.run_s) > 1e-9 * max(1.0, abs(a.run_s)):
                return False
    return True
