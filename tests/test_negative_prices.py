"""Negative electricity prices, as real day-ahead markets have them: accepted (constant and hourly), exact
models stay exact, the simulator runs.

The prices are derived numbers from ../shared/data/green_dcc/electricity_price_usd_mwh_hourly_2023_wide.csv
(ENTSO-E day-ahead, via green-dcc): zones DE-LU and NL on 2023-07-02, 00:00-23:00 UTC, USD/MWh / 1000 =
USD/kWh, wholesale (no retail adder).  16 of DE-LU's 24 hours are negative, down to -0.484 USD/kWh."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from bace_opt.evaluate import evaluate
from bace_opt.exact import solve
from bace_opt.instance import GpuType, Instance, Job, Link, PriceSeries, Region, load_instance
from bace_opt.sim import simulate
from bace_opt.solvers import registry
from bace_opt.solvers.base import SolveOptions

DE_LU = (1.713, 0.005, -0.016, -0.043, -0.054, -0.296, -1.859, -9.71, -28.056, -72.8, -143.364, -234.322,
         -413.232, -484.399, -281.916, -85.883, -22.194, -0.636, 39.83, 83.355, 97.262, 97.516, 81.944, 59.001)
NL = (1.713, 0.005, -0.016, -0.043, -0.059, -0.307, -1.875, -10.706, -41.435, -168.608, -378.516, -511.647,
      -538.82, -538.82, -362.297, -111.843, -22.194, -0.609, 39.862, 83.345, 97.246, 97.516, 81.944, 59.001)
SOURCE = ("green_dcc electricity_price_usd_mwh_hourly_2023_wide.csv, DE-LU and NL, 2023-07-02 UTC, "
          "USD/MWh / 1000")
DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "green_dcc"
GT = {"A6000": GpuType("A6000", 100.0, 48, 300)}
OPT = SolveOptions(time_limit_s=60)


def usd_per_kwh(series):
    return tuple(round(v / 1000.0, 6) for v in series)


def test_embedded_series_match_the_data_file():
    csv = DATA / "electricity_price_usd_mwh_hourly_2023_wide.csv"
    if not csv.exists():
        pytest.skip("../shared/data not present")
    import pandas as pd
    df = pd.read_csv(csv, parse_dates=["datetime_utc"]).set_index("datetime_utc")
    day = df[df.index.date == pd.Timestamp("2023-07-02").date()]
    assert tuple(round(float(v), 3) for v in day["DE-LU"]) == DE_LU
    assert tuple(round(float(v), 3) for v in day["NL"]) == NL
    assert sum(v < 0 for v in DE_LU) == 16


def hourly_instance(arrivals=(0.0, 7 * 3600.0, 11 * 3600.0)):
    regions = [Region("de", "A6000", 4, usd_per_kwh(DE_LU)[0], price_series=PriceSeries(0.0, 3600.0,
                                                                                         usd_per_kwh(DE_LU))),
               Region("nl", "A6000", 4, usd_per_kwh(NL)[0], price_series=PriceSeries(0.0, 3600.0, usd_per_kwh(NL))),
               Region("fr", "A6000", 2, 0.09)]
    links = [Link("de", "nl", 10.0, 8.0), Link("nl", "fr", 10.0, 10.0), Link("de", "fr", 5.0, 12.0)]
    jobs = [Job(f"j{i}", a, 3, 8, 400, 1.5, 50.0) for i, a in enumerate(arrivals)]
    return Instance("neg-hourly", GT, "A6000", regions, links, jobs, meta={"source": SOURCE}).validated()


def test_hourly_negative_series_loads_with_a_warning(tmp_path, caplog):
    inst = hourly_instance()
    p = tmp_path / "neg.json"
    inst.save(p)
    with caplog.at_level(logging.WARNING):
        back = load_instance(p)
    assert back == inst
    assert "negative electricity price" in caplog.text
    assert json.loads(p.read_text())["regions"][0]["price_series"]["usd_per_kwh"][13] == -0.484399


@pytest.mark.parametrize("solver", [s for s in ("highs", "cpsat") if registry.available(s)])
def test_p1_constant_negative_prices_agree_with_brute_force(solver):
    """P1 at the prices of 12:00 UTC (both zones negative) against exhaustive enumeration: every started
    job earns money, and the exact models find the enumerated lexicographic optimum."""
    from test_placement import brute_force, check, make   # the P1 brute force of tests/test_placement.py
    de, nl = usd_per_kwh(DE_LU)[12], usd_per_kwh(NL)[12]
    assert de < 0 and nl < 0
    inst = make([("de", 3, de), ("nl", 2, nl), ("fr", 2, 0.09)],
                [("de", "nl", 4.0, 8.0), ("nl", "fr", 6.0, 10.0), ("de", "fr", 2.0, 12.0)],
                [("a", 3, 50.0), ("b", 2, 25.0, 0.2)])
    started, cost, run = brute_force(inst)
    assert cost < 0
    s = solve(inst, solver=solver, options=OPT)
    check(inst, s)
    assert s.solver.status == "optimal"
    assert s.metrics["jobs_done"] == started
    assert s.meta["cost_at_t0_usd"] == pytest.approx(cost, rel=1e-6)


def test_p1_and_p2_on_the_hourly_series_are_exact_and_priced_by_the_evaluator():
    inst = hourly_instance()
    p1 = solve(inst, solver="highs", options=OPT)
    assert p1.solver.status == "optimal" and evaluate(inst, p1).feasible
    if not registry.available("cpsat"):
        pytest.skip("cpsat not installed")
    # P2 with cost in the objective: both back ends prove the same optimum of the same slotted problem
    res = {}
    for solver in ("cpsat", "highs"):
        s = solve(inst, problem="schedule", solver=solver, mu=20000.0, options=OPT, time_resolution_s=1800.0) \
            if solver == "cpsat" else solve(inst, problem="schedule", solver=solver, mu=20000.0, options=OPT,
                                           slot_s=1800.0)
        assert s.solver.status == "optimal", s.solver
        assert evaluate(inst, s).feasible
        res[solver] = s
    assert res["cpsat"].solver.objective == pytest.approx(res["highs"].solver.objective, rel=1e-6)
    # the optimum uses the negative hours: its electricity bill is negative
    assert res["cpsat"].metrics["total_electricity_usd"] < 0


@pytest.mark.parametrize("policy", ["bace-pipe", "fifo"])
def test_simulate_on_the_hourly_series(policy):
    inst = hourly_instance()
    s = simulate(inst, policy=policy)
    rep = evaluate(inst, s)
    assert rep.feasible, rep.summary()
    assert s.metrics["jobs_done"] == len(inst.jobs)
