"""P1 placement: tiny instances built here, optimum known by hand or by brute-force enumeration below.

Every exact schedule must pass the evaluator, and the solver's cost must equal the evaluator's recomputation
(relative 1e-6).  Back ends that prove optimality must agree.
"""
from __future__ import annotations

import itertools
import math
import random

import pytest

from bace_opt import formulas as F
from bace_opt.errors import InputError, SolverUnavailableError
from bace_opt.evaluate import evaluate, price_plan
from bace_opt.exact import solve
from bace_opt.exact.placement import cost_at_t0_usd, solve_placement
from bace_opt.instance import GpuType, Instance, Job, Link, Objective, PriceSeries, Region
from bace_opt.schedule import Block, Hop, JobPlan
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

OPT = SolveOptions(time_limit_s=30)
MILP = [s for s in ("highs", "scip", "mathopt-highs") if registry.available(s)]
ALL = MILP + (["cpsat"] if registry.available("cpsat") else [])
#: the back ends of the walk engine, and "cg": the column-generation engine (branch-and-price on HiGHS)
ENGINES = ALL + ["cg"]


def how(solver: str) -> dict:
    """solve()'s keywords for a back end of the walk engine, or for the cg engine ("cg")."""
    return {"solver": "highs", "engine": "cg"} if solver == "cg" else {"solver": solver, "engine": "walk"}

GT = {"A6000": GpuType("A6000", 100.0, 48, 300), "FAST": GpuType("FAST", 200.0, 80, 400)}


def make(regions, links, jobs, egress=False, name="t"):
    """regions: (name, gpus, price[, gpu_type]); links: (a, b, gbps, ms[, egress]); jobs: (name, S, A_mb[, t_s])."""
    R = [Region(r[0], r[3] if len(r) > 3 else "A6000", r[1], r[2]) for r in regions]
    L = [Link(l[0], l[1], l[2], l[3], l[4] if len(l) > 4 else 0.0) for l in links]
    J = [Job(j[0], 0.0, j[1], 8, 100, j[3] if len(j) > 3 else 0.1, j[2]) for j in jobs]
    return Instance(name, GT, "A6000", R, L, J, Objective(egress=egress)).validated()


def check(inst, sched):
    """The schedule passes the evaluator and the solver's cost equals the evaluator's (rel 1e-6)."""
    rep = evaluate(inst, sched)
    assert rep.feasible, rep.summary()
    done = [j.plan for j in sched.jobs if j.status == "done"]
    ev = cost_at_t0_usd(inst, done, sched.meta["t0"])
    assert sched.meta["cost_at_t0_usd"] == pytest.approx(ev, rel=1e-6, abs=1e-12)
    return rep


# ---------------------------------------------------------------------- hand-checked cases

@pytest.mark.parametrize("solver", ENGINES)
def test_job_must_span_regions(solver):
    # 6 stages, no region has more than 4 GPUs: the job spans two regions, cheapest first (A 4 + B 2).
    inst = make([("A", 4, 0.10), ("B", 4, 0.20), ("C", 4, 0.30)],
                [("A", "B", 10, 20), ("B", "C", 10, 20), ("A", "C", 10, 20)], [("j", 6, 50)])
    s = solve(inst, **how(solver), options=OPT)
    assert s.solver.status == "optimal"
    j = s.job("j")
    assert sorted((b.region, b.stages) for b in j.blocks) == [("A", 4), ("B", 2)]
    assert [sorted(h.route) for h in j.hops] == [["A", "B"]]
    assert j.hops[0].reserved_gbps == pytest.approx(F.demand_gbps(inst.job("j"), 0.1))
    check(inst, s)


@pytest.mark.parametrize("solver", ENGINES)
def test_thin_direct_link_relays_through_third_region(solver):
    # b_j = 8 * 50 / 1000 / 0.1 = 4 Gbit/s; A-B has 1 Gbit/s, so the hop relays A-T-B through transit node T.
    inst = make([("A", 3, 0.1), ("B", 3, 0.1), ("T", 0, 0.1)],
                [("A", "B", 1, 5), ("A", "T", 10, 10), ("T", "B", 10, 10)], [("j", 6, 50)])
    s = solve(inst, **how(solver), options=OPT)
    j = s.job("j")
    assert j.status == "done"
    assert len(j.hops) == 1 and set(j.hops[0].route) == {"A", "T", "B"} and j.hops[0].route[1] == "T"
    check(inst, s)


