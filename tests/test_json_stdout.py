"""``--json`` stdout is JSON alone, on every command (issue 38, item 3).

The commands are found from the command line's own parsers (every parser, sub-commands included, with a
``--json`` option), so a new command cannot be forgotten: it fails ``test_every_json_command_has_a_run`` until
``RUNS`` says how to run it.  Each run is a real subprocess (``python -m bace_opt``) on a small shipped instance
with small time limits, and its stdout must pass ``json.loads`` whole: no solver banner ("Running HiGHS ...")
or log line before or after it.  With ``-vv`` and ``--log`` the solvers' logs go to stderr.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = "instances/tiny-2r-2j.json"
SMALL = "instances/small-4r-6j.json"
PAPER = "instances/paper-6r-8j-seed1.json"
#: a schedule of TINY (made once by ``simulate -o``), for the commands that read one
SCHED = "{tmp}/tiny-schedule.json"

#: per command (its words), the argument lists to run it with (``--json`` is added); {tmp} is a scratch folder
RUNS: dict[tuple[str, ...], list[list[str]]] = {
    ("solve",): [
        [TINY, "--time-limit", "5", "-o", "{tmp}/p1.json"],
        [PAPER, "--time-limit", "10", "-o", "{tmp}/p1-paper.json"],
        [TINY, "--problem", "schedule", "--time-limit", "5", "-o", "{tmp}/p2.json"],
        [TINY, "--problem", "schedule", "--solver", "cpsat", "--time-limit", "5", "-o", "{tmp}/p2c.json"],
        [SMALL, "--problem", "schedule", "--bracket", "--time-limit", "3", "-o", "{tmp}/p2b.json"],   # only its stdout is checked
        # the solvers' own logs, asked for: on stderr
        [TINY, "-vv", "--log", "--time-limit", "5", "-o", "{tmp}/p1-log.json"],
        [TINY, "-vv", "--log", "--solver", "cpsat", "--time-limit", "5", "-o", "{tmp}/p1-cplog.json"],
    ],
    ("simulate",): [[SMALL]],
    ("evaluate",): [[TINY, SCHED]],
    ("policies",): [[]],
    ("pipeline",): [[TINY, SCHED, "--job", "j0"]],
    ("gap",): [[TINY, "--online", "--time-limit", "8", "--online-time-limit", "4"]],
    ("optical", "simulate"): [["--load", "10", "--requests", "300", "--seeds", "1"]],
    ("optical", "cba"): [["--iterations", "2", "--microbatches", "8", "--bg-count", "4"]],
    ("optical", "exact"): [["--iterations", "2", "--microbatches", "8", "--bg-count", "4", "--time-limit", "5"]],
}


def json_commands() -> list[tuple[str, ...]]:
    """Every command (as its words) whose parser has a ``--json`` option, from the CLI's parsers."""
    from bace_opt.cli.main import build_parser

    out: list[tuple[str, ...]] = []

    def walk(p: argparse.ArgumentParser, words: tuple[str, ...]) -> None:
        if any("--json" in a.option_strings for a in p._actions):
            out.append(words)
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, child in a.choices.items():
                    walk(child, words + (name,))

    walk(build_parser(), ())
    return sorted(out)


def py_m(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "bace_opt", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("json_stdout")
    r = py_m("simulate", TINY, "-o", SCHED.format(tmp=d))
    assert r.returncode == 0, r.stderr
    return d


def test_every_json_command_has_a_run():
    found = set(json_commands())
    assert found, "no command with --json found: the discovery is broken"
    assert found == set(RUNS), (f"commands with --json but no run in RUNS: {sorted(found - set(RUNS))}; "
                                f"runs of commands without --json: {sorted(set(RUNS) - found)}")


@pytest.mark.parametrize("words", sorted(RUNS), ids=lambda w: "-".join(w))
def test_json_stdout_is_json_alone(words, scratch):
    for args in RUNS[words]:
        argv = [*words, *(a.format(tmp=scratch) for a in args), "--json"]
        r = py_m(*argv)
        assert r.returncode in (0, 1), f"{argv}: exit {r.returncode}\n{r.stderr[-2000:]}"
        try:
            json.loads(r.stdout)
        except json.JSONDecodeError as e:
            pytest.fail(f"bace-opt {' '.join(argv)}: stdout is not JSON alone ({e}); it starts with "
                        f"{r.stdout[:300]!r}")
        assert "Running HiGHS" not in r.stdout + r.stderr, argv       # the banner goes nowhere
        if "--log" in args:
            assert len(r.stderr.splitlines()) > 5, f"{argv}: the solver's log did not reach stderr"
