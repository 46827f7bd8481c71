"""The evaluator's network, stall, price and cost-reading metrics, and the job statuses, on tiny instances
built here with every expected value computed by hand (issue 9 items 2 and 5, issue 13 item 2).

Shared job shape unless stated: S = 4 stages, m = 8 micro-batches, N = 10 iterations, t = 0.5 s, A = 50 MB:
tau = 0.5 s, b = 8 * 50 / 1000 / 0.5 = 0.8 Gbit/s, T_iter = (8 + 4 - 1) * 0.5 = 5.5 s (links of 0 ms), R = 55 s,
power 4 GPUs * 300 W = 1.2 kW.
"""
import copy
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

import bace_opt as bo
from bace_opt.errors import InputError
from bace_opt.evaluate import COST_READINGS
from bace_opt.schedule import JobPlan

G = bo.GpuType("G", tflops=100.0, memory_gb=48, power_w=300)                    # idle absent: 0.25 * 300 = 75 W
Q = bo.GpuType("Q", tflops=100.0, memory_gb=48, power_w=400, idle_power_w=50)


def make(regions, links, jobs, **kw):
    return bo.Instance(name="t", gpu_types={"G": G, "Q": Q}, reference_gpu="G", regions=regions, links=links,
                       jobs=jobs, **kw).validated()


def job(name, arrival=0.0, S=4, m=8, N=10, t=0.5, A=50.0):
    return bo.Job(name, arrival, S, m, N, t, A)


def plan(name, start, blocks, hops=()):
    return JobPlan(name, "done", start, tuple(bo.Block(r, n) for r, n in blocks),
                   tuple(bo.Hop(tuple(rt), w) for rt, w in hops))


def priced(inst, plans):
    s = bo.make_schedule(inst, plans, "test")
    rep = bo.evaluate(inst, s)
    assert rep.feasible, rep.summary()
    assert rep.metrics == s.metrics
    return s, rep.metrics


def three_regions():
    return make([bo.Region("r1", "G", 8, 0.2), bo.Region("r2", "G", 8, 0.2), bo.Region("r3", "G", 8, 0.2)],
                [bo.Link("r1", "r2", 10.0, 0.0), bo.Link("r1", "r3", 10.0, 0.0)], [job("a"), job("b")])


# ---------------------------------------------------------------------- link utilisation

def test_two_jobs_sharing_a_link():
    inst = three_regions()
    # a on [0, 55) reserves 4 Gbit/s on r1-r2; b on [20, 75) reserves 2 (both above b = 0.8: no stall)
    _, m = priced(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 4.0)]),
                         plan("b", 20.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 2.0)])])
    # load 4 on [0, 20), 6 on [20, 55), 2 on [55, 75): peak 6 / 10; area 80 + 210 + 40 = 330 Gbit/s*s
    # makespan window [0, 75]: mean 330 / (10 * 75) = 0.44 on the one used link; 0.22 over both links
    assert m["makespan_s"] == pytest.approx(75.0)
    assert m["peak_link_utilisation"] == pytest.approx(0.6)
    assert m["mean_link_utilisation"] == pytest.approx(0.44)
    assert m["mean_link_utilisation_all_links"] == pytest.approx(0.22)
    assert m["links_used"] == 1
    assert m["link_utilisation"] == {"r1<->r2": pytest.approx({"peak": 0.6, "mean": 0.44})}
    assert m["total_stall_s"] == 0.0 and m["jobs_comm_bound"] == 0


def test_link_released_and_reserved_at_one_instant_is_not_a_peak():
    inst = three_regions()
    # b starts the instant a finishes (half-open intervals): the load never exceeds 8 Gbit/s
    _, m = priced(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 8.0)]),
                         plan("b", 55.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 8.0)])])
    assert m["peak_link_utilisation"] == pytest.approx(0.8)
    assert m["mean_link_utilisation"] == pytest.approx(0.8)    # busy over the whole window [0, 110]


