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
    rows = [ln.split() for ln in Path(path).read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.lstrip().startswith("#")]
    try:
        n, m = int(rows[0][0]), int(rows[1][0])
        edges = [(int(r[0]), int(r[1]), float(r[2])) for r in rows[2:2 + m]]
    except (IndexError, ValueError):
        raise InputError(f"{path}: not a link list (node count, link count, then 'u v length_km' lines)") from None
    if len(edges) != m or any(not (1 <= u <= n and 1 <= v <= n) or km <= 0 for u, v, km in edges):
        raise InputError(f"{path}: expected {m} links 'u v length_km' between nodes 1..{n}")
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
    return nx.MultiGraph(g)
