"""``bace-opt generate trace`` and ``bo.trace_instance`` (issue 45 item 1): the composed real week from the
shipped tables, the user's CSV (docs/formats.md "Trace CSV"), the raw trace formats, the mapping to
pipeline jobs, arrivals and load, prices over the whole run.  No raw file is needed: the raw loaders run on
small fixtures written here, and on ../shared/data when it is present."""
from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bace_opt as bo
from bace_opt.builders import trace_arrivals as ta
from bace_opt.builders.profiles import MODELS, get_gpu
from bace_opt.builders.trace import parse_align, trace_instance
from bace_opt.builders.trace_jobs import by_size, map_job
from bace_opt.data import tables, traces
from bace_opt.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
EXAMPLE = ROOT / "instances" / "traces" / "example.csv"
HEAD = "job_id,submit_time_s,gpus,duration_s,model,state\n"


def cli(*args, cwd=None):
    env = {k: v for k, v in os.environ.items() if k != "BACE_OPT_DATA"}
    env["PYTHONWARNINGS"] = "ignore"
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run([sys.executable, "-m", "bace_opt", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or ROOT, env=env, timeout=120)


def small(**kw):
    """A small trace instance: 2 days, 3 regions of 64 GPUs (fast to build)."""
    kw.setdefault("regions", ["aws:us-east-1", "aws:eu-central-1", "aws:ap-northeast-1"])
    kw.setdefault("gpus", 64)
    return trace_instance(**kw)


# ---------------------------------------------------------------------- the command, from a plain checkout

def test_generate_trace_default_week_is_valid_and_deterministic(tmp_path):
    out = tmp_path / "week.json"
    r = cli("generate", "trace", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "offered load" in r.stderr
    inst = bo.load_instance(out)
    assert len(inst.regions) == 20 and len(inst.jobs) >= 100
    assert max(j.arrival_s for j in inst.jobs) < 7 * 86400
    m = inst.meta["trace"]
    assert m["kind"] == "composed" and "trace_philly_runtime_quantiles.csv" in m["statistics"]
    assert m["options"]["seed"] == 1
    from bace_opt.cli.main import main
    assert main(["validate", str(out)]) == 0
    # the same call in Python gives the same bytes
    assert bo.trace_instance().to_json() == out.read_text()


def test_user_csv_becomes_a_valid_instance(tmp_path, caplog):
    text = EXAMPLE.read_text().replace(HEAD, HEAD.rstrip("\n") + ",user\n", 1)
    lines = text.splitlines()
    text = "\n".join([lines[0]] + [ln + ",alice" for ln in lines[1:]]) + "\n"
    f = tmp_path / "mine.csv"
    f.write_text(text)
    with caplog.at_level(logging.WARNING, logger="bace_opt"):
        inst = trace_instance(f)
    warns = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert sum("'user'" in w and "ignored" in w for w in warns) == 1
    assert sum("adjusted" in w for w in warns) == 1
    m = inst.meta["trace"]
    assert m["sha256"] == traces.file_sha256(f) and m["file"] == "mine.csv" and m["ignored_columns"] == ["user"]
    adj = {a["job"]: a for a in m["mapping"]["adjusted"]}
    assert adj["a3"]["now_gpus"] == 6 and adj["a3"]["gpus"] == 4          # Qwen2.5-14B on 4 A6000: raised to 6
    assert m["filters"]["state_pending"]["jobs"] == 1 and m["filters"]["min_duration"]["jobs"] == 1
    names = {j.name for j in inst.jobs}
    assert "line8" in names and "a11" not in names and "a13" not in names  # empty job_id; pending; 30 s job
    bo.Instance.from_dict(json.loads(inst.to_json()))                      # round-trips valid


def test_cli_user_csv_bad_value_on_line_17_is_refused_and_nothing_written(tmp_path):
    lines = EXAMPLE.read_text().splitlines()
    assert len(lines) >= 17
    parts = lines[16].split(",")
    parts[3] = "n/a"                                       # duration_s of the row on line 17
    lines[16] = ",".join(parts)
    f = tmp_path / "bad.csv"
    f.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.json"
    r = cli("generate", "trace", "--trace", f, "-o", out)
    assert r.returncode == 2, r.stderr
    assert f"{f}:17:4: column 'duration_s'" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [f]
    r = cli("generate", "trace", "--trace", EXAMPLE, "-o", out)
    assert r.returncode == 0 and "adjusted" in r.stderr
    assert len(bo.load_instance(out).jobs) == 18                    # loading validates


@pytest.mark.parametrize("row, where, what", [
    ("x,10,8,100,GPT-9,completed", "model", "unknown model 'GPT-9' (known: "),
    ("x,10,8,100,,done", "state", "unknown state 'done'"),
    ("x,10,2.5,100,,", "gpus", "not an integer"),
    ("x,-1,8,100,,", "submit_time_s", "must be >= 0"),
    ("x,10,8,,,", "duration_s", "empty"),
])
def test_bad_cells_name_file_line_column(tmp_path, row, where, what):
    f = tmp_path / "t.csv"
    f.write_text(HEAD + "ok,0,8,100,,\n" + row + "\n")
    with pytest.raises(InputError) as e:
        traces.read_trace_csv(f, MODELS)
    col = HEAD.strip().split(",").index(where) + 1
    assert f"{f}:3:{col}: column '{where}'" in str(e.value) and what in str(e.value)
    if where == "model":
        assert all(m in str(e.value) for m in MODELS)


def test_header_and_duplicates(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("submit_time_s,gpus\n0,8\n")
    with pytest.raises(InputError, match=r":1: no column\(s\) 'duration_s'"):
        traces.read_trace_csv(f, MODELS)
    f.write_text(HEAD + "a,0,8,100,,\na,5,8,100,,\n")
    with pytest.raises(InputError, match=r":3:1: column 'job_id': job_id 'a' already on line 2"):
        traces.read_trace_csv(f, MODELS)
    f.write_text("gpus,duration_s,submit_time_s\n8,100,0\n")      # required columns only, any order
    rows, ignored = traces.read_trace_csv(f, MODELS)
    assert rows == [traces.TraceRow(2, 0.0, 8, 100.0)] and ignored == []
    f.write_bytes(b"\xef\xbb\xbfsubmit_time_s,gpus,duration_s\r\n0,8.0,100\r\n")  # spreadsheet export
    assert traces.read_trace_csv(f, MODELS)[0] == [traces.TraceRow(2, 0.0, 8, 100.0)]


def test_states_cancelled_option_and_any_case(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text(HEAD + "a,0,8,3600,,CANCELLED\nb,10,8,3600,,Pending\nc,20,8,3600,,Running\nd,30,8,3600,,\n")
    keep = small(trace=f, days=1)
    drop = small(trace=f, days=1, cancelled="drop")
    assert [j.name for j in keep.jobs] == ["a", "c", "d"] and [j.name for j in drop.jobs] == ["c", "d"]
    assert drop.meta["trace"]["filters"]["state_cancelled"]["jobs"] == 1
    assert keep.meta["trace"]["states"] == {"cancelled": 1, "running": 1, "absent": 1}


# ---------------------------------------------------------------------- mapping

def test_mapping_matches_duration_and_memory():
    a6000 = get_gpu("A6000")
    ladder = by_size(MODELS, a6000)
    assert dict(ladder)["Qwen2.5-14B"] == 6 and ladder[0][0] == "Qwen2.5-14B"
    m = map_job("j", 0.0, 64, 86400.0, "FLM-101B", ladder, a6000)
    assert m.gpus == 64 and m.how == "given"
    assert m.job["stages"] * m.job["gpus_per_stage"] == 64 and m.job["memory_gb"] <= 0.95 * 48
    assert abs(m.run_s - 86400.0) / 86400.0 < 0.01
    assert map_job("j", 0.0, 1, 600.0, None, ladder, a6000).how == "raised"
    chosen = map_job("j", 0.0, 16, 600.0, None, ladder, a6000)
    assert chosen.model == "Falcon-40B" and chosen.how == "chosen"
    swapped = map_job("j", 0.0, 12, 600.0, "Llama-3.1-70B", ladder, a6000, adjust="model")
    assert swapped.how == "swapped" and swapped.gpus == 12 and swapped.model == "LLaMA-1-33B"
    short = map_job("j", 0.0, 8, 1.0, None, ladder, a6000)
    assert short.job["iterations"] == 1


# ---------------------------------------------------------------------- arrivals and load

def _rows(n=40):
    return [traces.TraceRow(i + 2, 3600.0 * i, 8, 1800.0, f"j{i}") for i in range(n)]


def test_pollux_load_and_window():
    def draws(load, **kw):
        flt = ta.Filters(60, 1e9, 1, 256, "keep", {})
        return ta.from_rows(_rows(), flt, start_s=kw.get("start", 0.0), window_s=kw.get("window", 86400.0),
                            load=load, arrivals=kw.get("arrivals", "trace"), seed=3), flt
    base, flt = draws(1.0)
    assert len(base) == 24 and flt.dropped["window"]["jobs"] == 16
    half, _ = draws(0.5)
    assert len(half) == 12 and {d.origin for d in half} <= {d.origin for d in base}
    double, _ = draws(2.0)
    assert len(double) == 48 and all(0 <= d.arrival_s < 86400 for d in double)
    assert len({d.origin for d in double}) == 48
    later, _ = draws(1.0, start=7200.0)
    assert later[0].arrival_s == 0.0 and later[0].origin == "j2"
    pois, _ = draws(1.0, arrivals="poisson")
    assert 10 <= len(pois) <= 40 and pois == draws(1.0, arrivals="poisson")[0]


def test_composed_week_load_and_poisson():
    w1 = small(days=2)
    w2 = small(days=2, load=2.0)
    assert abs(len(w2.jobs) - 2 * len(w1.jobs)) <= 1 and w1.meta["trace"]["rule"]["jobs_at_load"] == round(300 * 2 / 7)
    assert all(j.arrival_s < 2 * 86400 for j in w2.jobs)
    p = small(days=2, arrivals="poisson")
    assert abs(len(p.jobs) - len(w1.jobs)) <= 3 * len(w1.jobs) ** 0.5 + 1
    assert small(days=2, seed=2).to_json() != w1.to_json()


def test_size_ratio_fits_the_mean():
    r = ta.size_ratio(5.68, 10)
    w = [r ** k for k in range(11)]
    assert abs(sum(x * 2 ** k for k, x in enumerate(w)) / sum(w) - 5.68) < 1e-3
    assert 0.49 < w[0] / sum(w) < 0.5                     # about half the jobs on 1 GPU (Seren's median: 1)


# ---------------------------------------------------------------------- prices

def test_prices_aligned_and_repeated(caplog):
    week = trace_instance(regions=["aws:us-east-1", "aws:eu-central-1"], gpus=64, days=1, price_hours=168)
    mon = trace_instance(regions=["aws:us-east-1", "aws:eu-central-1"], gpus=64, days=1, align="Sat 00:00")
    s_mon = week.regions[0].price_series.usd_per_kwh
    s_sat = mon.regions[0].price_series.usd_per_kwh
    assert week.meta["prices"]["offset_h"] == 48 and mon.meta["prices"]["offset_h"] == 0   # 2023-07-01: Saturday
    assert s_mon[0] == s_sat[48] and s_mon[:168] == s_mon[168:336] and len(s_mon) % 168 == 0
    assert len(s_mon) * 3600 >= 2 * 86400
    with caplog.at_level(logging.WARNING, logger="bace_opt"):
        held = trace_instance(regions=["aws:us-east-1", "aws:eu-central-1"], gpus=64, days=7, align="Sun 12:00",
                              price_repeat="hold")
    assert len(held.regions[0].price_series.usd_per_kwh) == 168 - (24 + 12)
    assert any("last hour's price holds" in r.getMessage() for r in caplog.records)
    assert parse_align("tuesday 13:00") == (1, 13)
    with pytest.raises(InputError, match="align"):
        parse_align("Mon 25:00")


def test_options_refused():
    with pytest.raises(InputError, match="unknown option"):
        trace_instance(bogus=1)
    with pytest.raises(InputError, match="price_hours"):
        trace_instance(price_hours=100)
    with pytest.raises(InputError, match="the shipped price table covers"):
        trace_instance(price_hours=336)


# ---------------------------------------------------------------------- raw formats

def _raw_folder(root: Path) -> Path:
    d = root / "traces"
    d.mkdir(parents=True)
    (d / traces.ALIBABA_PODS).write_text(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
        "scheduled_time\n"
        "p0,1000,1024,1,1000,,LS,Running,0,9000,0\n"
        "p1,1000,1024,8,1000,,LS,Succeeded,3600,20000,3700\n"
        "p2,1000,1024,0,0,,BE,Failed,7300,8000,7300\n"
        "p3,1000,1024,2,1000,,LS,Pending,90000,95000,\n")
    (d / traces.PHILLY).write_text("runtime\n0.0\n10.0\n100.0\n1000.0\n")
    (d / traces.ACME).write_text(
        ",".join(traces.ACME_COLUMNS) + ",extra\n" + "Seren," + ",".join(["4.0"] * (len(traces.ACME_COLUMNS) - 1))
        + ",1\n")
    return root


def test_raw_loaders_on_fixtures(tmp_path):
    root = _raw_folder(tmp_path)
    pods = traces.read_alibaba_pods(root / "traces" / traces.ALIBABA_PODS)
    assert [(p.state, p.gpus, p.duration_s) for p in pods] == [
        ("running", 1, 9000.0), ("completed", 8, 16300.0), ("failed", 0, 700.0), ("pending", 2, 0.0)]
    counts = traces.arrivals_hour_of_week(pods)
    assert counts[1] == 1 and counts[25] == 1 and sum(counts) == 2          # time 0 and CPU pods left out
    assert traces.quantiles([0.0, 10.0], 4) == [0.0, 2.5, 5.0, 7.5, 10.0]
    texts = traces.derive_tables(root)
    assert set(texts) == {traces.T_ARRIVALS, traces.T_RUNTIME, traces.T_ACME}
    st = traces.trace_stats(root)
    assert st.clusters["Seren"]["avg_gpu_num"] == 4.0 and st.runtime_quantiles[-1] == 1000.0
    (root / "traces" / traces.PHILLY).write_text("runtime\n1.0\nlots\n")
    with pytest.raises(InputError, match=r"philly_runtime_from_alibaba_analysis.csv:3:1: column 'runtime'"):
        traces.trace_stats(root)


def test_alibaba_pod_list_as_a_trace(tmp_path):
    root = _raw_folder(tmp_path)
    inst = small(trace=root / "traces" / traces.ALIBABA_PODS, trace_format="alibaba", days=2)
    assert [j.name for j in inst.jobs] == ["p0", "p1"]                       # p2: 0 GPUs; p3: pending
    assert inst.meta["trace"]["filters"]["no_gpu"]["jobs"] == 1


@pytest.mark.skipif(not (DATA / "traces").is_dir(), reason="no ../shared/data/traces")
def test_shipped_trace_tables_are_derived_from_the_raw_folder():
    for name, text in traces.derive_tables(DATA).items():
        assert tables.path(name).read_bytes() == text.encode(), f"{name}: run python -m bace_opt.data.traces"
    a, b = traces.trace_stats(DATA), traces.trace_stats(None)
    assert (a.arrivals, a.runtime_quantiles, a.clusters) == (b.arrivals, b.runtime_quantiles, b.clusters)
    raw = small(data=DATA, days=1)
    assert raw.to_json() == small(days=1).to_json()               # --data gives the shipped bytes
    two = small(data=DATA, days=1, price_hours=336).regions[0].price_series.usd_per_kwh
    one = raw.regions[0].price_series.usd_per_kwh
    assert len(two) == 336 and two[:120] == one[:120] and two[120:168] != one[120:168]   # real second week, not a repeat
    pods = traces.read_alibaba_pods(DATA / "traces" / traces.ALIBABA_PODS)
    assert len(pods) == 8152 and sum(p.gpus >= 2 for p in pods) == 75