def test_a_relayed_route_loads_every_link_and_single_region_jobs_none():
    inst = three_regions()
    # a in r2 and r3 over the route r2-r1-r3: 5 Gbit/s on both links for [0, 55); b alone in r1
    _, m = priced(inst, [plan("a", 0.0, [("r2", 2), ("r3", 2)], [(("r2", "r1", "r3"), 5.0)]),
                         plan("b", 0.0, [("r1", 4)])])
    assert m["links_used"] == 2
    assert m["peak_link_utilisation"] == pytest.approx(0.5)
    assert m["mean_link_utilisation"] == pytest.approx(0.5) == m["mean_link_utilisation_all_links"]
    _, m0 = priced(inst, [plan("a", 0.0, [("r2", 4)]), plan("b", 0.0, [("r1", 4)])])
    assert m0["peak_link_utilisation"] == 0.0 and m0["mean_link_utilisation"] == 0.0 and m0["links_used"] == 0


def test_overloaded_link_shows_above_one():
    inst = three_regions()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 7.0)]),
                                plan("b", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 7.0)])], "test")
    rep = bo.evaluate(inst, s)
    assert not rep.feasible and {v.rule for v in rep.violations} == {3}
    assert rep.metrics["peak_link_utilisation"] == pytest.approx(1.4)


# ---------------------------------------------------------------------- stall time

def test_stalled_hop():
    inst = make([bo.Region("r1", "G", 4, 0.2), bo.Region("r2", "G", 4, 0.2)], [bo.Link("r1", "r2", 10.0, 5.0)],
                [job("a", A=100.0), job("b")])
    # a: b_a = 8 * 100 / 1000 / 0.5 = 1.6; reserve 0.4 -> c = 2.0 s: T_iter = 11 * 2 + 2 * 5 / 1000 = 22.01 s,
    # R = 220.1 s; with 1.6 reserved: T_iter = 11 * 0.5 + 0.01 = 5.51 s, R = 55.1 s; stall = 165 s.
    # b reserves exactly b_b = 0.8: not stalled.
    s, m = priced(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 0.4)]),
                         plan("b", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 0.8)])])
    assert s.job("a").finish_s == pytest.approx(220.1)
    assert m["total_stall_s"] == pytest.approx(165.0)
    assert m["jobs_comm_bound"] == 1
    rep = bo.evaluate(inst, s)
    assert rep.figures["a"].stall_s == pytest.approx(165.0) and rep.figures["b"].stall_s == 0.0
    assert rep.to_frame().loc["a", "stall_s"] == pytest.approx(165.0)


def test_stall_under_a_pipeline_iteration_model_is_zero_without_a_short_hop():
    inst = make([bo.Region("r1", "G", 4, 0.2), bo.Region("r2", "G", 4, 0.2)], [bo.Link("r1", "r2", 10.0, 5.0)],
                [job("a", A=100.0), job("b")])
    ps = [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 0.4)]),
          plan("b", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 3.0)])]
    s = bo.make_schedule(inst, ps, "test", iteration_model="1f1b")
    rep = bo.evaluate(inst, s)
    assert rep.feasible, rep.summary()
    assert rep.figures["b"].stall_s == 0.0
    fast = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 1.6)])], "test",
                            iteration_model="1f1b")
    # the stall is exactly the run time lost against the same placement at w = b_j
    assert rep.figures["a"].stall_s == pytest.approx(rep.figures["a"].run_s - fast.job("a").finish_s)
    assert rep.figures["a"].stall_s > 0


# ---------------------------------------------------------------------- energy-weighted price, idle, readings

def test_energy_weighted_price():
    inst = make([bo.Region("r1", "G", 8, 0.2), bo.Region("r2", "G", 8, 0.3, pue=1.5)],
                [bo.Link("r1", "r2", 10.0, 0.0)],
                [job("a"), job("b", S=2, m=10)])
    # a in r1: 1.2 kW * 55 s; b in r2: T_iter = 11 * 0.5, R = 55 s, 2 * 300 * 1.5 = 0.9 kW
    _, m = priced(inst, [plan("a", 0.0, [("r1", 4)]), plan("b", 0.0, [("r2", 2)])])
    e_a, e_b = 1.2 * 55 / 3600, 0.9 * 55 / 3600
    assert m["total_energy_kwh"] == pytest.approx(e_a + e_b)
    assert m["total_electricity_usd"] == pytest.approx(0.2 * e_a + 0.3 * e_b)
    assert m["energy_weighted_price_usd_per_kwh"] == pytest.approx((0.2 * 1.2 + 0.3 * 0.9) / 2.1)