@pytest.mark.parametrize("solver", ENGINES)
def test_admission_limited_by_bandwidth_not_gpus(solver):
    # 12 GPUs for two 4-stage jobs, but every job must span two regions (3 GPUs each) and only link A-B can
    # carry a hop (b = 4 Gbit/s; 6 Gbit/s on A-B, 2 elsewhere): one job starts, the other is not started.
    regions = [("A", 3, 0.1), ("B", 3, 0.1), ("C", 3, 0.1), ("D", 3, 0.1)]
    links = [(u, v, 6.0 if {u, v} == {"A", "B"} else 2.0, 10) for u, v in itertools.combinations("ABCD", 2)]
    inst = make(regions, links, [("j1", 4, 50), ("j2", 4, 50)])
    s = solve(inst, **how(solver), options=OPT)
    assert s.solver.status == "optimal"
    assert s.metrics["jobs_done"] == 1 and s.metrics["jobs_not_started"] == 1 and s.metrics["jobs_blocked"] == 0
    assert sum(r.gpus for r in inst.regions) >= 8
    check(inst, s)
    # with a second thick link C-D, both jobs start (one hop on each)
    links2 = [(u, v, 6.0 if {u, v} in ({"A", "B"}, {"C", "D"}) else 2.0, 10) for u, v in itertools.combinations("ABCD", 2)]
    s2 = solve(make(regions, links2, [("j1", 4, 50), ("j2", 4, 50)]), **how(solver), options=OPT)
    assert s2.metrics["jobs_done"] == 2


@pytest.mark.parametrize("solver", ENGINES)
def test_cost_prefers_cheap_regions_and_count_comes_first(solver):
    # Each 4-stage job fits any region; prices 0.3 / 0.1 / 0.2: one job goes to B, the next to C.  Starting
    # both costs more than starting one, yet both start (level 1 before level 2).
    inst = make([("A", 4, 0.3), ("B", 4, 0.1), ("C", 4, 0.2)],
                [("A", "B", 10, 20), ("B", "C", 10, 20), ("A", "C", 10, 20)], [("j1", 4, 50), ("j2", 4, 50)])
    s = solve(inst, **how(solver), options=OPT)
    regs = sorted(b.region for j in s.jobs for b in j.blocks)
    assert regs == ["B", "C"]
    check(inst, s)


def test_mixed_gpu_types_slowest_class_is_exact():
    # F (fast GPUs, speed 2, expensive) and S (reference speed, cheap).  Spanning both runs at the slow speed;
    # the fast region alone halves tau.  The model must price whichever it picks with the true tau.
    inst = make([("F", 4, 0.5, "FAST"), ("S", 4, 0.1)], [("F", "S", 10, 5)], [("j", 4, 50), ("k", 2, 50)])
    for solver in ALL:
        s = solve(inst, solver=solver, options=OPT)
        check(inst, s)
        assert s.metrics["jobs_done"] == 2


def test_egress_objective_prefers_free_route():
    # With egress in the objective, the hop avoids the paid direct link (A-B 0.5 USD/GB) via free A-C-B.
    inst = make([("A", 2, 0.1), ("B", 2, 0.1), ("C", 0, 0.1)],
                [("A", "B", 10, 1, 0.5), ("A", "C", 10, 1, 0.0), ("C", "B", 10, 1, 0.0)], [("j", 4, 50)],
                egress=True)
    s = solve(inst, solver="highs", options=OPT)
    assert s.job("j").hops[0].route[1] == "C" and s.metrics["total_egress_usd"] == 0.0
    check(inst, s)


