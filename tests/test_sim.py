"""The discrete-event simulator on hand-built cases: timing, modes, HoL accounting, price events, errors."""
from __future__ import annotations

import json

import pytest

import bace_opt as bo
from bace_opt import formulas as F
from bace_opt.instance import GpuType, Instance, Job, Link, PriceSeries, Region
from bace_opt.policies import ClusterState, PolicyError, make_policy
from bace_opt.schedule import Block, Hop, JobPlan
from bace_opt.sim import run_simulation, simulate

A = {"A": GpuType("A", 100.0, 48.0, 300.0)}


def job(name, stages, arrival_s=0.0, stage_time_s=0.1, activation_mb=10.0, microbatches=4, iterations=100):
    return Job(name, arrival_s, stages, microbatches, iterations, stage_time_s, activation_mb)


def one_region(jobs, gpus=4, price=0.2):
    return Instance("one", A, "A", [Region("x", "A", gpus, price)], [], jobs).validated()


def run_s(j):
    """Single-region run time from the model: N * (m + S - 1) * t (no hops)."""
    return j.iterations * (j.microbatches + j.stages - 1) * j.stage_time_s


def test_queue_mode_second_job_starts_at_first_finish():
    j0, j1 = job("j0", 4), job("j1", 4, arrival_s=1.0)
    inst = one_region([j0, j1])
    s = simulate(inst, "bace-pipe")
    assert bo.evaluate(inst, s).feasible
    assert s.job("j0").start_s == 0.0
    assert s.job("j0").finish_s == pytest.approx(run_s(j0))
    assert s.job("j1").start_s == s.job("j0").finish_s          # exactly, from the same price_plan
    assert s.meta["jobs"]["j1"]["wait_s"] == pytest.approx(run_s(j0) - 1.0)
    assert s.meta["jobs"]["j1"]["run_s"] == pytest.approx(run_s(j1))
    assert s.meta["events"] == 4 and s.meta["mode"] == "queue"
    assert s.metrics["jobs_done"] == 2


def test_blocking_mode_rejects_on_arrival():
    j0, j1, j2 = job("j0", 4), job("j1", 4, arrival_s=1.0), job("j2", 2, arrival_s=1e6)
    inst = one_region([j0, j1, j2])
    s = simulate(inst, "bace-pipe", mode="blocking")
    assert bo.evaluate(inst, s).feasible
    assert [s.job(n).status for n in ("j0", "j1", "j2")] == ["done", "blocked", "done"]
    assert s.metrics["blocking_probability"] == pytest.approx(1 / 3)
    assert s.job("j2").start_s == 1e6


def test_completion_at_arrival_time_frees_resources_first():
    j0 = job("j0", 4)
    j1 = job("j1", 4, arrival_s=run_s(j0))     # arrives exactly when j0 finishes
    inst = one_region([j0, j1])
    s = simulate(inst, "lcf", mode="blocking")
    assert s.job("j1").status == "done" and s.job("j1").start_s == s.job("j0").finish_s


def _hol_instance():
    j0 = job("j0", 2)                          # runs on 2 of the 4 GPUs
    j1 = job("j1", 4, arrival_s=1.0)           # needs all 4: waits for j0
    j2 = job("j2", 1, arrival_s=2.0)           # fits beside j0, but is behind j1 in FIFO
    return one_region([j0, j1, j2]), j0, j1, j2


def test_hol_blocked_time_under_fifo_blocking():
    inst, j0, j1, j2 = _hol_instance()
    s = simulate(inst, "fifo")
    assert bo.evaluate(inst, s).feasible
    r0 = run_s(j0)
    assert s.job("j1").start_s == pytest.approx(r0)
    assert s.job("j2").start_s == pytest.approx(r0 + run_s(j1))
    m = s.meta["jobs"]
    # j2 could run alone from t=2 until j1 took all GPUs at t=r0; after that nothing fits it
    assert m["j2"]["hol_blocked_s"] == pytest.approx(r0 - 2.0)
    assert m["j2"]["wait_s"] == pytest.approx(r0 + run_s(j1) - 2.0)
    assert m["j1"]["hol_blocked_s"] == 0.0                   # the head itself was never held back
    assert s.meta["total_hol_blocked_s"] == pytest.approx(r0 - 2.0)


