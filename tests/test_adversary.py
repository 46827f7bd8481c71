"""The gap split (selection x placement), the adversarial search (resume, files, bad input) on tiny settings."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from bace_opt.errors import InputError
from bace_opt.instance import GpuType, Instance, Job, Link, Region, load_instance
from bace_opt.adversary import decompose, heuristic_epoch, solve_p1, split_gap

optuna = pytest.importorskip("optuna")

A = {"A": GpuType("A", 100.0, 48.0, 300.0)}


def two_jobs_instance():
    """Cheap region c and dear region d (2 GPUs each); a short and a long 2-stage job.  BACE-Pipe tries the
    short job first and gives it the cheap region; the optimum gives the cheap region to the long job."""
    jobs = [Job("short", 0.0, 2, 4, 2, 0.5, 10.0, 1), Job("long", 0.0, 2, 4, 40, 0.5, 10.0, 1)]
    return Instance("t", A, "A", [Region("c", "A", 2, 0.10), Region("d", "A", 2, 0.30)],
                    [Link("c", "d", 50.0, 10.0)], jobs).validated()


@given(h=st.floats(0.01, 100.0), s=st.floats(0.01, 100.0), o=st.floats(0.01, 100.0))
def test_split_multiplies_to_the_cost_gap(h, s, o):
    cost, sel, place = split_gap(h, s, o)
    assert math.isclose(1 + cost, (1 + sel) * (1 + place), rel_tol=1e-9)


def test_split_is_undefined_without_a_positive_denominator():
    assert split_gap(1.0, None, 2.0) == (-0.5, None, None)
    assert split_gap(1.0, 1.0, 0.0)[0] is None


def test_decompose_blames_placement_when_the_set_is_the_optimum_set():
    inst = two_jobs_instance()
    d = decompose(inst, "bace-pipe", time_limit_s=30)
    assert d.proven and d.split_proven and d.same_admissions
    assert d.heuristic_jobs == d.optimum.jobs == 2
    # C* <= C_S <= H, the same set: no selection gap, all of the gap is placement
    assert d.optimum.cost_usd <= d.own_set.cost_usd * (1 + 1e-9) <= d.heuristic_cost_usd * (1 + 1e-9)
    assert abs(d.selection_gap) < 1e-6
    assert d.placement_gap > 0.5 and math.isclose(d.placement_gap, d.cost_gap, rel_tol=1e-6)
    # the heuristic's cost is the evaluator's: the schedule passes the evaluator
    from bace_opt.evaluate import evaluate
    assert evaluate(inst, heuristic_epoch(inst, "bace-pipe")).feasible


def test_selection_gap_when_the_heuristic_starts_a_dear_set():
    """Room for 2 of 3 one-stage jobs (3 GPUs).  BACE-Pipe tries the shortest compute first: p (2 GPUs per
    stage, cost 2 units) then q (1 unit x 1.5); the cheapest pair is {q, r} (1.5 + 1.6 < 2 + 1.5)."""
    jobs = [Job("p", 0.0, 1, 1, 10, 0.10, 1.0, 2), Job("q", 0.0, 1, 1, 10, 0.15, 1.0, 1),
            Job("r", 0.0, 1, 1, 10, 0.16, 1.0, 1)]
    inst = Instance("t", A, "A", [Region("r", "A", 3, 0.2)], [], jobs).validated()
    d = decompose(inst, "bace-pipe", time_limit_s=30)
    assert d.same_admissions and d.split_proven
    assert math.isclose(d.selection_gap, 3.5 / 3.1 - 1, rel_tol=1e-6) and abs(d.placement_gap) < 1e-6


def _cfg(tmp_path, **kw):
    from bace_opt.adversary.search import AdversaryConfig
    from bace_opt.adversary.space import SpaceConfig
    return AdversaryConfig(policy="bace-pipe", space=SpaceConfig("random", n_regions=3, n_jobs=3,
                                                                 max_gpus_per_region=4, max_stages=3),
                           seed=3, time_limit_s=20, **kw)


def test_search_resumes_without_repeating_and_saves_worst(tmp_path, monkeypatch):
    from bace_opt.adversary import search
    out = tmp_path / "adv"
    res = search.run_adversary(_cfg(tmp_path), out, budget=3)
    assert [r["trial"] for r in res.records] == [0, 1, 2]
    # a kill mid-write leaves a cut line: it is dropped on resume
    with open(out / "trials.jsonl", "a") as f:
        f.write('{"trial": 3, "params": {"r0.gp')
    calls = []
    orig = search.evaluate_candidate
    monkeypatch.setattr(search, "evaluate_candidate", lambda c, t, p: calls.append(t) or orig(c, t, p))
    res2 = search.run_adversary(_cfg(tmp_path), out, budget=5)
    assert calls == [3, 4]                                   # the 3 finished candidates were not solved again
    lines = (out / "trials.jsonl").read_text().splitlines()
    assert [json.loads(l)["trial"] for l in lines] == [0, 1, 2, 3, 4]
    assert res2.records[0]["params"] == res.records[0]["params"]
    proven = [r for r in res2.records if r["status"] == "proven"]
    assert proven, "tiny instances must be proven within 20 s"
    w = load_instance(out / "worst" / "worst1.json")
    meta = w.meta["adversary"]
    assert meta["cost_gap"] == max(r["cost_gap"] for r in proven)
    # the saved instance reproduces its gap
    d = decompose(w, "bace-pipe", time_limit_s=20)
    assert math.isclose(d.cost_gap, meta["cost_gap"], rel_tol=1e-6, abs_tol=1e-9)
    assert "Spearman" in (out / "report.md").read_text() or len(proven) < 3


def test_search_refuses_other_settings_in_the_same_directory(tmp_path):
    from bace_opt.adversary.search import run_adversary
    run_adversary(_cfg(tmp_path), tmp_path / "a", budget=1)
    with pytest.raises(InputError, match="other settings"):
        run_adversary(_cfg(tmp_path, sampler="random"), tmp_path / "a", budget=2)


def test_search_space_builds_valid_instances_within_bounds(tmp_path):
    from bace_opt.adversary.space import SpaceConfig, make_space
    sp = make_space(SpaceConfig("random", n_regions=3, n_jobs=2, max_gpus_per_region=2, max_stages=4))
    lo = {k: d.low for k, d in sp.distributions.items()}
    inst = sp.build(lo)
    assert all(j.stages <= inst.total_gpus for j in inst.jobs)       # capped by the cluster: valid
    assert inst.validated().name == inst.name


def test_cli_bad_input_is_one_message(tmp_path, capsys):
    # in this process (cli.main.main), as test_policy_gate runs adversary: a subprocess spent ~5 s importing optuna
    from bace_opt.cli.main import main
    rc = main(["adversary", "--policy", "nope", "--budget", "1", "-o", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert rc == 2 and "policy" in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()
    rc = main(["adversary", "--budget", "0", "-o", str(tmp_path / "y")])
    err = capsys.readouterr().err
    assert rc == 2 and "budget" in err


def test_two_searches_never_share_a_directory(tmp_path):
    from bace_opt.adversary.search import _lock, run_adversary
    (tmp_path / "a").mkdir()
    held = _lock(tmp_path / "a")
    try:
        with pytest.raises(InputError, match="another search"):
            run_adversary(_cfg(tmp_path), tmp_path / "a", budget=1)
    finally:
        held.close()
    assert not (tmp_path / "a" / "trials.jsonl").exists()
