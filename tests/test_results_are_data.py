"""A results file is data (issue 42 item 4): nothing named inside a results file, a schedule, an instance or an
adversary directory is ever imported or run, whatever its method prefix.  Each test names a policy file that
writes a marker file when it is imported or built, puts its spec where a file can hold it, runs the command that
reads that file, and checks the marker was never written.  A policy's code runs only where the user names it
(``--policy``, the API).  The commands run in this process (``cli.main.main``)."""
from __future__ import annotations

import csv
import json
import textwrap
from pathlib import Path

import pytest

import bace_opt.bench as bench_pkg
from bace_opt.bench.compare import policy_label, policy_names
from bace_opt.bench.runner import read_rows
from bace_opt.bench.spec import COLUMNS, RunSpec
from bace_opt.cli.main import main
from bace_opt.policies.gate import DECISION_LIMIT_ENV

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TINY = ROOT / "instances" / "tiny-2r-2j.json"
SMALL = ROOT / "instances" / "small-4r-6j.json"
PREFIXES = ("sim:", "p1-heur:")

MARKED = textwrap.dedent('''
    from pathlib import Path
    Path({marker!r}).write_text("imported")
    from bace_opt.policies import PolicyBase


    class Marked(PolicyBase):
        name = "marked"
        options = {{}}

        def __init__(self):
            Path({marker!r}).write_text("built")

        def decide(self, now, queue, state):
            return []

        def place(self, job, state):
            return None
''')

SLOW = textwrap.dedent('''
    import time
    from bace_opt.policies import PolicyBase


    class Slow(PolicyBase):
        name = "slow"
        options = {}

        def decide(self, now, queue, state):
            while True:
                time.sleep(0.01)

        def place(self, job, state):
            return None
''')


@pytest.fixture
def marked(tmp_path):
    """(the spec of a policy file that writes ``marker`` when imported or built, the marker's path)."""
    marker = tmp_path / "MARKER"
    f = tmp_path / "marked_policy.py"
    f.write_text(MARKED.format(marker=str(marker)))
    return f"{f}:Marked", marker


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def _with_method(src: Path, dst: Path, prefix: str, spec: str, n: int = 3) -> int:
    """``src``'s rows, the ``n`` first of ``prefix`` copied under the method ``prefix + spec`` (own run_ids)."""
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    extra = [dict(r, method=prefix + spec, run_id=f"marked{i:010d}") for i, r in
             enumerate([r for r in rows if r["method"].startswith(prefix)][:n])]
    assert extra
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows + extra)
    return len(extra)


def test_a_label_is_the_text_of_the_file_for_every_prefix(marked):
    spec, marker = marked
    for prefix in ("sim:", "p1-heur:", "p1:", "p1-nobw:", "p2:", "other:"):
        assert policy_label(prefix + spec) == spec
    assert policy_label("sim:bace-pipe") == "bace-pipe" and policy_label("p1-heur:x\x1b[31m") == "x\\x1b[31m"
    assert not marker.exists()
    with policy_names({spec: "marked", "p.py:C": "lcf"}):      # what bench --policy names, by its name
        assert policy_label("sim:" + spec) == "marked" and policy_label("sim:p.py:C") == "lcf (p.py:C)"
    assert policy_label("sim:" + spec) == spec


@pytest.mark.parametrize("prefix,suite,size", [("sim:", "paper", "full"), ("p1-heur:", "gap", "small")])
def test_bench_no_run_shows_the_text_and_never_imports(prefix, suite, size, marked, tmp_path, capsys):
    """Before: the report imported the file (and ran its module), exit 0, its rows listed by the policy's name."""
    spec, marker = marked
    out = tmp_path / f"{suite}-{size}.csv"
    _with_method(RESULTS / f"{suite}-{size}.csv", out, prefix, spec, n=10**4)
    bounds = ["--brackets", RESULTS / "schedule_brackets_paper24.csv"] if prefix == "sim:" else []
    rc, text, err = cli(capsys, "bench", "--suite", suite, "--size", size, "--no-run", "-o", out, *bounds)
    assert rc == 0, err
    assert spec in text and not marker.exists()
    if bounds:          # the bounds' table too
        assert f"| {spec} |" in text.split("### Distance to the certified lower bound")[1]


