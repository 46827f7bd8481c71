"""Faults and bad input (issue 10): output paths checked before any work, atomic writes, -o never an input,
strict JSON and bounds, finite command-line numbers, decisions-only schedules priced by evaluate, pipeline
placements checked with the evaluator's rules, aggregated Gantt charts.  In-process (``main(argv)``), tiny
instances built here."""
from __future__ import annotations

import json
import os
import stat

import pytest

import bace_opt as bo
from bace_opt.cli.main import main
from bace_opt.errors import InputError
from bace_opt.evaluate import evaluate, make_schedule
from bace_opt.files import atomic_write, check_output
from bace_opt.instance import Instance, load_instance


def tiny() -> Instance:
    gt = {"A": bo.GpuType("A", 100.0, 48, 300)}
    return bo.Instance(
        name="tiny", gpu_types=gt, reference_gpu="A",
        regions=[bo.Region("r1", "A", 4, 0.2), bo.Region("r2", "A", 4, 0.3), bo.Region("r3", "A", 0, 0.1)],
        links=[bo.Link("r1", "r2", 10.0, 5.0), bo.Link("r1", "r3", 10.0, 5.0), bo.Link("r3", "r2", 10.0, 5.0)],
        jobs=[bo.Job("a", 0.0, 4, 4, 10, 0.5, 20.0), bo.Job("b", 10.0, 2, 4, 10, 0.5, 20.0)]).validated()


@pytest.fixture
def inst_file(tmp_path):
    p = tmp_path / "inst.json"
    tiny().save(p)
    return p


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------- output paths and atomic writes

@pytest.mark.parametrize("make_bad,msg", [
    (lambda d: d / "missing" / "o.json", "does not exist"),
    (lambda d: d / "inst.json" / "o.json", "is a file, not a folder"),
    (lambda d: d, "is a folder"),
    (lambda d: d / "o.txt", "unsupported file type"),
])
@pytest.mark.parametrize("cmd", [["solve", "--time-limit", "5"], ["simulate", "--policy", "fifo"]])
def test_bad_output_path_refused_before_any_work(tmp_path, inst_file, capsys, make_bad, msg, cmd):
    bad = make_bad(tmp_path)
    code, out, err = run([cmd[0], inst_file, *cmd[1:], "-o", bad], capsys)
    assert code == 2 and msg in err and len(err.strip().splitlines()) == 1
    assert out == ""          # nothing ran: no summary printed


@pytest.mark.parametrize("argv", [
    ["solve", "{i}", "-o", "{i}"],
    ["simulate", "{i}", "-o", "{i}"],
    ["evaluate", "{i}", "{s}", "-o", "{s}"],
    ["solve", "{i}", "--warm-start", "{s}", "-o", "{s}"],
])
def test_output_equal_to_an_input_is_refused(tmp_path, inst_file, capsys, argv):
    s = tmp_path / "s.json"
    bo.simulate(tiny(), policy="fifo").save(s)
    before = (inst_file.read_bytes(), s.read_bytes())
    code, _, err = run([a.format(i=inst_file, s=s) for a in argv], capsys)
    assert code == 2 and "is an input of this command" in err
    assert (inst_file.read_bytes(), s.read_bytes()) == before


def test_generate_refuses_a_folder_and_a_bad_suffix(tmp_path, capsys):
    code, _, err = run(["generate", "random", "--seed", "1", "-o", tmp_path], capsys)
    assert code == 2 and "is a folder" in err
    code, _, err = run(["generate", "random", "--seed", "1", "-o", tmp_path / "x.yaml"], capsys)
    assert code == 2 and "unsupported file type" in err


def test_pipeline_gantt_suffix_checked_before_work(tmp_path, inst_file, capsys):
    s = tmp_path / "s.json"
    bo.simulate(tiny(), policy="fifo").save(s)
    code, out, err = run(["pipeline", inst_file, s, "--job", "a", "--gantt", tmp_path / "x.bmp"], capsys)
    assert code == 2 and "--gantt" in err and "unsupported file type" in err and out == ""


