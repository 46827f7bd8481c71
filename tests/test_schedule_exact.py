"""P2 (offline schedule) exact models: CP-SAT and the slotted HiGHS MILP (models/schedule.md).

Every instance is built here.  Units: s, Gbit/s, MB, USD/kWh.  A6000 reference GPU at 300 W.
For a job with S stages, m micro-batches, N iterations, stage time t and no hop: R = N (m + S - 1) t.
"""
import itertools
import math

import numpy as np
import pytest

import bace_opt as bo
from bace_opt import formulas as F
from bace_opt.evaluate import price_plan
from bace_opt.exact.p2.candidates import enumerate_candidates
from bace_opt.exact.schedule import _integral_vec, build_problem, pareto_front, solve_schedule
from bace_opt.schedule import Block, Hop, JobPlan
from bace_opt.solvers.base import SolveOptions

A6000 = bo.GpuType("A6000", tflops=154.8, memory_gb=48, power_w=300)
OPT = SolveOptions(time_limit_s=60, threads=1)


def make(regions, links, jobs, **kw):
    return bo.Instance(name="t", gpu_types={"A6000": A6000}, reference_gpu="A6000", regions=regions, links=links,
                       jobs=jobs, **kw).validated()


def job(name, arrival=0.0, S=2, m=4, N=10, t=1.0, A=50.0):
    return bo.Job(name, arrival, S, m, N, t, A)


def objective(inst, sched, mu):
    m = sched.metrics
    cost = m["total_electricity_usd"] + (m["total_egress_usd"] if inst.objective.egress else 0.0)
    return m["avg_jct_s"] + mu * cost


def check(inst, sched, mu=0.0, status="optimal"):
    """Every exact schedule passes the evaluator and its objective equals the evaluator's recomputation."""
    rep = bo.evaluate(inst, sched)
    assert rep.feasible, rep.summary()
    assert sched.solver.status == status, sched.solver
    assert all(j.status == "done" for j in sched.jobs)
    assert sched.solver.objective == pytest.approx(objective(inst, sched, mu), rel=1e-6)
    assert sched.solver.extra["evaluator_objective"] == pytest.approx(sched.solver.objective, rel=1e-6)
    if status == "optimal":
        assert sched.solver.gap <= 1e-6
        assert sched.solver.bound <= sched.solver.objective * (1 + 1e-9)
    return rep


# ---------------------------------------------------------------------- instances

def three_region_instance():
    """r1 (4 GPUs, 0.20), r2 (4 GPUs, hourly-like series 0.5 then 0.1 after t = 100 s), r3 (2 GPUs, 0.25).
    The r1-r3 link (1 Gbit/s) carries one 0.8 Gbit/s hop at a time."""
    regions = [bo.Region("r1", "A6000", 4, 0.2),
               bo.Region("r2", "A6000", 4, 0.3, price_series=bo.PriceSeries(0, 100, (0.5, 0.1))),
               bo.Region("r3", "A6000", 2, 0.25)]
    links = [bo.Link("r1", "r2", 10, 20), bo.Link("r2", "r3", 10, 30), bo.Link("r1", "r3", 1.0, 5)]
    return make(regions, links, [job("a", S=4, m=8, t=0.5), job("b", 10, S=6, m=8, t=0.5),
                                 job("c", 20, S=3, m=8, t=0.5)])


# ---------------------------------------------------------------------- tests

@pytest.mark.parametrize("mu", [0.0, 100.0])
def test_cpsat_and_milp_agree_on_the_same_slotted_problem(mu):
    inst = three_region_instance()
    a = solve_schedule(inst, "cpsat", OPT, mu=mu, time_resolution_s=10)
    b = solve_schedule(inst, "highs", OPT, mu=mu, slot_s=10)
    check(inst, a, mu)
    check(inst, b, mu)
    assert a.solver.objective == pytest.approx(b.solver.objective, rel=1e-6)
    assert a.solver.extra["candidate_set_complete"] and a.solver.extra["optimality_scope"] == "all no-stall placements"
    assert a.solver.extra["slot_s" if False else "time_resolution_s"] == 10 and b.solver.extra["slot_s"] == 10
    # every start is on the grid and not before the arrival
    for e in list(a.jobs) + list(b.jobs):
        assert e.start_s % 10 == 0 and e.start_s >= inst.job(e.name).arrival_s


