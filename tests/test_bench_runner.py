"""The batch runner: resumable without loss or duplicates, a cut-short line repaired, same rows whatever
the execution back end."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bace_opt.bench.runner import read_rows, run_specs
from bace_opt.bench.spec import DETERMINISTIC_COLUMNS

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


CONCURRENT = """
import sys
sys.path.insert(0, {here!r})
import bench_fake
from bace_opt.bench.runner import run_specs
c = run_specs(bench_fake.specs({n}), {out!r}, execute=bench_fake.execute_slow, progress=False)
print(c["ran"], c["skipped"])
"""


def test_two_concurrent_batches_on_one_file_write_each_row_once(tmp_path):
    """Two real processes start the same batch on one results file: the second waits for the first's lock,
    then skips what it finished; every run's row is in the file exactly once and nothing crashes."""
    out = tmp_path / "both.csv"
    n = 8
    code = CONCURRENT.format(here=str(HERE), n=n, out=str(out))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    res = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], res
    ran = sorted(tuple(map(int, o.split())) for o, _ in res)
    assert ran == [(0, n), (n, 0)]                      # one ran everything, the other skipped everything
    assert any("another bench run" in e for _, e in res)  # the one that waited said so
    lines = out.read_text().splitlines()
    assert len(lines) == 1 + n
    rows = read_rows(out)
    assert len(rows) == n and len({r["run_id"] for r in rows}) == n


def test_damaged_header_and_non_utf8_line_are_set_aside_not_fatal(tmp_path, caplog):
    import bench_fake
    out = tmp_path / "r.csv"
    run_specs(bench_fake.specs(3), out, execute=bench_fake.execute_slow, progress=False)
    good = out.read_bytes()
    lines = good.splitlines(keepends=True)
    # header damaged (garbled bytes), last line not UTF-8
    out.write_bytes(b"run_\xff\xfeid,su#ite\n" + b"".join(lines[1:]) + b"\xc3\x28garbage,\xff\n")
    rows = read_rows(out)
    assert len(rows) == 3
    assert "set aside" in caplog.text
    dmg = out.with_name(out.name + ".damaged").read_bytes()
    assert b"su#ite" in dmg and b"garbage" in dmg            # nothing is thrown away
    assert out.read_bytes() == good                          # repaired to the canonical file
    # resume works on the repaired file and the report reads it
    assert run_specs(bench_fake.specs(4), out, execute=bench_fake.execute_slow, progress=False)["ran"] == 1
    assert len(read_rows(out)) == 4


def test_missing_header_restored_and_duplicates_dropped(tmp_path):
    import bench_fake
    out = tmp_path / "r.csv"
    run_specs(bench_fake.specs(2), out, execute=bench_fake.execute_slow, progress=False)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[1:] + lines[1:]))        # no header, every row twice
    rows = read_rows(out)
    assert len(rows) == 2
    assert out.read_text() == "".join(lines)


RESULTS = HERE.parent / "benchmarks" / "results"


def _bench_files():
    from bace_opt.bench import SUITES
    return [p for p in sorted(RESULTS.glob("*.csv")) if any(p.stem.startswith(s + "-") for s in SUITES)]


@pytest.mark.parametrize("csv_file", _bench_files(), ids=lambda p: p.name)
def test_bench_no_run_reports_on_every_committed_results_file(tmp_path, capsys, csv_file):
    """``--no-run`` on files ``bench`` wrote (copies: the repair may rewrite them) prints a report, exit 0."""
    import shutil
    from bace_opt.bench import SUITES
    from bace_opt.cli.main import main
    suite = next((s for s in SUITES if csv_file.stem.startswith(s + "-")), csv_file.stem.split("-")[0])
    size = csv_file.stem[len(suite) + 1:] or "small"
    copy = tmp_path / csv_file.name
    shutil.copy(csv_file, copy)
    assert main(["bench", "--suite", suite, "--size", size, "-o", str(copy), "--no-run"]) == 0
    assert capsys.readouterr().out.strip()


def test_bench_no_run_on_a_fake_batch_file(tmp_path, capsys):
    import bench_fake
    from bace_opt.cli.main import main
    out = tmp_path / "fake.csv"
    run_specs(bench_fake.specs(3), out, execute=bench_fake.execute_slow, progress=False)
    assert main(["bench", "--suite", "gap", "--size", "small", "-o", str(out), "--no-run"]) == 0


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
