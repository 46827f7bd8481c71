"""P1 speed-ups of the walk formulation (models/placement.md section 9, P1.41-P1.45) must not change the optimum.

Tiny instances built here; the reference is the brute-force enumeration of ``test_placement`` and the old
(position) formulation, which has none of these families.
"""
from __future__ import annotations

import itertools
import random

import pyomo.environ as pyo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bace_opt.exact.placement import solve_placement
from bace_opt.exact.p1.data import PlacementData, count_cuts, proportional_groups
from bace_opt.exact.p1.solution import _order_proportional, unit_cost
from bace_opt.instance import Instance, Job
from bace_opt.solvers.base import SolveOptions

from test_placement import brute_force, check, make

OPT = SolveOptions(time_limit_s=30)


def _with_iterations(inst: Instance, iters: dict[str, int]) -> Instance:
    jobs = [Job(j.name, j.arrival_s, j.stages, j.microbatches, iters.get(j.name, j.iterations), j.stage_time_s,
                j.activation_mb) for j in inst.jobs]
    return inst.replace(jobs=jobs).validated()


def _agree(inst):
    """walk and position prove the same three level optima; the walk's schedule passes the evaluator."""
    from bace_opt.exact import solve
    out = {}
    for form in ("walk", "position"):
        r = solve_placement(inst, options=OPT, formulation=form)
        assert r.solver_info.status == "optimal", (form, r.solver_info)
        out[form] = [l["objective"] for l in r.levels]
    assert out["walk"][0] == out["position"][0]
    assert out["walk"][1:] == pytest.approx(out["position"][1:], rel=1e-6, abs=1e-12)
    check(inst, solve(inst, options=OPT))
    return out["walk"]


# ---------------------------------------------------------------------- P1.41 count cuts

@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 9), min_size=1, max_size=7), st.integers(0, 25), st.data())
def test_count_cuts_hold_for_every_subset_that_fits(sizes, extra, data):
    """Brute force: every set of ``started`` jobs whose GPU totals fit the capacity meets each cut."""
    cap = max(sizes) + extra
    regions = [("A", cap, 0.1)]
    jobs = [(f"j{i}", s, 25.0) for i, s in enumerate(sizes)]
    inst = make(regions, [], jobs)
    pd = PlacementData(inst)
    fit = [len(c) for n in range(len(pd.jobs) + 1) for c in itertools.combinations(pd.jobs, n)
           if sum(d.job.gpus for d in c) <= cap]
    started = data.draw(st.sampled_from(sorted(set(fit))))
    cuts = count_cuts(pd, started)
    for c in itertools.combinations(pd.jobs, started):
        if sum(d.job.gpus for d in c) > cap:
            continue
        chosen = {d.j for d in c}
        for jobs_, lo, hi in cuts:
            assert lo <= len(chosen & set(jobs_)) <= hi


def test_count_cuts_force_the_only_sets_that_fit():
    # 4 + 4 + 3 = 11 GPUs; three jobs start ({a, b, c} or {a, b, d}); the 6-GPU job e never can (3 + 3 + 6 > 11)
    inst = make([("A", 4, 0.1), ("B", 4, 0.2), ("C", 3, 0.3)],
                [("A", "B", 10, 5), ("B", "C", 10, 5), ("A", "C", 10, 5)],
                [("a", 3, 25.0), ("b", 3, 25.0), ("c", 4, 25.0), ("d", 5, 25.0), ("e", 6, 25.0)])
    pd = PlacementData(inst)
    cuts = {tuple(j): (lo, hi) for j, lo, hi in count_cuts(pd, 3)}
    assert cuts[(4,)] == (0, 0)
    assert cuts[(3, 4)] == (0, 1)        # at most one job of 5 or more GPUs
    r = solve_placement(inst, options=OPT)
    assert r.levels[0]["objective"] == 3 and "e" not in r.started
    _agree(inst)


# ---------------------------------------------------------------------- P1.42 / P1.43 proportional jobs

def _proportional_instance():
    """Two cheap single-region slots (A, B) and an expensive one (C); jobs p, q, r differ only in iterations."""
    base = make([("A", 2, 0.10), ("B", 2, 0.15), ("C", 2, 0.40)],
                [("A", "B", 10, 5), ("B", "C", 10, 5), ("A", "C", 10, 5)],
                [("p", 2, 25.0), ("q", 2, 25.0), ("r", 2, 25.0)])
    return _with_iterations(base, {"p": 300, "q": 100, "r": 200})


