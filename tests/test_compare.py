"""Like-with-like comparisons: a policy that leaves jobs unfinished never looks faster or cheaper, in any
report (bench.compare, the paper report, the claims map)."""
import json
import math

import pandas as pd

from bace_opt.bench.claims import CLAIMS, measure, verdict
from bace_opt.bench.compare import compare_rows, rank_key
from bace_opt.bench.report import paper_comparisons, paper_table


def row(policy, done_jobs, *, jobs=3, size="main", seed=1, **figs):
    """A results row whose per-job figures are (jct, electricity, egress) = (10 * k, k, 0) for job k,
    times ``figs.get('scale', 1)``."""
    sc = figs.pop("scale", 1.0)
    per = {f"j{k}": [10.0 * k * sc, 1.0 * k * sc, 0.0] for k in done_jobs}
    n = len(per)
    return {"method": f"sim:{policy}", "size": size, "seed": seed, "jobs": jobs, "jobs_done": n,
            "avg_jct_s": sum(v[0] for v in per.values()) / n if n else float("nan"),
            "total_electricity_usd": sum(v[1] for v in per.values()), "total_egress_usd": 0.0,
            "total_cost_usd": sum(v[1] for v in per.values()), "per_job": json.dumps(per), **figs}


def test_same_finished_jobs_compare_on_their_averages():
    c = compare_rows(row("a", [1, 2, 3], scale=0.5), row("b", [1, 2, 3]))
    assert c.comparable
    assert math.isclose(c.jct_change_pct, -50.0)
    assert math.isclose(c.electricity_change_pct, -50.0)
    assert c.note == ""


def test_fewer_finished_jobs_are_not_comparable_even_when_the_average_looks_better():
    # a finished only the short job 1: its average JCT (10) is far below b's (20), yet it is not faster
    a, b = row("a", [1]), row("b", [1, 2, 3])
    assert a["avg_jct_s"] < b["avg_jct_s"]
    c = compare_rows(a, b)
    assert not c.comparable
    assert math.isnan(c.jct_change_pct) and math.isnan(c.electricity_change_pct)
    assert c.common_jobs == 1 and math.isclose(c.common_jct_change_pct, 0.0)
    assert "1 vs 3 of 3 jobs finished" in c.note


def test_same_count_but_different_jobs_is_not_comparable():
    c = compare_rows(row("a", [1, 2]), row("b", [2, 3]))
    assert not c.comparable and c.common_jobs == 1


def test_without_per_job_figures_only_all_finished_compares():
    a, b = row("a", [1, 2, 3]), row("b", [1, 2])
    a["per_job"] = b["per_job"] = ""
    assert not compare_rows(a, b).comparable
    b2 = row("b", [1, 2, 3])
    b2["per_job"] = ""
    assert compare_rows(a, b2).comparable


def test_ranking_puts_more_finished_jobs_first():
    runs = [("fast-but-unfinished", 2, 10.0), ("slow-finished", 3, 50.0), ("fast-finished", 3, 20.0)]
    ranked = [n for n, d, m in sorted(runs, key=lambda r: rank_key(r[1], r[2]))]
    assert ranked == ["fast-finished", "slow-finished", "fast-but-unfinished"]


def test_paper_report_never_ranks_or_compares_an_unfinished_policy_above_a_finished_one():
    df = pd.DataFrame([row("bace-pipe", [1, 2, 3]), row("lcf", [1]), row("ldf", [1, 2, 3], scale=2.0),
                       row("cr-lcf", [1, 2, 3], scale=1.0), row("cr-ldf", [1, 2, 3], scale=1.0)])
    t = paper_table(df).loc["main"]
    assert list(t.index)[-1] == "lcf"           # fewest jobs finished: ranked last despite the lowest average
    r = paper_comparisons(df, [("bace-pipe", b) for b in ("lcf", "ldf")]).set_index("vs")
    assert math.isnan(r.loc["lcf", "jct_change_pct"]) and "not comparable" in r.loc["lcf", "note"]
    assert math.isclose(r.loc["ldf", "jct_change_pct"], -50.0)


def test_claims_map_marks_unfinished_runs_not_comparable():
    label = "nominal-x1-8j-batch"
    rows = [row(p, [1, 2, 3], size=label) for p in ("bace-pipe", "ldf", "cr-lcf", "cr-ldf")]
    rows.append(row("lcf", [1], size=label))
    m = measure(pd.DataFrame(rows))
    v = m.set_index(["claim", "reading"])["verdict"]
    assert v[("jct-vs-lcf", "-")] == "not comparable"
    assert v[("jct-vs-ldf", "-")] == "does not hold"     # equal JCT: the claimed advantage is absent


def test_verdicts():
    c = next(x for x in CLAIMS if x.id == "jct-vs-lcf")      # -64.7..-27.9
    assert verdict(-40.0, c) == "holds"
    assert verdict(-10.0, c) == "direction only"
    assert verdict(5.0, c) == "does not hold"
    p = next(x for x in CLAIMS if x.id == "paradox-ldf")      # +28.8, a point claim: within 25 %
    assert verdict(30.0, p) == "holds" and verdict(10.0, p) == "direction only" and verdict(-3, p) == "does not hold"