def test_bace_pipe_skips_so_no_hol_blocking():
    inst, j0, j1, j2 = _hol_instance()
    s = simulate(inst, "bace-pipe")
    assert s.job("j2").start_s == 2.0
    assert s.meta["total_hol_blocked_s"] == 0.0
    # the HoL measurement can be switched off; the schedule is the same
    s2 = simulate(inst, "bace-pipe", track_hol=False)
    assert s2.to_dict()["jobs"] == s.to_dict()["jobs"]


def test_price_change_event_lets_cheapest_seed_move():
    # x is the cheapest region until t=3600 but its only link is too thin for b_j (2 Gbit/s); the seed rule
    # "cheapest region" finds no chain from x.  At 3600 y becomes cheapest and the chain y -> z works.
    j = job("j", 2, stage_time_s=0.1, activation_mb=25.0)
    series = lambda a, b: PriceSeries(0.0, 3600.0, (a, b))
    inst = Instance("p", A, "A",
                    [Region("x", "A", 1, 0.1, price_series=series(0.1, 0.5)),
                     Region("y", "A", 1, 0.2, price_series=series(0.2, 0.2)),
                     Region("z", "A", 1, 0.3, price_series=series(0.3, 0.3))],
                    [Link("x", "y", 1.0, 5.0), Link("y", "z", 5.0, 5.0)], [j]).validated()
    s = simulate(inst, "bace-pipe", seeds="cheapest")     # the rule of earlier releases
    assert bo.evaluate(inst, s).feasible
    assert s.job("j").start_s == 3600.0
    assert [b.region for b in s.job("j").blocks] == ["y", "z"]
    assert s.meta["events"] == 3                      # arrival, one price change, completion
    # trying every seed (the default) finds y -> z at once
    s_all = simulate(inst, "bace-pipe")
    assert s_all.job("j").start_s == 0.0
    # in blocking mode the job is rejected at its arrival; no price event is needed
    sb = simulate(inst, "bace-pipe", mode="blocking", seeds="cheapest")
    assert sb.job("j").status == "blocked" and sb.meta["events"] == 1


def test_jobs_with_no_placement_end_unscheduled():
    # two stages, two single-GPU regions joined by a link too thin for b_j: BACE-Pipe never starts it
    j = job("j", 2, stage_time_s=0.1, activation_mb=25.0)
    inst = Instance("u", A, "A", [Region("x", "A", 1, 0.1), Region("y", "A", 1, 0.2)],
                    [Link("x", "y", 1.0, 5.0)], [j]).validated()
    s = simulate(inst, "bace-pipe")
    assert s.job("j").status == "unscheduled" and s.metrics["jobs_unscheduled"] == 1
    s2 = simulate(inst, "cr-lcf")                     # no bandwidth check: runs, communication-bound
    assert s2.job("j").status == "done"
    assert bo.evaluate(inst, s2).figures["j"].comm_bound


class _Greedy:
    """A deliberately buggy policy: starts every waiting job in region x, ignoring what is free."""
    name = "greedy-bug"
    options = {}

    def decide(self, now, queue, state):
        return [JobPlan(j.name, "done", now, (Block("x", j.stages),), ()) for j in queue]

    def place(self, job, state):
        return None


class _Hog:
    """Reserves more bandwidth than the link has."""
    name = "hog-bug"
    options = {}

    def decide(self, now, queue, state):
        return [JobPlan(j.name, "done", now, (Block("x", 1), Block("y", 1)), (Hop(("x", "y"), 11.0),))
                for j in queue]

    def place(self, job, state):
        return None