def test_bench_output_checks(tmp_path, capsys):
    code, _, err = run(["bench", "--suite", "gap", "-o", tmp_path / "nope" / "r.csv"], capsys)
    assert code == 2 and "does not exist" in err
    code, _, err = run(["bench", "--suite", "gap", "-o", tmp_path / "r.txt"], capsys)
    assert code == 2 and "unsupported file type" in err


def test_atomic_write_replaces_whole_file_and_keeps_old_on_failure(tmp_path, monkeypatch):
    p = tmp_path / "x.json"
    atomic_write(p, "old\n")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(p.stat().st_mode) == 0o644 & ~umask   # an ordinary file (mkstemp's 0600 undone)

    def boom(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(InputError, match="No space left"):
        atomic_write(p, "new and longer\n")
    assert p.read_text() == "old\n"
    assert [f.name for f in tmp_path.iterdir()] == ["x.json"]   # temporary removed


def test_check_output_accepts_a_fresh_file(tmp_path):
    assert check_output(tmp_path / "ok.json", suffixes=(".json",)) == tmp_path / "ok.json"


# ---------------------------------------------------------------------- strict input

def _problems(text, tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_instance(p)
    return str(e.value)


def test_duplicate_keys_nan_and_huge_numbers_rejected_with_their_path(tmp_path):
    d = tiny().to_dict()
    text = json.dumps(d)
    dup = text.replace('"arrival_s": 0.0', '"arrival_s": 0.0, "arrival_s": 5.0', 1)
    assert "jobs[0].arrival_s: duplicate key" in _problems(dup, tmp_path)
    d["meta"] = {"note": {"x": float("nan")}}
    assert "meta.note.x: NaN is not a JSON number" in _problems(json.dumps(d), tmp_path)
    d["meta"] = {"big": 1}
    big = json.dumps(d).replace('"big": 1', '"big": ' + "9" * 5000)
    assert "meta.big: integer with 5000 digits is too long" in _problems(big, tmp_path)
    assert "overflows" in _problems(json.dumps(d).replace('"big": 1', '"big": 1e400'), tmp_path)
    assert "nested too deeply" in _problems("[" * 100000 + "]" * 100000, tmp_path)
    deep = json.dumps(d).replace('"big": 1', '"big": ' + "[" * 80 + "]" * 80)
    assert "nested too deeply" in _problems(deep, tmp_path)


def test_absurd_magnitudes_rejected_by_validation():
    d = tiny().to_dict()
    d["jobs"][0]["arrival_s"] = 1e300
    d["regions"][0]["price_series"] = {"start_s": 0, "step_s": 1e-300, "usd_per_kwh": [0.1, 0.2]}
    d["regions"][1]["price_usd_per_kwh"] = -1e6
    with pytest.raises(InputError) as e:
        Instance.from_dict(d)
    msg = str(e.value)
    assert "jobs[0].arrival_s: must be <= 1e+09" in msg
    assert "regions[0].price_series.step_s: must be >= 1" in msg
    assert "regions[1].price_usd_per_kwh: must be >= -100" in msg


def test_nan_in_meta_built_in_code_is_rejected():
    with pytest.raises(InputError, match="meta.x: must be finite"):
        tiny().replace(meta={"x": float("inf")}).validated()


@pytest.mark.parametrize("argv,msg", [
    (["solve", "{i}", "--t0", "nan", "-o", "{o}"], "finite"),
    (["solve", "{i}", "--time-limit", "inf", "-o", "{o}"], "finite"),
    (["solve", "{i}", "--threads", "-2", "-o", "{o}"], "--threads"),
    (["solve", "{i}", "--mu", "-1", "--problem", "schedule", "-o", "{o}"], "--mu"),
    (["solve", "{i}", "--t0", "-5", "-o", "{o}"], "--t0"),
    (["pipeline", "{i}", "{i}", "--job", "a", "--forward-fraction", "1.5"], "--forward-fraction"),
    (["simulate", "{i}", "--option", "time_limit_s=NaN"], "NaN"),
])
def test_command_line_numbers_checked(tmp_path, inst_file, capsys, argv, msg):
    with pytest.raises(SystemExit) if "finite" in msg else _nothing():
        code, _, err = run([a.format(i=inst_file, o=tmp_path / "o.json") for a in argv], capsys)
        assert code == 2 and msg in err


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


def test_solve_schedule_on_a_job_far_in_the_future_is_refused_at_validation(tmp_path, capsys):
    d = tiny().to_dict()
    d["jobs"][1]["arrival_s"] = 1e300
    p = tmp_path / "far.json"
    p.write_text(json.dumps(d))
    code, _, err = run(["solve", p, "--problem", "schedule", "-o", tmp_path / "o.json"], capsys)
    assert code == 2 and "jobs[1].arrival_s" in err


def test_non_list_blocks_is_a_clean_error(tmp_path, inst_file, capsys):
    s = bo.simulate(tiny(), policy="fifo").to_dict()
    s["jobs"][0]["blocks"] = 5
    p = tmp_path / "s.json"
    p.write_text(json.dumps(s))
    code, _, err = run(["evaluate", inst_file, p], capsys)
    assert code == 2 and "jobs[0].blocks: must be an array" in err


# ---------------------------------------------------------------------- evaluate: decisions only

def test_evaluate_prices_a_decisions_only_schedule_and_writes_it(tmp_path, inst_file, capsys):
    inst = tiny()
    full = bo.simulate(inst, policy="bace-pipe")
    d = full.to_dict()
    for j in d["jobs"]:
        for k in ("finish_s", "iteration_s", "energy_kwh", "electricity_usd", "egress_usd"):
            j.pop(k)
    d.pop("metrics")
    d.pop("meta", None)
    p = tmp_path / "hand.json"
    p.write_text(json.dumps(d))
    out = tmp_path / "priced.json"
    code, text, err = run(["evaluate", inst_file, p, "-o", out], capsys)
    assert code == 0, err
    assert "feasible: yes" in text and "total_electricity_usd" in text
    priced = bo.load_schedule(out)
    rep = evaluate(inst, priced)
    assert rep.feasible and priced.metrics["total_electricity_usd"] == pytest.approx(
        full.metrics["total_electricity_usd"])
    # reported figures, where present, are still checked
    d["jobs"][0]["energy_kwh"] = 12345.0
    p.write_text(json.dumps(d))
    code, text, _ = run(["evaluate", inst_file, p], capsys)
    assert code == 1 and "reported energy_kwh" in text


# ---------------------------------------------------------------------- pipeline

def test_pipeline_refuses_a_route_evaluate_rejects(tmp_path, inst_file, capsys):
    inst = tiny()
    plan = bo.JobPlan("a", "done", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r3", "r1", "r2"), 1.0)])
    sched = make_schedule(inst, [plan], "hand", check=False)
    p = tmp_path / "s.json"
    sched.save(p)
    assert not evaluate(inst, sched).feasible
    code, out, err = run(["pipeline", inst_file, p, "--job", "a"], capsys)
    assert code == 2 and "not a simple path" in err and out == ""


def test_gantt_of_a_paper_size_job_is_aggregated(tmp_path):
    from bace_opt.pipeline import PipelineModel
    from bace_opt.pipeline.gantt import MAX_DRAWN_BLOCKS, draw_gantt
    from bace_opt.pipeline.schedules import onefoneb
    mod = PipelineModel.uniform(40, 64, 1.0, 2.0, cross=[19], latency_s=0.3, transfer_s=0.2)
    ops = onefoneb(mod)
    assert len(ops) > MAX_DRAWN_BLOCKS
    p = draw_gantt(mod, ops, tmp_path / "g.png")
    assert p.read_bytes()[:4] == b"\x89PNG"