def test_hourly_prices_make_a_later_start_cheaper_only_when_cost_is_weighted():
    # one region, 1.00 USD/kWh in the first hour then 0.10; job: R = 10 * (4 + 2 - 1) * 20 = 1000 s, 0.6 kW
    regions = [bo.Region("r1", "A6000", 2, 1.0, price_series=bo.PriceSeries(0, 3600, (1.0, 0.1)))]
    inst = make(regions, [], [job("j", S=2, m=4, N=10, t=20.0)])
    early = {s: solve_schedule(inst, s, OPT, mu=0.0, time_resolution_s=600 if s == "cpsat" else None,
                               slot_s=600 if s == "highs" else None) for s in ("cpsat", "highs")}
    late = {s: solve_schedule(inst, s, OPT, mu=1e6, time_resolution_s=600 if s == "cpsat" else None,
                              slot_s=600 if s == "highs" else None) for s in ("cpsat", "highs")}
    for s in ("cpsat", "highs"):
        check(inst, early[s], 0.0)
        check(inst, late[s], 1e6)
        assert early[s].job("j").start_s == 0.0
        # cost 0.6 kW * 1000 s / 3600 * 0.1 = 0.01667 USD from t = 3600 on; 0.1667 USD at t = 0
        assert late[s].job("j").start_s == 3600.0
        assert late[s].job("j").electricity_usd == pytest.approx(0.6 * 1000 / 3600 * 0.1, rel=1e-9)
        assert early[s].job("j").electricity_usd == pytest.approx(0.6 * 1000 / 3600 * 1.0, rel=1e-9)


def test_two_jobs_that_cannot_share_a_region_are_serialized_shortest_first():
    # one region with 4 GPUs; both jobs need 4; R_short = 10 * 7 * 1 = 70 s, R_long = 10 * 7 * 3 = 210 s.
    # Mean JCT: short first (70 + 280) / 2 = 175 < long first (210 + 280) / 2 = 245.
    inst = make([bo.Region("r1", "A6000", 4, 0.2)], [],
                [job("long", S=4, t=3.0), job("short", S=4, t=1.0)])
    for s in ("cpsat", "highs"):
        sched = solve_schedule(inst, s, OPT, time_resolution_s=10 if s == "cpsat" else None,
                               slot_s=10 if s == "highs" else None)
        check(inst, sched)
        assert sched.job("short").start_s == 0.0
        assert sched.job("long").start_s == 70.0
        assert sched.metrics["avg_jct_s"] == pytest.approx(175.0)


def star(hub_gbps):
    """Three leaves of 3 GPUs around a transit hub h (0 GPUs).  Jobs of 4 stages must span two leaves, and any
    two such placements share a leaf, hence that leaf's hub link; GPUs (9) fit both jobs (8) at once."""
    regions = [bo.Region("h", "A6000", 0, 0.0)] + [bo.Region(f"r{i}", "A6000", 3, 0.2) for i in (1, 2, 3)]
    links = [bo.Link(f"r{i}", "h", hub_gbps, 10) for i in (1, 2, 3)]
    # b_x = 8 * 100 / 1000 / 1.0 = 0.8 Gbit/s, b_y = 0.4 Gbit/s
    return make(regions, links, [job("x", S=4, m=4, N=10, t=1.0, A=100.0), job("y", S=4, m=4, N=10, t=2.0, A=100.0)])


def test_bandwidth_not_gpus_serializes_two_jobs():
    inst = star(1.0)       # 0.8 + 0.4 > 1.0: never together
    assert all(len(c.blocks) >= 2 for c in enumerate_candidates(inst).by_job["x"])
    for s in ("cpsat", "highs"):
        sched = solve_schedule(inst, s, OPT, time_resolution_s=10 if s == "cpsat" else None,
                               slot_s=10 if s == "highs" else None)
        check(inst, sched)
        x, y = sched.job("x"), sched.job("y")
        assert x.start_s == 0.0                      # the shorter job first
        assert y.start_s >= x.finish_s
        assert all(len(h.route) == 3 and h.route[1] == "h" for e in (x, y) for h in e.hops)
    sched = solve_schedule(star(1.5), "cpsat", OPT, time_resolution_s=10)   # 1.2 <= 1.5: together
    check(star(1.5), sched)
    assert sched.job("x").start_s == sched.job("y").start_s == 0.0


def test_candidate_costs_match_formulas_exactly():
    inst = three_region_instance()
    prob = build_problem(inst, 10.0, mu=1.0)
    curves = F.price_curves(inst)
    t0 = np.array([0.0, 35.0, 100.0, 250.0])
    for r in ("r1", "r2"):
        got = _integral_vec(curves[r], t0, t0 + 77.5)
        want = [curves[r].integral(a, a + 77.5) for a in t0]
        assert got == pytest.approx(want, rel=1e-12)
    for jd in prob.jobs:
        for ci, c in enumerate(jd.cands[:5]):
            for t in (jd.lo, jd.lo + 3):
                want = F.electricity_usd(inst, inst.job(jd.name), c.blocks, t * 10.0, c.run_s)
                got = jd.cost[ci, t - jd.lo] if jd.varies else jd.cost[ci, 0]
                assert got == pytest.approx(want, rel=1e-12)
                assert c.run_s == pytest.approx(price_plan(inst, c.plan(0.0)).run_s, rel=1e-15)


