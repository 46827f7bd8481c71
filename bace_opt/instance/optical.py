"""The optical network of an instance: fibres with length, frequency slots per link, modulation, guard slots,
candidate paths.

An ``OpticalNetwork`` is the optical layer of an instance (its ``optical`` section, models/optical.md section 1)
or a stand-alone topology for the dynamic RSA experiment (built from a topology file by
``bace_opt.optical.network``).  It is part of the instance model, so it lives here, below the optical layer's
algorithms (``bace_opt.optical``: spectrum, RSA, CBA), which use it; ``bace_opt.optical`` exports it too.  Plain frozen data, validated like the rest of the
instance: ``parse_optical(problems, "optical", data, region_names)`` records *every* problem with its field path
(``optical.fibres[3].length_km: must be > 0, got 0``).

Section (JSON, every field but ``fibres`` optional):

    "optical": {"slots_per_link": 80, "slot_ghz": 12.5, "guard_slots": 1, "k_paths": 4,
                "modulations": [{"name": "64QAM", "gbps_per_slot": 75.0, "max_km": null}],
                "fibres": [{"a": "1", "b": "2", "length_km": 1050.0}, ...]}

``modulations``: one entry = a fixed format (CBA: 64QAM at 75 Gbit/s per slot); several = a reach table, the
path takes the most efficient format whose ``max_km`` covers its length (eq. 1).  Nodes are the fibres' ends;
inside an instance they must be region names.

Candidate paths (eq. 2): the k shortest loop-free paths by total length (``metric="length"``) or the k
fewest-hop paths (``metric="hops"``), then ordered by length, hops, or hops over spectral efficiency
(``order``).  Equal-cost paths follow a named tie rule (``TIE_RULES``):

    km     (default) every path as short as the k-th by ``metric`` competes for the k places; ties by length,
           then node names; the order of the fibres in the file never matters
    xlron  XLRON's rule (xlron/environments/env_funcs.py, _get_k_shortest_paths and init_path_link_array):
           networkx's first k simple paths of the *directed* graph (nodes in natural order, every fibre a->b in
           natural order, then every b->a), sorted by (cost, nodes + 1, SHA-256 of the path written as a
           Python list, labels of digits as integers), then stably by the ``order`` value alone

Computed once per (pair, options) and cached.
"""
from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Sequence

import networkx as nx

from .. import _check as C
from ..errors import InputError

DEFAULT_SLOTS = 80
DEFAULT_SLOT_GHZ = 12.5
DEFAULT_GUARD = 1
DEFAULT_K = 4
KM_PER_S = 200_000.0          # light in fibre (2/3 c): propagation delay = length / 200,000 km/s
METRICS = ("length", "hops")
ORDERS = ("length", "hops", "hops-per-se")
TIE_RULES = ("km", "xlron")


@dataclass(frozen=True)
class Modulation:
    """A modulation format: capacity of one slot (Gbit/s) and its reach (km; inf = unlimited)."""
    name: str
    gbps_per_slot: float
    max_km: float = math.inf


CBA_MODULATION = Modulation("64QAM", 75.0)
# The reach table for the bit-rate request mode: DeepRMSA's modulation file as XLRON ships it
# (xlron/data/modulations/modulations_deeprmsa.csv: BPSK 100,000 km, QPSK 2,500, 8QAM 1,250, 16QAM 625 km;
# spectral efficiency 1-4 x 12.5 GHz per slot).  Before issue 31 this read 500 / 1,000 / 2,000 km and was
# wrongly called DeepRMSA's (docs/decisions.md).
REACH_TABLE = (Modulation("BPSK", 12.5, 100_000.0), Modulation("QPSK", 25.0, 2_500.0),
               Modulation("8QAM", 37.5, 1_250.0), Modulation("16QAM", 50.0, 625.0))


def parse_reach(text: str, slot_ghz: float = DEFAULT_SLOT_GHZ, option: str = "--reach-table") -> tuple[Modulation, ...]:
    """A reach table from text: ``deeprmsa`` (REACH_TABLE) or ``NAME:SE:KM,...`` (SE = bit/s/Hz, capacity per
    slot = SE x ``slot_ghz``; KM a number or ``inf``), e.g. ``BPSK:1:100000,QPSK:2:2500,8QAM:3:1250,16QAM:4:625``."""
    t = str(text).strip()
    if t.lower() == "deeprmsa":
        return tuple(Modulation(m.name, m.gbps_per_slot / DEFAULT_SLOT_GHZ * slot_ghz, m.max_km) for m in REACH_TABLE)
    out: list[Modulation] = []
    for item in t.split(","):
        parts = item.strip().split(":")
        try:
            if len(parts) != 3 or not parts[0]:
                raise ValueError
            se, km = float(parts[1]), float(parts[2])
        except ValueError:
            raise InputError(f"{option}: each entry must be NAME:SE:KM (e.g. 16QAM:4:625), or the whole value "
                             f"'deeprmsa'; got {item.strip()!r}") from None
        if not (math.isfinite(se) and 0 < se <= 64):
            raise InputError(f"{option}: {parts[0]}: spectral efficiency must be in (0, 64] bit/s/Hz, got {parts[1]}")
        if not km > 0 or math.isnan(km):
            raise InputError(f"{option}: {parts[0]}: reach must be > 0 km (or inf), got {parts[2]}")
        if any(m.name == parts[0] for m in out):
            raise InputError(f"{option}: modulation {parts[0]!r} given twice")
        out.append(Modulation(parts[0], se * slot_ghz, km))
    return tuple(out)


