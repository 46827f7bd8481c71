"""Every file the toolkit writes is written atomically (bace_opt.files).

1. ``csv_text`` / ``append_csv_rows``: the CSV history files of the benchmarks (rows accumulate across runs)
   keep their old bytes, gain the new rows, and a failed write leaves the old file as it was.
2. The benchmark scripts that keep such histories (interrupt, sim_speed --contended, pathfinder) keep them so,
   run on a tmp path with their measurements replaced by fakes.
3. A static scan of ``bace_opt/`` and ``benchmarks/`` for non-atomic write calls, with an explicit allow-list.
"""
from __future__ import annotations

import ast
import csv
import io
import os
import re
import sys
from pathlib import Path

import pytest

from bace_opt.errors import InputError
from bace_opt.files import append_csv_rows, csv_text

ROOT = Path(__file__).resolve().parents[1]


# ---------------------------------------------------------------------- csv_text, append_csv_rows

def test_csv_text_is_what_csv_writes_to_a_file(tmp_path):
    rows = [{"a": 1, "b": "x,y"}, {"a": 2.5, "b": 'q"r'}]
    with open(tmp_path / "ref.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["a", "b"])
        w.writeheader()
        w.writerows(rows)
    assert csv_text(["a", "b"], rows).encode() == (tmp_path / "ref.csv").read_bytes()
    # a sequence row is in the order of the field names; extra keys as DictWriter's extrasaction
    assert csv_text(["a", "b"], [[1, "x,y"]], header=False) == '1,"x,y"\r\n'
    assert csv_text(["a"], [{"a": 1, "z": 2}], extrasaction="ignore", lineterminator="\n") == "a\n1\n"
    with pytest.raises(ValueError):
        csv_text(["a", "b"], [{"a": 1, "z": 2}])
    with pytest.raises(ValueError, match="1 values for 2 columns"):
        csv_text(["a", "b"], [[1]])


def test_append_creates_with_header_then_keeps_old_rows_byte_identical(tmp_path):
    p = tmp_path / "h.csv"
    append_csv_rows(p, ["a", "b"], [{"a": 1, "b": 2}])
    assert p.read_bytes() == b"a,b\r\n1,2\r\n"
    # old rows as some earlier writer left them (other quoting, "\n" endings) stay byte for byte
    old = b'a,b\n"1",2\n3,4\n'
    p.write_bytes(old)
    append_csv_rows(p, ["a", "b"], [{"a": 5, "b": 6}, [7, 8]])
    assert p.read_bytes() == old + b"5,6\r\n7,8\r\n"   # no second header
    assert [r["a"] for r in csv.DictReader(io.StringIO(p.read_bytes().decode(), newline=""))] == ["1", "3", "5", "7"]


def test_append_to_an_empty_file_writes_the_header_and_a_cut_row_stays_its_own(tmp_path):
    p = tmp_path / "h.csv"
    p.write_bytes(b"")
    append_csv_rows(p, ["a"], [[1]])
    assert p.read_bytes() == b"a\r\n1\r\n"
    p.write_bytes(b"a,b\r\n1,2\r\n3")   # a row cut short by a killed non-atomic append
    append_csv_rows(p, ["a", "b"], [[5, 6]])
    assert p.read_bytes() == b"a,b\r\n1,2\r\n3\r\n5,6\r\n"


def test_a_failed_append_leaves_the_old_file_unchanged(tmp_path, monkeypatch):
    p = tmp_path / "h.csv"
    append_csv_rows(p, ["a", "b"], [[1, 2]])
    before = p.read_bytes()

    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(InputError, match=f"cannot write {re.escape(str(p))}: No space left"):
        append_csv_rows(p, ["a", "b"], [[3, 4]])
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["h.csv"]   # the temporary file is gone


def test_a_crash_mid_write_leaves_the_old_file_unchanged(tmp_path, monkeypatch):
    """A crash between writing the temporary file and the rename (here a KeyboardInterrupt from fsync)."""
    p = tmp_path / "h.csv"
    append_csv_rows(p, ["a"], [[1]])
    before = p.read_bytes()

    def interrupted(fd):
        raise KeyboardInterrupt
    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        append_csv_rows(p, ["a"], [[2]])
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["h.csv"]


def test_an_unreadable_history_is_an_input_error(tmp_path):
    d = tmp_path / "a-folder.csv"
    d.mkdir()
    with pytest.raises(InputError, match="cannot read"):
        append_csv_rows(d, ["a"], [[1]])


def test_write_level_mps_replaces_the_file_atomically(tmp_path, monkeypatch):
    """``write_level_mps`` (Pyomo writes by file name) goes through ``atomic_write_by_name``."""
    import bace_opt as bo
    from bace_opt.exact.placement import write_level_mps
    gt = {"A": bo.GpuType("A", 100.0, 48, 300)}
    inst = bo.Instance(name="tiny", gpu_types=gt, reference_gpu="A",
                       regions=[bo.Region("r1", "A", 4, 0.2), bo.Region("r2", "A", 4, 0.3)],
                       links=[bo.Link("r1", "r2", 10.0, 5.0)],
                       jobs=[bo.Job("a", 0.0, 4, 4, 10, 0.5, 20.0)]).validated()
    p = tmp_path / "p1.mps"
    write_level_mps(inst, p, level=1)
    text = p.read_text()
    assert "ROWS" in text and "ENDATA" in text
    p.write_text("old\n")

    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(InputError, match="No space left"):
        write_level_mps(inst, p, level=1)
    assert p.read_text() == "old\n"
    assert [f.name for f in tmp_path.iterdir()] == ["p1.mps"]


# ---------------------------------------------------------------------- the benchmarks' history files

def _bench(name: str, monkeypatch):
    """The benchmark ``benchmarks.<name>``, imported as ``python -m`` finds it (the repository root on the path)."""
    import importlib
    monkeypatch.syspath_prepend(str(ROOT))
    return importlib.import_module(f"benchmarks.{name}")


def _interrupt(tmp_path, monkeypatch, k: int) -> Path:
    """bench_interrupt's main, its measurements replaced by fakes (row ``k``); returns its results file."""
    mod = _bench("bench_interrupt", monkeypatch)
    out = tmp_path / "interrupt.csv"
    monkeypatch.setattr(mod, "OUT", out)
    monkeypatch.setattr(mod, "interrupt_latency", lambda s: {
        "what": "ctrl-c", "backend": s, "seconds": k, "exit_code": 130, "output_written": False,
        "detail": "a, \"quoted\" detail", "load_1min": 0.5})
    monkeypatch.setattr(mod, "gantt_time", lambda: {
        "what": "gantt", "backend": "agg", "seconds": k, "exit_code": "", "output_written": True, "detail": "",
        "load_1min": 0.5})
    monkeypatch.setattr(sys, "argv", ["bench_interrupt.py", "--solvers", "highs"])
    mod.main()
    return out


def _sim_speed_contended(tmp_path, monkeypatch, k: int) -> Path:
    """bench_sim_speed --contended on fake runs (cpu_s ``k``); returns its results file."""
    import argparse
    mod = _bench("bench_sim_speed", monkeypatch)
    monkeypatch.setattr(mod, "RESULTS", tmp_path / "benchmarks" / "results")
    (tmp_path / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(mod, "_one_process", lambda family, n, policy, timeout: {
        "family": family, "jobs": n, "policy": policy, "status": "ok", "cpu_s": k, "wall_s": k,
        "peak_rss_mb": 1.0, "mean_wait_s": 0.0})
    args = argparse.Namespace(policies=["fifo"], sizes=[10], families=["uncontended", "contended"], repeat=1,
                              timeout=1.0, no_write=False)
    assert mod.contended_main(args) == 0
    return tmp_path / "benchmarks" / "results" / "sim_speed_contended.csv"


def _pathfinder(tmp_path, monkeypatch, k: int) -> Path:
    """bench_pathfinder's main on a fake replay (``calls`` = ``k``); returns its results file."""
    mod = _bench("bench_pathfinder", monkeypatch)
    monkeypatch.setattr(mod, "RESULTS", tmp_path / "benchmarks" / "results")
    (tmp_path / "benchmarks" / "results").mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(mod, "run", lambda family, n, policy, max_calls, repeat: [
        {"family": family, "jobs": n, "policy": policy, "call": kind, "calls": k, "identical": True}
        for kind in ("place", "fits")])
    assert mod.main(["--sizes", "10", "--families", "contended", "--policies", "bace-pipe"]) == 0
    return tmp_path / "benchmarks" / "results" / "pathfinder_per_call.csv"


@pytest.mark.parametrize("write", [_interrupt, _sim_speed_contended, _pathfinder])
def test_a_benchmark_history_keeps_its_rows_and_survives_a_failed_write(write, tmp_path, monkeypatch, capsys):
    out = write(tmp_path, monkeypatch, 1)
    first = out.read_bytes()
    header = first.split(b"\r\n")[0]
    n1 = len(list(csv.DictReader(io.StringIO(first.decode(), newline=""))))
    assert n1 == 2
    out = write(tmp_path, monkeypatch, 2)
    second = out.read_bytes()
    assert second.startswith(first) and second.count(header) == 1      # old rows byte for byte, one header
    rows = list(csv.DictReader(io.StringIO(second.decode(), newline="")))
    assert len(rows) == 2 * n1
    key = next(c for c in ("seconds", "cpu_s", "calls") if c in rows[0])
    assert [r[key] for r in rows] == ["1", "1", "2", "2"]

    def boom(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(InputError, match="No space left"):
        write(tmp_path, monkeypatch, 3)
    assert out.read_bytes() == second
    assert not [f for f in out.parent.iterdir() if f.name.endswith(".tmp.csv")]   # no temporary left


# ---------------------------------------------------------------------- static scan for non-atomic writes

#: (file, enclosing function or "<module>", kind) -> why that write may stay as it is.  Every entry must still
#: match a write in the source (a stale entry fails the scan too), so the list never outlives its reason.
ALLOWED = {
    ("bace_opt/exact/p1/cg/pricing_exact.py", "ExactPricer.__init__", "model.write"):
        "Pyomo writes the one-job model as MPS into its own mkstemp file, read back by HiGHS and removed at once",
    ("bace_opt/cli/main.py", "final_stream", "open"):
        "wraps a duplicate of standard error's descriptor (os.dup), not a file: the command's last word goes there",
    ("bace_opt/solvers/output.py", "quiet_highs_banner", "os.open"):
        "opens /dev/null, not a file of the user's: HiGHS's one-time banner is written there, never to stdout",
    ("bace_opt/files.py", "atomic_write.<locals>.write", "open"):
        "the atomic writer itself: fills the temporary file (an fd from mkstemp)",
    ("bace_opt/files.py", "atomic_savefig.<locals>.write", "savefig"):
        "the atomic writer itself: matplotlib writes the temporary file, which is then renamed",
    ("bace_opt/files.py", "_write_atomically", "open"):
        "the atomic writer itself: reopens its own temporary file to fsync it",
    ("bace_opt/bench/runner.py", "append_line", "os.open"):
        "the bench and adversary journals (results CSV, trials.jsonl): fsynced one-line appends, cut back to the "
        "old end when a write fails; read_rows / read_trials drop a torn last line on resume (module doc)",
    ("bace_opt/files.py", "_write_into", "open"):
        "the atomic writer's path for a device or FIFO target (/dev/null, /dev/full), which a rename would "
        "replace: the content, complete in a temporary file first, is copied into it",
    ("bace_opt/procs.py", "worker_main", "open"):
        "a worker process's result, written into the pipe its parent reads (no file)",
    ("bace_opt/bench/runner.py", "_Lock.acquire", "os.open"):
        "the lock file <results>.lock (holds the writer's pid), not a result",
    ("bace_opt/adversary/search.py", "_lock", "open"):
        "the lock file out/.lock, opened only to hold an flock; nothing is written to it",
    ("bace_opt/solvers/mathopt.py", "write_mps", "model.write"):
        "solve_pyomo's only use: an MPS file inside a TemporaryDirectory, read back and deleted",
    ("bace_opt/bench/runner.py", "read_rows", "open"):
        "<results>.damaged, the lines set aside before the results file is repaired atomically (a torn append "
        "there loses nothing: the results file still holds those lines until the repair)",
    ("bace_opt/adversary/search.py", "read_trials", "open"):
        "<dir>/trials.jsonl.damaged, the lines set aside before trials.jsonl is repaired atomically (as read_rows)",
    ("bace_opt/cli/main.py", "_silence_stdout", "os.open"):
        "opens /dev/null to point stdout at it after a broken pipe; writes no file",
}

_WRITE_MODE = re.compile(r"[wax+]")


def _const_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _mode(call: ast.Call, pos: int):
    """The mode argument of an open-like call: its text, "" when absent (read), None when not a literal."""
    for kw in call.keywords:
        if kw.arg == "mode":
            return _const_str(kw.value)
    if len(call.args) > pos:
        return _const_str(call.args[pos])
    return ""


def _write_kind(call: ast.Call) -> str | None:
    """The kind of non-atomic write ``call`` is, or None."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else None
    if name in ("write_text", "write_bytes"):
        return name
    if name == "open" and owner == "os":
        flags = ast.unparse(call.args[1]) if len(call.args) > 1 else ""
        return "os.open" if re.search(r"O_(WRONLY|RDWR|CREAT|APPEND|TRUNC)", flags) else None
    if name in ("open", "fdopen"):
        # builtin open(file, mode) / io.open / os.fdopen(fd, mode): mode second; Path.open(mode): mode first
        pos = 1 if isinstance(f, ast.Name) or owner in ("io", "os", "gzip", "bz2", "lzma", "codecs") else 0
        mode = _mode(call, pos)
        return "open" if mode is None or _WRITE_MODE.search(mode) else None
    if name in ("to_csv", "to_json", "to_parquet", "to_excel", "to_pickle", "to_markdown", "to_latex",
                "to_html", "to_feather", "to_hdf", "to_netcdf"):
        # with no target (or None) pandas returns the text, which is then written atomically
        target = call.args[0] if call.args else next(
            (k.value for k in call.keywords if k.arg in ("path_or_buf", "path", "buf", "excel_writer")), None)
        if target is None or (isinstance(target, ast.Constant) and target.value is None):
            return None
        return name
    if name in ("savefig", "imsave"):
        return "savefig"
    if owner in ("np", "numpy") and name in ("save", "savez", "savez_compressed", "savetxt", "tofile"):
        return f"np.{name}"
    if owner in ("pickle", "json", "yaml", "tomli_w") and name == "dump":
        return f"{owner}.dump"
    if owner == "shutil" and name in ("copy", "copy2", "copyfile", "move", "copytree"):
        return f"shutil.{name}"
    if name == "write" and any(k.arg in ("format", "io_options") for k in call.keywords):
        return "model.write"   # a Pyomo model written by file name
    return None


#: a write inside an argument of these calls writes their temporary file (e.g. a lambda calling a Pyomo
#: model's ``write``), which they then rename atomically
ATOMIC_WRAPPERS = {"atomic_write_by_name"}


def scan_source(text: str, rel: str) -> list[tuple[str, int, str, str]]:
    """(file, line, enclosing function, kind) of every non-atomic write call in ``text``."""
    found = []

    def visit(node, scope):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) in ATOMIC_WRAPPERS:
            return
        for child in ast.iter_child_nodes(node):
            sub = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                sub = child.name if scope == "<module>" else f"{scope}.{child.name}"
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    sub = f"{scope}.<locals>.{child.name}"
            if isinstance(child, ast.Call):
                kind = _write_kind(child)
                if kind:
                    found.append((rel, child.lineno, scope, kind))
            visit(child, sub)
    visit(ast.parse(text), "<module>")
    return found


def _sources():
    for top, pattern in (("benchmarks", "**/*.py"), ("bace_opt", "**/*.py")):
        for p in sorted((ROOT / top).glob(pattern)):
            yield p, p.relative_to(ROOT).as_posix()


def test_the_scan_sees_the_old_non_atomic_writes():
    """The lines this change replaced, and the usual variants, are all caught; the atomic forms are not."""
    bad = '''
from pathlib import Path
import os, pickle, shutil
import numpy as np
def f(out, rows, df, fig, m, fd):
    (out / "bench_load.md").write_text("x", encoding="utf-8")
    out.write_bytes(b"")
    with open(out, "a", newline="") as f:
        pass
    with out.open("a", newline="") as f:
        pass
    with (out / "policies.csv").open("w", newline="") as f:
        pass
    open(out, mode="w+")
    open(out, "x")
    open(out, some_mode)
    os.fdopen(fd, "w")
    df.to_csv(out / "pareto.csv", index=False)
    df.to_csv(path_or_buf=out)
    fig.savefig(out, dpi=110)
    np.save(out, rows)
    pickle.dump(rows, out)
    shutil.copy(out, out)
    m.write(str(out), format="mps")
    os.open(out, os.O_WRONLY | os.O_CREAT)
    files.atomic_write_by_name(out, lambda t: m.write(t, format="mps")).write_text("x")
'''
    kinds = [k for _, _, _, k in scan_source(bad, "x.py")]
    assert kinds == ["write_text", "write_bytes", "open", "open", "open", "open", "open", "open", "open", "to_csv",
                     "to_csv", "savefig", "np.save", "pickle.dump", "shutil.copy", "model.write", "os.open",
                     "write_text"]
    good = '''
from bace_opt.files import atomic_write, atomic_savefig, append_csv_rows
import os
def f(out, df, fig, fd):
    atomic_write(out, df.to_csv(index=False))
    atomic_write(out, df.to_csv(None))
    atomic_savefig(fig, out, dpi=110)
    append_csv_rows(out, ["a"], [[1]])
    atomic_write_by_name(out, lambda tmp: m.write(tmp, format="mps", io_options={}))
    with open(out) as f:
        pass
    with open(out, "r", newline="") as f, out.open("rb") as g, out.open(newline="") as h:
        pass
    os.open(os.devnull, os.O_RDONLY)
    f.write("x")
'''
    assert scan_source(good, "y.py") == []


def test_the_toolkit_and_the_benchmarks_write_only_atomically():
    found = [hit for p, rel in _sources() for hit in scan_source(p.read_text(encoding="utf-8"), rel)]
    bad = [f"{rel}:{line} {kind} in {scope}" for rel, line, scope, kind in found
           if (rel, scope, kind) not in ALLOWED]
    assert not bad, ("non-atomic writes (use bace_opt.files.atomic_write / atomic_savefig / append_csv_rows, or "
                     "add an entry with its reason to ALLOWED):\n  " + "\n  ".join(bad))
    stale = sorted(set(ALLOWED) - {(rel, scope, kind) for rel, _, scope, kind in found})
    assert not stale, f"ALLOWED entries that match no write any more (remove them): {stale}"