# ---------------------------------------------------------------------- brute force

def _all_placements(inst, job):
    """Every placement (block sequences with repeats allowed, every simple route per hop, w = b_j),
    enumerated independently of bace_opt.exact.p2.candidates."""
    regions = inst.eligible_regions(job)
    out = []
    for q in range(1, job.stages + 1):
        for seq in itertools.product(regions, repeat=q):
            if any(a == b for a, b in zip(seq, seq[1:])):
                continue
            for ns in itertools.product(range(1, job.stages + 1), repeat=q):
                if sum(ns) != job.stages:
                    continue
                used = {}
                for r, n in zip(seq, ns):
                    used[r] = used.get(r, 0) + n * job.gpus_per_stage
                if any(used[r] > inst.region(r).gpus for r in used):
                    continue
                tau = F.tau_s(inst, job, seq)
                w = F.demand_gbps(job, tau)
                route_opts = [inst.routes(a, b, None) for a, b in zip(seq, seq[1:])]
                for rts in itertools.product(*route_opts):
                    out.append(JobPlan(job.name, "done", 0.0, tuple(Block(r, n) for r, n in zip(seq, ns)),
                                       tuple(Hop(rt.regions, w) for rt in rts)))
    return out


def _usage(inst, plan):
    job = inst.job(plan.name)
    res = {}
    for b in plan.blocks:
        res[("gpu", b.region)] = res.get(("gpu", b.region), 0) + job.gpus_per_stage * b.stages
    for h in plan.hops:
        for u, v in zip(h.route, h.route[1:]):
            k = ("bw", inst.link_index[(u, v)])
            res[k] = res.get(k, 0.0) + h.reserved_gbps
    return res


def _distinct(inst, plans):
    """Placements with identical resource use, run time and electricity are interchangeable: keep one each.
    Placements that cannot run even alone (a link below w) are dropped."""
    out, seen = [], set()
    for p in plans:
        use = _usage(inst, p)
        if any(k[0] == "bw" and v > inst.links[k[1]].bandwidth_gbps for k, v in use.items()):
            continue
        f = price_plan(inst, p)
        key = (tuple(sorted(use.items())), f.run_s, round(f.electricity_usd, 15))
        if key not in seen:
            seen.add(key)
            out.append((p, f, use))
    return out


def _caps(inst):
    cap = {("gpu", r.name): r.gpus for r in inst.regions}
    cap.update({("bw", i): l.bandwidth_gbps * (1 + 1e-12) for i, l in enumerate(inst.links)})
    return cap


def test_brute_force_three_jobs_constant_prices():
    """All orders x all placements x serial schedule generation (each job at the earliest feasible grid start
    after the ones before it in the order).  With constant prices the objective is regular (non-decreasing
    in the finish times), so this set contains an optimal slotted schedule."""
    regions = [bo.Region("r1", "A6000", 3, 0.2), bo.Region("r2", "A6000", 2, 0.4), bo.Region("r3", "A6000", 2, 0.3)]
    links = [bo.Link("r1", "r2", 0.9, 10), bo.Link("r2", "r3", 2.0, 40), bo.Link("r1", "r3", 2.0, 5)]
    inst = make(regions, links, [job("a", 0, S=3, m=4, N=10, t=1.0, A=100.0),
                                 job("b", 0, S=2, m=4, N=10, t=2.0, A=100.0),
                                 job("c", 20, S=2, m=4, N=10, t=1.5, A=100.0)])
    delta, mu, n = 10.0, 500.0, 3
    opts = {j.name: _distinct(inst, _all_placements(inst, j)) for j in inst.jobs}
    cap = _caps(inst)
    T = 200
    best = math.inf

    def dfs(order, k, loads, tot):
        nonlocal best
        if k == len(order):
            best = min(best, tot)
            return
        jb = order[k]
        lo = math.ceil(jb.arrival_s / delta)
        for p, f, use in opts[jb.name]:
            d = math.ceil(f.run_s / delta - 1e-12)
            ok = np.ones(T, dtype=bool)
            for key, a in use.items():
                ok &= loads[key] + a <= cap[key]
            win = np.convolve(ok.astype(int), np.ones(d, dtype=int), "valid") == d   # win[t]: slots t..t+d-1 ok
            t = lo + int(np.argmax(win[lo:]))
            new = dict(loads)
            for key, a in use.items():
                new[key] = loads[key].copy()
                new[key][t:t + d] += a
            dfs(order, k + 1, new, tot + (t * delta + f.run_s - jb.arrival_s) / n + mu * f.electricity_usd)

    for order in itertools.permutations(inst.jobs):
        dfs(order, 0, {key: np.zeros(T) for key in cap}, 0.0)
    for s in ("cpsat", "highs"):
        sched = solve_schedule(inst, s, OPT, mu=mu, time_resolution_s=delta if s == "cpsat" else None,
                               slot_s=delta if s == "highs" else None)
        check(inst, sched, mu)
        assert sched.solver.objective == pytest.approx(best, rel=1e-9)


