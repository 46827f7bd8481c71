"""``gap`` reads well at fleet scale (issue 44, item 5) and keeps its deadline (issue 42, item 1): one incumbent for
the whole run, a time line from the command's start, which side limits a range, egress beside the cost, one
account of ``--engine auto``; ``online_time_limit`` matters only online; the online simulation stops at the
deadline.  Small instances: each test takes seconds."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt import clock
from bace_opt.exact.p1.certify import BOUND_SOURCES, SOURCE_FLOOR, SOURCE_STAGE_MIP
from bace_opt.gaps import GapReport, PolicyGap, Solve
from bace_opt.gaps.decompose import GapDecomposition, against_best, best_placement
from bace_opt.gaps.p1part import range_reading
from bace_opt.policies import PolicyBase

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "instances" / "paper-6r-8j-seed1.json"
TINY = ROOT / "instances" / "tiny-2r-2j.json"


def _solve(cost, bound, status="feasible", jobs=10, source=SOURCE_STAGE_MIP, timeline=(), **kw):
    return Solve(status, jobs, cost, bound, 1.0, True, "walk", source, kw.get("elec"), kw.get("egress"), timeline)


def _decomp(policy, h_cost, opt, own=None, jobs=10, **kw):
    lost = opt.jobs - jobs
    at_most = h_cost / opt.bound_usd - 1 if not lost else None
    at_least = max(0.0, h_cost / min(opt.cost_usd, h_cost) - 1) if not lost else None
    return GapDecomposition(policy, 0.0, jobs, h_cost, 0.01, opt, own, not lost, lost, None, None, None,
                            at_most, at_least, kw.get("elec"), kw.get("egress"))


# ---------------------------------------------------------------------------- one incumbent for the whole run

def test_an_own_set_solve_that_starts_as_many_jobs_lowers_the_incumbent():
    opt = _solve(115.96, 20.14)
    sp = _decomp("select-pack", 120.28, opt, own=_solve(112.07, 90.0))
    bp = _decomp("bace-pipe", 32.6, opt, own=_solve(25.40, 25.0, jobs=8), jobs=8)
    best, where = best_placement(opt, [sp, bp])
    assert best == 112.07 and where == "select-pack's own-set solve"    # bace-pipe's set is smaller: not one
    g = against_best(sp, best)
    assert g.cost_gap_at_least == pytest.approx(120.28 / 112.07 - 1)
    assert g.cost_gap_at_most == sp.cost_gap_at_most
    # a policy's own decision that is cheaper than every solve's is the incumbent, and its lower end 0
    cheap = _decomp("x", 100.0, opt)
    assert best_placement(opt, [sp, cheap]) == (100.0, "x's decision")
    assert against_best(cheap, 100.0).cost_gap_at_least == 0.0


def test_a_policy_that_lost_admissions_still_shows_its_placement_gap():
    opt = _solve(115.96, 20.14)
    proven = _decomp("bace-pipe", 32.6, opt, own=_solve(25.40, 25.40, status="optimal", jobs=8), jobs=8)
    assert proven.own_placement_gap == pytest.approx(32.6 / 25.40 - 1)
    cert = _decomp("bace-pipe", 32.6, opt, own=_solve(25.40, 25.0, jobs=8), jobs=8)
    lo, hi = cert.own_placement_range
    assert lo == pytest.approx(32.6 / 25.40 - 1) and hi == pytest.approx(32.6 / 25.0 - 1)
    uncert = _decomp("bace-pipe", 32.6, opt, own=dataclasses.replace(_solve(25.40, None, jobs=8)), jobs=8)
    assert uncert.own_placement_range == (pytest.approx(32.6 / 25.40 - 1), None)   # at least, from its placement
    r = GapReport("fleet", 50, 0.0, opt, [PolicyGap("bace-pipe", cert)], incumbent_usd=115.96,
                  incumbent_from="the P1 optimum's solve")
    text = r.summary()
    row = next(line for line in text.splitlines() if line.startswith("bace-pipe"))
    assert "2 lost" in row and f"{(32.6 / 25.40 - 1) * 100:.3g} %" in row, text
    assert "cheapest placement of its own 8 jobs found costs 25.4 USD" in text, text


def test_the_report_names_the_incumbent_and_which_side_limits_a_wide_range():
    tl = ({"t_s": 12.0, "bound": None, "incumbent": 120.28, "bound_source": "none"},
          {"t_s": 30.0, "bound": 20.14, "incumbent": 115.96, "bound_source": SOURCE_FLOOR})
    opt = _solve(115.96, 20.14, source=SOURCE_FLOOR, timeline=tl)
    sp = against_best(_decomp("select-pack", 120.28, opt, own=_solve(112.07, 90.0)), 112.07)
    r = GapReport("fleet", 50, 0.0, opt, [PolicyGap("select-pack", sp)], incumbent_usd=112.07,
                  incumbent_from="select-pack's own-set solve", timeline=list(tl))
    text = r.summary()
    assert "cost 112.07 USD (select-pack's own-set solve)" in text, text
    assert "limited by the bound" in text and "what would narrow it" in text, text
    d = r.to_dict()
    assert d["incumbent_usd"] == 112.07 and d["range"]["limited_by"] == "bound"
    assert d["bound_source"] in BOUND_SOURCES and d["timeline"] == list(tl)
    # a relaxation's bound that rose after the incumbent last fell: the incumbent limits it
    tl2 = ({"t_s": 5.0, "bound": 90.0, "incumbent": 115.96, "bound_source": SOURCE_STAGE_MIP},
           {"t_s": 50.0, "bound": 100.0, "incumbent": 115.96, "bound_source": SOURCE_STAGE_MIP})
    rd = range_reading(_solve(115.96, 100.0), 115.96, tl2)
    assert rd["limited_by"] == "incumbent" and rd["width"] == pytest.approx(15.96 / 115.96)
    assert range_reading(_solve(115.96, 115.96, status="optimal"), 115.96, tl2) is None
    # an incumbent "lower" by rounding noise after the bound's last rise is no move: still the incumbent's side
    tl3 = tl2 + ({"t_s": 66.0, "bound": 100.0, "incumbent": 115.96 * (1 - 1e-15), "bound_source": SOURCE_STAGE_MIP},)
    assert range_reading(_solve(115.96, 100.0), 115.96, tl3)["limited_by"] == "incumbent"


def test_egress_that_outweighs_electricity_is_said_beside_the_cost_with_the_option():
    opt = _solve(115.96, 115.96, status="optimal", elec=113.68, egress=10994.59)
    sp = _decomp("select-pack", 120.28, opt, elec=118.0, egress=9000.0)
    r = GapReport("fleet", 50, 0.0, opt, [PolicyGap("select-pack", sp)], incumbent_usd=115.96)
    text = r.summary()
    assert "its egress, 10,994.59 USD, is not in the objective" in text.splitlines()[1], text
    assert "egress (not in the objective)" in text.splitlines()[2] and "9,000" in text.splitlines()[3], text
    assert '"objective": {"egress": true}' in text
    r.objective_counts_egress = True          # the objective counts it: nothing to say
    assert "not in the objective" not in r.summary()


# ---------------------------------------------------------------------------- the time line

def test_the_time_line_counts_from_the_command_start(paper):
    old = clock.command_start()
    try:
        clock.start_command(time.perf_counter() - 100.0)     # as if the command had started 100 s ago
        s = bo.solve(paper, problem="placement", time_limit=30, levels=2)
    finally:
        clock.start_command(old)
    tl = s.solver.extra["timeline"]
    assert tl and all(100.0 <= p["t_s"] < 100.0 + 60.0 for p in tl), tl


def test_gap_json_carries_the_time_line_incumbent_and_bound_source(tmp_path):
    out = tmp_path / "g.json"
    p = subprocess.run([sys.executable, "-m", "bace_opt", "gap", str(TINY), "--policy", "select-pack",
                        "--time-limit", "30", "--json", "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d == json.loads(out.read_text())
    assert d["status"] == "complete" and d["optimum_proven"] and d["range"] is None
    assert d["incumbent_usd"] == pytest.approx(d["optimum"]["cost_usd"])
    assert d["bound_source"] in BOUND_SOURCES
    tl = d["timeline"]
    assert tl and all(set(x) == {"t_s", "bound", "incumbent", "bound_source"} for x in tl)
    assert all(0.0 < x["t_s"] <= d["wall_s"] for x in tl), (tl, d["wall_s"])   # from process start, in the run
    assert tl[-1]["incumbent"] == pytest.approx(d["incumbent_usd"])


# ---------------------------------------------------------------------------- one account of --engine auto

def test_one_account_of_engine_auto():
    from bace_opt.cli._args import ENGINE_HELP
    helps = [subprocess.run([sys.executable, "-m", "bace_opt", c, "--help"], capture_output=True, text=True,
                            timeout=60).stdout for c in ("solve", "gap")]
    flat = [" ".join(h.split()) for h in helps]
    assert all("2,000,000 binaries" in h for h in flat), flat
    assert "2,000,000 binaries" in ENGINE_HELP
    readme = (ROOT / "README.md").read_text()
    assert "2,000,000 binaries" in readme and "picks it at fleet scale" not in readme
    assert "measured faster\n                                                    everywhere" not in readme


# ---------------------------------------------------------------------------- deadlines (issue 42, item 1)

def test_online_time_limit_above_time_limit_is_ignored_without_online(paper):
    r = bo.gap(paper, "select-pack", time_limit=20, online_time_limit=30)
    assert any("online_time_limit" in n and "ignored" in n for n in r.notes), r.notes
    assert r.optimum.proven
    from bace_opt.errors import InputError
    with pytest.raises(InputError, match="online_time_limit"):
        bo.gap(paper, "select-pack", time_limit=5, online=True, online_time_limit=6)


def test_gap_cli_takes_online_time_limit_above_time_limit_without_online():
    p = subprocess.run([sys.executable, "-m", "bace_opt", "gap", str(TINY), "--policy", "bace-pipe",
                        "--time-limit", "10", "--online-time-limit", "20"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "online_time_limit (20 s) ignored" in p.stdout


class SlowStarter(PolicyBase):
    """Starts nothing and takes 0.2 s per decision: a run over many arrivals takes long."""
    options: dict = {}
    name = "slow-starter"

    def place(self, job, state):
        return None

    def decide(self, now, queue, state):
        time.sleep(0.2)
        return []


def test_the_online_simulation_stops_at_the_deadline():
    from bace_opt.builders.synthetic import random_instance
    inst = random_instance(seed=3, n_regions=2, n_jobs=120, max_arrival_s=1e5)    # ~120 decisions: ~24 s
    t = time.perf_counter()
    r = bo.gap(inst, SlowStarter(), time_limit=3.0, online=True, p1=False)
    took = time.perf_counter() - t
    assert took < 3.0 + 2.0, took
    assert r.status == "time_limit" and r.to_dict()["status"] == "time_limit"
    assert any("stopped at the time limit" in n and "slow-starter" in n for n in r.notes), r.notes
    assert r.policies[0].online is None
