"""price-pack: hand-built cases of each part, and properties on random instances (evaluator-feasible, never
fewer jobs than BACE-Pipe, never below the proven P1 optimum, its one-job placement never dearer than the
exact one-job optimum allows)."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import bace_opt as bo
from bace_opt import formulas as F
from bace_opt.adversary import heuristic_epoch, solve_p1
from bace_opt.gaps.decompose import p1_cost
from bace_opt.builders.synthetic import random_instance
from bace_opt.evaluate import evaluate
from bace_opt.instance import GpuType, Instance, Job, Link, Region
from bace_opt.policies import ClusterState, make_policy
from bace_opt.policies import price_pack as P
from bace_opt.policies.price_pack import PricePack, cheapest_placement

A = {"A": GpuType("A", 100.0, 48.0, 300.0)}


def inst_of(regions, links, jobs):
    return Instance("t", A, "A", [Region(n, "A", g, p) for n, g, p in regions],
                    [Link(a, b, bw, lat) for a, b, bw, lat in links], jobs).validated()


def test_long_job_gets_the_cheap_region():
    inst = inst_of([("c", 2, 0.1), ("d", 2, 0.3)], [("c", "d", 50.0, 10.0)],
                   [Job("short", 0.0, 2, 4, 2, 0.5, 10.0, 1), Job("long", 0.0, 2, 4, 40, 0.5, 10.0, 1)])
    plans = {p.name: p for p in make_policy("price-pack").decide(0.0, inst.jobs, ClusterState.empty(inst))}
    assert [b.region for b in plans["long"].blocks] == ["c"] and [b.region for b in plans["short"].blocks] == ["d"]
    # BACE-Pipe (shortest first) does the opposite; the ablation without the cost order keeps its order
    bp = {p.name: p for p in make_policy("bace-pipe").decide(0.0, inst.jobs, ClusterState.empty(inst))}
    assert [b.region for b in bp["short"].blocks] == ["c"]


def test_chain_enumeration_prefers_two_cheap_regions_over_bandwidth():
    """3 stages; cheap a (2 GPUs) + cheap b (1 GPU) over a thin but sufficient link, or the dear c (3 GPUs)
    alone: the pair is cheaper despite the hop's latency; a thin link below b_j forbids it."""
    j = Job("j", 0.0, 3, 4, 10, 0.5, 10.0, 1)       # b_j = 8 * 10 / 1000 / 0.5 = 0.16 Gbit/s
    regions = [("a", 2, 0.1), ("b", 1, 0.1), ("c", 3, 0.4)]
    ok = inst_of(regions, [("a", "b", 0.2, 5.0), ("a", "c", 100.0, 5.0), ("b", "c", 100.0, 5.0)], [j])
    p = cheapest_placement(j, ClusterState.empty(ok))
    assert sorted(b.region for b in p.blocks) == ["a", "b"] and p.hops[0].reserved_gbps == pytest.approx(0.16)
    thin = inst_of(regions, [("a", "b", 0.1, 5.0), ("a", "c", 100.0, 5.0), ("b", "c", 100.0, 5.0)], [j])
    p = cheapest_placement(j, ClusterState.empty(thin))
    assert all(h.reserved_gbps <= 0.1 or tuple(sorted(h.route)) != ("a", "b") for h in p.hops)
    assert evaluate(thin, bo.make_schedule(thin, [p], method="t")).feasible


def test_bad_options_are_named():
    with pytest.raises(Exception, match="chains"):
        make_policy("price-pack", chains="nope")
    with pytest.raises(Exception, match="max_evals"):
        make_policy("price-pack", max_evals=-1)


def test_online_use_in_the_simulator():
    inst = random_instance(seed=2, n_regions=3, n_jobs=6, max_gpus_per_region=4, max_stages=3, max_arrival_s=600.0)
    for mode in ("queue", "blocking"):
        s = bo.simulate(inst, policy="price-pack", mode=mode)
        assert evaluate(inst, s).feasible


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_regions=st.integers(2, 4), n_jobs=st.integers(1, 4))
def test_never_fewer_jobs_than_bace_pipe_and_never_below_the_proven_optimum(seed, n_regions, n_jobs):
    inst = random_instance(seed=seed, n_regions=n_regions, n_jobs=n_jobs, max_gpus_per_region=6, max_stages=4)
    pp, bp = heuristic_epoch(inst, "price-pack"), heuristic_epoch(inst, "bace-pipe")
    assert evaluate(inst, pp).feasible
    n_pp = sum(j.status == "done" for j in pp.jobs)
    n_bp = sum(j.status == "done" for j in bp.jobs)
    assert n_pp >= n_bp
    if n_pp == n_bp:
        assert p1_cost(inst, pp, 0.0) <= p1_cost(inst, bp, 0.0) * (1 + 1e-9)
    opt, _ = solve_p1(inst, time_limit_s=30)
    if opt.proven:
        assert n_pp <= opt.jobs
        if n_pp == opt.jobs:
            assert p1_cost(inst, pp, 0.0) >= opt.cost_usd * (1 - 1e-6)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_regions=st.integers(2, 4))