def test_brute_force_two_jobs_hourly_prices_all_starts():
    """Two jobs, three regions, prices step at t = 300 s; every placement pair and every pair of grid starts up to the proven
    horizon (so this also checks that the horizon of P2.6 does not cut off the optimum)."""
    regions = [bo.Region("r1", "A6000", 2, 0.2, price_series=bo.PriceSeries(0, 300, (0.9, 0.1))),
               bo.Region("r2", "A6000", 2, 0.3, price_series=bo.PriceSeries(0, 300, (0.2, 0.6))),
               bo.Region("r3", "A6000", 1, 0.35)]
    inst = make(regions, [bo.Link("r1", "r2", 1.0, 10), bo.Link("r2", "r3", 1.0, 15), bo.Link("r1", "r3", 1.0, 20)],
                [job("a", 0, S=2, m=3, N=10, t=2.0, A=100.0), job("b", 50, S=3, m=3, N=5, t=2.0, A=100.0)])
    delta, mu = 50.0, 2000.0
    H = build_problem(inst, delta, mu).H
    cap = _caps(inst)
    ja, jb = inst.jobs
    best = math.inf
    # search twice the proven horizon: nothing better may lie beyond it
    ts = np.arange(0, 2 * H + 1)
    for pa, fa, ua in _distinct(inst, _all_placements(inst, ja)):
        da = math.ceil(fa.run_s / delta - 1e-12)
        ca = np.array([F.electricity_usd(inst, ja, [(b.region, b.stages) for b in pa.blocks], t * delta, fa.run_s)
                       for t in ts])
        for pb, fb, ub in _distinct(inst, _all_placements(inst, jb)):
            db = math.ceil(fb.run_s / delta - 1e-12)
            cb = np.array([F.electricity_usd(inst, jb, [(b.region, b.stages) for b in pb.blocks], t * delta,
                                             fb.run_s) for t in ts])
            together = all(ua.get(k, 0) + ub.get(k, 0) <= cap[k] for k in set(ua) | set(ub))
            TA, TB = np.meshgrid(ts, ts[1:], indexing="ij")        # b arrives at 50 s: t_b >= 1
            ok = np.ones_like(TA, dtype=bool) if together else (TA + da <= TB) | (TB + db <= TA)
            tot = ((TA * delta + fa.run_s) / 2 + (TB * delta + fb.run_s - 50) / 2
                   + mu * (ca[TA] + cb[TB]))
            best = min(best, float(tot[ok].min()))
    for s in ("cpsat", "highs"):
        sched = solve_schedule(inst, s, OPT, mu=mu, time_resolution_s=delta if s == "cpsat" else None,
                               slot_s=delta if s == "highs" else None)
        check(inst, sched, mu)
        assert sched.solver.objective == pytest.approx(best, rel=1e-9)


# ---------------------------------------------------------------------- statuses, options, front

def test_no_feasible_placement_gives_a_clear_infeasible_status():
    # 4 stages need both regions (2 GPUs each); b_j = 0.8 Gbit/s but the only link has 0.5
    inst = make([bo.Region("r1", "A6000", 2, 0.2), bo.Region("r2", "A6000", 2, 0.2)],
                [bo.Link("r1", "r2", 0.5, 10)], [job("big", S=4, A=100.0)])
    for s in ("cpsat", "highs"):
        sched = solve_schedule(inst, s, OPT)
        assert sched.solver.status == "infeasible"
        assert "big" in sched.solver.message and "no placement" in sched.solver.message
        assert sched.job("big").status == "unscheduled"
        assert bo.evaluate(inst, sched).feasible


