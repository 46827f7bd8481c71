"""Honest batches (issue 28 item 4): a failed run is recorded as failed with its reason, listed by the report
(no NaN crash), retried by the next run, and makes the batch exit non-zero; the committed results are read only
when asked; ``--no-run`` never writes."""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bace_opt.bench as bench_pkg
from bace_opt.bench.runner import read_rows, run_specs
from bace_opt.bench.spec import RunSpec
from bace_opt.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
INSTANCE = ROOT / "instances" / "paper-6r-8j-seed1.json"


def _file_specs(tmp_path):
    """Three simulator runs on instance files; the second file is missing at first (a missing data file)."""
    shutil.copy(INSTANCE, tmp_path / "a.json")
    return [RunSpec("fake", "file", "f", i, "sim:lcf", {"path": str(tmp_path / n)})
            for i, n in enumerate(("a.json", "b.json", "a.json"))]


def test_failed_run_recorded_then_retried_exactly_once_fixed(tmp_path):
    specs = _file_specs(tmp_path)
    out = tmp_path / "r.csv"
    c = run_specs(specs, out, progress=False)
    assert (c["ran"], c["failed"]) == (3, 1)
    rows = {r["run_id"]: r for r in read_rows(out)}
    bad = rows[specs[1].run_id]
    assert bad["status"] == "error" and "b.json" in bad["error"]
    # not fixed: the rerun retries the failed run only, and it fails again
    c = run_specs(specs, out, progress=False)
    assert (c["skipped"], c["ran"], c["failed"], c["retried"]) == (2, 1, 1, 1)
    # fixed: the rerun runs exactly the run that failed; its new row replaces the failed one
    shutil.copy(INSTANCE, tmp_path / "b.json")
    c = run_specs(specs, out, progress=False)
    assert (c["skipped"], c["ran"], c["failed"], c["retried"]) == (2, 1, 0, 1)
    rows = read_rows(out)
    assert len(rows) == 3 and all(r["status"] != "error" for r in rows)
    assert run_specs(specs, out, progress=False)["ran"] == 0


def test_bench_with_failed_runs_exits_1_lists_them_and_a_rerun_retries(tmp_path, monkeypatch, capsys):
    specs = _file_specs(tmp_path)
    monkeypatch.setattr(bench_pkg, "specs_for", lambda suite, size: specs)
    out = tmp_path / "r.csv"
    argv = ["bench", "--suite", "realistic", "--size", "small", "-o", str(out)]
    assert main(argv) == 1
    text = capsys.readouterr().out
    assert "ran 3 (1 failed)" in text and "Failed runs: 1" in text and "b.json" in text
    shutil.copy(INSTANCE, tmp_path / "b.json")
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "2 already in" in text and "ran 1 (0 failed; 1 retried" in text and "Failed runs" not in text


def test_bench_with_a_policy_that_raises_exits_1(tmp_path, monkeypatch, capsys):
    specs = [RunSpec("paper", "paper", "main", 1, f"sim:{p}") for p in ("bace-pipe", "lcf", "no-such-policy")]
    monkeypatch.setattr(bench_pkg, "specs_for", lambda suite, size: specs)
    out = tmp_path / "r.csv"
    assert main(["bench", "--suite", "paper", "--size", "small", "-o", str(out), "--workers", "2"]) == 1
    text = capsys.readouterr().out
    assert "Failed runs: 1" in text and "no-such-policy" in text
    assert "### BACE-Pipe against each baseline" in text      # the finished runs are still reported


@pytest.mark.parametrize("suite", ["paper-full", "regimes-full", "gap-small"])
def test_report_lists_failed_rows_without_crashing(tmp_path, capsys, suite):
    """Rows of a committed results file turned into failures (no figures, as a failed run writes): the report
    leaves them out of the tables and lists them (before: NaN crash in compare.py, exit 3 for regimes)."""
    src = RESULTS / f"{suite}.csv"
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    keep = {"run_id", "suite", "instance", "family", "size", "seed", "method", "options"}
    for r in rows[::7]:
        for k in r:
            if k not in keep:
                r[k] = ""
        r["status"], r["error"] = "error", "FileNotFoundError: data folder missing"
    out = tmp_path / f"{suite}.csv"
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    name, size = suite.split("-")
    assert main(["bench", "--suite", name, "--size", size, "-o", str(out), "--no-run"]) == 0
    text = capsys.readouterr().out
    assert f"Failed runs: {len(rows[::7])}" in text and "data folder missing" in text


def test_no_run_never_writes(tmp_path, capsys):
    out = tmp_path / "r.csv"
    shutil.copy(RESULTS / "scaling-small.csv", out)
    with open(out, "ab") as f:
        f.write(b"a line,cut short")            # what a repair would rewrite
    before = out.read_bytes()
    assert main(["bench", "--suite", "scaling", "--size", "small", "-o", str(out), "--no-run"]) == 0
    assert out.read_bytes() == before
    assert not (tmp_path / "r.csv.damaged").exists()


def _py_m(*argv, cwd, env=None):
    e = {k: v for k, v in os.environ.items() if k != "BACE_OPT_RESULTS"}
    e.update(env or {}, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "bace_opt", *argv], cwd=cwd, env=e, capture_output=True,
                          text=True, timeout=300)


def test_committed_results_read_only_when_asked(tmp_path):
    r = _py_m("bench", "--suite", "gap", "--size", "small", "--no-run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "(no results yet: bace-opt-results/gap-small.csv)" in r.stdout and "--results committed" in r.stdout
    assert "P1 exact" not in r.stdout
    assert not list(tmp_path.iterdir())                        # --no-run wrote nothing, not even a folder
    r = _py_m("bench", "--suite", "gap", "--size", "small", "--no-run", "--results", "committed", cwd=tmp_path)
    assert r.returncode == 0 and "P1 exact (HiGHS)" in r.stdout, r.stderr
    r = _py_m("bench", "--suite", "gap", "--size", "small", "--no-run", cwd=tmp_path,
              env={"BACE_OPT_RESULTS": str(tmp_path / "mine")})
    assert f"(no results yet: {tmp_path / 'mine' / 'gap-small.csv'})" in r.stdout
