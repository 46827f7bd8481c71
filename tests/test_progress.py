"""Long work shows progress (issue 42 item 3): ``bench`` a line per run, the P2 search its best schedule and lower
bound stage by stage, the P1 solve its bound and incumbent; with ``-v`` on stderr, never on stdout, nothing with
``-q``.  Each command runs as a user runs it (a subprocess: the CLI's own logging, not pytest's), on a small
instance with a short limit."""
from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from bace_opt import progress
from bace_opt.exact.p1.certify import SOURCE_SEARCH, Timeline, p1_progress

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "instances" / "paper-6r-8j-seed1.json"
TINY = ROOT / "instances" / "tiny-2r-2j.json"

#: ``bench`` on two simulator runs of an instance file (the suite's own runs are minutes long)
BENCH = """
import sys
import bace_opt.bench as b
from bace_opt.bench.spec import RunSpec
b.specs_for = lambda suite, size, **kw: [RunSpec("realistic", "file", "f", i, "sim:lcf", {{"path": {path!r}}})
                                         for i in range(2)]
from bace_opt.cli.main import main
sys.exit(main(["bench", "--suite", "realistic", "--size", "small", "-o", {out!r}, *sys.argv[1:]]))
"""


def run(argv, *, code: str | None = None, timeout: float = 60):
    cmd = [sys.executable, "-c", code, *argv] if code else [sys.executable, "-m", "bace_opt", *map(str, argv)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)


def progress_lines(err: str) -> list[str]:
    return [l for l in err.splitlines() if "bace_opt.progress" in l or "bench run" in l]


@pytest.mark.parametrize("flag", ["-v", "-q"])
def test_bench_tells_each_run_on_stderr_with_v_and_nothing_with_q(tmp_path, flag):
    out = tmp_path / "r.csv"
    r = run([flag], code=BENCH.format(path=str(SMALL), out=str(out)))
    assert r.returncode == 0, r.stderr
    lines = [l for l in r.stderr.splitlines() if "bench run" in l]
    if flag == "-v":
        assert len(lines) == 2 and "bench run 1/2: sim:lcf on paper-6r-8j-seed1: done, " in lines[0]
        assert lines[1].startswith("INFO bace_opt.bench.runner: bench run 2/2:") and lines[1].endswith(" s")
    else:
        assert not lines and r.stderr == ""
    assert "bench run" not in r.stdout and "realistic/small: 2 runs" in r.stdout


@pytest.mark.parametrize("flag", ["-v", "-q"])
def test_p2_bracket_shows_its_bound_and_best_schedule_on_stderr(tmp_path, flag):
    """The paper 8-job P2 in 4 s with its bracket: its stages (the exact P2, the lower bound, the list
    scheduler's best as it falls, unless the exact P2 proved its optimum) come as lines."""
    r = run(["solve", SMALL, "--problem", "schedule", "--time-limit", "4", "--bracket", "--json",
             "-o", tmp_path / "s.json", flag])
    assert r.returncode in (0, 1), r.stderr
    json.loads(r.stdout)                      # stdout is the JSON alone
    lines = progress_lines(r.stderr)
    if flag == "-q":
        assert not lines and "INFO" not in r.stderr
        return
    text = "\n".join(lines)
    assert "P2 exact (highs): 8 jobs" in text
    assert "P2 bracket: exact P2 (highs, slotted model): " in text and "P2 bracket: [" in text and " left]" in text
    assert "bace_opt.progress" not in r.stdout


def test_the_list_schedulers_best_falls_beside_the_lower_bound(caplog):
    """The list scheduler's stages and its best as it falls (in process: the stages a loaded machine may not
    reach in a 4 s command)."""
    from bace_opt.exact.p2.scale import best_list_schedule
    from bace_opt.instance import load_instance
    caplog.set_level(logging.INFO, logger="bace_opt.progress")
    out = best_list_schedule(load_instance(SMALL), 0.5, seed=1, lower_bound=40_000.0)
    told = [r.getMessage() for r in caplog.records if r.name == "bace_opt.progress.p2"]
    assert told[0].startswith("P2 list scheduler: ") and "candidates; pricing them" in told[0]
    best = [m for m in told if "best mean JCT" in m]
    assert best and all("lower bound 40,000 s" in m and "gap " in m for m in best)
    assert f"best mean JCT {progress.value(out['value'])}" in best[-1]      # the last line is the result


def test_p2_exact_cpsat_tells_its_incumbents(tmp_path):
    r = run(["solve", TINY, "--problem", "schedule", "--solver", "cpsat", "--time-limit", "4", "--json",
             "-o", tmp_path / "s.json", "-v"])
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)
    text = "\n".join(progress_lines(r.stderr))
    assert "P2 exact (cpsat): " in text and "candidates; solving" in text and "optimal, objective" in text


