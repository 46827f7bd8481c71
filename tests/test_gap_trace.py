"""Issue 45, item 3: ``gap --online`` on a trace instance: the one-epoch P1 part skipped and said, each policy's
mean JCT and mean waiting time against a certified bound that scales to the trace, the exit code from the
online part."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.gaps import online as O

TINY = Path(__file__).resolve().parent.parent / "instances" / "tiny-2r-2j.json"


@pytest.fixture(scope="module")
def loaded():
    """23 jobs over a day on 6 regions of 2 GPUs (offered load 0.27): jobs queue, so the wait bound is > 0."""
    return bo.trace_instance(regions="default", jobs_per_week=20, days=1, gpus=2, seed=1, max_gpus=8,
                             max_duration_s=6 * 3600, load=8)


@pytest.fixture(scope="module")
def report(loaded):
    return bo.gap(loaded, ["bace-pipe", "select-pack"], online=True, time_limit=6)


def test_a_trace_instance_is_detected_and_its_p1_part_skipped_and_said(loaded, report):
    assert O.is_trace(loaded) and not O.is_trace(bo.load_instance(TINY))
    assert report.optimum is None and report.p1_skipped and "trace instance" in report.p1_skipped
    assert all(p.p1 is None for p in report.policies)
    assert "the one-epoch P1 part is skipped" in report.summary()
    d = report.to_dict()
    assert d["p1_skipped"] and d["optimum"] is None and d["online_certified"] is True
    assert json.loads(json.dumps(d)) == d


def test_the_bound_is_positive_and_below_every_policy_and_the_wait_bracket_follows(loaded, report):
    b = report.bracket
    rs, _ = O.shortest_runs(loaded)
    floor = math.fsum(rs) / len(rs)
    assert b["mean_shortest_run_s"] == pytest.approx(floor)
    assert b["jct_lower_bound_s"] > floor          # the packing relaxation beats the floor when jobs queue
    assert b["jct_lower_bound_s"] <= b["jct_best_s"] + 1e-9
    assert b["wait_lower_bound_s"] == pytest.approx(b["jct_lower_bound_s"] - floor) and b["wait_lower_bound_s"] > 0
    for p in report.policies:
        o = p.online
        assert o.complete and 0 < o.jct_lower_bound_s <= o.mean_jct_s
        assert o.mean_wait_s == pytest.approx(o.mean_jct_s - floor)
        assert 0 < o.wait_lower_bound_s <= o.mean_wait_s
        j = report.to_dict()["policies"][[q.policy for q in report.policies].index(p.policy)]["online"]
        for k in ("jct_lower_bound_s", "mean_jct_s", "mean_wait_s", "wait_lower_bound_s"):
            assert j[k] == getattr(o, k)
    assert "mean wait (JCT minus the job's shortest run time" in report.summary()


def test_the_timeline_has_the_p1_field_names_and_only_improves(report):
    tl = report.bracket["timeline"]
    assert tl and all(set(p) == {"t_s", "bound", "incumbent", "bound_source"} for p in tl)
    bounds = [p["bound"] for p in tl if p["bound"] is not None]
    incs = [p["incumbent"] for p in tl if p["incumbent"] is not None]
    assert bounds == sorted(bounds) and incs == sorted(incs, reverse=True)
    assert tl[0]["bound_source"] == O.SOURCE_FLOOR and max(bounds) == pytest.approx(report.bracket["jct_lower_bound_s"])


def test_windows_each_count_at_least_their_floor_and_sum_to_a_bound(loaded, monkeypatch):
    rs, _ = O.shortest_runs(loaded)
    monkeypatch.setattr(O, "WINDOW_JOBS", 8)
    tl = O.Timeline()
    w = O.windowed_bound(loaded, rs, 20.0, timeline=tl)
    assert w["windows"] == 3 and w["windows_solved"] == 3
    best = min(bo.simulate(loaded, "bace-pipe").metrics["avg_jct_s"],
               bo.simulate(loaded, "select-pack").metrics["avg_jct_s"])
    assert math.fsum(rs) / len(rs) <= w["lower_bound_jct_s"] <= best
    assert O.windowed_bound(loaded, rs, 0.0)["windows_solved"] == 0    # no time: the floor, still a bound


def test_skip_p1_is_asked_for_on_an_ordinary_instance_and_needs_online():
    tiny = bo.load_instance(TINY)
    r = bo.gap(tiny, "bace-pipe", online=True, time_limit=5, p1=False)
    assert r.p1_skipped.startswith("skipped on request") and r.online_certified
    with pytest.raises(bo.InputError, match="nothing to measure"):
        bo.gap(tiny, "bace-pipe", p1=False)


def test_cli_gap_on_a_trace_exits_0_from_the_online_part(cli, loaded, tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(loaded.to_dict()))
    r = cli("gap", path, "--online", "--policy", "bace-pipe", "--policy", "select-pack", "--time-limit", "6",
            "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["p1_skipped"] and d["wall_s"] <= 6 + 3
    for p in d["policies"]:
        assert 0 < p["online"]["jct_lower_bound_s"] <= p["online"]["mean_jct_s"]
    r = cli("gap", path, "--skip-p1")
    assert r.returncode == 2 and "--skip-p1 needs --online" in r.stderr


def test_the_price_window_cost_bound_is_below_every_policy_and_exact_on_a_step_price(loaded, report):
    from bace_opt.formulas import price_curves
    for p in report.policies:
        assert 0 < report.bracket["cost_lower_bound_usd"] <= p.online.cost_usd + 1e-9
    curve = next(c for c in price_curves(loaded).values() if c.values is not None)
    for length, after in ((1800.0, 0.0), (5000.0, 7200.5), (40 * 3600.0, -100.0), (3600.0, 1e7)):
        end = curve.start + curve.step * len(curve.values) + 1.0
        grid = [after + 300.0 * k for k in range(int(max(end - after, 0.0) // 300.0) + 2)]
        brute = min(curve.integral(s, s + length) for s in grid)         # every start on a 300 s grid
        m = O.min_window_integral(curve, length, after)
        assert brute - 2 * 300.0 * curve.values.max() - 1e-9 <= m <= brute + 1e-9


def test_the_whole_trace_relaxation_rises_rung_by_rung_and_stays_below_every_schedule(loaded):
    """``trace_bound.whole_trace_bound``: each rung's unit is finer than the last; its bound is >= the floor, <=
    every policy's mean JCT (and the upper end's candidates: plan-jct's run, the offline schedule), and goes on
    the time line with its source."""
    from bace_opt.gaps import trace_bound as T
    rs, _ = O.shortest_runs(loaded)
    floor = math.fsum(rs) / len(rs)
    tl = O.Timeline()
    w = T.whole_trace_bound(loaded, 30.0, timeline=tl)
    units = [r["unit_s"] for r in w["rungs"] if r["lower_bound_jct_s"] is not None]
    assert len(units) >= 2 and all(b < a for a, b in zip(units, units[1:]))
    pr = T.planner_run(loaded, 60.0, notes := [])
    assert pr is not None and not notes and (pr[1].startswith("plan-jct") or pr[1] == T.OFFLINE_FROM)
    best = min([bo.simulate(loaded, p).metrics["avg_jct_s"] for p in ("bace-pipe", "select-pack")] + [pr[0]])
    assert floor <= w["lower_bound_jct_s"] <= best
    assert tl.bound == pytest.approx(w["lower_bound_jct_s"]) and tl.source == T.SOURCE_WHOLE
    assert T.whole_trace_bound(loaded, 0.0)["lower_bound_jct_s"] is None     # no time: no rung, no bound


def test_a_trace_bound_above_a_schedule_is_dropped_to_the_floor_not_capped(loaded, monkeypatch):
    """A bound a feasible schedule refutes is a bug: reported (``bound_conflict``, a note) and dropped to the
    floor, never capped to the schedule (which would hide it)."""
    rs, _ = O.shortest_runs(loaded)
    floor = math.fsum(rs) / len(rs)
    monkeypatch.setattr(O, "whole_trace_bound", lambda inst, budget, threads, seed, tl: tl.add(1e9, None, O.SOURCE_WHOLE))
    monkeypatch.setattr(O, "windowed_bound", lambda *a, **k: {"windows": 0, "windows_solved": 0})
    sched = bo.simulate(loaded, "bace-pipe")
    b = O.trace_figures(loaded, 4.0, runs=[("bace-pipe", sched, True)])
    assert b["bound_conflict"]["bound"] == 1e9 and b["jct_lower_bound_s"] == pytest.approx(floor)
    assert any("a bug" in n for n in b["notes"])


def test_the_offline_upper_end_is_an_evaluated_schedule_no_worse_than_plan_jct_and_never_a_policy(loaded):
    """``trace_bound.offline_upper`` (``gaps.trace_offline``): the clairvoyant pooled plan realised by a simulated
    ``OrderFollower``: the evaluator accepts it, every job done, its mean JCT at least the whole-trace bound;
    seeded by plan-jct's run it beats that run on this trace; deterministic; its name is no
    registered policy's."""
    from bace_opt.evaluate import evaluate
    from bace_opt.gaps import trace_bound as T
    from bace_opt.gaps import trace_offline as TO
    from bace_opt.policies import available
    pj = bo.simulate(loaded, "plan-jct")
    runs = [T.offline_upper(loaded, 60.0, [pj], notes := []) for _ in range(2)]
    assert not notes and runs[0] is not None and runs[0][1] == T.OFFLINE_FROM
    rep = evaluate(loaded, runs[0][2])
    assert rep.feasible and rep.metrics["jobs_done"] == len(loaded.jobs)
    assert runs[0][0] == pytest.approx(rep.metrics["avg_jct_s"]) == pytest.approx(runs[1][0])
    assert runs[0][0] <= pj.metrics["avg_jct_s"] * (1 + 1e-9)
    w = T.whole_trace_bound(loaded, 20.0)
    assert w["lower_bound_jct_s"] <= runs[0][0]
    assert TO.NAME not in available() and runs[0][2].method == TO.NAME
    order, pooled = TO.clairvoyant_order(loaded, 50_000, warm=[pj])
    assert sorted(order) == sorted(j.name for j in loaded.jobs) and pooled > 0


