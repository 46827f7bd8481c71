"""Placement pictures (bace_opt.plot, Schedule.plot, bace-opt plot): what is drawn, on tiny in-code instances."""
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bace_opt as bo
from bace_opt import plot as bp
from conftest import ROOT

pytest.importorskip("matplotlib")


def inst4(coords=True):
    """Three regions with GPUs and one transit region, a line a - t - b plus c - a."""
    d = {
        "schema": "bace-opt/instance/v1", "name": "p4",
        "gpu_types": {"A6000": {"tflops": 154.8, "memory_gb": 48, "power_w": 300}},
        "reference_gpu": "A6000",
        "regions": [{"name": "a", "gpu_type": "A6000", "gpus": 8, "price_usd_per_kwh": 0.2},
                    {"name": "b", "gpu_type": "A6000", "gpus": 4, "price_usd_per_kwh": 0.3,
                     "price_series": {"start_s": 0, "step_s": 3600, "usd_per_kwh": [0.3, 0.1]}},
                    {"name": "c", "gpu_type": "A6000", "gpus": 4, "price_usd_per_kwh": 0.25},
                    {"name": "t", "gpu_type": "A6000", "gpus": 0, "price_usd_per_kwh": 0.0}],
        "links": [{"a": "a", "b": "t", "bandwidth_gbps": 40.0, "latency_ms": 10.0},
                  {"a": "t", "b": "b", "bandwidth_gbps": 40.0, "latency_ms": 10.0},
                  {"a": "a", "b": "c", "bandwidth_gbps": 10.0, "latency_ms": 30.0}],
        "jobs": [{"name": "j1", "arrival_s": 0, "stages": 6, "microbatches": 8, "iterations": 2000,
                  "stage_time_s": 0.4, "activation_mb": 30.0},
                 {"name": "j2", "arrival_s": 0, "stages": 4, "microbatches": 8, "iterations": 1000,
                  "stage_time_s": 0.4, "activation_mb": 30.0}],
    }
    if coords:
        d["meta"] = {"coordinates": {"a": [50.0, 8.0], "b": [40.0, -74.0], "c": [1.3, 103.8], "t": [45, -30]}}
    return bo.Instance.from_dict(d)


def two_jobs(inst, second_start=0.0):
    """j1 on a (4 stages) then b (2 stages) over a-t-b; j2 on a (4 stages) from ``second_start``."""
    return bo.make_schedule(inst, [
        bo.JobPlan("j1", "done", 0.0, [("a", 4), ("b", 2)], [(("a", "t", "b"), 1.0)]),
        bo.JobPlan("j2", "done", second_start, [("a", 4)], []),
    ], "test")


def test_positions_from_coordinates_and_layout_without():
    pos, geo = bp.region_positions(inst4())
    assert geo and set(pos) == {"a", "b", "c", "t"}
    assert pos["a"][0] > pos["b"][0] and pos["c"][0] > pos["a"][0]    # x = longitude
    pos, geo = bp.region_positions(inst4(coords=False))
    assert not geo and set(pos) == {"a", "b", "c", "t"}
    # the paper family's regions are known cities: us-east is west of eu-west, ap-southeast-2 south of all
    paper = bo.load_instance(ROOT / "instances" / "paper-6r-8j-seed1.json")
    pos, geo = bp.region_positions(paper)
    assert geo and pos["us-east"][0] < pos["eu-west"][0] < pos["ap-northeast"][0]
    assert pos["ap-southeast-2"][1] == min(p[1] for p in pos.values())


def test_close_regions_are_pushed_apart_far_ones_stay():
    pos = {"x": (0.0, 0.0), "y": (0.5, 0.0), "z": (100.0, 0.0)}
    out = bp._spread(pos, min_frac=0.1)
    assert abs(out["y"][0] - out["x"][0]) >= 10.0 - 1e-6
    assert out["z"] == (100.0, 0.0)


def test_gpus_in_use_peak_and_at_a_time():
    inst = inst4()
    together = two_jobs(inst)
    assert bp.gpus_in_use(inst, together) == {"a": 8, "b": 2}
    j1_end = together.job("j1").finish_s
    after = two_jobs(inst, second_start=j1_end)            # j2 starts as j1 ends: never both on a
    assert bp.gpus_in_use(inst, after) == {"a": 4, "b": 2}
    assert bp.gpus_in_use(inst, after, at=j1_end / 2) == {"a": 4, "b": 2}
    assert bp.gpus_in_use(inst, after, at=j1_end) == {"a": 4}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(1, 5)), min_size=1, max_size=12))