def test_residual_resources_are_respected():
    inst = make([("A", 4, 0.1), ("B", 4, 0.2), ("C", 4, 0.3)],
                [("A", "B", 10, 20), ("B", "C", 10, 20), ("A", "C", 10, 20)], [("j", 4, 50)])
    # A is nearly full and A-B, A-C carry 7 of their 10 Gbit/s: 3 left < b = 4, so A cannot join a chain.
    r = solve_placement(inst, free_gpus={"A": 1}, free_gbps={0: 3.0, 2: 3.0}, options=OPT)
    assert r.solver_info.status == "optimal"
    (p,) = r.plans
    assert [b.region for b in p.blocks] == ["B"]
    # nothing free at all: the job is blocked, P1 stays feasible (optimal, 0 jobs)
    r0 = solve_placement(inst, free_gpus={"A": 0, "B": 0, "C": 0}, options=OPT)
    assert r0.plans == [] and r0.blocked == ["j"] and r0.solver_info.status == "optimal"


def test_t0_and_jobs_selection_and_unscheduled():
    R = [Region("A", "A6000", 8, 0.1)]
    J = [Job("early", 0.0, 2, 8, 10, 0.1, 5), Job("late", 100.0, 2, 8, 10, 0.1, 5)]
    inst = Instance("t", GT, "A6000", R, [], J).validated()
    s = solve(inst, t0=50.0, options=OPT)
    assert s.job("early").status == "done" and s.job("early").start_s == 50.0
    assert s.job("late").status == "unscheduled"
    check(inst, s)
    with pytest.raises(InputError):
        solve_placement(inst, jobs=["late"], t0=50.0)
    with pytest.raises(InputError):
        solve_placement(inst, jobs=["nope"])
    with pytest.raises(InputError):
        solve_placement(inst, free_gpus={"A": -1})
    with pytest.raises(InputError):
        solve_placement(inst, free_gpus={"Z": 1})
    with pytest.raises(SolverUnavailableError):
        solve_placement(inst, solver="gurobi")


def test_hourly_prices_priced_at_t0_and_true_integral_reported():
    ps = PriceSeries(0.0, 3600.0, (0.1, 1.0))
    R = [Region("A", "A6000", 4, 0.1, 1.0, ps), Region("B", "A6000", 4, 0.5)]
    J = [Job("j", 0.0, 2, 8, 400, 0.1, 5)]   # runs 400 * 0.9 s = 360 s < 1 h: all at price 0.1
    inst = Instance("t", GT, "A6000", R, [Link("A", "B", 10, 5)], J).validated()
    s = solve(inst, options=OPT)
    assert s.job("j").blocks[0].region == "A"
    assert s.meta["evaluated_cost_usd"] == pytest.approx(s.meta["cost_at_t0_usd"], rel=1e-9)
    s2 = solve(inst, t0=3500.0, options=OPT)       # crosses into the expensive hour: the integral differs
    assert s2.meta["evaluated_cost_usd"] > s2.meta["cost_at_t0_usd"] * 1.01
    check(inst, s2)


def test_warm_start_is_used_and_optimum_unchanged():
    inst = make([("A", 4, 0.1), ("B", 4, 0.2), ("C", 4, 0.3)],
                [("A", "B", 10, 20), ("B", "C", 10, 20), ("A", "C", 10, 20)], [("j1", 6, 50), ("j2", 3, 50)])
    # a poor but feasible start: j1 in C then B (reverse orientation on purpose), j2 in A
    b = F.demand_gbps(inst.job("j1"), 0.1)
    warm = [JobPlan("j1", "done", 0.0, (Block("C", 4), Block("B", 2)), (Hop(("C", "B"), b),)),
            JobPlan("j2", "done", 0.0, (Block("A", 3),), ())]
    cold = solve(inst, options=OPT)
    for solver in ALL:
        s = solve(inst, solver=solver, options=OPT, warm_start=warm)
        assert s.solver.objective == pytest.approx(cold.solver.objective, rel=1e-6)
        check(inst, s)


def test_time_limit_ends_with_a_clear_status():
    inst = _random_instance(7, n_regions=5, n_jobs=6, max_stages=6)
    s = solve(inst, solver="highs", time_limit=0.05)
    assert s.solver.status in ("optimal", "feasible", "time_limit")
    if s.solver.status != "time_limit":
        check(inst, s)


# ---------------------------------------------------------------------- brute force

