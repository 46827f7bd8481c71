"""Replay test of issue 15: the incremental simulator (``bace_opt.sim`` with ``policies.queue``) makes exactly
the decisions of the simulator it replaced (``tests/reference_sim.py``, kept verbatim).

On every generated instance (full meshes and sparse graphs with transit nodes, hourly prices, mixed GPU types,
one or two GPUs per stage, egress, arrivals together or spread so that a queue builds) and for every
registered policy (BACE-Pipe, its ablations, the baselines, the pathfinder's cheapest-seed option, and exact-p1
on tiny instances) in queue and blocking modes, the two schedules must be equal: every plan (status, start,
blocks, routes, reservations) and every figure the evaluator computes (``make_schedule``'s per-job figures and
metrics), and the simulator's meta (events, decisions, end time, waits, run times; for exact-p1 the solver
calls and statuses, not their wall time).  The one figure compared
with a tolerance is each job's head-of-line-blocked time: the reference adds the length of every interval
between events, the incremental simulator adds (leave - enter) once per stretch, so the float sums may differ
in the last bits (relative 1e-9).
"""
from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bace_opt as bo
from bace_opt.builders.synthetic import random_instance
from bace_opt.policies import ABLATIONS, HEURISTICS
from reference_sim import reference_run_simulation

POLICIES = [(p, {}) for p in HEURISTICS + ABLATIONS] + [("bace-pipe", {"seeds": "cheapest"}),
                                                        ("lcf", {"hol": "skip"}), ("bace-pipe", {"hol": "block"})]


def assert_same(ref, new, label):
    a, b = ref.to_dict(), new.to_dict()
    ja, jb = a["meta"].pop("jobs"), b["meta"].pop("jobs")
    ha, hb = a["meta"].pop("total_hol_blocked_s"), b["meta"].pop("total_hol_blocked_s")
    for d in (a, b):           # exact-p1's solver wall time is a measurement, not a decision
        d["meta"].get("policy_stats", {}).pop("solver_wall_s", None)
    assert a["jobs"] == b["jobs"], label
    assert a == b, label
    assert ja.keys() == jb.keys()
    for n in ja:
        x, y = dict(ja[n]), dict(jb[n])
        hx, hy = x.pop("hol_blocked_s"), y.pop("hol_blocked_s")
        assert x == y, (label, n)
        assert math.isclose(hx, hy, rel_tol=1e-9, abs_tol=1e-6), (label, n, hx, hy)
    assert math.isclose(ha, hb, rel_tol=1e-9, abs_tol=1e-6), label


def replay(inst, policies=POLICIES, modes=("queue", "blocking")):
    for policy, opts in policies:
        for mode in modes:
            ref, _ = reference_run_simulation(inst, policy, mode=mode, **opts)
            new = bo.simulate(inst, policy, mode=mode, **opts)
            assert_same(ref, new, (inst.name, policy, opts, mode))


@st.composite
def instances(draw):
    sparse = draw(st.booleans())
    n_jobs = draw(st.integers(1, 40))
    return random_instance(
        draw(st.integers(0, 100_000)), n_regions=draw(st.integers(1, 7)), n_jobs=n_jobs,
        topology="sparse" if sparse else "mesh", transit=draw(st.integers(0, 2)) if sparse else 0,
        hourly_prices=draw(st.booleans()), mixed_gpus=draw(st.booleans()),
        max_gpus_per_region=draw(st.sampled_from([2, 4, 8, 16])), max_stages=draw(st.integers(1, 8)),
        max_gpus_per_stage=draw(st.integers(1, 2)),
        max_arrival_s=draw(st.sampled_from([0.0, 1.0 * n_jobs, 30.0 * n_jobs, 20_000.0])),
        egress=draw(st.booleans()))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances())
def test_replay_identical_on_generated_instances(inst):
    replay(inst)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replay_identical_on_a_contended_queue(seed):
    # the issue's family, scaled down: 10 regions, sparse, hourly prices, mixed GPUs, ~1 job per second
    inst = random_instance(seed, n_regions=10, n_jobs=150, topology="sparse", hourly_prices=True, mixed_gpus=True,
                           max_gpus_per_region=32, max_stages=12, max_arrival_s=150.0)
    replay(inst)


def test_replay_identical_for_exact_p1():
    pytest.importorskip("highspy")
    for seed in (1, 2):
        inst = random_instance(seed, n_regions=3, n_jobs=4, topology="mesh", hourly_prices=True,
                               max_gpus_per_region=4, max_stages=3, max_arrival_s=20.0)
        replay(inst, policies=[("exact-p1", {})])