def test_simulator_raises_when_a_policy_over_commits():
    inst = one_region([job("a", 3), job("b", 3)])
    with pytest.raises(PolicyError, match="over-commits"):
        simulate(inst, _Greedy())
    inst2 = Instance("two", A, "A", [Region("x", "A", 2, 0.1), Region("y", "A", 2, 0.1)],
                     [Link("x", "y", 10.0, 1.0)], [job("a", 2)]).validated()
    with pytest.raises(PolicyError, match="Gbit/s"):
        simulate(inst2, _Hog())


def test_simulator_rejects_plans_for_jobs_not_waiting():
    class Early:
        name, options = "early", {}

        def decide(self, now, queue, state):
            return [JobPlan("late", "done", now, (Block("x", 1),), ())]

        def place(self, job, state):
            return None

    inst = one_region([job("a", 1), job("late", 1, arrival_s=10.0)])
    with pytest.raises(PolicyError, match="not waiting"):
        simulate(inst, Early())


def test_bad_arguments_are_input_errors():
    inst = one_region([job("a", 1)])
    with pytest.raises(bo.InputError, match="mode"):
        simulate(inst, "bace-pipe", mode="nope")
    with pytest.raises(bo.InputError, match="unknown policy"):
        simulate(inst, "nope")
    with pytest.raises(bo.InputError, match="policy object"):
        simulate(inst, _Greedy(), seeds="all")


def test_deterministic_and_json_round_trip(tmp_path):
    from bace_opt.builders.synthetic import random_instance
    inst = random_instance(7, n_regions=4, n_jobs=10, max_arrival_s=3000.0, hourly_prices=True)
    a = simulate(inst, "bace-pipe", seed=3)
    b = simulate(inst, "bace-pipe", seed=3)
    assert a.to_json() == b.to_json()
    a.save(tmp_path / "s.json")
    back = bo.load_schedule(tmp_path / "s.json")
    assert bo.evaluate(inst, back).feasible
    assert json.loads(a.to_json())["meta"]["jobs"].keys() == {j.name for j in inst.jobs}


def test_package_level_simulate_and_stats():
    inst, *_ = _hol_instance()
    s = bo.simulate(inst, policy="ldf")
    assert s.method == "ldf" and bo.evaluate(inst, s).feasible
    s2, stats = run_simulation(inst, "bace-pipe")
    assert stats.events == s2.meta["events"] and stats.decisions == s2.meta["decisions"]
    assert stats.median_decide_s is not None and stats.median_decide_s >= 0


def test_cli_simulate(cli, tmp_path):
    inst, *_ = _hol_instance()
    f = tmp_path / "inst.json"
    inst.save(f)
    out = tmp_path / "sched.json"
    r = cli("simulate", f, "--policy", "fifo", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "avg_jct_s" in r.stdout and "total_hol_blocked_s" in r.stdout
    assert cli("evaluate", f, out).returncode == 0
    r = cli("simulate", f, "--policy", "bace-pipe", "--mode", "blocking", "--option", "seeds=all", "-o", out)
    assert r.returncode == 0, r.stderr
    assert bo.load_schedule(out).meta["policy_options"]["seeds"] == "all"
    r = cli("simulate", f, "--policy", "nope")
    assert r.returncode == 2 and "unknown policy" in r.stderr and "Traceback" not in r.stderr
    r = cli("simulate", f, "--option", "seeds=bogus")
    assert r.returncode == 2 and "seeds" in r.stderr and "Traceback" not in r.stderr
    r = cli("simulate", "--help")
    assert r.returncode == 0 and "cr-ldf" in r.stdout and "exact-p1" in r.stdout


def test_exact_p1_policy_if_available():
    pytest.importorskip("bace_opt.exact.placement")
    inst, *_ = _hol_instance()
    s = simulate(inst, "exact-p1", time_limit_s=20)
    rep = bo.evaluate(inst, s)
    assert rep.feasible and s.metrics["jobs_done"] == 3
    assert s.meta["policy_stats"]["solver_calls"] >= 1


def test_a_non_policy_object_is_an_input_error():
    inst = one_region([job("a", 1)])
    with pytest.raises(bo.InputError, match="registered name or an object"):
        simulate(inst, object())
