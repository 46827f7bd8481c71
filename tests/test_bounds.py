"""Distance to the certified lower bound (issue 30 item 2): brackets read strictly, joined by instance, unfinished
runs not placed, a policy below a bound reported, and the CLI refusing a bad brackets file before any run."""
from __future__ import annotations

import math
import subprocess
import sys

import pandas as pd
import pytest

from bace_opt.bench.bounds import bound_report, distance_to_bound, read_brackets
from bace_opt.bench.markdown import md
from bace_opt.errors import InputError


def _brackets(tmp_path, text, name="b.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _row(inst, method, jct, cost, done=8, jobs=8, size="r", seed=1, status="done"):
    return {"instance": inst, "method": f"sim:{method}", "avg_jct_s": jct, "total_electricity_usd": cost,
            "jobs": jobs, "jobs_done": done, "size": size, "seed": seed, "status": status}


def test_read_brackets_keeps_the_larger_bound_of_an_instance_bracketed_twice(tmp_path):
    a = _brackets(tmp_path, "instance,lower_s,cost_lower_usd,width_pct\ni1,100,10,1\ni2,200,,2\n", "a.csv")
    b = _brackets(tmp_path, "instance,lower_s,cost_lower_usd\ni1,90,12\n", "b.csv")
    br = read_brackets([a, b])
    assert br.loc["i1", "lower_s"] == 100 and br.loc["i1", "cost_lower_usd"] == 12
    assert math.isnan(br.loc["i2", "cost_lower_usd"])


@pytest.mark.parametrize("text, msg", [
    ("instance,upper_s\ni1,3\n", "no column lower_s"),
    ("instance,lower_s,cost_lower_usd\ni1,100,10\ni2,n/a,3\n", "b.csv:3: lower_s: not a number: 'n/a'"),
])
def test_read_brackets_refuses_a_file_that_is_not_brackets(tmp_path, text, msg):
    with pytest.raises(InputError, match=msg.replace(".", r"\.")):
        read_brackets([_brackets(tmp_path, text)])
    with pytest.raises(InputError, match="not found"):
        read_brackets([tmp_path / "missing.csv"])
    with pytest.raises(InputError, match="cannot read the brackets file"):
        read_brackets([tmp_path])                    # a folder


def test_distance_places_finished_runs_only_and_reports_a_policy_below_a_bound(tmp_path):
    br = read_brackets([_brackets(tmp_path, "instance,lower_s,cost_lower_usd\ni1,100,10\ni2,200,20\n")])
    df = pd.DataFrame([_row("i1", "a", 110, 11, seed=1), _row("i2", "a", 230, 20, seed=2),
                       _row("i1", "b", 105, 10, done=7, seed=1), _row("i2", "b", 190, 25, seed=2),
                       _row("other", "a", 1, 1, seed=3)])
    d = distance_to_bound(df, br).set_index("policy")
    assert d.loc["a", "seeds"] == 2 and d.loc["a", "unfinished"] == 0 and d.loc["a", "below_bound"] == 0
    assert d.loc["a", "jct_over_lb_pct"] == pytest.approx(12.5)      # (10 % + 15 %) / 2
    assert d.loc["a", "jct_over_lb_max_pct"] == pytest.approx(15.0)
    assert d.loc["a", "cost_over_lb_pct"] == pytest.approx(5.0)
    assert d.loc["b", "unfinished"] == 1                              # 7 of 8 jobs: not placed
    assert d.loc["b", "below_bound"] == 1                             # 190 s under a 200 s bound
    text = bound_report(distance_to_bound(df, br), md)
    assert "A policy lies below a lower bound** (b in r)" in text


def test_bench_refuses_a_missing_brackets_file_before_running(tmp_path):
    r = subprocess.run([sys.executable, "-m", "bace_opt", "bench", "--suite", "paper", "--size", "small",
                        "-o", str(tmp_path / "p.csv"), "--brackets", str(tmp_path / "nope.csv")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "brackets file not found" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "p.csv").exists()