def _simple_paths(inst, a, b):
    out = []

    def dfs(path):
        v = path[-1]
        if v == b:
            out.append(tuple(path))
            return
        for w in inst.graph.neighbors(v):
            if w not in path:
                dfs(path + [w])
    dfs([a])
    return out


def _compositions(S, q):
    for cuts in itertools.combinations(range(1, S), q - 1):
        bounds = (0,) + cuts + (S,)
        yield tuple(bounds[i + 1] - bounds[i] for i in range(q))


def _job_options(inst, job):
    """Every placement of ``job`` (each region at most once, every simple path per hop), with its resource
    use and (cost at t0, run time)."""
    regions = [r.name for r in inst.regions if r.gpus >= job.gpus_per_stage]
    out = []
    for q in range(1, min(job.stages, len(regions)) + 1):
        for chain in itertools.permutations(regions, q):
            for comp in _compositions(job.stages, q):
                routes = [_simple_paths(inst, u, v) for u, v in zip(chain, chain[1:])]
                for rs in itertools.product(*routes):
                    tau = F.tau_s(inst, job, chain)
                    b = F.demand_gbps(job, tau)
                    plan = JobPlan(job.name, "done", 0.0, tuple(Block(r, n) for r, n in zip(chain, comp)),
                                   tuple(Hop(rt, b) for rt in rs))
                    fig = price_plan(inst, plan)
                    gpus = {r: n * job.gpus_per_stage for r, n in zip(chain, comp)}
                    bw = {}
                    for rt in rs:
                        for u, v in zip(rt, rt[1:]):
                            e = inst.link_index[(u, v)]
                            bw[e] = bw.get(e, 0.0) + b
                    cost = fig.electricity_usd + (fig.egress_usd if inst.objective.egress else 0.0)
                    out.append((plan, gpus, bw, cost, fig.run_s))
    return out


def brute_force(inst):
    """Lexicographic optimum (max started, min cost, min run time) over all placements of all jobs."""
    opts = [[None] + _job_options(inst, j) for j in inst.jobs]
    best = None
    for combo in itertools.product(*opts):
        gpus, bw = {}, {}
        ok = True
        for o in combo:
            if o is None:
                continue
            for r, g in o[1].items():
                gpus[r] = gpus.get(r, 0) + g
                if gpus[r] > inst.region(r).gpus:
                    ok = False
            for e, w in o[2].items():
                bw[e] = bw.get(e, 0.0) + w
                if bw[e] > inst.links[e].bandwidth_gbps * (1 + 1e-9):
                    ok = False
            if not ok:
                break
        if not ok:
            continue
        placed = [o for o in combo if o is not None]
        key = (-len(placed), math.fsum(o[3] for o in placed), math.fsum(o[4] for o in placed))
        if best is None or _lex_better(key, best):
            best = key
    return -best[0], best[1], best[2]


def _lex_better(a, b):
    if a[0] != b[0]:
        return a[0] < b[0]
    if abs(a[1] - b[1]) > 1e-9 * max(abs(a[1]), abs(b[1]), 1e-12):
        return a[1] < b[1]
    return a[2] < b[2] - 1e-9 * max(abs(b[2]), 1.0)


def _random_instance(seed, n_regions=3, n_jobs=2, max_stages=3, mixed=False, egress=False):
    rnd = random.Random(seed)
    names = "ABCDEFG"[:n_regions]
    regions = []
    for i, n in enumerate(names):
        gt = "FAST" if mixed and i == 0 else "A6000"
        regions.append((n, rnd.randint(1, 3), round(rnd.uniform(0.1, 0.3), 3), gt))
    links = []
    for u, v in itertools.combinations(names, 2):
        links.append((u, v, rnd.choice([2.0, 4.0, 6.0, 10.0]), rnd.choice([5.0, 20.0, 60.0]),
                      rnd.choice([0.0, 0.02]) if egress else 0.0))
    jobs = [(f"j{i}", rnd.randint(1, max_stages), rnd.choice([25.0, 50.0]), rnd.choice([0.1, 0.2]))
            for i in range(n_jobs)]
    return make(regions, links, jobs, egress=egress, name=f"rand{seed}")


