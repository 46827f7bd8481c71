"""Ctrl-C (SIGINT to the process group, as a terminal sends it), SIGTERM (a job scheduler's or a container's stop)
and SIGKILL to ``solve --solver race``: no member solves on.

Measured in issue 29: after SIGTERM the race exited but its solver member and a helper ran on for about 56 s,
until their own time limit.  Now SIGTERM stops the race as Ctrl-C does (exit 143), and a member asks the kernel
to end it when its parent dies, so even a SIGKILL of the parent leaves no member running.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from procs import descendants, foreground_sigint, sessions_and_groups, survivors

ROOT = Path(__file__).resolve().parents[1]
#: the realistic 8-region, 16-job seed 2 (benchmarks/README.md): its P1 takes each member well over a minute
REGIONS = ("aws:us-east-1,aws:us-west-1,aws:us-east-2,aws:eu-central-1,aws:ap-northeast-1,aws:ap-northeast-2,"
           "aws:ap-southeast-1,aws:ap-southeast-2")


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    """The instance, generated once for the three signals (each run only reads it)."""
    d = tmp_path_factory.mktemp("race_signals")
    slow = d / "r.json"
    subprocess.run([sys.executable, "-m", "bace_opt", "generate", "realistic", "--regions", REGIONS, "--jobs", "16",
                    "--seed", "2", "--gpu-types", "A100-80GB,H100-80GB", "-o", str(slow)], check=True,
                   capture_output=True, cwd=d)
    return slow


def _start(tmp_path, slow):
    p = subprocess.Popen([sys.executable, "-m", "bace_opt", "solve", str(slow), "--solver", "race", "--time-limit",
                          "120", "-o", str(tmp_path / "p1.json"), "-v"], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env=dict(os.environ, PYTHONWARNINGS="ignore"), preexec_fn=foreground_sigint)
    deadline = time.monotonic() + 60
    members: set[int] = set()
    while time.monotonic() < deadline and len(members) < 1:      # the spawned member is up and solving
        time.sleep(0.5)
        members = {d for d in descendants(p.pid) if b"spawn_main" in Path(f"/proc/{d}/cmdline").read_bytes()} \
            if p.poll() is None else set()
    assert p.poll() is None and members, "the race ended or started no member"
    time.sleep(3.0)         # past the member's start-up (a process killed while it unpickles its task is noisy)
    return p


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143), (signal.SIGKILL, -signal.SIGKILL)])
def test_race_leaves_no_member_running(tmp_path, slow, sig, code):
    p = _start(tmp_path, slow)
    tree = descendants(p.pid)
    groups = sessions_and_groups(tree | {p.pid})
    t = time.monotonic()
    if sig == signal.SIGINT:
        os.killpg(p.pid, sig)       # the terminal's Ctrl-C: the whole foreground group, members included
    else:
        os.kill(p.pid, sig)
    try:
        out, err = p.communicate(timeout=10)
    finally:
        if p.poll() is None:
            p.kill()
    assert time.monotonic() - t < 5.0 and p.returncode == code, (p.returncode, err[-2000:])
    assert survivors(tree, groups) == []
    assert not (tmp_path / "p1.json").exists()
    if sig != signal.SIGKILL:
        assert "Traceback" not in err and "Fatal Python error" not in err, err[-3000:]
