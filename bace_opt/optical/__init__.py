"""The optical layer and CBA (issue 12): spectrum slots, routing and spectrum assignment, the dynamic blocking
experiment, CBA on the pipeline-schedule layer, the exact slot assignment and the independent checker.

    network.py   optical networks from topology files (NSFNET, Topology Zoo), a single link; the network
                 itself (fibres, slots, modulation, candidate paths, validation of an instance's ``optical``
                 section) is part of the instance model: bace_opt/instance/optical.py, exported here too
    spectrum.py  slot bitsets per link, first / last / best fit, lightpaths
    rsa.py       RSA policies (SP-FF, SD-FF, KSP-FF, KSP-LF, KSP-BF, FF-KSP, LF-KSP, BF-KSP, KSP-MU)
    dynamic.py   Poisson / exponential dynamic simulation, blocking with its confidence interval, Erlang-B
    engine.py    its request stream (seeded, chunked: flat memory) and event loops (int bitsets)
    paths.py     path tables: build, export, import (docs/formats.md)
    scenarios.py named settings (``xlron-nsfnet-ksp``) and the published figures they reproduce
    cba.py       CBA: CB labels from the pipeline schedule, slot sizing, path ranking, iteration metrics
    exact.py     exact slot assignment of one iteration's batch (HiGHS MILP and CP-SAT)
    checker.py   the independent lightpath checker (continuity, contiguity, no overlap, guard slots)

Equations: models/optical.md.  Our readings: docs/decisions.md, section "Optical layer and CBA".
"""
from ..instance.optical import (CBA_MODULATION, REACH_TABLE, Fibre, Modulation, OpticalNetwork, Path,
                                network_from_dict, parse_optical)
from .checker import LightpathRecord, check_lightpaths, record_of
from .dynamic import (BlockingEstimate, DynamicOptions, RequestSizes, erlang_b, estimate, simulate_dynamic, sweep,
                      sweep_frame)
from .network import load_topology, nsfnet_path, single_link
from .paths import PathTable
from .rsa import RSA_POLICIES, get_rsa_policy
from .scenarios import SCENARIOS, XLRON_KSP_FF
from .spectrum import Lightpath, SpectrumGrid

__all__ = ["BlockingEstimate", "CBA_MODULATION", "DynamicOptions", "Fibre", "Lightpath", "LightpathRecord",
           "Modulation", "OpticalNetwork", "Path", "PathTable", "REACH_TABLE", "RSA_POLICIES", "RequestSizes",
           "SCENARIOS", "SpectrumGrid", "XLRON_KSP_FF",
           "check_lightpaths", "erlang_b", "estimate", "get_rsa_policy", "load_topology", "network_from_dict",
           "nsfnet_path", "parse_optical", "record_of", "simulate_dynamic", "single_link", "sweep", "sweep_frame"]
