"""P1 by column generation (bace_opt.exact.p1.cg, issue 37): the master's bound, its columns and the pricing
certificate, checked against the exact walk model and brute force on tiny instances."""
from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.evaluate import make_schedule, price_plan
from bace_opt.exact.p1.cg.columns import fits_alone, make_column, model_cost
from bace_opt.exact.p1.cg.engine import Pricers, column_generation, lp_support, start_solutions
from bace_opt.exact.p1.cg.master import JobDuals, knapsack
from bace_opt.exact.p1.cg.pricing import HeuristicPricer
from bace_opt.exact.p1.cg.pricing_exact import ExactPricer
from bace_opt.exact.placement import cost_at_t0_usd
from bace_opt.exact.p1.data import PlacementData
from bace_opt.exact.p1.milp import lp_relaxation_bound
from bace_opt.instance import load_instance

INST = Path(__file__).resolve().parent.parent / "instances"
TINY = ["tiny-2r-2j.json", "small-4r-6j.json", "paper-6r-8j-seed1.json"]


def _optimum(inst):
    s = bo.solve(inst, problem="placement", threads=1)
    assert s.solver.status == "optimal"
    started = sum(1 for p in s.plans if p.status == "done")
    return started, s.meta["cost_at_t0_usd"]


@pytest.fixture(scope="module", params=TINY)
def case(request):
    inst = load_instance(INST / request.param)
    data = PlacementData(inst)
    z1, opt = _optimum(inst)
    starts = start_solutions(data)
    seeds = [c for sol in starts for c in sol]
    pricers = Pricers(data)
    r1 = column_generation(data, 1, seeds=seeds, pricers=pricers, time_limit=120)
    plain = column_generation(data, 2, z1, seeds=seeds + r1.master.columns, pricers=pricers, time_limit=120)
    return inst, data, z1, opt, seeds, pricers, r1, plain, starts


@pytest.mark.parametrize("pack", [False, True])
def test_bound_between_root_and_optimum(case, pack):
    inst, data, z1, opt, seeds, pricers, r1, plain, starts = case
    assert r1.converged
    assert -r1.bound >= z1 - 1e-7                       # level 1: -bound is an upper bound of the count
    assert -r1.bound <= -lp_relaxation_bound(data, 1, formulation="walk") + 1e-7
    r2 = plain
    if pack:       # as the probe runs it: from the plain master's columns, LP optimum and the starts' patterns
        r2 = column_generation(data, 2, z1, seeds=seeds + plain.master.columns, support=lp_support(plain.master),
                               starts=starts, pricers=pricers, time_limit=120, pack=True)
        assert r2.bound >= plain.bound - 1e-9 * max(1.0, abs(plain.bound))
    assert r2.converged and r2.artificial < 1e-9
    assert r2.bound <= opt * (1 + 1e-9) + 1e-12
    root = lp_relaxation_bound(data, 2, {1: z1}, formulation="walk")
    assert r2.bound >= root - 1e-7 * max(1.0, abs(root))
    # the restricted master as a MIP is a set of placements that fits: never below the optimum
    inc = r2.master.integer_value(30.0)
    assert inc is not None and inc >= opt * (1 - 1e-9) - 1e-12
    # the Lagrangian bounds of the history never pass the optimum either
    assert all(lb is None or lb <= opt * (1 + 1e-9) + 1e-12 for _, _, lb, _ in r2.history)


def test_columns_priced_by_the_evaluator(case):
    inst, data, z1, opt, seeds, pricers, r1, plain, starts = case
    cols = r1.master.columns + plain.master.columns
    assert cols
    for c in cols:
        plan = c.plan(data)
        assert c.cost == pytest.approx(cost_at_t0_usd(inst, [plan], data.t0), rel=1e-12)
        assert c.run_s == pytest.approx(price_plan(inst, plan).run_s, rel=1e-12)
        d = data.jobs[c.j]
        assert fits_alone(data, d, c.chain, c.stages, c.routes)
        assert model_cost(data, d, c.chain, c.stages, c.routes) == pytest.approx(c.cost, rel=1e-9)
        assert make_schedule(inst, [plan], method="test").job(plan.name).status == "done"   # check_plan passes


