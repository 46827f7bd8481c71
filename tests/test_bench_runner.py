"""The batch runner: resumable without loss or duplicates, a cut-short line repaired, same rows whatever
the execution back end."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bace_opt.bench.runner import DETERMINISTIC_COLUMNS, read_rows, run_specs

HERE = Path(__file__).parent
SCRIPT = """
import sys
sys.path.insert(0, {here!r})
import bench_fake
from bace_opt.bench.runner import run_specs
run_specs(bench_fake.specs(), {out!r}, execute=bench_fake.execute_slow, progress=False)
"""


def det(rows):
    return sorted(tuple(r.get(c, "") for c in DETERMINISTIC_COLUMNS) for r in rows)


def test_kill_midway_then_resume_gives_the_uninterrupted_rows(tmp_path):
    import bench_fake
    ref = tmp_path / "ref.csv"
    run_specs(bench_fake.specs(), ref, execute=bench_fake.execute_slow, progress=False)
    out = tmp_path / "out.csv"
    p = subprocess.Popen([sys.executable, "-c", SCRIPT.format(here=str(HERE), out=str(out))])
    deadline = time.time() + 60
    while time.time() < deadline:
        if out.exists() and len(out.read_text().splitlines()) >= 5:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    n_before = len(read_rows(out))
    assert 3 <= n_before < 24
    with open(out, "a") as f:   # a write cut short by the kill
        f.write("deadbeef,fake,fake-9,ran")
    counts = run_specs(bench_fake.specs(), out, execute=bench_fake.execute_slow, progress=False)
    assert counts["skipped"] == n_before and counts["ran"] == 24 - n_before
    rows = read_rows(out)
    assert len(rows) == 24 and len({r["run_id"] for r in rows}) == 24
    assert det(rows) == det(read_rows(ref))
    # a third run does nothing
    assert run_specs(bench_fake.specs(), out, execute=bench_fake.execute_slow, progress=False)["ran"] == 0


def test_duplicate_specs_are_refused(tmp_path):
    import bench_fake
    s = bench_fake.specs(2)
    with pytest.raises(ValueError, match="same spec"):
        run_specs(s + s[:1], tmp_path / "x.csv", execute=bench_fake.execute_slow, progress=False)


def test_results_file_of_an_older_version_is_migrated(tmp_path):
    from bace_opt.bench.runner import COLUMNS
    old_cols = [c for c in COLUMNS if c != "p1_cost_usd"]
    p = tmp_path / "old.csv"
    p.write_text(",".join(old_cols) + "\n" + ",".join("x" if c == "run_id" else "" for c in old_cols) + "\n")
    rows = read_rows(p)
    assert [r["run_id"] for r in rows] == ["x"]
    assert p.read_text().splitlines()[0] == ",".join(COLUMNS)
    assert read_rows(p)[0]["run_id"] == "x"


def test_older_p1_rows_move_not_started_jobs_out_of_jobs_blocked(tmp_path):
    from bace_opt.bench.runner import COLUMNS
    old_cols = [c for c in COLUMNS if c not in ("jobs_not_started", "total_stall_s")]
    p = tmp_path / "old.csv"
    vals = {"p1:highs": "2", "p1-heur:lcf": "1", "sim:bace-pipe": "3"}
    p.write_text(",".join(old_cols) + "\n" + "".join(
        ",".join({"run_id": m, "method": m, "jobs_blocked": b}.get(c, "") for c in old_cols) + "\n"
        for m, b in vals.items()))
    rows = {r["run_id"]: r for r in read_rows(p)}
    assert {m: (r["jobs_blocked"], r["jobs_not_started"]) for m, r in rows.items()} == {
        "p1:highs": ("0", "2"), "p1-heur:lcf": ("0", "1"), "sim:bace-pipe": ("3", "0")}
    assert rows["p1:highs"]["total_stall_s"] == ""
    assert read_rows(p) == list(rows.values())    # migrated once, read the same afterwards
