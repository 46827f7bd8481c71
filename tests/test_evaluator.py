"""Evaluator tests with hand-computed expected values, and one test per kind of violation.

Every instance is built here so the numbers can be checked by hand against system-model.md.
"""
import math

import pytest

import bace_opt as bo
from bace_opt.schedule import JobPlan

A6000 = bo.GpuType("A6000", tflops=154.8, memory_gb=48, power_w=300)
HALF = bo.GpuType("HALF", tflops=77.4, memory_gb=48, power_w=200)   # speed factor 0.5


def make(regions, links, jobs, **kw):
    return bo.Instance(name="t", gpu_types={"A6000": A6000, "HALF": HALF}, reference_gpu="A6000",
                       regions=regions, links=links, jobs=jobs, **kw).validated()


def job(name="j", arrival=0.0, S=4, m=8, N=10, t=0.5, A=50.0, g=1):
    return bo.Job(name, arrival, S, m, N, t, A, gpus_per_stage=g)


def plan(name, start, blocks, hops=()):
    return JobPlan(name, "done", start, tuple(bo.Block(r, n) for r, n in blocks),
                   tuple(bo.Hop(tuple(rt), w) for rt, w in hops))


def figures(inst, p):
    s = bo.make_schedule(inst, [p], "test")
    rep = bo.evaluate(inst, s)
    assert rep.feasible, rep.summary()
    return s.job(p.name), rep


def test_one_job_one_region():
    inst = make([bo.Region("r1", "A6000", 8, 0.2)], [], [job()])
    e, rep = figures(inst, plan("j", 0.0, [("r1", 4)]))
    # T_iter = (m + S - 1) * tau = 11 * 0.5; R = 10 * 5.5 = 55 s; power = 4 * 300 W = 1.2 kW
    assert e.iteration_s == pytest.approx(5.5, rel=1e-12)
    assert e.finish_s == pytest.approx(55.0, rel=1e-12)
    assert e.energy_kwh == pytest.approx(1.2 * 55 / 3600, rel=1e-12)
    assert e.electricity_usd == pytest.approx(1.2 * 55 / 3600 * 0.2, rel=1e-12)
    assert e.egress_usd == 0.0
    assert rep.metrics["avg_jct_s"] == pytest.approx(55.0)
    assert rep.metrics["jobs_done"] == 1


def test_two_regions_with_hop_and_slower_gpu():
    # r2 has GPUs at half speed: tau = 0.5 / 0.5 = 1.0 s; b = 8 * 100 / 1000 / 1.0 = 0.8 Gbit/s
    inst = make([bo.Region("r1", "A6000", 4, 0.2, pue=1.5), bo.Region("r2", "HALF", 4, 0.3)],
                [bo.Link("r1", "r2", 10.0, 20.0)], [job(S=6, m=8, N=100, t=0.5, A=100.0)])
    e, rep = figures(inst, plan("j", 10.0, [("r1", 3), ("r2", 3)], [(("r1", "r2"), 0.8)]))
    f = rep.figures["j"]
    assert f.tau_s == pytest.approx(1.0)
    assert f.demand_gbps == pytest.approx(0.8)
    assert not f.comm_bound
    # T_iter = 13 * 1.0 + 2 * 20 / 1000 = 13.04; R = 1304 s
    assert e.iteration_s == pytest.approx(13.04, rel=1e-12)
    assert e.finish_s == pytest.approx(10.0 + 1304.0, rel=1e-12)
    # power: r1 3 * 300 * 1.5 = 1350 W, r2 3 * 200 = 600 W
    assert e.energy_kwh == pytest.approx(1.95 * 1304 / 3600, rel=1e-12)
    assert e.electricity_usd == pytest.approx((1.35 * 0.2 + 0.6 * 0.3) * 1304 / 3600, rel=1e-12)
    assert rep.metrics["avg_jct_s"] == pytest.approx(1314.0)
    assert rep.metrics["avg_wait_s"] == pytest.approx(10.0)


