"""Ctrl-C and SIGTERM to a running batch, with real process trees (issue 29 item 1).

``bace-opt bench --workers 2`` (the quick ``paper`` suite, 10 simulator runs of ~1.5 s each), ``bench --dask
local`` and ``bace-opt adversary --workers 2`` run in a session of their own, as a shell's foreground job
would.  Once a first result is written, the test sends SIGINT to the whole process group (what a terminal's
Ctrl-C does) or SIGTERM to the command alone (what a job scheduler or ``docker stop`` does) and asserts:

- the command exits within 5 s, 130 after SIGINT, 143 after SIGTERM;
- every result written before the signal is still in the results file (and no line is cut short);
- no descendant of the command survives it (found by walking ``/proc/*/stat``: parent chain, process groups
  and sessions);
- stderr holds no traceback and no ``Fatal Python error`` (from a worker that was starting up).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from procs import descendants, foreground_sigint, sessions_and_groups, survivors

ROOT = Path(__file__).resolve().parents[1]


BENCH = ["bench", "--suite", "paper", "--size", "small", "--workers", "2", "-o", "r.csv"]
ADVERSARY = ["adversary", "--policy", "bace-pipe", "--family", "random", "--regions", "3", "--jobs", "4",
             "--budget", "40", "--workers", "2", "--time-limit", "5", "--seed", "1", "-o", "adv"]


def _data_lines(path: Path) -> list[str]:
    try:
        return [l for l in path.read_text().splitlines(keepends=True)[1:] if l.endswith("\n")]
    except FileNotFoundError:
        return []


def _stop_mid_batch(tmp_path, argv, results: Path, sig: int, *, header: bool = True, first_s: float = 90):
    env = dict(os.environ, PYTHONWARNINGS="ignore", BACE_OPT_RESULTS=str(tmp_path / "own"))
    p = subprocess.Popen([sys.executable, "-m", "bace_opt", *argv], cwd=tmp_path, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=foreground_sigint)
    try:
        deadline = time.monotonic() + first_s
        while time.monotonic() < deadline and p.poll() is None:
            lines = _data_lines(results) if header else results.read_text().splitlines(keepends=True) \
                if results.exists() else []
            if lines:
                break
            time.sleep(0.05)
        assert p.poll() is None, "the batch ended before the signal: " + p.stderr.read()[-2000:]
        time.sleep(0.3)           # a worker may be starting up now
        tree = descendants(p.pid)
        assert tree, "no worker process found"
        mine = {os.getpgrp(), os.getsid(0)}
        groups = sessions_and_groups(tree | {p.pid}) - mine
        before = _data_lines(results) if header else results.read_text().splitlines(keepends=True)
        t = time.monotonic()
        if sig == signal.SIGINT:
            os.killpg(p.pid, signal.SIGINT)     # the terminal's Ctrl-C: the whole foreground group
        else:
            p.send_signal(sig)                  # a scheduler's stop: the command alone
        out, err = p.communicate(timeout=30)
        took = time.monotonic() - t
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    left = survivors(tree | {p.pid}, groups)
    for pid in left:      # clean up before failing
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert p.returncode == 128 + sig, err[-2000:]
    assert took < 5.0, f"exited {took:.1f} s after the signal"
    assert not left, f"processes left running: {left}"
    assert "Traceback" not in err and "Fatal Python error" not in err, err[-3000:]
    after = _data_lines(results) if header else results.read_text().splitlines(keepends=True)
    assert set(before) <= set(after), "a result written before the signal was lost"
    return before, after, err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_bench_workers_stops_within_5s_keeps_rows_leaves_nothing(tmp_path, sig):
    before, after, err = _stop_mid_batch(tmp_path, BENCH, tmp_path / "r.csv", sig)
    assert len(after) < 10, "the batch ran to its end instead of stopping"
    assert ("terminated" if sig == signal.SIGTERM else "interrupted") in err
    # a rerun finishes the batch: each run's row once, the rows kept are not run again
    r = subprocess.run([sys.executable, "-m", "bace_opt", *BENCH], cwd=tmp_path, capture_output=True, text=True,
                       env=dict(os.environ, PYTHONWARNINGS="ignore"), timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"{len(after)} already in" in r.stdout
    rows = _data_lines(tmp_path / "r.csv")
    assert len(rows) == 10 and len({l.split(",")[0] for l in rows}) == 10


def test_bench_dask_local_sigterm_ends_the_cluster(tmp_path):
    """Dask workers stay up between runs (no start-up per run): the full paper grid (180 runs) keeps them
    busy long enough to be stopped."""
    pytest.importorskip("distributed")
    argv = ["bench", "--suite", "paper", "--size", "full", "--dask", "local", "--workers", "2", "-o", "r.csv"]
    before, after, err = _stop_mid_batch(tmp_path, argv, tmp_path / "r.csv", signal.SIGTERM)
    assert len(after) < 180 and "terminated" in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_adversary_stops_within_5s_keeps_trials_leaves_nothing(tmp_path, sig):
    before, after, _ = _stop_mid_batch(tmp_path, ADVERSARY, tmp_path / "adv" / "trials.jsonl", sig, header=False)
    assert all(isinstance(json.loads(l), dict) for l in after)
    assert len(after) < 40
