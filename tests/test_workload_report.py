"""What users read from a run (issue 45 item 4): ``bace_opt.evaluate.workload_report`` and ``simulate``'s report,
computed by the evaluator from the schedule; the steady-state window; the figures."""
import json
import math

import numpy as np
import pytest

import bace_opt as bo
from bace_opt.cli.main import main
from bace_opt.evaluate import evaluate, format_workload, workload_report
from bace_opt.evaluate.workload import parse_window, reference_run_s, size_class
from bace_opt.errors import InputError


@pytest.fixture(scope="module")
def small():
    inst = bo.trace_instance(regions="default", jobs_per_week=20, days=1, gpus=2, max_gpus=8,
                             max_duration_s=6 * 3600, load=8)
    return inst, bo.simulate(inst, "bace-pipe")


def test_figures_agree_with_the_evaluator(small):
    inst, sched = small
    rep = evaluate(inst, sched)
    assert rep.feasible
    w = workload_report(inst, sched, report=rep)
    done = [f for n, f in rep.figures.items() if rep.statuses[n] == "done"]
    jct = [f.jct_s for f in done]
    assert w["jobs"] == len(inst.jobs) and w["jobs_done"] == len(done)
    assert w["jct_s"]["mean"] == pytest.approx(sched.metrics["avg_jct_s"])
    assert w["wait_s"]["mean"] == pytest.approx(sched.metrics["avg_wait_s"])
    for p in (50, 90, 99):
        assert w["jct_s"][f"p{p}"] == pytest.approx(float(np.percentile(jct, p)))
    assert w["jct_s"]["max"] == pytest.approx(max(jct))
    assert min(w["slowdown"][k] for k in ("p50", "p90", "p99", "max")) >= 1.0 - 1e-9
    assert w["cost"]["electricity_usd"] == pytest.approx(sched.metrics["total_electricity_usd"])
    assert w["cost"]["egress_usd"] == pytest.approx(sched.metrics["total_egress_usd"])
    # cost per day sums to the totals (electricity split by the exact price integral)
    days = w["cost_per_day"]
    assert math.fsum(d["electricity_usd"] for d in days) == pytest.approx(sched.metrics["total_electricity_usd"],
                                                                            rel=1e-9)
    assert math.fsum(d["egress_usd"] for d in days) == pytest.approx(sched.metrics["total_egress_usd"], rel=1e-9)
    # utilisation: the bins' mean, weighted by their length inside [0, end), is the GPU-seconds over fleet x end
    u = w["gpu_utilisation"]
    gpus = sum(r.gpus for r in inst.regions)
    end = max(f.finish_s for f in done)
    busy = math.fsum(inst.job(f.name).gpus * f.run_s for f in done)
    assert u["mean"] == pytest.approx(busy / (gpus * end))
    assert math.fsum(u["series"]) * u["bin_s"] == pytest.approx(busy / gpus)
    assert 0 <= min(u["series"]) and max(u["series"]) <= 1 + 1e-9
    # size classes partition the jobs
    assert sum(r["jobs"] for r in w["by_size"]) == len(inst.jobs)
    assert all(size_class(inst.job(j.name).gpus) in {r["class"] for r in w["by_size"]} for j in inst.jobs)
    # the CDF is the quantile function
    cdf = w["jct_cdf"]
    assert len(cdf["q"]) == 101 and cdf["jct_s"][0] == pytest.approx(min(jct)) and cdf["jct_s"][-1] == \
        pytest.approx(max(jct))
    assert cdf["jct_s"] == sorted(cdf["jct_s"])
    json.dumps(w)          # JSON-able
    assert any(line.startswith("  JCT: mean") for line in format_workload(w))