def test_communication_bound_hop():
    inst = make([bo.Region("r1", "A6000", 4, 0.2), bo.Region("r2", "A6000", 4, 0.2)],
                [bo.Link("r1", "r2", 10.0, 5.0)], [job(S=4, m=8, N=10, t=0.5, A=100.0)])
    # b = 8 * 100 / 1000 / 0.5 = 1.6; reserve 0.4 -> c = 0.8 / 0.4 = 2.0 s > tau = 0.5
    e, rep = figures(inst, plan("j", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 0.4)]))
    assert rep.figures["j"].comm_bound
    assert e.iteration_s == pytest.approx(11 * 2.0 + 2 * 5 / 1000, rel=1e-12)
    assert e.finish_s == pytest.approx(10 * (22.01), rel=1e-12)


def test_hourly_price_series_across_hour_boundaries():
    series = bo.PriceSeries(start_s=0.0, step_s=3600.0, usd_per_kwh=(0.1, 0.5, 0.3))
    # run time: S=1, m=1, N=7200 iterations of t=1 s -> R = 7200 s; start at 1800 -> [1800, 9000)
    inst = make([bo.Region("r1", "A6000", 4, 0.2, price_series=series)], [],
                [job(S=1, m=1, N=7200, t=1.0, A=1.0)])
    e, _ = figures(inst, plan("j", 1800.0, [("r1", 1)]))
    assert e.finish_s == pytest.approx(9000.0)
    # 0.3 kW; hours: [1800,3600) at 0.1, [3600,7200) at 0.5, [7200,9000) at 0.3
    expected = 0.3 * (1800 * 0.1 + 3600 * 0.5 + 1800 * 0.3) / 3600
    assert e.electricity_usd == pytest.approx(expected, rel=1e-12)
    # past the series' end the last value holds; before its start, the first
    e2, _ = figures(inst, plan("j", 10800.0, [("r1", 1)]))
    assert e2.electricity_usd == pytest.approx(0.3 * 7200 * 0.3 / 3600, rel=1e-12)


def test_price_series_before_start_uses_first_value():
    series = bo.PriceSeries(start_s=3600.0, step_s=3600.0, usd_per_kwh=(0.4, 0.2))
    inst = make([bo.Region("r1", "A6000", 4, 0.2, price_series=series)], [],
                [job(S=1, m=1, N=7200, t=1.0, A=1.0)])
    e, _ = figures(inst, plan("j", 0.0, [("r1", 1)]))
    # [0,3600) before start: 0.4 ; [3600,7200): 0.4
    assert e.electricity_usd == pytest.approx(0.3 * 7200 * 0.4 / 3600, rel=1e-12)


def test_egress_over_a_relayed_route():
    inst = make([bo.Region("r1", "A6000", 4, 0.2), bo.Region("t", "A6000", 0, 0.2),
                 bo.Region("r2", "A6000", 4, 0.2)],
                [bo.Link("r1", "t", 10.0, 7.0, egress_usd_per_gb=0.02),
                 bo.Link("t", "r2", 10.0, 3.0, egress_usd_per_gb=0.05),
                 bo.Link("r1", "r2", 0.5, 1.0, egress_usd_per_gb=0.09)],
                [job(S=4, m=8, N=10, t=0.5, A=100.0)])
    e, rep = figures(inst, plan("j", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "t", "r2"), 1.6)]))
    # egress = N * m * 2 * A / 1000 GB * (0.02 + 0.05) = 10 * 8 * 0.2 * 0.07 = 1.12 USD
    assert e.egress_usd == pytest.approx(1.12, rel=1e-12)
    # latency of the relayed route: 7 + 3 = 10 ms
    assert e.iteration_s == pytest.approx(11 * 0.5 + 2 * 10 / 1000, rel=1e-12)
    assert rep.metrics["total_cost_usd"] == pytest.approx(e.electricity_usd + 1.12)


# ---------------------------------------------------------------------- violations