def test_bad_arguments_raise_input_errors():
    inst = three_region_instance()
    with pytest.raises(bo.InputError, match="unknown P2 solver"):
        solve_schedule(inst, "gurobi")
    with pytest.raises(bo.InputError, match="mu"):
        solve_schedule(inst, "cpsat", mu=-1)
    with pytest.raises(bo.InputError, match="disagree"):
        solve_schedule(inst, "cpsat", time_resolution_s=10, slot_s=20)


def test_epsilon_constraint_and_warm_start():
    inst = three_region_instance()
    free = solve_schedule(inst, "cpsat", OPT, time_resolution_s=10)
    cheap = solve_schedule(inst, "cpsat", OPT, mu=1e5, time_resolution_s=10)
    check(inst, free)
    c_free = free.solver.extra["evaluator_objective_cost_usd"]
    c_cheap = cheap.solver.extra["evaluator_objective_cost_usd"]
    assert c_cheap < c_free
    cap = 0.5 * (c_free + c_cheap)
    for s in ("cpsat", "highs"):
        eps = solve_schedule(inst, s, OPT, cost_cap_usd=cap, time_resolution_s=10 if s == "cpsat" else None,
                             slot_s=10 if s == "highs" else None)
        check(inst, eps, 0.0)
        assert eps.solver.extra["evaluator_objective_cost_usd"] <= cap
        assert eps.metrics["avg_jct_s"] >= free.metrics["avg_jct_s"] - 1e-9
    warm = solve_schedule(inst, "cpsat", OPT, time_resolution_s=10, warm_start=free)
    check(inst, warm)
    assert warm.solver.objective == pytest.approx(free.solver.objective, rel=1e-9)
    wm = solve_schedule(inst, "highs", OPT, slot_s=10, warm_start=free)
    assert wm.solver.objective == pytest.approx(free.solver.objective, rel=1e-9)


def test_pareto_front_points_are_evaluator_priced_and_monotone():
    inst = three_region_instance()
    df = pareto_front(inst, "cpsat", mus=[0.0, 1e3, 1e6], options=OPT, time_resolution_s=10)
    assert list(df["status"]) == ["optimal"] * 3
    assert {"mu_s_per_usd", "avg_jct_s", "objective_cost_usd", "total_cost_usd", "gap", "nondominated"} <= set(df.columns)
    # a larger weight on cost never gives a higher cost or a lower mean JCT
    assert df["objective_cost_usd"].is_monotonic_decreasing
    assert df["avg_jct_s"].is_monotonic_increasing
    df2 = pareto_front(inst, "cpsat", epsilons=[df["objective_cost_usd"].iloc[-1]], options=OPT, time_resolution_s=10)
    assert df2["avg_jct_s"].iloc[0] <= df["avg_jct_s"].iloc[-1] + 1e-9


def test_candidate_limits_are_labelled():
    inst = three_region_instance()
    sched = solve_schedule(inst, "cpsat", OPT, time_resolution_s=10, max_blocks=2)
    check(inst, sched)
    assert sched.solver.extra["candidate_set_complete"] is False
    assert sched.solver.extra["optimality_scope"] == "over the candidate set"
    assert all(len(e.blocks) <= 2 for e in sched.jobs)
    # job b (6 stages) cannot fit one region (4 GPUs at most): with one block per job nothing is feasible
    one = solve_schedule(inst, "highs", OPT, slot_s=10, max_blocks=1)
    assert one.solver.status == "infeasible" and "'b'" in one.solver.message


def test_oversized_milp_ends_in_a_clear_error_status_or_the_bracket():
    from bace_opt.exact.p2.bound import solve_or_bracket
    inst = three_region_instance()
    opts = SolveOptions(time_limit_s=4, threads=1, backend_options={"max_nonzeros": 100})    # the bracket spends it
    sched = solve_schedule(inst, "highs", opts, slot_s=10)
    assert sched.solver.status == "error" and sched.solver.extra["too_large"]
    assert "too large" in sched.solver.message and "slot_s" in sched.solver.message
    assert all(e.status == "unscheduled" for e in sched.jobs)
    # every candidate set was tried, most complete first; none fits 100 nonzeros
    steps = sched.solver.extra["candidate_steps"]
    assert steps[0]["candidates"] == "all placements" and not any(s.get("used") for s in steps)
    # solve_or_bracket (bace-opt solve): a problem too large for the exact P2 gives the bracket, every job done
    br = solve_or_bracket(inst, "highs", opts, slot_s=10)
    assert all(e.status == "done" for e in br.jobs) and bo.evaluate(inst, br).feasible
    x = br.solver.extra
    assert br.solver.name == "list-schedule" and x["lower_bound_certified"] and x["exact_too_large"]
    assert br.solver.bound == x["lower_bound"] <= x["upper_bound"] and "continuous-time P2" in x["bound_is_for"]
