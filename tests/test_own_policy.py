"""A policy of one's own, defined in a file outside the package, runs everywhere a shipped one does."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.policies import PolicyError, available, make_policy, resolve
from policy_files import CHEAPEST_REGION, fake_dist

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "instances" / "paper-6r-8j-seed1.json"
TINY = ROOT / "instances" / "tiny-2r-2j.json"

#: the example policy of docs/policies.md and two that misbehave, as a user would keep them in a file of their own
POLICY = CHEAPEST_REGION + textwrap.dedent('''
    class Raises(CheapestRegion):
        name = "raises"

        def decide(self, now, queue, state):
            return self.think(queue)

        def think(self, queue):
            raise ZeroDivisionError("the policy's own bug")


    class OverCommits(CheapestRegion):
        name = "over-commits"

        def decide(self, now, queue, state):
            out = []
            for job in queue:             # no private copy: every job sees all GPUs free
                plan = self.place(job, state)
                if plan is not None:
                    out.append(plan)
            return out
''')


@pytest.fixture
def policy_file(tmp_path):
    p = tmp_path / "my_policies.py"
    p.write_text(POLICY)
    return p


def run(*args, cwd=None, env=None):
    e = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
    return subprocess.run([sys.executable, "-m", "bace_opt", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=e, timeout=300)


def test_a_file_policy_from_python_by_spec_and_by_object(policy_file):
    spec = f"{policy_file}:CheapestRegion"
    pol = make_policy(spec, max_price=1.0)
    assert pol.name == "cheapest-region" and pol.options == {"max_price": 1.0}
    assert resolve(spec) is type(pol)          # the file is imported once
    inst = bo.load_instance(PAPER)
    by_spec = bo.simulate(inst, spec)
    by_obj = bo.simulate(inst, type(pol)())
    assert by_spec.to_dict() == by_obj.to_dict() and bo.evaluate(inst, by_spec).feasible


def test_a_file_policy_through_simulate_and_gap_on_the_command_line(policy_file, tmp_path):
    out = tmp_path / "s.json"
    r = run("simulate", PAPER, "--policy", f"{policy_file}:CheapestRegion", "-o", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["method"] == "cheapest-region"
    r = run("evaluate", PAPER, out)
    assert r.returncode == 0, r.stderr
    r = run("gap", PAPER, "--policy", "bace-pipe", "--policy", f"{policy_file}:CheapestRegion", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [p["policy"] for p in d["policies"]] == ["bace-pipe", "cheapest-region"]
    own = d["policies"][1]
    assert own["jobs_started"] <= d["optimum"]["jobs"]


def test_a_policy_that_raises_is_named_with_its_job_time_and_traceback(policy_file, tmp_path):
    out = tmp_path / "s.json"
    r = run("simulate", TINY, "--policy", f"{policy_file}:Raises", "-o", out)
    assert r.returncode == 2 and not out.exists()
    first = r.stderr.splitlines()[0]
    assert (f"policy 'raises' (Raises from {policy_file}) at t=0 s: raised ZeroDivisionError while deciding on "
            "jobs 'j0', 'j1'") in first
    assert "the policy's own bug" in first
    assert f'File "{policy_file}", line' in r.stderr and "in think" in r.stderr
    assert "bace_opt/sim.py" not in r.stderr and "internal error" not in r.stderr
    with pytest.raises(PolicyError, match="at t=0 s: raised ZeroDivisionError"):
        bo.simulate(bo.load_instance(TINY), f"{policy_file}:Raises")


def test_a_policy_that_over_commits_is_named_with_its_job_and_time(policy_file, tmp_path):
    out = tmp_path / "s.json"
    r = run("simulate", PAPER, "--policy", f"{policy_file}:OverCommits", "-o", out)
    assert r.returncode == 2 and not out.exists()
    assert "policy 'over-commits' (OverCommits from" in r.stderr and ") at t=0 s, job '" in r.stderr
    assert ": over-commits: needs" in r.stderr


def test_bad_specs_are_named(policy_file, tmp_path):
    for spec, why in [(f"{tmp_path}/none.py:X", "no such file"), (f"{policy_file}:Nope", "has no 'Nope'"),
                      ("no_such_module_xyz:X", "cannot import"), ("nope", "unknown policy 'nope'")]:
        with pytest.raises(bo.InputError, match=why):
            make_policy(spec)
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_xyz\n")
    with pytest.raises(bo.InputError, match="importing .*broken.py.* failed: ModuleNotFoundError"):
        make_policy(f"{broken}:X")
    r = run("simulate", TINY, "--policy", f"{tmp_path}/none.py:X")
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr


def test_an_installed_package_registers_a_policy_by_entry_point(tmp_path, monkeypatch):
    fake_dist(tmp_path, "acme_sched", POLICY, "acme-sched", "0.1", "acme-cheapest = acme_sched:CheapestRegion\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "acme-cheapest" in available()
    assert make_policy("acme-cheapest").name == "cheapest-region"
    r = run("policies", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0 and "acme-cheapest" in r.stdout and "from acme-sched 0.1" in r.stdout
    assert "bace-pipe" in r.stdout
    r = run("simulate", TINY, "--policy", "acme-cheapest", env={"PYTHONPATH": str(tmp_path)})
    assert r.returncode == 0, r.stderr


def test_options_json_cannot_hold_are_refused_when_saving(policy_file, tmp_path):
    pol = make_policy(f"{policy_file}:CheapestRegion", max_price=float("inf"))
    sched = bo.simulate(bo.load_instance(TINY), pol)
    out = tmp_path / "s.json"
    with pytest.raises(bo.InputError, match=r"meta.policy_options.max_price = inf cannot be written as JSON"):
        sched.save(out)
    assert not out.exists()


def test_a_file_policy_in_bench_beside_bace_pipe_and_its_failures_retried(policy_file, tmp_path):
    """The suite's own runs (~25 s) are resumed from the committed gap-small table (test_bench_suites shows the
    suite reproduces it): the batches run only the two file policies' runs."""
    raising = tmp_path / "flaky.py"
    raising.write_text(POLICY.replace('raise ZeroDivisionError("the policy\'s own bug")', 'raise ZeroDivisionError("x")'))
    out = tmp_path / "gap.csv"
    shutil.copy(ROOT / "benchmarks" / "results" / "gap-small.csv", out)
    r = run("bench", "--suite", "gap", "--size", "small", "--policy", f"{policy_file}:CheapestRegion",
            "--policy", f"{raising}:Raises", "-o", out, cwd=tmp_path)
    assert r.returncode == 1, r.stderr[-2000:]          # the raising policy's runs failed: a failed batch
    import csv
    with open(out) as f:
        rows = list(csv.DictReader(f))
    own = [x for x in rows if x["method"] == f"p1-heur:{policy_file}:CheapestRegion"]
    ref = [x for x in rows if x["method"] == "p1-heur:bace-pipe"]
    bad = [x for x in rows if x["method"].endswith(":Raises")]
    assert own and len(own) == len(ref) and all(x["status"] != "error" for x in own)
    assert bad and all(x["status"] == "error" and "ZeroDivisionError" in x["error"] for x in bad)
    assert not (tmp_path / "gap.csv.damaged").exists()         # a multi-line message stays on its row
    raising.write_text(POLICY.replace("return self.think(queue)", "return []"))   # the fix
    r = run("bench", "--suite", "gap", "--size", "small", "--policy", f"{policy_file}:CheapestRegion",
            "--policy", f"{raising}:Raises", "-o", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"ran {len(bad)} (0 failed; {len(bad)} retried after failing before)" in r.stdout