def two_job_instance(cap=8, bw=10.0):
    return make([bo.Region("r1", "A6000", cap, 0.2), bo.Region("r2", "A6000", cap, 0.2),
                 bo.Region("r3", "A6000", cap, 0.2)],
                [bo.Link("r1", "r2", bw, 10.0), bo.Link("r2", "r3", bw, 10.0)],
                [job("a", S=6, A=100.0), job("b", arrival=5.0, S=6, A=100.0)])


def evaluate_plans(inst, plans):
    s = bo.make_schedule(inst, plans, "test", check=False)
    return bo.evaluate(inst, s)


def test_gpu_overuse_only_during_overlap():
    inst = two_job_instance()
    # a: 6 GPUs in r1 on [0, 65); b: 6 GPUs in r1 from 30 -> 12 > 8 only on [30, 65)
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 6)]), plan("b", 30.0, [("r1", 6)])])
    assert not rep.feasible
    (v,) = rep.violations
    assert v.rule == 2 and v.resource == "region r1"
    assert v.t0 == pytest.approx(30.0) and v.t1 == pytest.approx(65.0)
    assert "12 GPUs in use > 8" in v.message and "a, b" in v.message
    # back to back (b starts when a finishes): intervals are half-open, feasible
    fa = rep.figures["a"].finish_s
    rep2 = evaluate_plans(inst, [plan("a", 0.0, [("r1", 6)]), plan("b", fa, [("r1", 6)])])
    assert rep2.feasible, rep2.summary()


def test_link_direction_over_capacity():
    inst = two_job_instance(bw=3.0)
    hop = [(("r1", "r2"), 1.6)]
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 3), ("r2", 3)], hop),
                                plan("b", 5.0, [("r1", 3), ("r2", 3)], hop)])
    assert not rep.feasible
    assert {v.rule for v in rep.violations} == {3}
    assert {v.resource for v in rep.violations} == {"link r1->r2", "link r2->r1"}
    assert all(v.t0 == pytest.approx(5.0) for v in rep.violations)
    # one alone fits
    rep2 = evaluate_plans(inst, [plan("a", 0.0, [("r1", 3), ("r2", 3)], hop), JobPlan("b", "blocked")])
    assert rep2.feasible, rep2.summary()


def test_route_that_is_not_a_path_of_links():
    inst = two_job_instance()
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 3), ("r3", 3)], [(("r1", "r3"), 1.6)]),
                                JobPlan("b", "blocked")])
    assert not rep.feasible
    assert any(v.rule == 1 and "'r1'-'r3', which is not a link" in v.message for v in rep.violations)
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 3), ("r3", 3)], [(("r1", "r2"), 1.6)]),
                                JobPlan("b", "blocked")])
    assert any(v.rule == 1 and "must run from 'r1' to 'r3'" in v.message for v in rep.violations)
    # the relayed route over existing links is fine
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 3), ("r3", 3)], [(("r1", "r2", "r3"), 1.6)]),
                                JobPlan("b", "blocked")])
    assert rep.feasible, rep.summary()


def test_start_before_arrival():
    inst = two_job_instance()
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 6)]), plan("b", 4.0, [("r2", 6)])])
    assert [v.rule for v in rep.violations] == [1]
    assert "before its arrival at 5 s" in rep.violations[0].message


def test_stage_count_and_hop_count_are_checked():
    inst = two_job_instance()
    rep = evaluate_plans(inst, [plan("a", 0.0, [("r1", 5)]), plan("b", 5.0, [("r1", 3), ("r2", 3)])])
    msgs = " | ".join(v.message for v in rep.violations)
    assert "blocks hold 5 stages, the job has 6" in msgs
    assert "2 blocks need 1 hops, got 0" in msgs


