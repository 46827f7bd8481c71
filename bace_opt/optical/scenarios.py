"""Named settings of the dynamic experiment (``bace-opt optical simulate --scenario NAME``) and the published
figures they reproduce.

``xlron-nsfnet-ksp``: XLRON's KSP-FF blocking curve on NSFNET (XLRON PR #46, docs/heuristic_evaluation.md,
Example 1; the DeepRMSA traffic model): 22 NSFNET links as two one-way fibres of 100 slots of 12.5 GHz;
Poisson arrivals at rate load / 20 over the uniform ordered pairs; bit rates uniform over the integers 25-100
Gbit/s; slots = ceil(rate / (12.5 x SE)) + 1 guard, SE from the path's length by DeepRMSA's reach table
(16QAM <= 625 km: 4, 8QAM <= 1,250: 3, QPSK <= 2,500: 2, else BPSK 1); holding time exponential with mean 20,
redrawn until under 40; k = 5 fewest-hop paths ordered by hops / SE with XLRON's tie rule; 3,000 warm-up
requests, 40,000 measured; 50 seeds.
"""
from __future__ import annotations

from ..errors import InputError

SCENARIOS: dict[str, dict] = {
    "xlron-nsfnet-ksp": dict(topology="nsfnet", slots=100, guard=1, k=5, reach_table="deeprmsa",
                             load=[190.0, 210.0, 230.0, 250.0, 270.0], holding=20.0, requests=40_000, warmup=3_000,
                             seed=1, seeds=50, policy=["ksp-ff"], sizes="gbps:25:100", metric="hops",
                             order="hops-per-se", tie="xlron", directed=True, truncate=2.0, truncate_mode="redraw"),
}

#: XLRON's published service blocking of KSP-FF in that setting (load in Erlang -> blocking); FF-KSP is
#: +30..45 % relative and KSP-LF equals KSP-FF (the same source)
XLRON_KSP_FF = {190.0: 2.12e-3, 210.0: 6.24e-3, 230.0: 1.40e-2, 250.0: 2.52e-2, 270.0: 3.93e-2}


def scenario(name: str) -> dict:
    try:
        return dict(SCENARIOS[name])
    except KeyError:
        raise InputError(f"--scenario must be one of {', '.join(SCENARIOS)}, got {name!r}") from None