CASES = [dict(seed=s, n_jobs=n, mixed=m, egress=e)
         for s, n, m, e in [(1, 1, False, False), (2, 2, False, False), (3, 3, False, False), (4, 2, True, False),
                            (5, 3, False, True), (6, 2, False, False), (8, 3, True, True), (9, 3, False, False)]]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"seed{c['seed']}-{c['n_jobs']}j")
def test_brute_force_confirms_optimum(case):
    inst = _random_instance(case["seed"], n_jobs=case["n_jobs"], mixed=case["mixed"], egress=case["egress"])
    n_bf, cost_bf, run_bf = brute_force(inst)
    objs = {}
    for solver in ENGINES:
        s = solve(inst, **how(solver), options=OPT)
        assert s.solver.status == "optimal", (solver, s.solver)
        check(inst, s)
        lv = {l["level"]: l for l in s.solver.extra["levels"]}
        assert lv[1]["objective"] == n_bf, solver
        assert s.meta["evaluated_cost_at_t0_usd"] == pytest.approx(cost_bf, rel=1e-6, abs=1e-12), solver
        assert s.metrics["total_run_s"] == pytest.approx(run_bf, rel=1e-6), solver
        objs[solver] = s.solver.objective
    ref = next(iter(objs.values()))
    for solver, o in objs.items():
        assert o == pytest.approx(ref, rel=1e-6, abs=1e-12), (solver, objs)


def test_reference_mps_objectives():
    """models/*.mps solved from the file by HiGHS (highspy) give models/reference_objectives.json's optima."""
    import json
    from pathlib import Path
    import highspy
    root = Path(__file__).resolve().parent.parent / "models"
    refs = json.loads((root / "reference_objectives.json").read_text())
    assert len(refs["models"]) >= 4
    for fn, ref in refs["models"].items():
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 1e-9)
        assert h.readModel(str(root / fn)) == highspy.HighsStatus.kOk, fn
        h.run()
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, fn
        assert h.getInfo().objective_function_value == pytest.approx(ref["objective"], rel=1e-6, abs=1e-12), fn
    # and the instances still give the same optima through the full P1 driver
    for name, d in refs["instances"].items():
        inst = Instance.from_dict(d)
        s = solve(inst, options=OPT)
        lv2 = refs["models"][f"{name}-level2.mps"]["objective"]
        assert s.solver.objective == pytest.approx(lv2, rel=1e-6)


def test_identical_jobs_warm_start_and_numpy_inputs():
    import numpy as np
    inst = make([("A", 4, 0.1), ("B", 4, 0.2)], [("A", "B", 10, 20)], [("j1", 4, 50), ("j2", 4, 50), ("j3", 4, 50)])
    # the warm start starts the LAST of three identical jobs; the symmetry-broken model needs the first
    warm = [JobPlan("j3", "done", 0.0, (Block("B", 4),), ())]
    for solver in ALL:
        s = solve(inst, solver=solver, options=OPT, warm_start=warm)
        assert s.metrics["jobs_done"] == 2 and s.job("j3").status == "not_started"
        check(inst, s)
    r = solve_placement(inst, free_gpus={"A": np.int64(4), "B": np.int64(0)}, free_gbps={np.int64(0): np.float64(5)})
    assert [p.name for p in r.plans] == ["j1"]


def test_oversized_model_is_refused_with_a_clear_status():
    inst = _random_instance(3, n_jobs=3)
    r = solve_placement(inst, max_binaries=10, engine="walk")
    assert r.solver_info.status == "error" and "too large" in r.solver_info.message and r.plans == []
    # the default engine rule solves it by column generation, which builds no walk model
    r = solve_placement(inst, max_binaries=10, options=OPT)
    assert r.solver_info.status == "optimal" and r.solver_info.extra["engine"] == "cg" and r.plans