@pytest.mark.parametrize("flag", ["-v", "-q"])
def test_p1_solve_tells_its_bound_and_incumbent(tmp_path, flag):
    r = run(["solve", SMALL, "--problem", "placement", "--time-limit", "60", "--json", "-o", tmp_path / "p.json",
             flag])
    assert r.returncode in (0, 1), r.stderr
    json.loads(r.stdout)
    lines = progress_lines(r.stderr)
    if flag == "-q":
        assert not lines
        return
    text = "\n".join(lines)
    assert "bace_opt.progress.p1: P1 (" in text and "jobs; building the model" in text
    assert "level 2 bound " in text and "incumbent " in text


def test_a_moving_figure_is_told_at_most_once_a_second_and_its_last_value_on_flush(caplog):
    caplog.set_level(logging.INFO, logger="bace_opt.progress")
    tl = Timeline(on_point=p1_progress("P1 (test)"))
    for k in range(5):
        tl.add(10.0 + k, 20.0 - k, SOURCE_SEARCH)
    told = [r.getMessage() for r in caplog.records if r.name == "bace_opt.progress.p1"]
    assert len(told) == 1 and "level 2 bound 10" in told[0] and "incumbent 20" in told[0]
    tl.on_point.flush()
    told = [r.getMessage() for r in caplog.records if r.name == "bace_opt.progress.p1"]
    assert len(told) == 2 and "level 2 bound 14" in told[1] and "incumbent 16" in told[1]
    assert len(tl.points) == 5          # the time line keeps every point; only the lines are thinned


def test_nothing_is_formatted_when_progress_is_not_shown(caplog):
    caplog.set_level(logging.WARNING, logger="bace_opt.progress")
    mv = progress.Moving(progress.logger("p2"), "x")
    mv.tell("a")
    mv.flush()
    assert mv.pending is None and not caplog.records


def test_a_long_silent_stage_beats_from_a_thread_with_the_commands_deadline(caplog):
    import time

    from bace_opt import clock
    caplog.set_level(logging.INFO, logger="bace_opt.progress")
    with clock.scope(30.0), progress.heartbeat(progress.logger("p1"), "P1: the build", every_s=0.05):
        time.sleep(0.3)
    beats = [r.getMessage() for r in caplog.records if "still running" in r.getMessage()]
    assert beats and all(m.startswith("P1: the build: still running after ") for m in beats)
    assert all(" left]" in m for m in beats)            # the thread sees the deadline of the block that started it
    n = len(beats)
    time.sleep(0.15)
    assert len([r for r in caplog.records if "still running" in r.getMessage()]) == n    # it stopped with the block


def test_a_pyomo_build_stopped_by_the_deadline_logs_no_error(caplog):
    """Pyomo logs "Constructing component ... failed: DeadlineReached" at ERROR (shown even with -q) when the
    deadline stops a build inside a component: the limit doing its work, so that record is dropped."""
    import pyomo.environ as pyo

    from bace_opt import clock

    def slow_rule(m, i):
        while True:
            sum(range(1000))

    caplog.set_level(logging.ERROR, logger="pyomo.core")
    m = pyo.ConcreteModel()
    with clock.scope(0.2), pytest.raises(clock.DeadlineReached):
        with clock.raise_at_deadline("a test build"):
            m.c = pyo.Constraint([1], rule=slow_rule)
    assert not [r for r in caplog.records if r.name == "pyomo.core"]
    assert not logging.getLogger("pyomo.core").filters        # the filter is gone after the block


def _on_a_terminal(argv, cwd) -> tuple[int, str, str]:
    """Run ``bace-opt ARGV`` with its stderr on a pseudo-terminal (stdout a pipe); (exit, stdout, stderr)."""
    import os
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "bace_opt", *map(str, argv)], stdout=subprocess.PIPE,
                         stderr=slave, cwd=cwd, text=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:          # the terminal's other end closed (Linux: EIO)
            break
        if not b:
            break
        chunks.append(b)
    with p.stdout:
        out = p.stdout.read()
    code = p.wait(60)
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals")
@pytest.mark.parametrize("flag", [None, "-q"])
def test_on_a_terminal_progress_shows_without_v_and_not_with_q(tmp_path, flag):
    argv = ["solve", TINY, "--problem", "schedule", "--solver", "cpsat", "--time-limit", "4", "--json",
            "-o", tmp_path / "s.json"] + ([flag] if flag else [])
    code, out, err = _on_a_terminal(argv, ROOT)
    assert code == 0, err
    json.loads(out)
    if flag is None:
        assert "bace_opt.progress.p2: P2 exact (cpsat): " in err
        assert "bace_opt.cli" not in err            # only the progress loggers, not all of -v
    else:
        assert "progress" not in err and "INFO" not in err
