"""The independent lightpath checker (models/optical.md, eqs. 4-6): every lightpath a simulator, policy or exact
model admits must pass it.

It shares no code with the bitset spectrum (spectrum.py): lightpaths are given as explicit per-link slot lists
and checked with plain sets.

Rules, each violation one message:
  path        the path is a loop-free sequence of existing fibres from the request's source to its destination
  continuity  the same slots on every link of the path (eq. 4)
  contiguity  the slots of each link form one block of consecutive slots inside [0, slots_per_link)
  guard       the block holds exactly data_slots + guard_slots slots (the network's guard), data_slots >= 1
  overlap     no slot of a link is used by two lightpaths alive at the same time, nor by the spectrum state
              the lightpaths were admitted on (``occupied``) (eq. 5)
Lightpaths with ``start_s`` / ``end_s`` are checked over time: two overlap only when their intervals
[start, end) intersect.  Links are named (u, v) sorted for a shared fibre, ordered when ``directed``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ..instance.optical import OpticalNetwork


@dataclass(frozen=True)
class LightpathRecord:
    """A lightpath as the checker sees it: the slots it holds on each link of its path."""
    request: object
    src: str
    dst: str
    nodes: tuple[str, ...]
    slots_by_link: Mapping[tuple[str, str], tuple[int, ...]]
    data_slots: int
    start_s: float = -math.inf
    end_s: float = math.inf


def record_of(lp, src: str | None = None, dst: str | None = None, directed: bool = False,
              start_s: float = -math.inf, end_s: float = math.inf) -> LightpathRecord:
    """Expand a ``spectrum.Lightpath`` into explicit per-link slots."""
    slots = tuple(range(lp.first_slot, lp.first_slot + lp.data_slots + lp.guard_slots))
    links = {_key(u, v, directed): slots for u, v in zip(lp.nodes, lp.nodes[1:])}
    return LightpathRecord(lp.request, src or lp.nodes[0], dst or lp.nodes[-1], tuple(lp.nodes), links,
                           lp.data_slots, start_s, end_s)


def _key(u: str, v: str, directed: bool) -> tuple[str, str]:
    return (u, v) if directed else tuple(sorted((u, v)))


def check_lightpaths(network: OpticalNetwork, records: Iterable[LightpathRecord], directed: bool = False,
                     occupied: Mapping[tuple[str, str], Iterable[int]] | None = None) -> list[str]:
    """Every violation of the rules above; an empty list means all lightpaths are valid."""
    recs = list(records)
    probs: list[str] = []
    fibres = {frozenset((f.a, f.b)) for f in network.fibres}
    S, g = network.slots_per_link, network.guard_slots
    for r in recs:
        w = f"lightpath {r.request!r}"
        n = r.nodes
        if len(n) < 2 or n[0] != r.src or n[-1] != r.dst:
            probs.append(f"{w}: path {list(n)} does not run from {r.src!r} to {r.dst!r}")
        if len(set(n)) != len(n):
            probs.append(f"{w}: path {list(n)} visits a node twice")
        want = {_key(u, v, directed) for u, v in zip(n, n[1:])}
        for u, v in zip(n, n[1:]):
            if frozenset((u, v)) not in fibres:
                probs.append(f"{w}: no fibre {u!r}-{v!r} (path is not continuous)")
        if set(r.slots_by_link) != want:
            probs.append(f"{w}: slots given for links {sorted(r.slots_by_link)} but its path uses {sorted(want)}")
        blocks = {tuple(sorted(s)) for s in r.slots_by_link.values()}
        if len(blocks) > 1:
            probs.append(f"{w}: spectrum continuity broken: different slots on different links {sorted(blocks)}")
        for link, s in r.slots_by_link.items():
            s = sorted(s)
            if not s:
                probs.append(f"{w}: no slots on link {link}")
                continue
            if len(set(s)) != len(s) or s != list(range(s[0], s[0] + len(s))):
                probs.append(f"{w}: slots {s} on link {link} are not contiguous")
            if s[0] < 0 or s[-1] >= S:
                probs.append(f"{w}: slots {s[0]}..{s[-1]} on link {link} outside 0..{S - 1}")
            if r.data_slots < 1 or len(s) != r.data_slots + g:
                probs.append(f"{w}: {len(s)} slots on link {link}, want data {r.data_slots} + guard {g}")
    probs += _overlaps(recs, occupied or {})
    return probs


def _overlaps(recs: Sequence[LightpathRecord], occupied: Mapping) -> list[str]:
    probs = []
    pre = {(link, s) for link, ss in occupied.items() for s in ss}
    events = []
    for i, r in enumerate(recs):
        events.append((r.start_s, 1, i))
        events.append((r.end_s, 0, i))     # at equal times departures come first
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    owner: dict = {}
    for _, kind, i in events:
        r = recs[i]
        cells = [(link, s) for link, ss in r.slots_by_link.items() for s in set(ss)]
        if kind == 0:
            for c in cells:
                if owner.get(c) == i:
                    del owner[c]
            continue
        for c in cells:
            if c in pre:
                probs.append(f"lightpath {r.request!r}: slot {c[1]} of link {c[0]} was already occupied")
            elif c in owner:
                probs.append(f"lightpath {r.request!r}: slot {c[1]} of link {c[0]} overlaps lightpath "
                             f"{recs[owner[c]].request!r}")
            else:
                owner[c] = i
    return probs
