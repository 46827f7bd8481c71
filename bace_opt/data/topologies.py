"""Readers of network topology files: Topology Zoo GML and the DeepRMSA link list.

The raw formats only, as networkx multigraphs with the files' own labels and attributes; what a topology
means is the reader's caller's business (``builders.realistic``: regions and links of a WAN instance;
``optical.network``: fibres of an optical network).

- ``resolve_gml``: a topology given by path, or by name under ``<data_dir>/topologies/topozoo`` (``.gml``) or
  ``<data_dir>/topologies/nsfnet`` (``.txt``), the layout of ../shared/data;
- ``read_gml``: a Topology Zoo GML file (parallel edges kept);
- ``read_link_list``: the DeepRMSA / optical-rl-gym link list (nodes "1".."n", fibre lengths in km).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import networkx as nx

from ..errors import InputError


def resolve_gml(data_dir: Path, topology_gml) -> Path:
    """A topology path as given, or ``<data_dir>/topologies/topozoo/<name>[.gml]``, or
    ``<data_dir>/topologies/nsfnet/<name>[.txt]``."""
    p = Path(topology_gml)
    if p.is_file():
        return p
    topo = data_dir / "topologies"
    for cand in (topo / "topozoo" / p.name, topo / "topozoo" / f"{p.name}.gml", topo / "nsfnet" / p.name,
                 topo / "nsfnet" / f"{p.name}.txt"):
        if cand.is_file():
            return cand
    raise InputError(f"topology not found: {topology_gml} (nor in {topo / 'topozoo'} or {topo / 'nsfnet'})")


def read_link_list(path) -> nx.MultiGraph:
    """Read the DeepRMSA / optical-rl-gym link-list format (e.g. topologies/nsfnet/nsfnet_chen.txt): comment
    lines start with '#'; then the node count, the link count, and one ``u v length_km`` line per undirected
    link (nodes numbered from 1).  Nodes get labels "1".."n"; edges carry ``length_km``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    rows = [(i, ln.split()) for i, ln in enumerate(text.splitlines(), 1)
            if ln.strip() and not ln.lstrip().startswith("#")]
    if text and not text.endswith("\n"):
        raise InputError(f"{path}:{len(text.splitlines())}: the last line is incomplete (no line end: the file was cut?)")

    def num(k: int, what: str, conv, col: int = 0):
        line, r = rows[k]
        if len(r) <= col:
            raise InputError(f"{path}:{line}: expected {what}")
        try:
            return conv(r[col])
        except ValueError:
            raise InputError(f"{path}:{line}:{col + 1}: {what}: not a number: {r[col]!r}") from None

    if len(rows) < 2:
        raise InputError(f"{path}: not a link list (node count, link count, then 'u v length_km' lines)")
    n, m = num(0, "node count", int), num(1, "link count", int)
    if len(rows) - 2 != m:
        raise InputError(f"{path}:{rows[-1][0]}: {len(rows) - 2} link line(s), the file says {m}")
    edges = []
    for k in range(2, 2 + m):
        line, r = rows[k]
        if len(r) != 3:
            raise InputError(f"{path}:{line}: expected 'u v length_km', got {len(r)} field(s)")
        u, v, km = num(k, "u", int, 0), num(k, "v", int, 1), num(k, "length_km", float, 2)
        if not (1 <= u <= n and 1 <= v <= n):
            raise InputError(f"{path}:{line}: link {u}-{v}: nodes must be in 1..{n}")
        if not (km > 0 and km < float("inf")):
            raise InputError(f"{path}:{line}:3: length_km must be a finite number > 0, got {r[2]}")
        edges.append((u, v, km))
    g = nx.MultiGraph(label=Path(path).stem)
    for i in range(1, n + 1):
        g.add_node(i, label=str(i))
    for u, v, km in edges:
        g.add_edge(u, v, length_km=km)
    return g


def read_gml(path) -> nx.MultiGraph:
    """Read a Topology Zoo GML file as a MultiGraph (files with parallel edges need ``multigraph 1``)."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    if not re.search(r"^\s*multigraph\s+1", text, flags=re.M):
        text = re.sub(r"graph\s*\[", "graph [\n  multigraph 1", text, count=1)
    try:
        g = nx.parse_gml(text, label="id")
    except (nx.NetworkXError, ValueError) as e:
        raise InputError(f"{path}: cannot parse GML: {e}") from None
    except RecursionError:      # lists nested thousands deep: no topology looks like that
        raise InputError(f"{path}: cannot parse GML: nested too deeply (more than "
                         f"{sys.getrecursionlimit()} levels)") from None
    return nx.MultiGraph(g)