def test_cli_solve_writes_an_evaluable_schedule(tmp_path, capsys):
    from bace_opt.cli.main import main
    from bace_opt.schedule import load_schedule
    inst = make([("A", 3, 0.1), ("B", 3, 0.1), ("T", 0, 0.1)],
                [("A", "B", 1, 5), ("A", "T", 10, 10), ("T", "B", 10, 10)], [("j", 6, 50)])
    ip, op = tmp_path / "i.json", tmp_path / "o.json"
    inst.save(ip)
    assert main(["solve", str(ip), "--solver", "highs", "--time-limit", "20", "-o", str(op)]) == 0
    out = capsys.readouterr().out
    assert "status: optimal" in out and "jobs started: 1" in out
    assert evaluate(inst, load_schedule(op)).feasible
    op2 = tmp_path / "o2.json"     # -o naming the warm start (an input) is refused: tests/test_hardening.py
    assert main(["solve", str(ip), "--warm-start", str(op), "--solver", "cpsat", "-o", str(op2)]) == 0
    assert main(["solve", str(ip), "--time-limit", "0", "-o", str(op)]) == 2
    assert "--time-limit: must be a finite number > 0" in capsys.readouterr().err


# ---------------------------------------------------------------------- walk formulation (models/placement.md section 9)

@pytest.mark.parametrize("case", CASES[:5], ids=lambda c: f"seed{c['seed']}-{c['n_jobs']}j")
def test_position_formulation_confirms_brute_force(case):
    """The old (position) formulation stays exact: it is the walk formulation's cross-check in the benchmark."""
    inst = _random_instance(case["seed"], n_jobs=case["n_jobs"], mixed=case["mixed"], egress=case["egress"])
    n_bf, cost_bf, run_bf = brute_force(inst)
    r = solve_placement(inst, options=OPT, formulation="position")
    assert r.solver_info.status == "optimal"
    assert r.levels[0]["objective"] == n_bf
    assert r.solver_info.extra["cost_usd"] == pytest.approx(cost_bf, rel=1e-6, abs=1e-12)
    assert r.solver_info.extra["run_s"] == pytest.approx(run_bf, rel=1e-6)


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_walk_and_position_agree_on_sparse_topologies_with_transit(seed):
    """Relays through transit nodes and other regions, thin links, mixed GPUs: both formulations give the same
    three level optima and evaluator-feasible plans."""
    from bace_opt.builders.synthetic import random_instance
    inst = random_instance(seed, 4, 4, topology="sparse", transit=2, mixed_gpus=True, max_gpus_per_region=6,
                           max_stages=4, egress=seed % 2 == 0)
    out = {}
    for form in ("walk", "position"):
        r = solve_placement(inst, options=OPT, formulation=form)
        assert r.solver_info.status == "optimal", (form, r.solver_info)
        sched = solve(inst, options=OPT, formulation=form)
        check(inst, sched)
        out[form] = [l["objective"] for l in r.levels]
    assert out["walk"][0] == out["position"][0]
    assert out["walk"][1:] == pytest.approx(out["position"][1:], rel=1e-6, abs=1e-12)


def test_trail_decoder_orders_by_first_visit_and_drops_loops():
    from bace_opt.exact.p1.walk_solution import trail_chain
    # trail 0 -> 5 -> 1 -> 5 -> 2 (5 is transit, crossed twice); used regions 0, 1, 2
    chain, routes = trail_chain(None, {0, 1, 2}, 0, [(0, 5), (5, 1), (1, 5), (5, 2)])
    assert chain == [0, 1, 2]
    assert routes == [[0, 5, 1], [1, 5, 2]]
    # a loop inside one hop is cut: 0 -> 3 -> 4 -> 3 -> 1 with 3, 4 transit
    chain, routes = trail_chain(None, {0, 1}, 0, [(0, 3), (3, 4), (4, 3), (3, 1)])
    assert chain == [0, 1] and routes == [[0, 3, 1]]
    with pytest.raises(ValueError):
        trail_chain(None, {0, 1, 2}, 0, [(0, 1)])


def test_level_one_proven_by_gpu_count_bound_when_the_start_reaches_it():
    inst = make([("A", 4, 0.1), ("B", 4, 0.2)], [("A", "B", 10.0, 5.0)], [("j1", 3, 25.0), ("j2", 3, 25.0)])
    r = solve_placement(inst, options=OPT)
    assert r.levels[0]["objective"] == 2 and r.levels[0]["status"] == "optimal"
    assert "bound" in (r.levels[0]["message"] or "")
    with pytest.raises(InputError, match="formulation"):
        solve_placement(inst, formulation="paths")