def test_wrong_reported_figures_are_named():
    inst = two_job_instance()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 6)]), JobPlan("b", "blocked")], "test")
    good = s.to_dict()
    bad = s.to_dict()
    bad["jobs"][0]["energy_kwh"] *= 1.01
    bad["jobs"][0]["finish_s"] += 1.0
    bad["metrics"]["total_electricity_usd"] = 0.0
    rep = bo.evaluate(inst, bo.Schedule.from_dict(bad))
    assert not rep.feasible
    msgs = [v.message for v in rep.violations if v.rule == 4]
    assert any("reported energy_kwh" in m for m in msgs)
    assert any("reported finish_s" in m for m in msgs)
    assert any("metrics.total_electricity_usd" in m for m in msgs)
    assert bo.evaluate(inst, bo.Schedule.from_dict(good)).feasible


def test_missing_and_duplicate_jobs():
    inst = two_job_instance()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 6)])], "test")   # b becomes unscheduled
    assert s.job("b").status == "unscheduled"
    d = s.to_dict()
    d["jobs"] = [d["jobs"][0], d["jobs"][0]]
    rep = bo.evaluate(inst, bo.Schedule.from_dict(d))
    msgs = " | ".join(v.message for v in rep.violations)
    assert "'a' appears more than once" in msgs and "'b' of the instance is missing" in msgs


def test_make_schedule_refuses_invalid_plans():
    inst = two_job_instance()
    with pytest.raises(ValueError, match="before its arrival"):
        bo.make_schedule(inst, [plan("b", 0.0, [("r1", 6)])], "buggy-method")


def test_schedule_json_round_trip_and_frame(tmp_path):
    inst = two_job_instance()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 3), ("r3", 3)], [(("r1", "r2", "r3"), 1.6)]),
                                JobPlan("b", "blocked")], "test",
                         solver=bo.SolverInfo("highs", "optimal", 1.0, 1.0, 0.0, 0.5))
    path = tmp_path / "s.json"
    s.save(path)
    s2 = bo.load_schedule(path)
    assert s2 == s
    df = s2.to_frame()
    assert list(df.index) == ["a", "b"]
    assert df.loc["a", "regions"] == "r1:3 > r3:3"
    assert bo.evaluate(inst, s2).to_frame().loc["a", "jct_s"] == pytest.approx(s.job("a").finish_s)


def test_metrics_over_done_jobs_and_blocking_probability():
    inst = two_job_instance()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 6)]), JobPlan("b", "blocked")], "test")
    m = s.metrics
    assert m["jobs_done"] == 1 and m["jobs_blocked"] == 1
    assert m["blocking_probability"] == 0.5
    assert m["makespan_s"] == pytest.approx(s.job("a").finish_s)
    assert math.isclose(m["total_cost_usd"], m["total_electricity_usd"] + m["total_egress_usd"])


def test_iteration_model_from_the_pipeline_layer():
    """With a pipeline schedule kind as the iteration model, the evaluator and the simulator use the
    layer's makespan; the schedule states the model in its meta, and evaluate reads it back."""
    from bace_opt.pipeline import pipeline_iteration_s
    inst = make([bo.Region("r1", "A6000", 4, 0.2), bo.Region("r2", "A6000", 4, 0.2)],
                [bo.Link("r1", "r2", 10.0, 40.0)], [job(S=4, m=8, N=10, t=0.5, A=100.0)])
    p = plan("j", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 1.6)])
    s = bo.make_schedule(inst, [p], "test", iteration_model="1f1b")
    assert s.meta["iteration_model"] == "1f1b"
    it = pipeline_iteration_s(inst, "j", p.blocks, p.hops, kind="1f1b").iteration_s
    assert s.job("j").iteration_s == pytest.approx(it, rel=1e-12)
    assert s.job("j").iteration_s != pytest.approx(bo.make_schedule(inst, [p], "t").job("j").iteration_s)
    assert bo.evaluate(inst, bo.Schedule.from_dict(s.to_dict())).feasible
    # the analytic evaluation of the same schedule flags the reported figures
    rep = bo.evaluate(inst, s, iteration_model="analytic")
    assert not rep.feasible and any("reported iteration_s" in v.message for v in rep.violations)
    sim = bo.simulate(inst, policy="bace-pipe", iteration_model="greedy")
    assert sim.meta["iteration_model"] == "greedy" and bo.evaluate(inst, sim).feasible
