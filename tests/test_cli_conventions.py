"""Command-line conventions (issue 13 item 4): --version, python -m bace_opt, -v/-q on every command, --json,
a closed reader ends the process at once, Dask quiet unless asked, short numbers with units, bench results
resolved against the project, the README's Python snippet prints what it computed."""
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.cli.main import build_parser, verbosity
from conftest import ROOT

TINY = ROOT / "instances" / "tiny-2r-2j.json"
PAPER = ROOT / "instances" / "paper-6r-8j-seed1.json"


def py_m(*args, cwd=None, env=None):
    """``python -m bace_opt ARGS`` as a user runs it (subprocess)."""
    e = dict(os.environ, PYTHONWARNINGS="ignore", **(env or {}))
    return subprocess.run([sys.executable, "-m", "bace_opt", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=e, timeout=300)


def test_version_and_python_m():
    r = py_m("--version")
    assert r.returncode == 0 and r.stdout.startswith(f"bace-opt {bo.__version__} (python ")
    from importlib.metadata import version
    assert f"highspy {version('highspy')}" in r.stdout and f"ortools {version('ortools')}" in r.stdout
    r = py_m("--help")
    assert r.returncode == 0 and "usage: bace-opt" in r.stdout and "plot" in r.stdout


def _all_parsers(p, path=()):
    import argparse
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, child in a.choices.items():
                yield from _all_parsers(child, path + (name,))


def test_every_command_takes_v_and_q():
    ap = build_parser()
    paths = [path for path, p in _all_parsers(ap) if path]
    assert {("solve",), ("simulate",), ("evaluate",), ("pipeline",), ("bench",), ("plot",), ("validate",),
            ("generate", "paper")} <= set(paths)
    for path, p in _all_parsers(ap):
        opts = {o for a in p._actions for o in a.option_strings}
        assert {"-v", "--verbose", "-q", "--quiet"} <= opts, path
    # counts add up before and after the command name; -q wins
    assert verbosity(ap.parse_args(["-v", "validate", "x", "-v"])) == 2
    assert verbosity(ap.parse_args(["validate", "x", "-vvv"])) == 2
    assert verbosity(ap.parse_args(["validate", "x"])) == 0
    assert verbosity(ap.parse_args(["-v", "generate", "paper", "--seed", "1", "-q"])) == -1


@pytest.fixture
def run_main(capsys, caplog):
    """``bace-opt ARGS`` in this process (fast): (exit code, stdout, log lines 'LEVEL logger: message');
    restores the logging set-up main() changes."""
    import logging
    from bace_opt.cli.main import main
    names = ("", "bace_opt", "distributed")
    saved = {n: logging.getLogger(n).level for n in names}
    dask_env = os.environ.get("DASK_LOGGING__DISTRIBUTED")

    def run(*args):
        caplog.clear()
        rc = main([str(a) for a in args])
        out = capsys.readouterr()
        logs = "\n".join(f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records)
        return rc, out.out, logs + out.err
    yield run
    for n, level in saved.items():
        logging.getLogger(n).setLevel(level)
    if dask_env is None:
        os.environ.pop("DASK_LOGGING__DISTRIBUTED", None)
    else:
        os.environ["DASK_LOGGING__DISTRIBUTED"] = dask_env


def long_numbers(text, most=4):
    """Decimal numbers in ``text`` with more than ``most`` significant digits (integers are exact counts;
    money from 100 USD up is printed to the cent)."""
    out = []
    for m in re.finditer(r"(?<![\w.])\d[\d,]*\.\d+", text):
        tok = m.group()
        if re.fullmatch(r"[\d,]+\.\d\d", tok) and text[m.end():].startswith(" USD"):
            continue
        digits = tok.replace(",", "").replace(".", "").lstrip("0")
        if len(digits) > most:
            out.append(tok)
    return out


def test_v_progress_vv_solver_logs_q_quiet_and_short_numbers(run_main, tmp_path):
    out = tmp_path / "p1.json"
    rc, so, se = run_main("solve", TINY, "-o", out, "-v")
    assert rc == 0, se
    assert "INFO bace_opt.cli.solve: loaded tiny-2r-2j" in se and "HiGHS" not in se
    # the summary: short numbers with units (no nine significant digits)
    assert long_numbers(so) == [], so
    assert long_numbers("t 0.005022 s, 146.308256 USD, 2.5, 243,721 s, 2,515.82 USD") == ["146.308256"]
    assert re.search(r"objective: [\d.]+ USD \[level 2 cost_usd", so) and re.search(r"time: wall [\d.]+ s", so)
    rc, so, se = run_main("-v", "solve", TINY, "-o", out, "-v")
    assert rc == 0 and "Solving report" in se   # HiGHS's own log (its banner is printed once per process)
    rc, so, se = run_main("solve", TINY, "--problem", "schedule", "-o", tmp_path / "p2.json", "-q")
    assert rc == 0 and "INFO" not in se
    assert re.search(r"objective: [\d.]+ s \[mean JCT \+ mu x cost", so), so
    rc, so, se = run_main("simulate", PAPER)
    assert "INFO" not in se
    assert re.search(r"avg_jct_s: [\d,]+ s \([\d.]+ h\)", so), so
    assert long_numbers(so) == [], so


def test_json_for_solve_simulate_evaluate_pipeline(run_main, tmp_path):
    sp = tmp_path / "sim.json"
    rc, so, se = run_main("simulate", TINY, "-o", sp, "--json", "--jobs")
    assert rc == 0, se
    d = json.loads(so)
    assert d["policy"] == "bace-pipe" and d["metrics"]["jobs_done"] == 2 and len(d["jobs"]) == 2
    assert d["jobs"][0]["wait_s"] >= 0
    rc, so, se = run_main("solve", TINY, "-o", tmp_path / "p1.json", "--json")
    d = json.loads(so)
    assert d["status"] == "optimal" and d["objective_unit"] == "USD" and d["objective_is"].startswith("level 2")
    assert [lv["name"] for lv in d["levels"]] == ["jobs_started", "cost_usd", "run_s"]
    assert abs(d["evaluated_cost_usd"] - d["objective"]) <= 1e-6 * max(1.0, d["objective"])
    rc, so, se = run_main("solve", TINY, "--problem", "schedule", "--mu", "100", "-o", tmp_path / "p2.json", "--json")
    d = json.loads(so)
    assert d["objective_unit"] == "s" and d["mu_s_per_usd"] == 100.0
    rc, so, se = run_main("evaluate", TINY, sp, "--json")
    assert json.loads(so)["feasible"] is True
    job = bo.load_schedule(sp).jobs[0].name
    rc, so, se = run_main("pipeline", TINY, sp, "--job", job, "--kind", "1f1b", "--json")
    assert rc == 0 and json.loads(so)["iteration_s"] > 0


def test_short_formatting():
    from bace_opt._format import pct, short
    assert short(20.5978139, "s") == "20.6 s"
    assert short(243721.179, "s") == "243,721 s (67.7 h)"
    assert short(146.308256, "USD") == "146.31 USD"
    assert short(None, "s") == "-" and short(0.0, "s") == "0 s" and short(12, "jobs") == "12 jobs"
    assert pct(0.000265) == "0.0265 %"


def test_closed_reader_ends_the_process_at_once(tmp_path):
    """`bace-opt -vv solve ... 2>&1 | head -3`: the reader leaves after 3 lines; the next write ends the
    process (SIGPIPE), long before the solver's time limit, with no traceback."""
    e = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.Popen([sys.executable, "-m", "bace_opt", "-vv", "solve", PAPER, "--time-limit", "300",
                          "-o", tmp_path / "x.json"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT,
                         env=e)
    lines = [p.stdout.readline() for _ in range(3)]
    p.stdout.close()
    try:
        rc = p.wait(timeout=120)   # a hang detector, not a timing claim: the solve alone runs far longer
    except subprocess.TimeoutExpired:
        p.kill()
        raise AssertionError("bace-opt kept running after its reader closed")
    assert all(lines) and rc == -signal.SIGPIPE
    assert not (tmp_path / "x.json").exists()


def test_piped_into_a_reader_that_left_no_error(tmp_path):
    """The summary written into a pipe whose reader already left: no traceback, no 'Exception ignored'."""
    e = dict(os.environ, PYTHONWARNINGS="ignore")
    cmd = f"{sys.executable} -m bace_opt solve {TINY} -o {tmp_path / 'x.json'} -v | true"
    r = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, cwd=ROOT, env=e, timeout=300)
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr and "BrokenPipe" not in r.stderr


DASK_SCRIPT = """
import sys
from bace_opt.cli.main import configure_logging
configure_logging(int(sys.argv[2]))
import bench_fake
from bace_opt.bench import run_specs
print(run_specs(bench_fake.specs(2), sys.argv[1], dask_address="local", execute=bench_fake.execute_slow,
                progress=False))
"""


def test_dask_quiet_unless_asked(tmp_path):
    pytest.importorskip("distributed")
    env = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    env.update(PYTHONWARNINGS="ignore", PYTHONPATH=str(ROOT / "tests"))
    runs = {}
    for level in (0, 2):
        r = subprocess.run([sys.executable, "-c", DASK_SCRIPT, str(tmp_path / f"r{level}.csv"), str(level)],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
        assert r.returncode == 0 and "'ran': 2" in r.stdout, r.stderr
        runs[level] = [l for l in r.stderr.splitlines() if "INFO" in l]
    assert runs[0] == []
    assert len(runs[2]) >= 5      # what -vv shows (and what every run showed before)


def test_bench_results_are_the_users_own_unless_committed_asked(tmp_path, monkeypatch):
    """A fresh bench writes (and --no-run reads) ./bace-opt-results or $BACE_OPT_RESULTS; the project's
    committed results only with --results committed (issue 28 item 4)."""
    from bace_opt.cli.bench import results_dir
    monkeypatch.delenv("BACE_OPT_RESULTS", raising=False)
    assert results_dir() == Path("bace-opt-results")
    assert results_dir(committed=True) == ROOT / "benchmarks" / "results"
    monkeypatch.setenv("BACE_OPT_RESULTS", str(tmp_path))
    assert results_dir() == tmp_path
    r = py_m("bench", "--suite", "gap", "--size", "large", "--no-run", "--results", "committed", cwd=tmp_path,
             env={"BACE_OPT_RESULTS": ""})
    assert r.returncode == 0, r.stderr
    assert f"(no results yet: {ROOT / 'benchmarks' / 'results' / 'gap-large.csv'})" in r.stdout
    assert not list(tmp_path.iterdir())


def test_readme_python_snippet_prints_what_it_computed(tmp_path):
    text = (ROOT / "README.md").read_text()
    section = re.search(r"\n## Python\n(.*?)\n## ", text, re.S).group(1)
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    assert "print(" in code and "bo.gap(" in code
    # the README's own instance (its P1 takes about a second on highspy 1.16), from the repository root; its online
    # call with 10 s of the README's 20 (the whole call's wall clock: 10 s still prints every bound)
    assert code.count("online=True, time_limit=20)") == 1
    code = code.replace("online=True, time_limit=20)", "online=True, time_limit=10)")
    r = subprocess.run([sys.executable, "-c", code.replace("out.json", str(tmp_path / "out.json"))],
                       capture_output=True, text=True, cwd=ROOT, timeout=900, env=dict(os.environ, PYTHONWARNINGS="ignore"))
    assert r.returncode == 0, r.stderr
    assert "bace-pipe   6 of 6        235.00 USD  60.6 %" in r.stdout     # the figure the README prints
    assert "optimal" in r.stdout and "feasible" in r.stdout.lower() and "OnlineGap(" in r.stdout
    assert (tmp_path / "out.json").exists()