def test_proportional_jobs_take_placements_in_order_and_optimum_is_unchanged():
    # two cheap single-region slots (A, B) and an expensive one (C); jobs p, q, r differ only in iterations:
    # the job with the most iterations must get the cheapest placement
    inst = _proportional_instance()
    pd = PlacementData(inst)
    assert proportional_groups(pd) == [[1, 2, 0]]        # sorted by iterations: q, r, p
    n_bf, cost_bf, run_bf = brute_force(inst)
    r = solve_placement(inst, options=OPT)
    assert r.solver_info.status == "optimal"
    assert r.levels[1]["objective"] == pytest.approx(cost_bf, rel=1e-6)
    assert r.levels[2]["objective"] == pytest.approx(run_bf, rel=1e-6)
    where = {p.name: p.blocks[0].region for p in r.plans}
    assert where == {"p": "A", "r": "B", "q": "C"}
    _agree(inst)


def test_start_reordering_keeps_the_start_feasible_and_no_dearer():
    inst = _proportional_instance()
    pd = PlacementData(inst)
    # the worst start: p (most iterations) in the dearest region, q in the cheapest, r not started
    x = {0: 1.0, 1: 1.0, 2: 0.0}
    a = {(0, 1, 2): 1.0, (1, 1, 0): 1.0}
    n = {(0, 2): 2.0, (1, 0): 2.0}
    f: dict = {}

    def total(x, n, f):
        return sum(unit_cost(pd, pd.jobs[j], n, f) * pd.jobs[j].job.iterations for j in x if x[j] > 0.5)
    before = total(x, n, f)
    _order_proportional(pd, x, a, n, f)
    assert x[1] == 1.0 and x[2] == 1.0 and x[0] == 0.0          # q and r (fewest iterations) start
    assert n == {(1, 2): 2.0, (2, 0): 2.0}                      # q (fewest) gets the dear region C
    assert total(x, n, f) < before
    assert set(a) == {(1, 1, 2), (2, 1, 0)}


# ---------------------------------------------------------------------- P1.44 class rows, P1.45 level 3

@pytest.mark.parametrize("seed", [11, 12, 13])
def test_mixed_gpu_packing_agrees_with_position(seed):
    """A fast and a slow GPU type where the fast GPUs cannot hold every started job (class rows bind)."""
    rnd = random.Random(seed)
    regions = [("F", 4, round(rnd.uniform(0.1, 0.3), 3), "FAST"), ("S1", 3, round(rnd.uniform(0.1, 0.3), 3)),
               ("S2", 3, round(rnd.uniform(0.1, 0.3), 3))]
    links = [(u, v, rnd.choice([4.0, 10.0]), rnd.choice([5.0, 20.0])) for u, v in
             itertools.combinations(["F", "S1", "S2"], 2)]
    jobs = [(f"j{i}", rnd.randint(2, 4), 25.0, rnd.choice([0.1, 0.2])) for i in range(4)]
    _agree(make(regions, links, jobs))


def test_level_three_proof_by_cost_follows_improvements_to_the_run_time_optimum():
    # every price 0: all placements cost 0, so level 3 alone decides, and level 2's solution is usually not
    # the shortest: the cost-minimization proof must walk to the run-time optimum found by brute force
    inst = make([("A", 2, 0.0), ("B", 2, 0.0), ("C", 2, 0.0)],
                [("A", "B", 10, 5), ("B", "C", 10, 80), ("A", "C", 10, 40)],
                [("j", 4, 25.0), ("k", 2, 25.0)])
    n_bf, cost_bf, run_bf = brute_force(inst)
    r = solve_placement(inst, options=OPT)
    assert r.solver_info.status == "optimal"
    assert r.levels[0]["objective"] == n_bf
    assert r.levels[2]["objective"] == pytest.approx(run_bf, rel=1e-9)
    assert r.levels[2]["bound"] <= r.levels[2]["objective"]
    _agree(inst)


# ---------------------------------------------------------------------- P1.46-P1.50 (walk cuts)

def _tiny(seed: int):
    """3 regions of 2-4 GPUs (4 regions when the jobs are short), non-metric latencies, 2 jobs of 2-6 stages:
    jobs split, some fit whole; small enough for the brute force (at most a few 10^4 combinations)."""
    rnd = random.Random(seed)
    jobs = [(f"j{i}", rnd.randint(2, 6), 25.0) for i in range(2)]
    names = ["A", "B", "C", "D"][:4 if max(j[1] for j in jobs) <= 3 else 3]
    regions = [(r, rnd.randint(2, 4), round(rnd.uniform(0.05, 0.4), 3)) for r in names]
    links = [(u, v, 10.0, rnd.choice([2.0, 15.0, 60.0])) for u, v in itertools.combinations(names, 2)]
    return make(regions, links, jobs)


@pytest.mark.parametrize("seed", range(6))
def test_walk_cuts_keep_the_brute_force_optimum(seed):
    """The walk model with P1.46-P1.50 proves the brute-force optimum of all three levels."""
    inst = _tiny(seed)
    n_bf, cost_bf, run_bf = brute_force(inst)
    r = solve_placement(inst, options=OPT)
    assert r.solver_info.status == "optimal"
    assert r.levels[0]["objective"] == n_bf
    assert r.levels[1]["objective"] == pytest.approx(cost_bf, rel=1e-6, abs=1e-12)
    assert r.levels[1]["bound"] <= cost_bf * (1 + 1e-6) + 1e-12
    assert r.levels[2]["objective"] == pytest.approx(run_bf, rel=1e-6)