def test_with_plan_jct_among_the_policies_the_offline_schedule_is_still_the_upper_ends_candidate(loaded, caplog):
    """plan-jct asked as a policy: its own run is not simulated again, but it still seeds the offline schedule,
    which the bracket's upper end takes when better (before, the offline schedule was skipped then)."""
    import logging
    with caplog.at_level(logging.INFO, logger="bace_opt.gaps.trace_bound"):
        rep = bo.gap(loaded, ["plan-jct"], online=True, time_limit=20)
    b = rep.bracket
    pj = next(p for p in rep.policies if p.policy == "plan-jct").online
    assert b["jct_best_s"] <= pj.mean_jct_s * (1 + 1e-9)
    assert "offline clairvoyant schedule" in caplog.text


def test_a_bracket_a_policy_closes_ends_without_searching_for_more():
    """No queue (every job runs at once on its fastest placement): a policy's run is at the bound, so the bracket
    is closed and the command does not spend its limit on an upper-end search (the default week took its whole
    600 s for a bracket of width 0)."""
    import time
    light = bo.trace_instance(regions="default", jobs_per_week=20, days=1, seed=1, max_gpus=8,
                              max_duration_s=6 * 3600)
    t = time.perf_counter()
    rep = bo.gap(light, ["bace-pipe"], online=True, time_limit=120)
    b = rep.bracket
    assert b["jct_best_s"] == pytest.approx(b["jct_lower_bound_s"], rel=1e-6)
    assert any("closed by a policy's run" in n for n in rep.notes)
    assert time.perf_counter() - t < 60