def test_one_job_placement_matches_the_exact_optimum_on_metric_latencies(seed, n_regions):
    """With one job, latencies that obey the triangle inequality and every link able to carry the job (so no
    multi-link route beats a direct link), the enumeration over every chain is exact: its cost equals the
    proven P1 optimum.  (With a direct link below the job's demand, the optimum may detour through a third
    region, which price-pack's chains over direct links do not consider: hypothesis found seed 224.)"""
    base = random_instance(seed=seed, n_regions=n_regions, n_jobs=1, max_gpus_per_region=4, max_stages=4)
    d = base.to_dict()
    for l in d["links"]:
        l["latency_ms"] = 10.0                       # equal latencies: metric
        l["bandwidth_gbps"] = 1000.0                 # every direct link carries the job
    inst = Instance.from_dict(d)
    plan = PricePack(max_regions=n_regions).place(inst.jobs[0], ClusterState.empty(inst))
    opt, _ = solve_p1(inst, time_limit_s=30)
    assert opt.proven
    if plan is None:
        assert opt.jobs == 0
    else:
        s = bo.make_schedule(inst, [plan], method="t")
        assert p1_cost(inst, s, 0.0) == pytest.approx(opt.cost_usd, rel=1e-6)


def _unfiltered_prefix(self, names):
    """The packing before issue 15's change: every job of the order in turn, cached per full prefix."""
    hit = self.cache.get(names)
    if hit is not None:
        return hit
    res, plans, cost = _unfiltered_prefix(self, names[:-1])
    job = self.jobs[names[-1]]
    plan = self._place(job, res)
    if plan is not None:
        res = res.copy()
        res.commit(job, plan)
        plans = plans + (plan,)
        cost = cost + P.plan_cost(self.state.inst, job, plan)[0]
    out = (res, plans, cost)
    self.cache[names] = out
    return out


@pytest.mark.parametrize("seed,factor", [(4, 0.2), (5, 1.0)])
def test_packing_only_the_jobs_that_fit_makes_the_same_decisions(monkeypatch, seed, factor):
    # under contention most waiting jobs have no placement on the decision state; the packer packs the
    # subsequence of an order that has one and caches by it (issue 15): the schedule must be the former one
    inst = random_instance(seed, n_regions=8, n_jobs=60, topology="sparse", transit=2, hourly_prices=True,
                           mixed_gpus=True, max_gpus_per_region=16, max_stages=8, max_arrival_s=60.0)
    inst = bo.Instance(inst.name, inst.gpu_types, inst.reference_gpu, inst.regions,
                       [dataclasses.replace(l, bandwidth_gbps=l.bandwidth_gbps * factor) for l in inst.links],
                       inst.jobs).validated()
    new = bo.simulate(inst, "price-pack").to_dict()
    calls = []
    monkeypatch.setattr(P.Packer, "_prefix", lambda self, names: calls.append(1) or _unfiltered_prefix(self, names))
    old = bo.simulate(inst, "price-pack").to_dict()
    assert calls and new == old
    w = [v["wait_s"] for v in new["meta"]["jobs"].values()]
    assert sum(w) > 0           # a queue built up: decisions saw jobs that fit nowhere


_MAY_CHAIN_SAID_NO = []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.deferred(lambda: _busy_states()), via=st.sampled_from(["links", "routes"]))
def test_component_check_rejects_only_jobs_without_a_placement(case, via):
    # cheapest_placement returns None at once when the hosting regions joined by hop options that could carry
    # b_min hold fewer than S_j stages together (``_may_chain``, issue 15); the full search must agree
    inst, state = case
    real = P._may_chain
    for job in inst.jobs[:10]:
        fast = cheapest_placement(job, state, via=via)
        said = []
        P._may_chain = lambda *a: said.append(real(*a)) or True
        try:
            full = cheapest_placement(job, state, via=via)
        finally:
            P._may_chain = real
        assert fast == full, (job.name, via)
        _MAY_CHAIN_SAID_NO.extend(x for x in said if not x)


@pytest.mark.parametrize("topology", ["mesh", "sparse"])
def test_component_check_at_its_threshold(topology):
    # every link's residual at b_min (1 - BW_TOL) times 1 -+ a few ulps: the check's threshold is the search's own,
    # so a stricter or looser check shows here (each job asked with no region holding all its stages)
    from bace_opt.policies.base import BW_TOL
    said_no = found = 0
    for seed in range(1, 7):
        inst = random_instance(seed, n_regions=5, n_jobs=12, topology=topology, mixed_gpus=True,
                               max_gpus_per_region=16, max_stages=8)
        for job in inst.jobs:
            g = job.gpus_per_stage
            free = {r.name: min(r.gpus, (job.stages - 1) * g) for r in inst.regions}
            hosts = {r: n // g for r, n in free.items() if n // g > 0}
            if not hosts:
                continue
            b_min = F.demand_gbps(job, max(job.stage_time_s / inst.speed[r] for r in hosts))
            for f in (1 - 4e-16, 1.0, 1 + 4e-16, 3.0):
                state = ClusterState(inst, 0.0, free, [b_min * (1 - BW_TOL) * f] * len(inst.links))
                for via in ("links", "routes"):
                    fast = cheapest_placement(job, state, via=via)
                    said = P._may_chain(job, state, P.host_stages(job, state), via, 4)
                    real = P._may_chain
                    P._may_chain = lambda *a: True
                    try:
                        full = cheapest_placement(job, state, via=via)
                    finally:
                        P._may_chain = real
                    assert fast == full, (seed, job.name, f, via)
                    said_no += not said
                    found += full is not None
    assert said_no and found


def test_component_check_was_exercised():
    # (runs after the property test in file order) the check did reject jobs, else the property is vacuous
    if not _MAY_CHAIN_SAID_NO:
        test_component_check_rejects_only_jobs_without_a_placement()
    assert _MAY_CHAIN_SAID_NO


def _busy_states():
    from test_sim_replay import busy_states
    return busy_states()
