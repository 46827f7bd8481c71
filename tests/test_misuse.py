"""Misuse refused with one clear message and exit 2 (issue 29 items 4 and 5: the cases fixed so far)."""
from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "instances" / "tiny-2r-2j.json"
PAPER = ROOT / "instances" / "paper-6r-8j-seed1.json"


def test_exact_p1_time_limit_must_be_positive(cli):
    for v in ("-1", "0"):
        r = cli("simulate", TINY, "--policy", "exact-p1", "--option", f"time_limit_s={v}")
        assert r.returncode == 2 and "--option time_limit_s: must be a finite number > 0" in r.stderr, r.stderr


def test_plot_refuses_a_schedule_of_another_instance(cli, tmp_path):
    s = tmp_path / "s.json"
    assert cli("simulate", TINY, "-o", s).returncode == 0
    r = cli("plot", PAPER, s, "-o", tmp_path / "p.png")
    assert r.returncode == 2 and "the schedule is for instance 'tiny-2r-2j', not 'paper-6r-8j-seed1'" in r.stderr
    assert not (tmp_path / "p.png").exists()


def test_optical_request_counts_are_bounded(cli):
    r = cli("optical", "simulate", "--topology", "nsfnet", "--load", "100", "--requests", str(10 ** 12))
    assert r.returncode == 2 and "requests must be in 1..100,000,000" in r.stderr


def test_one_message_for_every_refused_connection_count(cli, tmp_path):
    for v in ("-1", "0"):
        r = cli("generate", "paper", "--seed", "1", "--bandwidth-source", "measured", f"--parallel-connections={v}",
                "-o", tmp_path / "x.json")
        assert r.returncode == 2 and f"must be >= 1, got {v}" in r.stderr


def test_swapped_files_are_named_as_such_in_one_line(cli, tmp_path):
    s = tmp_path / "s.json"
    assert cli("simulate", TINY, "-o", s).returncode == 0
    r = cli("evaluate", s, TINY)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1
    assert "this is a schedule file (schema 'bace-opt/schedule/v1'), not an instance file" in r.stderr
    r = cli("plot", TINY, TINY, "-o", tmp_path / "p.png")
    assert r.returncode == 2 and "this is an instance file" in r.stderr and "not a schedule file" in r.stderr
