"""plan-jct's sampled futures (option ``futures``, ``policies.planner_future``): the option is validated, the
decisions are deterministic and blind to jobs that have not arrived, nothing is held with batch arrivals or when
nothing runs, and every schedule passes the evaluator."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.builders import paper_instance
from bace_opt.policies import make_policy
from bace_opt.policies import planner_future as pf
from bace_opt.policies.planner import PlanJct
from bace_opt.policies.planner_core import PJob, Profile

ROOT = Path(__file__).resolve().parents[1]
PAPER8 = ROOT / "instances" / "paper-6r-8j-seed1.json"
POISSON8 = ROOT / "instances" / "paper-6r-8j-seed1-poisson.json"


@pytest.mark.parametrize("bad", [dict(futures=-1), dict(futures=True), dict(futures=2.0), dict(futures=1001),
                                 dict(future_horizon=0), dict(future_horizon=math.inf), dict(future_horizon="1"),
                                 dict(future_work=-1), dict(future_work=1.5)])
def test_the_options_are_validated(bad):
    with pytest.raises(ValueError, match=next(iter(bad))):
        PlanJct(**bad)
    with pytest.raises(bo.InputError, match=next(iter(bad))):
        make_policy("plan-jct", **bad)


def test_the_default_samples_futures_and_zero_turns_it_off():
    assert PlanJct().options["futures"] == 8
    assert PlanJct(futures=0).options["futures"] == 0


def test_the_estimate_reads_only_arrivals_up_to_now():
    arrived = [(0.0, 4, 10.0), (10.0, 2, 5.0), (20.0, 2, 7.0), (30.0, 4, 1.0), (99.0, 8, 1e6)]
    rate, mix = pf.estimate(arrived, 40.0)
    assert rate == pytest.approx(3 / 40.0) and sorted(mix) == sorted([(4, 10.0), (2, 5.0), (2, 7.0), (4, 1.0)])
    assert pf.estimate(arrived[:3], 40.0) is None            # fewer than MIN_SEEN arrivals


def test_a_quiet_stream_is_believed_ended_and_the_weights_sum_to_one():
    assert pf.p_going(1.0, 100.0, 0.0, 10.0) < 1e-9           # 100 mean inter-arrivals of silence
    assert pf.p_going(1.0, 0.0, 0.0, 10.0) == pytest.approx(10 / 11)
    sc = pf.scenarios_of(random.Random(1), 8, 1.0, [(1, 1.0)], 5.0, [(0.0, 1, 1.0), (4.0, 1, 1.0)], 1.0)
    assert sum(w for w, _ in sc) == pytest.approx(1.0)
    assert sc[0][1] == [] and all(f and f[0].arrival > 5.0 for _, f in sc[1:])


def test_nothing_is_held_when_nothing_runs():
    jobs = [PJob("long", 4, 1000.0, 0.0, 0.0)]
    arrived = [(float(t), 1, 1.0) for t in range(10)] + [(0.0, 4, 1000.0)]
    held, _ = pf.choose_holds(jobs, Profile.build(10.0, 4, [], 4), ("long",), 10.0, arrived, 8, 1.0, 1000, 0)
    assert held == frozenset()


def test_holds_a_long_job_for_a_busy_stream_of_short_ones():
    # 4 GPUs, 2 busy until t = 5; a stream of 1-s jobs of 2 GPUs, one per second; a 1000-s job of 2 GPUs waits:
    # starting it now takes half the pool from every short job for 1000 s
    arrived = [(float(t), 2, 1.0) for t in range(20)] + [(19.5, 2, 1000.0)]
    jobs = [PJob("long", 2, 1000.0, 19.5, 20.0)]
    held, info = pf.choose_holds(jobs, Profile.build(20.0, 2, [(25.0, 2)], 4), ("long",), 20.0, arrived, 8,
                                 1.0, 2000, 0)
    assert held == {"long"} and info["candidates"] == 2


@pytest.mark.parametrize("agree, held", [(0.0, True), (0.5, False)])
def test_a_hold_needs_a_majority_of_the_weight_not_only_the_mean(monkeypatch, agree, held):
    # the long job of the test above; two scenarios: "ended" (weight 0.6, the hold loses a little there) and one
    # that goes on (0.4, the hold wins much): the mean says hold (0.6 x 101 + 0.4 x 50 < 100), the majority no
    arrived = [(float(t), 2, 1.0) for t in range(20)] + [(19.5, 2, 1000.0)]
    jobs = [PJob("long", 2, 1000.0, 19.5, 20.0)]
    imagined = [PJob("~0.0", 2, 1.0, 20.5, 20.5)]
    monkeypatch.setattr(pf, "scenarios_of", lambda *a: [(0.6, []), (0.4, imagined)])
    monkeypatch.setattr(pf, "value_of", lambda by, base, s, fut, *a: (
        (100.0 if "long" in s else (50.0 if fut else 101.0)), 0))
    monkeypatch.setattr(pf, "AGREE", agree)
    got, info = pf.choose_holds(jobs, Profile.build(20.0, 2, [(25.0, 2)], 4), ("long",), 20.0, arrived, 8,
                                1.0, 2000, 0)
    assert (got == {"long"}) is held and info["agree"] == pytest.approx(0.4)


@pytest.mark.parametrize("path", [PAPER8, POISSON8])
def test_deterministic_and_feasible(path):
    inst = bo.load_instance(path)
    a = bo.simulate(inst, "plan-jct", futures=8)
    b = bo.simulate(inst, "plan-jct", futures=8, time_cap_s=200.0)
    assert a.plans == b.plans
    assert a.metrics["jobs_done"] == len(inst.jobs) and bo.evaluate(inst, a).feasible


def test_batch_arrivals_are_never_held():
    inst = bo.load_instance(PAPER8)
    on, off = PlanJct(futures=8), PlanJct(futures=0)
    a, b = bo.simulate(inst, on), bo.simulate(inst, off)
    assert on.stats["held"] == 0 and a.plans == b.plans


def test_on_a_poisson_paper_instance_it_holds_deterministically_and_passes_the_evaluator():
    inst = paper_instance(seed=1, jobs=24, arrivals="poisson", bandwidth_source="measured")
    p1, p2 = PlanJct(), PlanJct()
    a, b = bo.simulate(inst, p1), bo.simulate(inst, p2)
    assert p1.stats["held"] > 0 and p1.stats == p2.stats
    assert a.plans == b.plans
    assert a.metrics["jobs_done"] == 24 and bo.evaluate(inst, a).feasible


def test_blind_to_later_jobs_with_futures():
    from test_nonanticipative import check_blind
    check_blind("plan-jct", futures=8, future_horizon=2.0)
