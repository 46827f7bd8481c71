"""The remaining named faults of issue 42 (item 5), each with its exact message: a policy whose ``name`` is not
text, a damaged ``entry_points.txt`` of an unrelated package, a tampered ``jobs_done``, a file of another schema
version, an infeasible ``--warm-start``.  The commands run in this process (``cli.main.main``) except where the
fault acts when ``bace_opt`` is imported."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "instances" / "tiny-2r-2j.json"
PAPER = ROOT / "instances" / "paper-6r-8j-seed1.json"
sys.path.insert(0, str(ROOT / "tests"))
from policy_files import CHEAPEST_REGION, fake_dist  # noqa: E402

NAMELESS = textwrap.dedent('''
    from bace_opt.policies import PolicyBase


    class Nameless(PolicyBase):
        name = 7
        options = {}

        def decide(self, now, queue, state):
            return []

        def place(self, job, state):
            return None


    class NoneName(Nameless):
        name = None


    class EmptyName(Nameless):
        name = ""


    class OptionsNumber(Nameless):
        name = "options-number"
        options = 5


    class OptionsObject(Nameless):
        name = "options-object"
        options = {"x": object()}
''')


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("cls,what", [
    ("Nameless", "Nameless.name must be a non-empty string (the schedule's method), got 7"),
    ("NoneName", "NoneName.name must be a non-empty string (the schedule's method), got None"),
    ("EmptyName", "EmptyName.name must be a non-empty string (the schedule's method), got ''"),
    ("OptionsNumber", "OptionsNumber.options must be a mapping (the schedule's meta.policy_options), got int 5"),
    ("OptionsObject", "OptionsObject.options must be JSON data (the schedule's meta.policy_options: text, numbers, "
                      "lists, objects): Object of type object is not JSON serializable")])
def test_a_policy_whose_name_is_not_text_exits_2_naming_it(cls, what, tmp_path, capsys):
    """Before: the run wrote a schedule whose method was 7, which our own ``evaluate`` refuses (options holding an
    object: an internal error, exit 3)."""
    f = tmp_path / "nameless.py"
    f.write_text(NAMELESS)
    out = tmp_path / "s.json"
    rc, _, err = cli(capsys, "simulate", TINY, "--policy", f"{f}:{cls}", "-o", out)
    assert (rc, err) == (2, f"bace-opt simulate: error: policy '{f}:{cls}': {what}\n")
    assert not out.exists()


def test_a_damaged_entry_points_file_of_another_package_is_one_warning(tmp_path):
    """Before: networkx reads every package's entry points when imported: a traceback and exit 1 on every command."""
    fake_dist(tmp_path, "acme_policies", CHEAPEST_REGION, "acme-policies", "1.0",
              "acme-cheapest = acme_policies:CheapestRegion\n")
    info = tmp_path / "broken_pkg-2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-pkg\nVersion: 2.0\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nbroken-tool\n")       # a line without '='
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    r = subprocess.run([sys.executable, "-m", "bace_opt", "policies"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "WARNING bace_opt.installed: the entry points of 1 installed package(s) cannot be read and are ignored: "
        f"package broken-pkg ({info}/entry_points.txt) cannot be parsed ("), r.stderr
    assert "acme-cheapest" in r.stdout         # the other packages' policies are still there


@pytest.mark.parametrize("value,shown", [("8", "'8' (text, not a number)"), (8.000009, "8.00001"),
                                         (True, "True"), (9, "9")])
def test_a_tampered_jobs_done_names_two_values_that_differ(value, shown, tmp_path, capsys):
    """Before: "reported 8, recomputed 8" for the text "8"."""
    d = bo.simulate(bo.load_instance(PAPER), "bace-pipe").to_dict()
    d["metrics"]["jobs_done"] = value
    f = tmp_path / "s.json"
    f.write_text(json.dumps(d))
    rc, out, _ = cli(capsys, "evaluate", PAPER, f)
    assert rc == 1 and f"  [rule 4] metrics.jobs_done: reported {shown}, recomputed 8\n" in out


def test_two_numbers_that_differ_past_six_digits_are_shown_with_every_digit():
    from bace_opt.evaluate import check_reported_metrics
    [v] = check_reported_metrics({"total_cost_usd": 2859.9508974874193}, {"total_cost_usd": 2859.9477515448925})
    assert v.message == "metrics.total_cost_usd: reported 2859.9508974874193, recomputed 2859.9477515448925"


@pytest.mark.parametrize("schema,message", [
    ("bace-opt/instance/v2", "schema 'bace-opt/instance/v2' is a version of an instance file that this bace-opt "
                             "does not read (it reads 'bace-opt/instance/v1'); was it written by another version of "
                             "bace-opt?"),
    ("bace-opt/nonsense", "schema 'bace-opt/nonsense' is not a schema of bace-opt's files; an instance file has "
                          "schema 'bace-opt/instance/v1'"),
    ("bace-opt/schedule/v1", "this is a schedule file (schema 'bace-opt/schedule/v1'), not an instance file "
                             "(schema 'bace-opt/instance/v1'); are the files in the right order?")])
def test_validate_names_two_different_schemas(schema, message, tmp_path, capsys):
    """Before: "an instance file (schema v2), not an instance file (schema v1)"."""
    d = json.loads(TINY.read_text())
    d["schema"] = schema
    f = tmp_path / "i.json"
    f.write_text(json.dumps(d))
    rc, _, err = cli(capsys, "validate", f)
    assert (rc, err) == (2, f"bace-opt validate: error: {f}: {message}\n")


def _warm(tmp_path, both_on: str) -> Path:
    """A schedule of TINY that starts both jobs at t=0, whole, on region ``both_on``."""
    inst = bo.load_instance(TINY)
    plans = [bo.JobPlan(j.name, "done", 0.0, (bo.Block(both_on, j.stages),), ()) for j in inst.jobs]
    f = tmp_path / f"warm-{both_on}.json"
    bo.make_schedule(inst, plans, "by hand", check=False).save(f)
    return f


@pytest.mark.parametrize("problem,what", [
    ("placement", "region 'r1': 3 GPUs at t0 > 2 available (jobs: j0, j1)"),
    ("schedule", "region 'r1': 3 GPUs in use > 2 available from t=0 s to t=")])
def test_an_infeasible_warm_start_is_one_warning_naming_what_is_infeasible(problem, what, tmp_path, capsys, caplog):
    """Before: P1 and P2 dropped it without a word."""
    out = tmp_path / "o.json"
    argv = ["solve", TINY, "--problem", problem, "-o", out, "--time-limit", "20", "--warm-start"]
    with caplog.at_level(logging.WARNING):
        assert cli(capsys, *argv, _warm(tmp_path, "r1"))[0] == 0
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(said) == 1 and said[0].startswith(f"the warm start is infeasible and is ignored: {what}"), said
    caplog.clear()
    with caplog.at_level(logging.WARNING):          # a feasible one: not a word
        assert cli(capsys, *argv, _warm(tmp_path, "r0"))[0] == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