def test_idle_gpus_of_every_region_over_the_makespan():
    # r1: 8 G GPUs (idle 75 W by default), 0.2 USD/kWh; r2: 4 Q GPUs (idle 50 W), PUE 1.5, 0.1 USD/kWh;
    # t: a transit node (no GPUs, no idle energy)
    inst = make([bo.Region("r1", "G", 8, 0.2), bo.Region("r2", "Q", 4, 0.1, pue=1.5), bo.Region("t", "G", 0, 0.9)],
                [bo.Link("r1", "t", 10.0, 0.0), bo.Link("t", "r2", 10.0, 0.0)], [job("a", arrival=10.0)])
    # a arrives and starts at 10 in r1 (4 GPUs): window [10, 65], 55 s
    _, m = priced(inst, [plan("a", 10.0, [("r1", 4)])])
    idle_r1 = (8 * 55 - 4 * 55) * 0.075            # GPU-s x kW
    idle_r2 = 4 * 55 * 0.050 * 1.5
    assert m["idle_energy_kwh"] == pytest.approx((idle_r1 + idle_r2) / 3600)
    assert m["idle_electricity_usd"] == pytest.approx((idle_r1 * 0.2 + idle_r2 * 0.1) / 3600)
    assert m["total_electricity_incl_idle_usd"] == pytest.approx(
        m["total_electricity_usd"] + m["idle_electricity_usd"])
    assert m["total_electricity_usd"] == pytest.approx(1.2 * 55 / 3600 * 0.2)


def test_idle_with_an_hourly_price_series():
    series = bo.PriceSeries(start_s=0.0, step_s=3600.0, usd_per_kwh=(0.1, 0.5))
    inst = make([bo.Region("r1", "G", 2, 0.3, price_series=series)], [], [job("a", S=1, m=1, N=100, t=72.0)])
    # a: 1 GPU for R = 100 * 72 = 7200 s = two hours; the other GPU idles at 75 W through both hours
    _, m = priced(inst, [plan("a", 0.0, [("r1", 1)])])
    assert m["total_electricity_usd"] == pytest.approx(0.3 * (0.1 + 0.5))
    assert m["idle_electricity_usd"] == pytest.approx(0.075 * (0.1 + 0.5))
    assert m["idle_energy_kwh"] == pytest.approx(0.075 * 2)
    assert m["energy_weighted_price_usd_per_kwh"] == pytest.approx(0.3)


def test_the_three_money_figures_and_the_cost_readings():
    inst = make([bo.Region("r1", "G", 4, 0.2), bo.Region("r2", "G", 4, 0.2)],
                [bo.Link("r1", "r2", 10.0, 0.0, egress_usd_per_gb=0.05)], [job("a")])
    s, m = priced(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 0.8)])])
    egress = 10 * 8 * 2 * 50 / 1000 * 0.05                  # N m 2 A / 1000 GB x 0.05 USD/GB = 0.4 USD
    assert m["total_egress_usd"] == pytest.approx(egress)
    assert m["total_cost_usd"] == pytest.approx(m["total_electricity_usd"] + egress)
    assert [COST_READINGS[r][0] for r in "abc"] == ["total_electricity_usd", "total_electricity_incl_idle_usd",
                                                    "total_cost_usd"]
    assert all(COST_READINGS[r][0] in m for r in "abc")
    df = s.to_frame()
    assert df.loc["a", "cost_usd"] == pytest.approx(df.loc["a", "electricity_usd"] + df.loc["a", "egress_usd"])


# ---------------------------------------------------------------------- statuses

