"""Spectrum state: one slot bitset per fibre (Python ints), block search, lightpaths (models/optical.md, sec. 2).

Bit ``s`` of ``occ[e]`` is 1 when slot s of link e is in use.  A lightpath of n data slots and g guard slots
occupies the block [f, f + n + g) of slots on *every* link of its path (continuity and contiguity, eq. 4);
blocks of two lightpaths on one link never overlap (eq. 5).  The guard slots sit at the high end of the block.

Links: with ``directed=False`` (one shared fibre per link, CBA's "one FS-occupancy vector per link") both
directions of a link use the same bitset; with ``directed=True`` each direction is a separate fibre.

Block search on a path: ``free = ~(occ[e1] | occ[e2] | ...)`` restricted to the slots; the set of first slots
where n consecutive slots are free is ``free & free>>1 & ... & free>>(n-1)`` (computed by doubling).  First fit
takes its lowest bit, last fit its highest, best fit the start of the smallest free run that holds the block.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..instance.optical import OpticalNetwork, Path


def fit_starts(free: int, n: int) -> int:
    """Bit s set iff slots s .. s+n-1 are all set in ``free`` (n >= 1)."""
    m = free
    have = 1
    while have < n:            # doubling: m covers runs of length `have`
        step = min(have, n - have)
        m &= m >> step
        have += step
    return m


def first_fit(free: int, n: int) -> int:
    """Lowest first slot of a free block of n slots, or -1."""
    m = fit_starts(free, n)
    return (m & -m).bit_length() - 1 if m else -1


def last_fit(free: int, n: int) -> int:
    """Highest first slot of a free block of n slots, or -1."""
    m = fit_starts(free, n)
    return m.bit_length() - 1 if m else -1


def free_runs(free: int) -> list[tuple[int, int]]:
    """Maximal runs of set bits as (start, length), lowest first."""
    out = []
    s = 0
    x = free
    while x:
        low = (x & -x).bit_length() - 1
        x >>= low
        s += low
        run = (~x & (x + 1)).bit_length() - 1      # trailing ones
        out.append((s, run))
        x >>= run
        s += run
    return out


def best_fit(free: int, n: int) -> tuple[int, int]:
    """(first slot, size of the free run it sits in) of the smallest free run holding n slots; (-1, 0)."""
    best = (-1, 0)
    for s, ln in free_runs(free):
        if ln >= n and (best[0] < 0 or ln < best[1]):
            best = (s, ln)
    return best


@dataclass(frozen=True)
class Lightpath:
    """A lightpath: ``request`` id, its path's nodes, first slot, data slots and guard slots."""
    request: int
    nodes: tuple[str, ...]
    first_slot: int
    data_slots: int
    guard_slots: int

    @property
    def width(self) -> int:
        return self.data_slots + self.guard_slots

    @property
    def slots(self) -> range:
        return range(self.first_slot, self.first_slot + self.width)


class SpectrumGrid:
    """Occupancy bitsets of every link of ``network``; allocate / release lightpaths."""

    def __init__(self, network: OpticalNetwork, directed: bool = False):
        self.network = network
        self.directed = directed
        self.slots = network.slots_per_link
        self.full = (1 << self.slots) - 1
        ids: dict[tuple[str, str], int] = {}
        for i, f in enumerate(network.fibres):
            if directed:
                ids[(f.a, f.b)] = 2 * i
                ids[(f.b, f.a)] = 2 * i + 1
            else:
                ids[(f.a, f.b)] = ids[(f.b, f.a)] = i
        self.link_id = ids
        self.n_links = (2 if directed else 1) * len(network.fibres)
        self.occ = [0] * self.n_links

    def links_of(self, nodes: Sequence[str]) -> tuple[int, ...]:
        return tuple(self.link_id[(u, v)] for u, v in zip(nodes, nodes[1:]))

    def link_key(self, u: str, v: str) -> tuple[str, str]:
        """The checker's name of link (u, v): ordered if directed, sorted otherwise."""
        return (u, v) if self.directed else tuple(sorted((u, v)))

    def free_mask(self, links: Sequence[int]) -> int:
        o = 0
        occ = self.occ
        for e in links:
            o |= occ[e]
        return ~o & self.full

    def block_mask(self, first: int, width: int) -> int:
        return ((1 << width) - 1) << first

    def allocate(self, links: Sequence[int], first: int, width: int) -> None:
        b = ((1 << width) - 1) << first
        occ = self.occ
        for e in links:
            if occ[e] & b:
                raise ValueError(f"slots {first}..{first + width - 1} of link {e} are taken")
            occ[e] |= b
        # (the independent checker re-verifies every admitted lightpath in the tests)

    def release(self, links: Sequence[int], first: int, width: int) -> None:
        b = ((1 << width) - 1) << first
        occ = self.occ
        for e in links:
            occ[e] &= ~b

    def used_slots(self) -> int:
        return sum(bin(o).count("1") for o in self.occ)

    def utilisation(self, links: Sequence[int]) -> float:
        """Fraction of occupied slots over the links (path congestion)."""
        if not links:
            return 0.0
        return sum(bin(self.occ[e]).count("1") for e in links) / (len(links) * self.slots)

    def snapshot(self) -> list[int]:
        return list(self.occ)

    def occupied_by_link(self) -> dict[tuple[str, str], set[int]]:
        """Occupied slots per link in the checker's naming (for ``checker.check_lightpaths(occupied=...)``)."""
        out: dict[tuple[str, str], set[int]] = {}
        for (u, v), e in self.link_id.items():
            k = self.link_key(u, v)
            if k not in out:
                o = self.occ[e]
                out[k] = {s for s in range(self.slots) if o >> s & 1}
        return out

    def matrix(self) -> list[list[int]]:
        """0/1 occupancy per link (rows in fibre order; directed: a->b then b->a) for pictures."""
        return [[(o >> s) & 1 for s in range(self.slots)] for o in self.occ]


def path_links(grid: SpectrumGrid, paths: Sequence[Path]) -> list[tuple[int, ...]]:
    return [grid.links_of(p.nodes) for p in paths]