def test_the_claims_map_and_the_bounds_never_import(marked, tmp_path, capsys):
    spec, marker = marked
    out = tmp_path / "regimes-full.csv"
    with open(RESULTS / "regimes-full.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    keep = {r["size"] for r in rows[:1]}          # one regime keeps the test short
    rows = [r for r in rows if r["size"] in keep]
    lcf = [r for r in rows if r["method"] == "sim:lcf"]
    rows += [dict(r, method=prefix + spec, run_id=f"marked{prefix[0]}{i:010d}") for prefix in PREFIXES
             for i, r in enumerate(lcf)]
    with open(out, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    rc, text, err = cli(capsys, "bench", "--suite", "regimes", "--size", "full", "--no-run", "-o", out,
                        "--brackets", RESULTS / "schedule_brackets.csv")
    assert rc == 0, err
    assert "claim" in text.lower() and spec in text and not marker.exists()


def _fake_suite(monkeypatch):
    """``bench --suite paper`` as one run of ``sim:lcf`` on the tiny instance, plus one per ``--policy``."""
    def specs_for(suite, size, policies=()):
        return [RunSpec("paper", "file", "tiny", 1, f"sim:{p}", {"path": str(TINY)})
                for p in ("lcf", *policies)]
    monkeypatch.setattr(bench_pkg, "specs_for", specs_for)
    return specs_for


@pytest.mark.parametrize("prefix", PREFIXES)
def test_bench_runs_and_resumes_a_file_policys_rows_only_when_it_is_named_again(prefix, marked, monkeypatch,
                                                                                 tmp_path, capsys):
    spec, marker = marked
    specs_for = _fake_suite(monkeypatch)
    out = tmp_path / "paper-small.csv"
    theirs = specs_for("paper", "small", [spec])[1]
    theirs = RunSpec(theirs.suite, theirs.family, theirs.size, theirs.seed, prefix + spec, theirs.instance_args)
    with open(out, "w", newline="") as f:       # the file names the policy: one failed row, one finished row
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerow({"run_id": theirs.run_id, "suite": "paper", "family": "file", "size": "tiny", "seed": 1,
                    "method": theirs.method, "status": "error", "error": "it failed"})
        w.writerow({"run_id": "finished000000", "suite": "paper", "family": "file", "size": "tiny", "seed": 2,
                    "method": theirs.method, "status": "done", "jobs": 2, "jobs_done": 2, "avg_jct_s": 5})
    argv = ["bench", "--suite", "paper", "--size", "small", "-o", out]
    for _ in range(2):                           # run, then resume: the file's policy is neither run nor imported
        rc, text, err = cli(capsys, *argv)
        assert rc == 0 and "ran 1 (0 failed)" in text or "1 already in" in text, text + err
        assert "Failed runs: 1" in text                 # its failed row is listed, not retried
        assert spec in text and not marker.exists()
    rows = {r["run_id"]: r for r in read_rows(out)}
    assert rows[theirs.run_id]["status"] == "error" and len(rows) == 3
    rc, text, err = cli(capsys, *argv, "--no-run")
    assert not marker.exists()
    if prefix == "sim:":                         # named again with --policy: its row is resumed (and it runs)
        rc, text, err = cli(capsys, *argv, "--policy", spec)
        assert rc == 0, text + err
        assert marker.exists() and "1 retried" in text
        assert read_rows(out)[0]["status"] == "done"


def test_a_run_stopped_by_its_time_limit_is_time_limit_and_not_retried(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(DECISION_LIMIT_ENV, "0.3")
    _fake_suite(monkeypatch)
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    out = tmp_path / "r.csv"
    argv = ["bench", "--suite", "paper", "--size", "small", "-o", out, "--policy", f"{slow}:Slow"]
    rc, text, err = cli(capsys, *argv)
    assert rc == 0, text + err
    got = {r["method"]: r for r in read_rows(out)}
    stopped = got[f"sim:{slow}:Slow"]
    assert stopped["status"] == "time_limit" and "time limit" in stopped["error"]
    assert "### Runs stopped by a time limit: 1" in text and "Failed runs" not in text
    rc, text, err = cli(capsys, *argv)
    assert rc == 0 and "2 already in" in text and "ran 0" in text


def _schedule_naming(spec: str, tmp_path: Path, capsys) -> Path:
    """A schedule of SMALL whose method and meta name the policy ``spec``."""
    s = tmp_path / "s.json"
    assert cli(capsys, "simulate", SMALL, "-o", s)[0] == 0
    d = json.loads(s.read_text())
    d["method"] = "sim:" + spec
    d["meta"].update(policy="p1-heur:" + spec, policy_spec=spec)
    s.write_text(json.dumps(d))
    return s


def test_evaluate_plot_and_warm_start_never_import_what_a_schedule_names(marked, tmp_path, capsys):
    spec, marker = marked
    s = _schedule_naming(spec, tmp_path, capsys)
    assert cli(capsys, "evaluate", SMALL, s, "-o", tmp_path / "priced.json")[0] == 0
    assert cli(capsys, "plot", SMALL, s, "-o", tmp_path / "p.png", "--kind", "placement", "--dpi", "30")[0] == 0
    rc, _, err = cli(capsys, "solve", SMALL, "--warm-start", s, "-o", tmp_path / "o.json", "--time-limit", "5")
    assert rc == 0, err
    assert not marker.exists()


def test_an_adversary_directory_naming_a_policy_is_refused_and_never_imported(marked, tmp_path, capsys):
    from bace_opt.adversary.search import AdversaryConfig
    spec, marker = marked
    d = tmp_path / "adv"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(AdversaryConfig(policy=spec).to_dict()))
    (d / "trials.jsonl").write_text(json.dumps({"trial": 0, "policy": spec, "params": {}}) + "\n")
    rc, _, err = cli(capsys, "adversary", "--policy", "bace-pipe", "-o", d, "--budget", "1")
    assert rc == 2 and "other settings (policy)" in err, err
    assert not marker.exists()