def test_not_started_is_not_a_rejection_and_arrival_is_shown():
    inst = three_regions()
    s, m = priced(inst, [plan("a", 0.0, [("r1", 4)]), JobPlan("b", "not_started")])
    assert m["jobs_not_started"] == 1 and m["jobs_blocked"] == 0 and m["blocking_probability"] == 0.0
    s2, m2 = priced(inst, [plan("a", 0.0, [("r1", 4)]), JobPlan("b", "blocked")])
    assert m2["jobs_blocked"] == 1 and m2["blocking_probability"] == 0.5 and m2["jobs_not_started"] == 0
    df = bo.evaluate(inst, s).to_frame()
    assert df.loc["b", "status"] == "not_started" and df.loc["b", "arrival_s"] == 0.0
    again = bo.Schedule.from_dict(json.loads(s.to_json()))
    assert again.job("b").status == "not_started" and bo.evaluate(inst, again).feasible


# ---------------------------------------------------------------------- older schedule files

NEW_KEYS = ("idle_energy_kwh", "idle_electricity_usd", "total_electricity_incl_idle_usd",
            "energy_weighted_price_usd_per_kwh", "total_stall_s", "jobs_comm_bound", "jobs_not_started",
            "peak_link_utilisation", "mean_link_utilisation", "mean_link_utilisation_all_links", "links_used",
            "link_utilisation")


def test_schedule_file_without_the_new_metrics_still_evaluates():
    inst = three_regions()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 4.0)]),
                                JobPlan("b", "blocked")], "sim-policy")
    d = s.to_dict()
    for k in NEW_KEYS:
        d["metrics"].pop(k)
    old = bo.Schedule.from_dict(d)
    rep = bo.evaluate(inst, old)
    assert rep.feasible, rep.summary()
    assert rep.metrics["peak_link_utilisation"] == pytest.approx(0.4)


def test_old_p1_file_with_blocked_jobs_loads_as_not_started():
    inst = three_regions()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 4)]), JobPlan("b", "not_started")], "exact-placement-highs",
                         meta={"problem": "placement", "t0": 0.0})
    d = s.to_dict()
    # as written before `not_started` existed: status blocked, counted in jobs_blocked and blocking_probability
    d["jobs"][1]["status"] = "blocked"
    for k in NEW_KEYS:
        d["metrics"].pop(k)
    d["metrics"].update(jobs_blocked=1, blocking_probability=0.5)
    old = bo.Schedule.from_dict(d)
    assert old.job("b").status == "not_started"
    rep = bo.evaluate(inst, old)
    assert rep.feasible, rep.summary()
    assert rep.metrics["jobs_blocked"] == 0 and rep.metrics["jobs_not_started"] == 1
    # a wrong old-style count is still caught
    d["metrics"]["jobs_blocked"] = 2
    bad = bo.evaluate(inst, bo.Schedule.from_dict(d))
    assert [v.message for v in bad.violations] == ["metrics.jobs_blocked: reported 2, recomputed 1"]


def test_wrong_reported_new_metrics_are_named():
    inst = three_regions()
    s = bo.make_schedule(inst, [plan("a", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 4.0)]),
                                plan("b", 0.0, [("r3", 4)])], "test")
    d = s.to_dict()
    d["metrics"]["link_utilisation"]["r1<->r2"]["peak"] = 0.9
    d["metrics"]["total_stall_s"] = 3.0
    d["metrics"]["link_utilisation"]["r1<->r3"] = {"peak": 0.1, "mean": 0.1}
    msgs = sorted(v.message for v in bo.evaluate(inst, bo.Schedule.from_dict(d)).violations)
    assert msgs == ["metrics.link_utilisation.r1<->r2.peak: reported 0.9, recomputed 0.4",
                    "metrics.link_utilisation.r1<->r3: reported {'peak': 0.1, 'mean': 0.1}, recomputed -",
                    "metrics.total_stall_s: reported 3, recomputed 0"]


# ---------------------------------------------------------------------- the idle_power_w field

def test_idle_power_field_round_trips_and_defaults():
    from test_instance_validation import base
    d = base()
    inst = bo.Instance.from_dict(d)
    assert inst.gpu_types["A6000"].idle_power_w is None and inst.gpu_types["A6000"].idle_w == 75.0
    assert "idle_power_w" not in inst.to_dict()["gpu_types"]["A6000"]
    d["gpu_types"]["A6000"]["idle_power_w"] = 60
    inst = bo.Instance.from_dict(d)
    assert inst.gpu_types["A6000"].idle_w == 60.0
    assert bo.Instance.from_dict(json.loads(inst.to_json())).to_json() == inst.to_json()


