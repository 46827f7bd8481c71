"""The regimes suite and its claims map, end to end on two regimes (the full grid is a benchmark)."""
from bace_opt.bench import read_rows, run_specs, specs_for
from bace_opt.bench.report import report
from bace_opt.bench.suites import parse_regime, regime_label


def test_regime_labels_round_trip():
    for args in [("nominal", 0.03, 24, "poisson", 1.0), ("measured", 1.5, 8, "batch", 0.5)]:
        lab = regime_label(*args)
        r = parse_regime(lab)
        assert (r["source"], r["bandwidth_scale"], r["jobs"], r["arrivals"], r["gpu_scale"]) == args


def test_small_grid_has_every_claim_setting():
    sizes = {s.size for s in specs_for("regimes", "small")}
    for want in ("nominal-x1-8j-batch", "nominal-x0.3-8j-batch", "nominal-x1.5-8j-batch", "nominal-x1-24j-batch",
                 "nominal-x1-8j-batch-gpu0.5", "nominal-x1-8j-batch-gpu1.25", "measured-x1-8j-batch"):
        assert want in sizes


def test_regimes_report_prints_the_claims_map(tmp_path):
    keep = {"nominal-x1-8j-batch", "nominal-x0.03-8j-batch"}
    specs = [s for s in specs_for("regimes", "small") if s.size in keep]
    out = tmp_path / "regimes.csv"
    counts = run_specs(specs, out, progress=False)
    assert counts["failed"] == 0
    rows = read_rows(out)
    assert all(r["per_job"] for r in rows)          # every row carries its per-job figures
    text = report("regimes", out, markdown_path=tmp_path / "regimes.md")
    assert "Claims map" in text and "cross-region paradox" in text
    assert "regimes-jct-heatmap.png" in text and (tmp_path / "regimes-jct-heatmap.png").stat().st_size > 0