def test_timeline_bars_never_overlap(bars):
    bars = [(float(s), float(s + d), float(h)) for s, d, h in bars]
    offs = bp._stack(bars)
    for i, (s1, e1, h1) in enumerate(bars):
        assert offs[i] >= 0
        for k, (s2, e2, h2) in enumerate(bars[:i]):
            if s1 < e2 and s2 < e1:   # overlap in time -> disjoint in height
                assert offs[i] + h1 <= offs[k] + 1e-9 or offs[k] + h2 <= offs[i] + 1e-9
    # stacked no higher than the peak of concurrent height when all bars start together
    if all(b[0] == bars[0][0] for b in bars):
        assert max(o + b[2] for o, b in zip(offs, bars)) == sum(b[2] for b in bars)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(1, 5)), min_size=1, max_size=12))
def test_interval_stacking_is_exact(bars):
    """Per interval: pieces never overlap, the stack is as tall as the bars then active, each bar is covered."""
    bars = [(float(s), float(s + d), float(h)) for s, d, h in bars]
    pieces = bp._stack_segments(bars)
    for i, (s, e, h) in enumerate(bars):
        mine = sorted((t0, t1) for k, t0, t1, _ in pieces if k == i)
        assert mine[0][0] == s and mine[-1][1] == e
        assert all(a[1] == b[0] for a, b in zip(mine, mine[1:]))      # contiguous cover of [s, e]
    times = sorted({t for s, e, _ in bars for t in (s, e)})
    for t0, t1 in zip(times, times[1:]):
        mid = (t0 + t1) / 2
        active = [(y, y + bars[k][2]) for k, a, b, y in pieces if a <= mid < b]
        assert max((y1 for _, y1 in active), default=0.0) == sum(h for s, e, h in bars if s <= mid < e)
        active.sort()
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(active, active[1:]))


def texts(fig):
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def test_placement_draws_regions_routes_gpus_prices():
    inst = inst4()
    sched = two_jobs(inst)
    fig = bp.plot_placement(inst, sched)
    ax = fig.axes[0]
    labels = texts(fig)
    assert any(t.startswith("a\n8/8 GPUs") and "0.2 $/kWh" in t for t in labels)
    assert any(t.startswith("b\n2/4 GPUs") and "0.3 $/kWh" in t for t in labels)
    assert any(t.startswith("c\n0/4 GPUs") for t in labels) and "t" in labels
    # j1's route a - t - b is two arrows; j2 has none
    arrows = [c for c in ax.get_children() if type(c).__name__ == "Annotation" and c.arrow_patch is not None]
    assert len(arrows) == 2
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0].startswith("j1  [a:4 → b:2]") and "1 Gbit/s" in legend[0]
    assert ax.get_xlabel().startswith("longitude")
    # at t = 1.5 h, only jobs running then and the prices then (b's second hour: 0.1)
    fig = bp.plot_placement(inst, sched, at=5400.0)
    assert any(t.startswith("b\n") and "0.1 $/kWh" in t for t in texts(fig))


def test_timeline_and_schedule_plot(tmp_path):
    inst = inst4(coords=False)
    sched = two_jobs(inst)
    fig = bp.plot_timeline(inst, sched)
    ax = fig.axes[0]
    bars = [p for p in ax.patches if p.get_facecolor()[:3] != (0.96, 0.96, 0.96)]
    assert len(bars) == 3    # j1 on a and b, j2 on a
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a\n8 GPUs", "b\n4 GPUs", "c\n4 GPUs"]
    fig = sched.plot(inst)
    assert len([a for a in fig.axes if a.get_title()]) == 2
    png = bp.save_figure(fig, tmp_path / "s.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_plot_png_svg_and_bad_output(cli, tmp_path):
    inst = inst4()
    ip, sp = tmp_path / "i.json", tmp_path / "s.json"
    inst.save(ip)
    two_jobs(inst).save(sp)
    r = cli("plot", ip, sp, "-o", tmp_path / "m.svg", "--kind", "placement")
    assert r.returncode == 0, r.stderr
    assert "<svg" in (tmp_path / "m.svg").read_text()[:500]
    r = cli("plot", ip, sp, "-o", tmp_path / "m.jpg")
    assert r.returncode == 2 and "unsupported file type '.jpg'" in r.stderr and "Traceback" not in r.stderr
    before = sp.read_bytes()
    r = cli("plot", ip, sp, "-o", sp)
    assert r.returncode == 2 and "Traceback" not in r.stderr and sp.read_bytes() == before   # input untouched
    d = json.loads(sp.read_text())
    d["jobs"][0]["blocks"][0]["region"] = "nowhere"
    sp.write_text(json.dumps(d))
    r = cli("plot", ip, sp, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_core_never_imports_matplotlib_and_says_so_when_missing(monkeypatch):
    import subprocess
    import sys
    code = ("import sys, bace_opt, bace_opt.plot, bace_opt.cli.main; bace_opt.cli.main.build_parser(); "
            "print('matplotlib' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.strip() == "False", r.stderr
    inst = inst4()
    sched = two_jobs(inst)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(bo.BaceOptError, match="needs matplotlib"):
        sched.plot(inst)