@pytest.mark.parametrize("value, message", [
    (-1, "gpu_types.A6000.idle_power_w: must be >= 0, got -1"),
    (400, "gpu_types.A6000.idle_power_w: must be <= power_w (300 W), got 400"),
    (None, "gpu_types.A6000.idle_power_w: must be a number, got null"),
    ("low", 'gpu_types.A6000.idle_power_w: must be a number, got "low"'),
])
def test_idle_power_field_is_validated(value, message):
    from test_instance_validation import base
    d = copy.deepcopy(base())
    d["gpu_types"]["A6000"]["idle_power_w"] = value
    with pytest.raises(InputError) as e:
        bo.Instance.from_dict(d)
    assert e.value.problems == [message]


# ---------------------------------------------------------------------- one vocabulary in the CLI

MONEY_LINES = ("total_electricity_usd: ", "total_egress_usd: ", "total_cost_usd: ",
               "total_electricity_incl_idle_usd: ")


def test_evaluate_simulate_and_solve_print_the_same_money_names(cli, tmp_path):
    inst = "instances/tiny-2r-2j.json"
    sim, p1 = tmp_path / "sim.json", tmp_path / "p1.json"
    r_sim = cli("simulate", inst, "--policy", "bace-pipe", "-o", sim)
    r_eval = cli("evaluate", inst, sim)
    r_solve = cli("solve", inst, "--problem", "placement", "--time-limit", "30", "-o", p1)
    r_eval_p1 = cli("evaluate", inst, p1)
    for r in (r_sim, r_eval, r_solve, r_eval_p1):
        assert r.returncode == 0, r.stderr
        lines = [ln.strip() for ln in r.stdout.splitlines()]
        for key in MONEY_LINES:
            assert sum(ln.startswith(key) for ln in lines) == 1, (key, r.stdout)
    # the same schedule: solve and evaluate print the same figures under the same names
    pick = {ln.strip().split("   #")[0] for ln in r_solve.stdout.splitlines() if ln.strip().startswith(MONEY_LINES)}
    assert pick <= {ln.split("   #")[0] for ln in r_eval_p1.stdout.splitlines()}
    assert "P1 cost objective (electricity only" in r_solve.stdout
    assert "peak_link_utilisation: " in r_eval.stdout and "total_stall_s: " in r_eval.stdout
    data = json.loads(cli("evaluate", inst, sim, "--json").stdout)
    assert {"link_utilisation", "total_stall_s", "total_electricity_incl_idle_usd"} <= set(data["metrics"])


@settings(max_examples=50, deadline=None)
@given(idle=st.floats(0.0, 300.0, allow_nan=False), pue=st.floats(1.0, 2.0, allow_nan=False))
def test_idle_power_round_trips_and_scales_reading_b_linearly(idle, pue):
    from test_instance_validation import base
    d = copy.deepcopy(base())
    d["gpu_types"]["A6000"]["idle_power_w"] = idle
    d["regions"][0]["pue"] = pue
    inst = bo.Instance.from_dict(d)
    assert bo.Instance.from_dict(json.loads(inst.to_json())) == inst
    s = bo.make_schedule(inst, [plan("j1", 0.0, [("a", 4)])], "test")
    m = s.metrics
    # regions a (8 GPUs, 4 busy) and b (8 GPUs, PUE 1.2, hourly 0.2/0.3) idle over the job's run R
    run = s.job("j1").finish_s
    a_kwh = 4 * run * idle * pue / 1000 / 3600
    b_usd = 8 * idle * 1.2 / 1000 / 3600 * (0.2 * min(run, 3600) + 0.3 * max(0.0, run - 3600))
    assert m["idle_energy_kwh"] == pytest.approx(a_kwh + 8 * run * idle * 1.2 / 1000 / 3600, abs=1e-12)
    assert m["idle_electricity_usd"] == pytest.approx(a_kwh * 0.2 + b_usd, abs=1e-12)
