"""Path tables: the candidate paths of every source/destination pair, computed once, written to and read from a
file, so that one path table can be shared with another simulator (format: docs/formats.md, "Path table").

A ``PathTable`` maps an ordered pair (src, dst) to its candidate paths in order (eq. 2).  ``build`` computes it
from the network with a metric, an order and a tie rule (bace_opt.instance.optical, ``TIE_RULES``);
``to_dict`` / ``save`` write it; ``from_dict`` / ``load`` read one back and check every path against the
network (each hop a fibre, no node twice, the modulation the network's reach table gives the path's length).
An exported table read back gives the same paths in the same order, hence the same blocking seed by seed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Any, Sequence

from .. import _check as C
from ..errors import InputError
from ..instance.optical import OpticalNetwork, Path

FORMAT = "bace-opt-path-table"
VERSION = 1


@dataclass(frozen=True)
class PathTable:
    """Candidate paths per ordered pair, in order; ``rule`` says how they were made (for the file)."""
    paths: dict[tuple[str, str], tuple[Path, ...]]
    rule: dict[str, Any]

    def __getitem__(self, pair: tuple[str, str]) -> tuple[Path, ...]:
        return self.paths[pair]

    def __contains__(self, pair) -> bool:
        return pair in self.paths

    @staticmethod
    def build(network: OpticalNetwork, pairs: Sequence[tuple[str, str]], k: int, metric: str = "length",
              order: str = "length", tie: str = "km") -> "PathTable":
        return PathTable({(a, b): network.candidate_paths(a, b, k=k, metric=metric, order=order, tie=tie)
                          for a, b in pairs},
                         {"k": k, "metric": metric, "order": order, "tie": tie})

    def to_dict(self, network: OpticalNetwork) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, "network": network.name,
                "nodes": len(network.nodes), "fibres": len(network.fibres), "rule": dict(self.rule),
                "pairs": [{"src": a, "dst": b,
                           "paths": [{"nodes": list(p.nodes), "length_km": p.length_km,
                                      "modulation": p.modulation.name} for p in ps]}
                          for (a, b), ps in self.paths.items()]}

    def save(self, network: OpticalNetwork, path, inputs=()) -> None:
        """Write atomically; never over an input (bace_opt.files)."""
        from ..files import atomic_write, check_output
        check_output(str(path), option="--export-paths", inputs=inputs)
        d = self.to_dict(network)
        pairs = d.pop("pairs")
        head = json.dumps(d)[:-1]            # one pair per line: small and diffable
        body = ",\n  ".join(json.dumps(e, separators=(",", ":")) for e in pairs)
        atomic_write(str(path), f'{head}, "pairs": [\n  {body}\n]}}\n')

    @staticmethod
    def from_dict(network: OpticalNetwork, data: Any, source: str = "path table") -> "PathTable":
        """Parse and check a path table against ``network``; InputError listing every problem with its field."""
        p = C.Problems()
        d = C.obj(p, "path table", data, {"format", "pairs"}, {"version", "network", "nodes", "fibres", "rule"})
        if d is None:
            p.raise_if_any(source)
        if d.get("format") != FORMAT:
            p.add("format", f"must be {FORMAT!r}, got {d.get('format')!r}")
        if d.get("version", VERSION) != VERSION:
            p.add("version", f"must be {VERSION}, got {d.get('version')!r}")
        g = network.graph
        out: dict[tuple[str, str], tuple[Path, ...]] = {}
        pairs = d.get("pairs")
        if C.array(p, "pairs", pairs, nonempty=True) is not None:
            for i, e in enumerate(pairs):
                w = f"pairs[{i}]"
                if C.obj(p, w, e, {"src", "dst", "paths"}, set()) is None:
                    continue
                a, b = e.get("src"), e.get("dst")
                if not (isinstance(a, str) and isinstance(b, str) and a in g and b in g and a != b):
                    p.add(w, f"src/dst must be two different nodes of the network, got {a!r}, {b!r}")
                    continue
                if (a, b) in out:
                    p.add(w, f"pair {a!r} -> {b!r} given twice")
                    continue
                if C.array(p, w + ".paths", e.get("paths"), nonempty=True) is None:
                    continue
                ps = []
                for j, q in enumerate(e["paths"]):
                    path = _parse_path(p, f"{w}.paths[{j}]", q, network, a, b)
                    if path is not None:
                        ps.append(path)
                out[(a, b)] = tuple(ps)
        p.raise_if_any(source)
        return PathTable(out, dict(d.get("rule") or {"source": source}))

    @staticmethod
    def load(network: OpticalNetwork, path) -> "PathTable":
        fp = FsPath(path)
        if not fp.is_file():
            raise InputError(f"--paths {fp}: file not found")
        return PathTable.from_dict(network, C.read_json(fp, "path table"), str(fp))


def _parse_path(p: C.Problems, w: str, q: Any, network: OpticalNetwork, a: str, b: str) -> Path | None:
    if C.obj(p, w, q, {"nodes"}, {"length_km", "modulation"}) is None:
        return None
    nodes = q.get("nodes")
    if not (isinstance(nodes, list) and len(nodes) >= 2 and all(isinstance(n, str) for n in nodes)):
        p.add(w + ".nodes", "must be a list of at least two node names")
        return None
    if nodes[0] != a or nodes[-1] != b:
        p.add(w + ".nodes", f"must run from {a!r} to {b!r}, got {nodes[0]!r} .. {nodes[-1]!r}")
        return None
    if len(set(nodes)) != len(nodes):
        p.add(w + ".nodes", "visits a node twice")
        return None
    g = network.graph
    for u, v in zip(nodes, nodes[1:]):
        if not g.has_edge(u, v):
            p.add(w + ".nodes", f"no fibre {u!r}-{v!r} in the network")
            return None
    length = sum(g.edges[u, v]["length_km"] for u, v in zip(nodes, nodes[1:]))
    if "length_km" in q and (not isinstance(q["length_km"], (int, float)) or abs(q["length_km"] - length) > 1e-6):
        p.add(w + ".length_km", f"the fibres add up to {length:g} km, got {q['length_km']!r}")
        return None
    mod = network.modulation_for(length)
    if mod is None:
        p.add(w + ".nodes", f"no modulation reaches {length:g} km")
        return None
    if "modulation" in q and q["modulation"] != mod.name:
        p.add(w + ".modulation", f"the reach table gives {mod.name!r} for {length:g} km, got {q['modulation']!r}")
        return None
    return Path(tuple(nodes), length, mod)
