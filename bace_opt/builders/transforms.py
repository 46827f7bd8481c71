"""Transforms of a built instance, for benchmark regimes (the instance stays valid and says what was done).

``scale_bandwidth(inst, s)``: every link's bandwidth x s (s > 0), recorded in ``meta.transforms``.  Used to
make the network bind on families that have no bandwidth scale of their own (random, file).
"""
from __future__ import annotations

import math

from ..errors import InputError
from ..instance import Instance


def scale_bandwidth(inst: Instance, scale: float) -> Instance:
    """A copy of ``inst`` with every link's ``bandwidth_gbps`` multiplied by ``scale``."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise InputError([f"bandwidth_scale must be a finite number > 0, got {scale!r}"], "scale_bandwidth")
    if scale == 1:
        return inst
    d = inst.to_dict()
    for link in d["links"]:
        link["bandwidth_gbps"] = link["bandwidth_gbps"] * scale
    meta = dict(d.get("meta") or {})
    meta["transforms"] = list(meta.get("transforms", [])) + [f"bandwidth x{scale:g}"]
    d["meta"] = meta
    d["name"] = f"{d['name']}-bw{scale:g}"
    return Instance.from_dict(d, source=f"{inst.name} with bandwidth x{scale:g}")
