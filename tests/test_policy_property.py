"""Property tests: every policy on random instances of many shapes.

* every schedule passes the evaluator (GPU and per-link-direction capacity over time, routes, figures);
* every reservation is > 0, and BACE-Pipe's bandwidth-checked variants never stall (w = b_j);
* blocking mode: the jobs started at an arrival are exactly the policy's own decision on the resources
  free at that moment, so a job is rejected only when the policy's rules find no placement for it;
* queue mode: a job left unscheduled has no placement under the policy's rules even on the empty cluster;
* an over-committing policy is stopped by the simulator (tests/test_sim.py); here, the simulator's view of
  free bandwidth never goes below zero (checked through the evaluator's rule 3).
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bace_opt as bo
from bace_opt.builders.synthetic import random_instance
from bace_opt.policies import ABLATIONS, HEURISTICS, ClusterState, make_policy

POLICIES = HEURISTICS + ABLATIONS
NO_STALL = ("bace-pipe", "fifo", "bace-pipe-no-priority", "bace-pipe-no-costmin")


@st.composite
def instances(draw):
    sparse = draw(st.booleans())
    n_regions = draw(st.integers(1, 5))
    return random_instance(
        draw(st.integers(0, 10_000)), n_regions=n_regions, n_jobs=draw(st.integers(1, 8)),
        topology="sparse" if sparse else "mesh",
        transit=draw(st.integers(0, 2)) if sparse else 0,
        hourly_prices=draw(st.booleans()), mixed_gpus=draw(st.booleans()),
        max_gpus_per_region=draw(st.sampled_from([2, 4, 8])), max_stages=draw(st.integers(1, 6)),
        max_gpus_per_stage=draw(st.integers(1, 2)),
        max_arrival_s=draw(st.sampled_from([0.0, 600.0, 20_000.0])), egress=draw(st.booleans()))


SETTINGS = dict(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check_schedule(inst, sched, policy):
    rep = bo.evaluate(inst, sched)
    assert rep.feasible, (policy, [str(v) for v in rep.violations])
    for e in sched.jobs:
        assert all(h.reserved_gbps > 0 for h in e.hops)
        if e.status == "done" and policy in NO_STALL:
            assert not rep.figures[e.name].comm_bound, (policy, e.name)
    for n, m in sched.meta["jobs"].items():
        if m["wait_s"] is not None:
            assert m["wait_s"] >= 0 and 0 <= m["hol_blocked_s"] <= m["wait_s"] + 1e-6 * max(1.0, m["wait_s"])
    return rep


@settings(**SETTINGS)
@given(inst=instances(), via=st.sampled_from(["links", "routes"]))
def test_every_policy_passes_the_evaluator_queue_mode(inst, via):
    for policy in POLICIES:
        opts = {"via": via} if policy != "lcf" and policy != "ldf" else {}
        sched = bo.simulate(inst, policy, **opts)
        _check_schedule(inst, sched, policy)
        assert sched.metrics["jobs_blocked"] == 0
        # a job never started has no placement under the policy's rules even with everything free
        pol = make_policy(policy, **opts)
        empty = ClusterState.empty(inst, sched.meta["end_s"])
        for e in sched.jobs:
            if e.status == "unscheduled":
                assert pol.place(inst.job(e.name), empty) is None, (policy, e.name)


@settings(**SETTINGS)
@given(inst=instances(), via=st.sampled_from(["links", "routes"]))
def test_blocking_mode_rejects_only_what_the_policy_cannot_place(inst, via):
    for policy in POLICIES:
        opts = {"via": via} if policy not in ("lcf", "ldf") else {}
        sched = bo.simulate(inst, policy, mode="blocking", **opts)
        rep = _check_schedule(inst, sched, policy)
        assert sched.metrics["jobs_unscheduled"] == 0
        pol = make_policy(policy, **opts)
        by_arrival = {}
        for j in inst.jobs:
            by_arrival.setdefault(j.arrival_s, []).append(j)
        for t, arriving in by_arrival.items():
            # the resources free at t, just before the decision: capacity minus jobs running across t
            free = {r.name: r.gpus for r in inst.regions}
            bw = [l.bandwidth_gbps for l in inst.links]
            for e in sched.jobs:
                f = rep.figures.get(e.name)
                if f is None or not (f.start_s < t < f.finish_s):
                    continue
                job = inst.job(e.name)
                for b in e.blocks:
                    free[b.region] -= job.gpus_per_stage * b.stages
                for h in e.hops:
                    for u, v in zip(h.route, h.route[1:]):
                        bw[inst.link_index[(u, v)]] -= h.reserved_gbps
            state = ClusterState(inst, t, free, [max(0.0, x) for x in bw])
            expect = {p.name: p for p in pol.decide(t, arriving, state)}
            got = {e.name: e.plan for e in sched.jobs if e.status == "done" and e.start_s == t
                   and inst.job(e.name).arrival_s == t}
            assert expect.keys() == got.keys(), (policy, t)
            for n in expect:
                assert expect[n] == got[n], (policy, n)
            if len(arriving) == 1 and sched.job(arriving[0].name).status == "blocked":
                assert pol.place(arriving[0], state) is None


@settings(**SETTINGS)
@given(inst=instances())
def test_seed_and_route_options_stay_feasible(inst):
    for opts in ({"seeds": "all"}, {"seeds": "all", "via": "routes"}, {"hol": "block"}):
        sched = bo.simulate(inst, "bace-pipe", **opts)
        _check_schedule(inst, sched, "bace-pipe")
    for policy in ("lcf", "cr-lcf", "cr-ldf"):
        _check_schedule(inst, bo.simulate(inst, policy, hol="skip"), policy)