def _placements(data, d):
    """Every placement of job d (brute force): ordered region chains, stage splits, simple routes per hop."""
    import networkx as nx
    inst = data.inst
    G = nx.Graph()
    for e in d.links:
        G.add_edge(inst.region_index[inst.links[e].a], inst.region_index[inst.links[e].b])
    for k in range(1, d.K + 1):
        for chain in itertools.permutations(d.regions, k):
            if k > 1 and chain[0] > chain[-1]:
                continue
            for st in itertools.product(*[range(1, d.cap[r] + 1) for r in chain]):
                if sum(st) != d.S:
                    continue
                if k == 1:
                    yield chain, st, []
                    continue
                hops = [list(nx.all_simple_paths(G, u, v)) if G.has_node(u) and G.has_node(v) else []
                        for u, v in zip(chain, chain[1:])]
                for routes in itertools.product(*hops):
                    if fits_alone(data, d, chain, st, routes):
                        yield chain, st, routes


def _random_duals(rng, d, level, scale):
    return JobDuals(level, rng.uniform(-scale, scale), {r: rng.uniform(-scale, scale) / d.S for r in d.regions},
                    {e: rng.uniform(0, scale) for e in d.links}, [rng.uniform(-scale, 0) for _ in d.classes],
                    -rng.uniform(0, scale), {r: rng.uniform(-scale, scale) for r in d.regions})


@pytest.mark.parametrize("name", ["tiny-2r-2j.json", "small-4r-6j.json"])
def test_pricing_certificate_never_above_brute_force(name):
    inst = load_instance(INST / name)
    data = PlacementData(inst)
    rng = random.Random(7)
    for d in data.jobs:
        cols = [make_column(data, d, *p) for p in _placements(data, d)]
        assert cols
        ep, hp = ExactPricer(data, d), HeuristicPricer(data, d)
        scale = max(c.cost for c in cols)
        for level in (1, 2, 2, 2):
            du = _random_duals(rng, d, level, scale)
            best = min(du.reduced_cost(c) for c in cols)
            lb, col, status = ep.price(du, 30.0)
            assert lb <= best + 1e-9 * max(1.0, abs(best))
            assert status == "Optimal" and lb == pytest.approx(best, rel=1e-7, abs=1e-9)
            assert col is not None and du.reduced_cost(col) >= best - 1e-9 * max(1.0, abs(best))
            for rc, chain, st, routes in hp.price(du, -float("inf")):
                assert rc == pytest.approx(du.reduced_cost(make_column(data, d, chain, st, routes)), rel=1e-7,
                                           abs=1e-9)
                assert rc >= best - 1e-9 * max(1.0, abs(best))


def test_knapsack_against_brute_force():
    rng = random.Random(3)
    for _ in range(40):
        items = [(j, rng.randint(1, 3), rng.randint(1, 4), rng.uniform(-2, 2), rng.uniform(-1, 0.2)) for j in range(4)]
        cap = rng.randint(1, 10)
        val, conf = knapsack(items, cap)
        best = 0.0
        for ns in itertools.product(*[range(0, c + 1) for _, _, c, _, _ in items]):
            if sum(g * n for (_, g, _, _, _), n in zip(items, ns)) <= cap:
                best = min(best, sum(a + b * n for (_, _, _, a, b), n in zip(items, ns) if n))
        assert val == pytest.approx(best, abs=1e-9)
        assert sum(items[j][1] * n for j, n in conf.items()) <= cap
        assert val == pytest.approx(sum(items[j][3] + items[j][4] * n for j, n in conf.items()), abs=1e-9)


@pytest.mark.parametrize("name", TINY)
def test_starts_are_solutions_of_the_pack_master(name):
    """The starts (reordered for P1.42/P1.43) with their region patterns are feasible in the master with packing
    rows: no artificial column, value = their cost."""
    from bace_opt.exact.p1.cg.master import Master
    inst = load_instance(INST / name)
    data = PlacementData(inst)
    for sol in start_solutions(data):
        M = Master(data, 2, len(sol), pack=True)
        for c in sol:
            M.add(c)
        M.solution_configs(sol)
        val, _, _ = M.solve()
        assert M.artificial() < 1e-9
        assert val <= sum(c.cost for c in sol) * (1 + 1e-9) + 1e-12