def test_trace_states_say_what_became_of_cancelled_jobs(small):
    inst, sched = small
    tr = inst.meta["trace"]
    w = workload_report(inst, sched)
    st = w["trace_states"]
    named = {s: len(v) for s, v in tr["job_states"].items()}
    for s, n in named.items():
        assert st[s]["jobs"] == n
    assert sum(d["jobs"] for d in st.values()) == len(inst.jobs)
    assert st.get("completed", {"jobs": 0})["jobs"] == tr["states"].get("completed", 0) + tr["states"].get("absent", 0)
    assert math.fsum(d["share_of_gpu_hours"] for d in st.values()) == pytest.approx(1.0)
    # an instance not built from a trace has no states
    plain = bo.load_instance(str(__import__("pathlib").Path(__file__).parents[1] / "instances" /
                                 "paper-6r-8j-seed1.json"))
    assert workload_report(plain, bo.simulate(plain, "bace-pipe"))["trace_states"] is None


def test_steady_state_window(small):
    inst, sched = small
    order = sorted(range(len(inst.jobs)), key=lambda i: (inst.jobs[i].arrival_s, i))
    w = workload_report(inst, sched, window_jobs=(5, 15))
    assert w["window"] == {"kind": "jobs", "jobs": [5, 15], "jobs_in_window": 10} and w["jobs"] == 10
    names = [inst.jobs[i].name for i in order[5:15]]
    rep = evaluate(inst, sched)
    assert w["jct_s"]["mean"] == pytest.approx(np.mean([rep.figures[n].jct_s for n in names]))
    # the time series stay over the whole run
    assert w["gpu_utilisation"] == workload_report(inst, sched)["gpu_utilisation"]
    t0, t1 = 3600.0, 6 * 3600.0
    wt = workload_report(inst, sched, window_s=(t0, t1))
    assert wt["jobs"] == sum(1 for j in inst.jobs if t0 <= j.arrival_s < t1)
    assert parse_window("1h:6h", "time") == (t0, t1) and parse_window("0:1.5d", "time") == (0.0, 129600.0)
    assert parse_window("4000:5000", "jobs") == (4000, 5000)
    for bad in ("5", "a:b", "3:x"):
        with pytest.raises(InputError):
            parse_window(bad, "jobs")
    with pytest.raises(InputError):
        workload_report(inst, sched, window_jobs=(9, 3))
    with pytest.raises(InputError):
        workload_report(inst, sched, window_jobs=(1, 3), window_s=(0.0, 1.0))


def test_reference_run_is_a_floor(small):
    inst, sched = small
    rep = evaluate(inst, sched)
    for n, f in rep.figures.items():
        assert f.run_s >= reference_run_s(inst, inst.job(n)) * (1 - 1e-9)


def test_simulate_prints_and_returns_the_report(small, tmp_path, capsys):
    inst, _ = small
    path = tmp_path / "t.json"
    inst.save(str(path))
    assert main(["simulate", str(path), "--json", "--window-jobs", "2:12", "--no-hol"]) == 0
    d = json.loads(capsys.readouterr().out)
    r = d["report"]
    assert r["window"]["jobs"] == [2, 12] and r["jobs"] == 10
    assert set(r) >= {"jct_s", "wait_s", "slowdown", "by_size", "cost", "gpu_utilisation", "cost_per_day",
                      "trace_states", "jct_cdf"}
    assert main(["simulate", str(path), "--window-time", "0:6h", "--no-hol"]) == 0
    out = capsys.readouterr().out
    assert "per-job figures (jobs arriving in [0, 21600) s" in out and "p99" in out and "trace state" in out
    assert main(["simulate", str(path), "--window-jobs", "x"]) == 2
    assert main(["simulate", str(path), "--window-jobs", "1:2", "--window-time", "0:1"]) == 2


def test_figures_draw(small, tmp_path):
    pytest.importorskip("matplotlib")
    from bace_opt.plot import plot_jct_cdf, plot_workload, save_figure
    inst, sched = small
    reps = {"bace-pipe": workload_report(inst, sched), "lcf": workload_report(inst, bo.simulate(inst, "lcf"))}
    fig = plot_workload(reps)
    assert len(fig.axes) == 3
    save_figure(fig, tmp_path / "w.png")
    assert (tmp_path / "w.png").stat().st_size > 0
    assert plot_jct_cdf(reps).axes
