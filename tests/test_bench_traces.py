"""``bench --suite traces`` (issue 45 item 4): the composed trace swept over load factors and seeds, each row
carrying the evaluator's workload figures; the tiny size runs end to end here."""
import json

from bace_opt.bench import read_rows, specs_for
from bace_opt.bench.suites import TRACE_GRID, trace_label
from bace_opt.cli.main import main


def test_the_suite_sweeps_loads_seeds_and_policies():
    for size, g in TRACE_GRID.items():
        specs = specs_for("traces", size)
        assert len(specs) == len(g["loads"]) * len(g["seeds"]) * len(g["policies"])
        assert {s.size for s in specs} == {trace_label(g["trace"], load) for load in g["loads"]}
        assert {s.family for s in specs} == {"trace"} and all(s.method.startswith("sim:") for s in specs)
        assert len({s.run_id for s in specs}) == len(specs)
    # a policy of one's own runs beside BACE-Pipe
    extra = specs_for("traces", "tiny", policies=["select-pack"])
    assert sum(s.method == "sim:select-pack" for s in extra) == len(TRACE_GRID["tiny"]["loads"])


def test_tiny_runs_and_reports(tmp_path, capsys):
    out = tmp_path / "traces-tiny.csv"
    assert main(["bench", "--suite", "traces", "--size", "tiny", "-o", str(out), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "Trace runs per load and policy" in text and "p99_jct_s" in text
    rows = read_rows(out)
    assert len(rows) == len(specs_for("traces", "tiny"))
    for r in rows:
        assert r["status"] == "done" and r["feasible"] == "True"
        x = json.loads(r["extra"])
        assert x["offered_load"] > 0
        if int(r["jobs_done"]):
            assert x["p50_jct_s"] <= x["p90_jct_s"] <= x["p99_jct_s"]
            assert abs(x["mean_jct_s"] - float(r["avg_jct_s"])) <= 1e-6 * float(r["avg_jct_s"])