def natural_key(label: str):
    """Labels of digits sort as numbers, before the others (which sort as text)."""
    return (0, int(label), "") if label.isdigit() else (1, 0, label)


def xlron_hash(nodes: Sequence[str]) -> int:
    """XLRON's tie-break of equal-cost paths: SHA-256 of ``str(path)`` with its node ids (integers there)."""
    ids = [int(n) if n.isdigit() else n for n in nodes]
    return int(hashlib.sha256(str(ids).encode()).hexdigest(), 16)


@dataclass(frozen=True)
class Fibre:
    a: str
    b: str
    length_km: float


@dataclass(frozen=True)
class Path:
    """A candidate path: its nodes, total length (km), hop count and modulation (eq. 1)."""
    nodes: tuple[str, ...]
    length_km: float
    modulation: Modulation

    @property
    def hops(self) -> int:
        return len(self.nodes) - 1

    @property
    def latency_s(self) -> float:
        """One-way propagation delay: length / 200,000 km/s."""
        return self.length_km / KM_PER_S

    def edges(self) -> list[tuple[str, str]]:
        return list(zip(self.nodes, self.nodes[1:]))


@dataclass(frozen=True, eq=True)
class OpticalNetwork:
    fibres: tuple[Fibre, ...]
    slots_per_link: int = DEFAULT_SLOTS
    slot_ghz: float = DEFAULT_SLOT_GHZ
    guard_slots: int = DEFAULT_GUARD
    k_paths: int = DEFAULT_K
    modulations: tuple[Modulation, ...] = (CBA_MODULATION,)
    name: str = ""
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self):
        object.__setattr__(self, "fibres", tuple(self.fibres))
        object.__setattr__(self, "modulations", tuple(self.modulations))

    def __hash__(self):
        return id(self)

    # ------------------------------------------------------------------ views
    @cached_property
    def nodes(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for f in self.fibres:
            seen.setdefault(f.a)
            seen.setdefault(f.b)
        return tuple(seen)

    @cached_property
    def graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from(self.nodes)
        for f in self.fibres:
            g.add_edge(f.a, f.b, length_km=f.length_km)
        return g

    def length_km(self, a: str, b: str) -> float:
        return self.graph.edges[a, b]["length_km"]

    def modulation_for(self, length_km: float) -> Modulation | None:
        """Eq. 1: the highest-capacity format whose reach covers the path; None if none does."""
        ok = [m for m in self.modulations if m.max_km >= length_km - 1e-9]
        return max(ok, key=lambda m: (m.gbps_per_slot, m.name)) if ok else None

    def slots_for_gbps(self, gbps: float, path: Path) -> int:
        """Eq. 3 (data slots only): ceil(gbps / capacity per slot of the path's format)."""
        return max(1, math.ceil(gbps / path.modulation.gbps_per_slot - 1e-9))

    def candidate_paths(self, src: str, dst: str, k: int | None = None, metric: str = "length",
                        order: str = "length", tie: str = "km") -> tuple[Path, ...]:
        """Eq. 2: up to k loop-free paths src -> dst (k shortest by ``metric``), ordered by ``order``, equal-cost
        paths by the ``tie`` rule (module docstring).

        Paths whose length no modulation reaches are skipped.  Raises InputError for unknown nodes or options;
        an unreachable pair gives an empty tuple."""
        k = self.k_paths if k is None else k
        if metric not in METRICS:
            raise InputError(f"path metric must be one of {', '.join(METRICS)}, got {metric!r}")
        if order not in ORDERS:
            raise InputError(f"path order must be one of {', '.join(ORDERS)}, got {order!r}")
        if tie not in TIE_RULES:
            raise InputError(f"path tie rule must be one of {', '.join(TIE_RULES)}, got {tie!r}")
        if k < 1:
            raise InputError(f"k (candidate paths) must be >= 1, got {k}")
        for n in (src, dst):
            if n not in self.graph:
                raise InputError(f"node {n!r} is not in the optical network (nodes: {', '.join(self.nodes)})")
        if src == dst:
            raise InputError(f"a lightpath needs two different end nodes, got {src!r} twice")
        key = (src, dst, k, metric, order, tie)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._xlron_paths(src, dst, k, metric, order) if tie == "xlron" else \
                self._km_paths(src, dst, k, metric, order)
            self._cache[key] = hit
        return hit

    def _path(self, nodes) -> Path | None:
        g = self.graph
        length = sum(g.edges[u, v]["length_km"] for u, v in zip(nodes, nodes[1:]))
        mod = self.modulation_for(length)
        return None if mod is None else Path(tuple(nodes), length, mod)

    def _km_paths(self, src, dst, k, metric, order) -> tuple[Path, ...]:
        g = self.graph
        out: list[Path] = []
        if nx.has_path(g, src, dst):
            cost = (lambda p: p.length_km) if metric == "length" else (lambda p: p.hops)
            found: list[Path] = []
            gen = nx.shortest_simple_paths(g, src, dst, weight="length_km" if metric == "length" else None)
            for nodes in gen:          # past the k-th path while paths cost as much: ties compete for places
                p = Path(tuple(nodes), sum(g.edges[u, v]["length_km"] for u, v in zip(nodes, nodes[1:])),
                         CBA_MODULATION)
                if len(found) >= k and cost(p) > cost(found[k - 1]) + 1e-9:
                    break
                found.append(p)
            found.sort(key=lambda p: (cost(p), p.length_km, p.hops, p.nodes))
            for p in found[:k]:
                q = self._path(p.nodes)
                if q is not None:
                    out.append(q)
        keyf = {"length": lambda p: (p.length_km, p.hops, p.nodes),
                "hops": lambda p: (p.hops, p.length_km, p.nodes),
                "hops-per-se": lambda p: (p.hops / p.modulation.gbps_per_slot, p.length_km, p.nodes)}[order]
        return tuple(sorted(out, key=keyf))

    @cached_property
    def xlron_digraph(self) -> nx.DiGraph:
        """The directed graph XLRON builds from its topology file: nodes in natural order, every fibre a->b
        (ends and fibres in natural order), then every b->a."""
        g = nx.DiGraph()
        g.add_nodes_from(sorted(self.nodes, key=natural_key))
        fib = sorted(((min(f.a, f.b, key=natural_key), max(f.a, f.b, key=natural_key), f.length_km)
                      for f in self.fibres), key=lambda x: (natural_key(x[0]), natural_key(x[1])))
        for a, b, km in fib:
            g.add_edge(a, b, length_km=km)
        for a, b, km in fib:
            g.add_edge(b, a, length_km=km)
        return g

    def _xlron_paths(self, src, dst, k, metric, order) -> tuple[Path, ...]:
        g = self.xlron_digraph
        if not nx.has_path(g, src, dst):
            return ()
        w = "length_km" if metric == "length" else None
        raw = list(itertools.islice(nx.shortest_simple_paths(g, src, dst, weight=w), k))
        raw.sort(key=lambda p: (nx.path_weight(g, p, w) if w else len(p), len(p), xlron_hash(p)))
        paths = [q for q in (self._path(p) for p in raw) if q is not None]
        slot = self.slot_ghz
        keyf = {"length": lambda p: p.length_km, "hops": lambda p: p.hops,
                "hops-per-se": lambda p: p.hops / max(p.modulation.gbps_per_slot / slot, 1.0)}[order]
        return tuple(sorted(paths, key=keyf))

    # ------------------------------------------------------------------ I/O
    def to_dict(self) -> dict[str, Any]:
        return {"slots_per_link": self.slots_per_link, "slot_ghz": self.slot_ghz, "guard_slots": self.guard_slots,
                "k_paths": self.k_paths,
                "modulations": [{"name": m.name, "gbps_per_slot": m.gbps_per_slot,
                                 "max_km": None if math.isinf(m.max_km) else m.max_km} for m in self.modulations],
                "fibres": [{"a": f.a, "b": f.b, "length_km": f.length_km} for f in self.fibres]}

    def replace(self, **kw) -> "OpticalNetwork":
        from dataclasses import replace
        return replace(self, **kw)


# ---------------------------------------------------------------------- validation

def parse_optical(p: C.Problems, where: str, data: Any, region_names: Sequence[str] | None = None,
                  compute_regions: Sequence[str] | None = None, name: str = "") -> OpticalNetwork | None:
    """Check an optical section; add every problem to ``p`` with its field path; return the network or None.

    ``region_names``: inside an instance, every fibre end must be one of them.  ``compute_regions``: every pair
    of them must be joined by a path some modulation reaches (unreachable pairs are problems)."""
    d = C.obj(p, where, data, {"fibres"}, {"slots_per_link", "slot_ghz", "guard_slots", "k_paths", "modulations"})
    if d is None:
        return None
    n0 = len(p.items)
    slots = C.integer(p, f"{where}.slots_per_link", d.get("slots_per_link", C.MISSING), ge=1, default=DEFAULT_SLOTS)
    ghz = C.num(p, f"{where}.slot_ghz", d.get("slot_ghz", C.MISSING), gt=0, default=DEFAULT_SLOT_GHZ)
    guard = C.integer(p, f"{where}.guard_slots", d.get("guard_slots", C.MISSING), ge=0, default=DEFAULT_GUARD)
    k = C.integer(p, f"{where}.k_paths", d.get("k_paths", C.MISSING), ge=1, default=DEFAULT_K)
    if slots is not None and guard is not None and guard >= slots:
        p.add(f"{where}.guard_slots", f"must be < slots_per_link ({slots}), got {guard}")
    mods: list[Modulation] = []
    raw_m = d.get("modulations", C.MISSING)
    if raw_m is C.MISSING:
        mods = [CBA_MODULATION]
    elif C.array(p, f"{where}.modulations", raw_m, nonempty=True) is not None:
        names = set()
        for i, m in enumerate(raw_m):
            w = f"{where}.modulations[{i}]"
            if C.obj(p, w, m, {"name", "gbps_per_slot"}, {"max_km"}) is None:
                continue
            nm = C.string(p, w + ".name", m.get("name", C.MISSING), default=None)
            if nm is not None and nm in names:
                p.add(w + ".name", f"duplicate modulation {nm!r}")
            names.add(nm)
            cap = C.num(p, w + ".gbps_per_slot", m.get("gbps_per_slot", C.MISSING), gt=0, default=None)
            mk = m.get("max_km", None)
            reach = math.inf if mk is None else C.num(p, w + ".max_km", mk, gt=0, default=None)
            if None not in (nm, cap, reach):
                mods.append(Modulation(nm, cap, reach))
    fibres: list[Fibre] = []
    raw_f = d.get("fibres", C.MISSING)
    if raw_f is not C.MISSING and C.array(p, f"{where}.fibres", raw_f, nonempty=True) is not None:
        seen: dict[frozenset, int] = {}
        known = set(region_names) if region_names is not None else None
        for i, f in enumerate(raw_f):
            w = f"{where}.fibres[{i}]"
            if C.obj(p, w, f, {"a", "b", "length_km"}, set()) is None:
                continue
            a = C.string(p, w + ".a", f.get("a", C.MISSING), default=None)
            b = C.string(p, w + ".b", f.get("b", C.MISSING), default=None)
            for end, v in (("a", a), ("b", b)):
                if v is not None and known is not None and v not in known:
                    p.add(f"{w}.{end}", f"unknown region {v!r}")
            if a is not None and a == b:
                p.add(w, f"self-loop: both ends are {a!r}")
            elif a is not None and b is not None:
                key = frozenset((a, b))
                if key in seen:
                    p.add(w, f"duplicate fibre {a!r}-{b!r} (also {where}.fibres[{seen[key]}]); at most one per pair")
                else:
                    seen[key] = i
            km = C.num(p, w + ".length_km", f.get("length_km", C.MISSING), gt=0, default=None)
            if None not in (a, b, km) and a != b:
                fibres.append(Fibre(a, b, km))
    if len(p.items) > n0:
        return None
    net = OpticalNetwork(tuple(fibres), slots, ghz, guard, k, tuple(mods), name=name)
    if compute_regions:
        _check_reachable(p, where, net, compute_regions)
    return None if len(p.items) > n0 else net


def _check_reachable(p: C.Problems, where: str, net: OpticalNetwork, regions: Sequence[str]) -> None:
    g = net.graph
    regs = sorted(set(regions))
    for r in regs:
        if r not in g:
            p.add(f"{where}.fibres", f"region {r!r} has GPUs but no fibre: it cannot reach any other region")
    inside = [r for r in regs if r in g]
    comp = {n: i for i, c in enumerate(nx.connected_components(g)) for n in c}
    for a, b in itertools.combinations(inside, 2):
        if comp[a] != comp[b]:
            p.add(f"{where}.fibres", f"regions {a!r} and {b!r} are not connected by fibres (unreachable pair)")
        elif not net.candidate_paths(a, b, k=1):
            p.add(f"{where}.modulations", f"no modulation reaches from {a!r} to {b!r} "
                                          f"(shortest path {nx.shortest_path_length(g, a, b, weight='length_km'):g} km)")


def network_from_dict(data: Any, source: str = "optical network", **kw) -> OpticalNetwork:
    """Parse a stand-alone optical section (no region names to match); raise InputError with every problem."""
    p = C.Problems()
    net = parse_optical(p, "optical", data, **kw)
    p.raise_if_any(source)
    return net