def test_region_cover_rows_by_hand():
    from bace_opt.exact.p1.walk import region_cover_rows, regions_needed
    assert regions_needed([4, 4, 4], 6) == 2
    assert regions_needed([4, 1], 6) == 3            # cannot be held at all
    inst = make([("A", 4, 0.1), ("B", 4, 0.2), ("C", 2, 0.3)],
                [("A", "B", 10, 20), ("B", "C", 10, 20), ("A", "C", 10, 20)], [("j", 6, 50)])
    d = PlacementData(inst).jobs[0]
    rows = {r: (sorted(o), k) for r, o, k in region_cover_rows(d)}
    assert rows[None] == ([0, 1, 2], 2)              # 6 stages need two of the regions (4 + 4)
    assert rows[0] == ([1, 2], 1)                    # A holds <= 4: >= 2 stages elsewhere, one region will do
    assert rows[2] == ([0, 1], 1)                    # C holds <= 2: 4 more stages, A or B


def _planted(monkeypatch, name, fn):
    from bace_opt.exact.p1 import walk as W
    monkeypatch.setattr(W, name, fn)


def _changes_optimum(inst):
    n_bf, cost_bf, run_bf = brute_force(inst)
    r = solve_placement(inst, options=OPT)
    got = [l["objective"] for l in r.levels]
    # a cut that only forces extra arcs is hidden in the returned schedule (the decoder drops them), not in the
    # level-2 bound, which then exceeds the true optimum
    return got[0] != n_bf or got[1] != pytest.approx(cost_bf, rel=1e-6) or got[2] != pytest.approx(run_bf, rel=1e-6) \
        or r.levels[1]["bound"] > cost_bf * (1 + 1e-6) or bool(r.levels[1].get("bound_conflicts"))


SPAN = make([("A", 4, 0.10), ("B", 4, 0.20), ("C", 4, 0.30)],
            [("A", "B", 10, 20), ("B", "C", 10, 20), ("A", "C", 10, 5)], [("j", 6, 50), ("k", 2, 50)])


def test_planted_wrong_cuts_change_the_optimum(monkeypatch):
    """Each family, made one step too strong, cuts the optimum off: the agreement test above can fail.  The walk
    model alone (no stage relaxation, issue 44).  Where the solve ends on a placement cheaper than the wrong
    model's bound (level 3's decoded placement drops the arcs a wrong cut forces), the bound is refuted and
    reported as a conflict (``p1.certify``), never capped to the incumbent: that too shows the cut."""
    from bace_opt.exact.p1 import milp as M, walk as W
    monkeypatch.setattr(M, "STAGE_RELAXATION", False)
    assert not _changes_optimum(SPAN)
    real_rows = W.region_cover_rows
    with monkeypatch.context() as mp:          # P1.46: one region more than needed
        _planted(mp, "region_cover_rows", lambda d: [(r, o, k + 1) for r, o, k in real_rows(d)])
        assert _changes_optimum(SPAN)
    with monkeypatch.context() as mp:          # P1.48 without y: k (2 stages) may not sit whole in one region
        _planted(mp, "_y", lambda m, j, r: 0)
        assert _changes_optimum(SPAN)
    from bace_opt.exact.p1.data import arc_ends as real_ends
    with monkeypatch.context() as mp:          # P1.50 with the start (end) term dropped: every W must be entered
        def rule_no_ends(m):
            J = m.data.jobs
            rows = [(d.j, a, b) for d in J if d.K > 2 for i, a in enumerate(d.regions) for b in d.regions[i + 1:]]
            arcs = W._arcs(m)
            m.con_bad = pyo.Constraint(rows, rule=lambda m, j, a, b: sum(
                m.F[j, e, dd] for v in (a, b) for e, dd in arcs[j][1][v] if real_ends(m.data.inst, e, dd)[0] not in (a, b))
                >= m.u[j, a])
        _planted(mp, "add_pair_cuts", rule_no_ends)
        assert _changes_optimum(SPAN)
    with monkeypatch.context() as mp:          # P1.47 split row without y: a job held whole still needs an arc
        real_whole = W.add_whole_jobs

        def whole_no_y(m):
            real_whole(m)
            m.con_bad = pyo.Constraint([d.j for d in m.data.jobs if d.K > 1], rule=lambda m, j: sum(
                W._U(m, j, e) for e in m.data.jobs[j].links) >= m.x[j])
        _planted(mp, "add_whole_jobs", whole_no_y)
        assert _changes_optimum(SPAN)
