"""Optical networks for the optical experiments: from a topology file, NSFNET's path, a single link.

``load_topology`` reads a DeepRMSA link list, a Topology Zoo GML file (through ``bace_opt.data.topologies``;
fibre lengths from great-circle distance, ``builders.geo``) or a JSON optical section and returns an
``OpticalNetwork`` (the model and its validation: ``bace_opt.instance.optical``).
"""
from __future__ import annotations

import math
from pathlib import Path as FsPath
from typing import Iterable

from .. import _check as C
from ..builders import geo
from ..data import tables
from ..data.topologies import read_gml, read_link_list
from ..errors import InputError
from ..instance.optical import (CBA_MODULATION, DEFAULT_GUARD, DEFAULT_K, DEFAULT_SLOT_GHZ, DEFAULT_SLOTS, Fibre,
                                Modulation, OpticalNetwork, network_from_dict)


def load_topology(path, slots_per_link: int = DEFAULT_SLOTS, guard_slots: int = DEFAULT_GUARD,
                  k_paths: int = DEFAULT_K, modulations: Iterable[Modulation] = (CBA_MODULATION,)) -> OpticalNetwork:
    """An optical network from a topology file: the DeepRMSA link-list ``.txt`` (NSFNET: fibre lengths given),
    a Topology Zoo ``.gml`` (length = great-circle distance x 1.2 route inflation, builders.geo), or a JSON
    optical section.  Node names are the file's labels ("1".."14" for NSFNET)."""
    fp = FsPath(path)
    if not fp.is_file():
        raise InputError(f"topology file not found: {fp}")
    if fp.suffix.lower() == ".json":
        return network_from_dict(C.read_json(fp, "topology file"), str(fp))
    g = read_link_list(fp) if fp.suffix.lower() == ".txt" else read_gml(fp)
    labels = {n: str(a.get("label", n)) for n, a in g.nodes(data=True)}
    if len(set(labels.values())) != len(labels):
        labels = {n: f"{labels[n]} ({n})" for n in labels}
    merged: dict[tuple[str, str], float] = {}
    for u, v, a in g.edges(data=True):
        if u == v:
            continue
        if "length_km" in a:
            km = float(a["length_km"])
        else:
            nu, nv = g.nodes[u], g.nodes[v]
            if not all(k in x for x in (nu, nv) for k in ("Latitude", "Longitude")):
                raise InputError(f"{fp.name}: fibre {labels[u]!r}-{labels[v]!r} has no length and a node has no "
                                 "Latitude/Longitude")
            km = geo.WAN_INFLATION * geo.haversine_km((nu["Latitude"], nu["Longitude"]),
                                                      (nv["Latitude"], nv["Longitude"]))
        key = tuple(sorted((labels[u], labels[v])))
        merged[key] = min(merged.get(key, math.inf), max(km, 1.0))   # parallel edges: the shorter fibre
    fibres = tuple(Fibre(a, b, round(km, 3)) for (a, b), km in sorted(merged.items()))
    if not fibres:
        raise InputError(f"{fp}: no fibres")
    net = OpticalNetwork(fibres, slots_per_link, DEFAULT_SLOT_GHZ, guard_slots, k_paths, tuple(modulations),
                         name=fp.stem)
    return network_from_dict(net.to_dict(), str(fp)).replace(name=fp.stem)


def nsfnet_path(data_dir=None) -> FsPath:
    """NSFNET's link list: ``<data_dir>/topologies/nsfnet/nsfnet_chen.txt`` of a raw data folder, or, with no
    ``data_dir``, the copy shipped with the package (bace_opt/data/tables/nsfnet_chen.txt, the same links)."""
    if data_dir:
        return FsPath(data_dir) / "topologies" / "nsfnet" / "nsfnet_chen.txt"
    return tables.path(tables.NSFNET)


def single_link(slots: int, guard_slots: int = 0, length_km: float = 100.0) -> OpticalNetwork:
    """Two nodes, one fibre: the Erlang-B check."""
    return OpticalNetwork((Fibre("a", "b", length_km),), slots, DEFAULT_SLOT_GHZ, guard_slots, 1, (CBA_MODULATION,),
                          name=f"single-link-{slots}")
