"""Messages that find the cause (issue 29): a schedule's fault names the file and the field path, a warning
is printed once (damage to a results file: one line, the first few lines and a count), and ``bench --no-run``
never writes anything."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import bace_opt.bench as bench_pkg
import bace_opt.bench.tasks as tasks
from bace_opt.bench.runner import read_rows
from bace_opt.bench.spec import COLUMNS, RunSpec
from bace_opt.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "instances" / "tiny-2r-2j.json"


@pytest.fixture
def schedule(tmp_path):
    s = tmp_path / "s.json"
    assert main(["simulate", str(TINY), "-q", "-o", str(s)]) == 0
    return s


def _edit(path: Path, change) -> Path:
    d = json.loads(path.read_text())
    change(d)
    out = path.with_name("bad.json")
    out.write_text(json.dumps(d))
    return out


@pytest.mark.parametrize("cmd", ["evaluate", "plot"])
@pytest.mark.parametrize("value", ["bogus", 5, ["gpipe"]])
def test_a_bad_iteration_model_in_meta_names_file_and_field(schedule, tmp_path, capsys, cmd, value):
    bad = _edit(schedule, lambda d: d["meta"].__setitem__("iteration_model", value))
    argv = [cmd, str(TINY), str(bad)] + (["-o", str(tmp_path / "p.png")] if cmd == "plot" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{bad}: meta.iteration_model: must be one of analytic, gpipe, 1f1b, greedy, got {value!r}" in err
    assert not (tmp_path / "p.png").exists()


def test_plot_of_a_plan_through_unknown_regions_names_the_job_and_field(schedule, tmp_path, capsys):
    """Before: a route through regions the instance lacks was an internal error (KeyError) in plot."""
    def route(d):
        job = next(j for j in d["jobs"] if j["status"] == "done")
        job["blocks"][0]["region"] = "mars"
    bad = _edit(schedule, route)
    assert main(["plot", str(TINY), str(bad), "-o", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "blocks[0].region 'mars' is not a region of the instance" in err
    assert "jobs[" in err and "internal error" not in err


# ---------------------------------------------------------------------- results files: one warning

def _results(tmp_path, monkeypatch, n=30) -> Path:
    def row(spec):
        return {"run_id": spec.run_id, "suite": spec.suite, "family": spec.family, "size": spec.size,
                "seed": spec.seed, "method": spec.method, "status": "done"}
    specs = [RunSpec("fake", "random", "s", i, "m:a") for i in range(n)]
    monkeypatch.setattr(bench_pkg, "specs_for", lambda suite, size, **kw: specs)
    monkeypatch.setattr(tasks, "execute", row)
    out = tmp_path / "r.csv"
    assert main(["bench", "--suite", "scaling", "-q", "-o", str(out)]) == 0
    return out


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_damaged_header_keeps_every_row_in_one_warning(tmp_path, monkeypatch, caplog, capsys):
    """The header loses a column (a torn rewrite): before, each of the rows was set aside with a warning of its
    own (184 lines for one file) and the whole batch ran again."""
    out = _results(tmp_path, monkeypatch)
    lines = out.read_text().splitlines(keepends=True)
    out.write_text(",".join(COLUMNS[:5] + COLUMNS[6:]) + "\n" + "".join(lines[1:]))
    capsys.readouterr()
    caplog.clear()
    assert main(["bench", "--suite", "scaling", "-o", str(out)]) == 0
    assert "30 already in" in capsys.readouterr().out, "the rows were not kept"
    w = _warnings(caplog)
    assert len(w) == 1 and "line 1: a damaged header (47 columns, the rows have 48)" in w[0], w
    assert out.read_text().splitlines()[0] == ",".join(COLUMNS)
    assert len(out.read_text().splitlines()) == 31


def test_many_damaged_lines_are_summarised_and_warned_once(tmp_path, monkeypatch, caplog, capsys):
    out = _results(tmp_path, monkeypatch)
    with open(out, "a") as f:
        f.writelines(f"junk,{i}\n" for i in range(200))
    caplog.clear()
    assert main(["bench", "--suite", "scaling", "-o", str(out)]) == 0
    w = _warnings(caplog)
    assert len(w) == 1, w
    assert "line 32: 2 fields (expected 48); line 33: 2 fields" in w[0] and "and 197 more" in w[0]
    assert f"200 damaged line(s) set aside in {out}.damaged" in w[0]
    assert len(Path(f"{out}.damaged").read_text().splitlines()) == 200
    caplog.clear()
    assert read_rows(out) and not _warnings(caplog), "a repaired file warned again"


def test_no_run_never_writes_and_says_so(tmp_path, monkeypatch, caplog, capsys):
    out = _results(tmp_path, monkeypatch)
    with open(out, "a") as f:
        f.writelines(f"junk,{i}\n" for i in range(10))
        f.write("cut,short")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    caplog.clear()
    assert main(["bench", "--suite", "scaling", "-o", str(out), "--no-run"]) == 0
    assert main(["bench", "--suite", "scaling", "-o", str(tmp_path / "none.csv"), "--no-run"]) == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    w = _warnings(caplog)
    assert len(w) == 1 and "the file is left as it is" in w[0] and "set aside" not in w[0], w


def test_damaged_adversary_trials_one_warning_set_aside_not_lost(tmp_path, caplog):
    """Before: each unreadable line had a warning of its own and was dropped for good; a byte that is not UTF-8
    stopped the resume with an internal error."""
    from bace_opt.adversary.search import read_trials
    p = tmp_path / "trials.jsonl"
    good = [json.dumps({"trial": i, "score": 0.1 * i}) + "\n" for i in range(3)]
    junk = ["{not json\n", "[1, 2]\n", '{"no_trial": 1}\n', "\xff\n"] * 5
    p.write_bytes("".join(good[:2] + junk + good[2:]).encode("utf-8").replace("\xff".encode(), b"\xff")
                 + b'{"trial": 9')
    caplog.clear()
    recs = read_trials(p)
    assert [r["trial"] for r in recs] == [0, 1, 2]
    w = _warnings(caplog)
    assert len(w) == 1 and "line 3: not a trial record" in w[0] and "and 18 more" in w[0], w
    assert "20 line(s) set aside" in w[0]
    assert len((tmp_path / "trials.jsonl.damaged").read_bytes().splitlines()) == 20
    assert p.read_text() == "".join(good)
    caplog.clear()
    assert len(read_trials(p)) == 3 and not _warnings(caplog)
