"""The pipeline-schedule layer (bace_opt.pipeline): block model, GPipe / 1F1B / greedy / CP-SAT optimum.

Instances and block models are built in code; times are chosen on a binary grid (0.25, 0.5, ...) where the
text says "exactly", so that float sums are exact and equality is bit-for-bit.
"""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bace_opt as bo
from bace_opt import formulas as F
from bace_opt.errors import InputError
from bace_opt.evaluate import make_schedule
from bace_opt.pipeline import (PipelineModel, PipelineOptions, build_model, check_ops, makespan,
                               pipeline_iteration_s, schedule_model)
from bace_opt.pipeline.model import Boundary
from bace_opt.pipeline.optimal import solve_optimal
from bace_opt.pipeline.schedules import (Op, PipelineDeadlock, _LinkBook, gpipe, greedy, onefoneb,
                                         onefoneb_orders, peak_inflight, simulate_orders)


# ---------------------------------------------------------------------- data built in code

def two_region_instance(latency_ms=0.0, stage_time_s=0.75, stages=4, microbatches=8, activation_mb=100.0,
                        slow_b=False):
    """r1 and r2 (8 GPUs each, A-type 100 TFLOPS; r2 B-type 50 TFLOPS if slow_b), one link, plus transit r3
    so that a two-link route r1-r3-r2 exists."""
    types = {"A": bo.GpuType("A", 100.0, 48, 300), "B": bo.GpuType("B", 50.0, 48, 300)}
    return bo.Instance(
        name="pipe", gpu_types=types, reference_gpu="A",
        regions=[bo.Region("r1", "A", 8, 0.2), bo.Region("r2", "B" if slow_b else "A", 8, 0.25),
                 bo.Region("r3", "A", 0, 0.3)],
        links=[bo.Link("r1", "r2", 100.0, latency_ms), bo.Link("r1", "r3", 100.0, 7.0),
               bo.Link("r3", "r2", 100.0, 11.0)],
        jobs=[bo.Job("j", 0.0, stages, microbatches, 10, stage_time_s, activation_mb),
              bo.Job("k", 0.0, 2, 2, 1, 1.0, 1.0)]).validated()


def uni(S, m, lat=0.0, bw=0.0, cross=None, split=False, limit=None):
    cross = [S // 2 - 1] if cross is None and S > 1 else (cross or [])
    return PipelineModel.uniform(S, m, 1.0, 2.0, cross=cross, latency_s=lat, transfer_s=bw, split=split,
                                 memory_limit=limit)


KINDS_FIXED = ("gpipe", "1f1b", "greedy")


# ---------------------------------------------------------------------- exactness vs the analytic formula

@pytest.mark.parametrize("S", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8, 16])
def test_zero_latency_ample_bandwidth_equals_analytic_exactly(S, m):
    # T_F = 0.25, T_B = 0.5 (tau = 0.75), every boundary cross-region, latency 0, transfer time 0
    mod = PipelineModel.uniform(S, m, 0.25, 0.5, cross=range(S - 1))
    analytic = (m + S - 1) * 0.75
    assert makespan(gpipe(mod)) == analytic
    assert makespan(onefoneb(mod)) == analytic


@pytest.mark.parametrize("S,m", [(2, 4), (4, 8), (6, 3), (8, 16)])
def test_exactness_through_the_instance_api(S, m):
    """Latency 0 and a placement with a hop: transfers take 8A/1000/w > 0 s; with w huge they vanish to
    rounding.  A one-region placement has no transfer at all and matches formulas.iteration_s exactly."""
    inst = two_region_instance(latency_ms=0.0, stage_time_s=0.75, stages=S, microbatches=m, activation_mb=1e-3)
    job = inst.job("j")
    for kind in ("gpipe", "1f1b"):
        one = pipeline_iteration_s(inst, job, [("r1", S)], [], kind=kind)
        assert one.iteration_s == one.analytic_iteration_s == F.iteration_s(job, 0.75, [], [])
        if S > 1:
            two = pipeline_iteration_s(inst, job, [("r1", S // 2), ("r2", S - S // 2)],
                                       [(("r1", "r2"), 1e6)], kind=kind)
            c = F.transfer_s(job, 1e6)     # 8e-12 s: the only difference, a few of them on the critical path
            assert 0 <= two.iteration_s - two.analytic_iteration_s <= 2 * m * c


@pytest.mark.parametrize("S,m", [(2, 3), (4, 8), (5, 2)])
def test_split_backward_static_schedules_end_s_minus_1_weight_grads_earlier(S, m):
    mod = PipelineModel.uniform(S, m, 0.25, 0.5, cross=range(S - 1), split=True)
    expect = (m + S - 1) * 0.75 - (S - 1) * 0.25      # T_W = 0.25
    assert makespan(gpipe(mod)) == expect
    assert makespan(onefoneb(mod)) == expect


def test_gpipe_with_latency_pays_each_hop_latency_twice():
    # GPipe's critical path crosses every boundary once forward and once backward: the analytic + 2 sum L
    mod = PipelineModel(6, 5, (0.25,) * 6, (0.5,) * 6,
                        boundaries=(Boundary(1, 0, 0.5, 0.0), Boundary(3, 1, 1.25, 0.0)))
    assert makespan(gpipe(mod)) == (5 + 6 - 1) * 0.75 + 2 * (0.5 + 1.25)


def test_gpipe_transfer_shorter_than_a_block_adds_it_once_each_way():
    # c = 0.125 <= T_F: messages never queue, each hop adds (L + c) to the fill and to the drain
    mod = uni(4, 6, lat=0.5, bw=0.125)
    mod = PipelineModel(4, 6, (0.25,) * 4, (0.5,) * 4, boundaries=(Boundary(1, 0, 0.5, 0.125),))
    assert makespan(gpipe(mod)) == (6 + 4 - 1) * 0.75 + 2 * (0.5 + 0.125)


def test_one_f_one_b_suffers_bubble_strides_that_the_greedy_avoids():
    # CrossPipe Fig. 6: with latency 1 T_F and transfer 1 T_F, 1F1B's critical path holds O(m) messages
    mod = uni(4, 8, lat=1.0, bw=1.0)
    assert makespan(onefoneb(mod)) == 49.0
    assert makespan(greedy(mod)) == 45.0
    assert makespan(gpipe(mod)) == 37.0   # more memory (m in flight) buys the rest


# ---------------------------------------------------------------------- validity of every schedule

def _all_valid(mod):
    for kind in KINDS_FIXED:
        res = schedule_model(mod, kind)
        v = check_ops(mod, res.ops, res.memory_limit)
        assert v == [], (kind, v[:3])
        assert max(res.peak_inflight[k] - res.memory_limit[k] for k in range(mod.stages)) <= 0
        assert res.iteration_s == makespan(res.ops)
        assert min(o.start_s for o in res.ops if o.kind == "F" and o.stage == 0) == 0.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(S=st.integers(1, 6), m=st.integers(1, 9), split=st.booleans(),
       lat=st.sampled_from([0.0, 0.25, 1.0, 2.5]), bw=st.sampled_from([0.0, 0.5, 1.0, 3.0]),
       speeds=st.lists(st.sampled_from([0.5, 1.0, 2.0]), min_size=6, max_size=6),
       cross=st.sets(st.integers(0, 4), max_size=3), limit=st.one_of(st.none(), st.integers(1, 4)))
def test_every_schedule_respects_dependencies_overlap_and_memory(S, m, split, lat, bw, speeds, cross, limit):
    cross = sorted(c for c in cross if c < S - 1)
    t_f = tuple(1.0 / speeds[k] for k in range(S))
    mod = PipelineModel(S, m, t_f, tuple(2 * x for x in t_f), split=split,
                        boundaries=tuple(Boundary(k, h, lat, bw) for h, k in enumerate(cross)),
                        memory_limit=(() if limit is None else (limit,) * S))
    _all_valid(mod)


def test_memory_limit_is_respected_by_1f1b_greedy_and_optimal():
    mod = uni(4, 6, lat=1.0, bw=0.5, split=True, limit=2)
    for kind in ("1f1b", "greedy", "optimal"):
        res = schedule_model(mod, kind, PipelineOptions(time_limit_s=30))
        assert res.memory_limit == (2, 2, 2, 2)
        assert max(res.peak_inflight) <= 2, kind
        assert check_ops(mod, res.ops) == []
    assert max(peak_inflight(mod, gpipe(mod))) == 6      # GPipe needs m in flight...
    assert any("memory limit" in v for v in check_ops(mod, gpipe(mod)))   # ...so it breaks this limit


def test_checker_catches_broken_schedules():
    mod = uni(3, 3, lat=0.5, bw=0.5)
    ops = onefoneb(mod)
    assert check_ops(mod, ops) == []
    # a forward moved before its input arrives
    i = next(j for j, o in enumerate(ops) if o.kind == "F" and o.stage == 2 and o.mb == 1)
    o = ops[i]
    early = ops[:i] + [replace(o, start_s=o.start_s - 0.5, end_s=o.end_s - 0.5, arrive_s=o.end_s - 0.5)] + ops[i + 1:]
    assert any("before its input arrives" in v or "overlaps" in v for v in check_ops(mod, early))
    # a block missing
    assert any("missing" in v for v in check_ops(mod, ops[1:]))
    # a wrong duration
    j = next(j for j, o in enumerate(ops) if o.kind == "B")
    longer = ops[:j] + [replace(ops[j], end_s=ops[j].end_s + 1)] + ops[j + 1:]
    assert any("duration" in v for v in check_ops(mod, longer))
    # two messages at once on one link direction
    xs = [j for j, o in enumerate(ops) if o.kind == "XF"]
    a, b = ops[xs[0]], ops[xs[1]]
    clash = list(ops)
    clash[xs[1]] = replace(b, start_s=a.start_s, end_s=a.end_s, arrive_s=a.arrive_s)
    assert any("overlaps" in v or "before its sender" in v for v in check_ops(mod, clash))
    # a transfer over a same-region boundary
    assert any("not cross-region" in v for v in check_ops(mod, ops + [Op("XF", 1, 0, 1.0, 1.5, 2.0)]))


def test_invalid_fixed_order_is_reported_as_deadlock():
    mod = uni(2, 2)
    orders = onefoneb_orders(mod)
    orders[1] = [("B", 0), ("F", 0), ("F", 1), ("B", 1)]   # backward before its own forward
    with pytest.raises(PipelineDeadlock):
        simulate_orders(mod, orders)


def test_link_book_inserts_into_the_earliest_free_window():
    book = _LinkBook()
    assert book.book(0.0, 1.0) == 0.0
    assert book.book(5.0, 1.0) == 5.0
    assert book.book(0.5, 1.0) == 1.0      # [1, 2) fits before [5, 6)
    assert book.book(1.5, 3.0) == 2.0      # [2, 5) fits exactly
    assert book.book(0.0, 0.5) == 6.0      # no gap left before 6
    assert book.starts == sorted(book.starts)


# ---------------------------------------------------------------------- the CP-SAT optimum

@pytest.mark.parametrize("S,m,lat,bw,split", [
    (2, 4, 1.0, 0.5, False), (3, 4, 0.5, 2.0, True), (4, 6, 2.0, 1.0, False), (4, 5, 0.0, 2.0, True),
    (3, 3, 1.5, 0.0, True),
])
def test_proven_optimum_is_no_worse_than_every_schedule(S, m, lat, bw, split):
    mod = uni(S, m, lat, bw, split=split)
    opt = schedule_model(mod, "optimal", PipelineOptions(time_limit_s=30))
    assert opt.status == "optimal" and opt.exact_grid
    assert opt.bound_s <= opt.objective_s + 1e-9 and opt.gap == pytest.approx(0.0, abs=1e-9)
    assert opt.iteration_s == pytest.approx(opt.objective_s, rel=1e-9)
    assert check_ops(mod, opt.ops) == []
    for kind in ("1f1b", "greedy"):
        assert opt.iteration_s <= schedule_model(mod, kind).iteration_s + 1e-9
    # GPipe uses m in flight: compare with the optimum under that memory limit
    opt_m = schedule_model(mod.with_memory_limit(m), "optimal", PipelineOptions(time_limit_s=30))
    assert opt_m.status == "optimal"
    assert opt_m.iteration_s <= schedule_model(mod, "gpipe").iteration_s + 1e-9
    assert opt_m.iteration_s <= opt.iteration_s + 1e-9


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(S=st.integers(2, 3), m=st.integers(1, 4), split=st.booleans(),
       lat=st.sampled_from([0.0, 0.5, 2.0]), bw=st.sampled_from([0.0, 1.0, 2.5]),
       speeds=st.lists(st.sampled_from([0.5, 1.0]), min_size=3, max_size=3), limit=st.integers(1, 3))
def test_no_schedule_beats_a_proven_optimum(S, m, split, lat, bw, speeds, limit):
    t_f = tuple(1.0 / speeds[k] for k in range(S))
    mod = PipelineModel(S, m, t_f, tuple(2 * x for x in t_f), split=split,
                        boundaries=(Boundary(0, 0, lat, bw),), memory_limit=(limit,) * S)
    opt = solve_optimal(mod, time_limit_s=20)
    assert opt.status == "optimal" and opt.exact_grid
    assert check_ops(mod, opt.ops) == []
    assert opt.bound_s <= opt.iteration_s + 1e-9
    for fn in (onefoneb, greedy):
        assert opt.iteration_s <= makespan(fn(mod)) + 1e-9
    assert solve_optimal(mod.with_memory_limit(m), time_limit_s=20).iteration_s <= makespan(gpipe(mod)) + 1e-9


def test_optimum_beats_both_heuristics_on_a_heterogeneous_case():
    # stage 2 is twice as slow (T_F 2, T_B 4); one hop after stage 1 with latency 1 and transfer 1:
    # 1F1B and the greedy both need 29, the proven optimum 27
    mod = PipelineModel(3, 4, (1.0, 2.0, 1.0), (2.0, 4.0, 2.0), split=True, boundaries=(Boundary(0, 0, 1.0, 1.0),))
    opt = schedule_model(mod, "optimal", PipelineOptions(time_limit_s=30))
    assert opt.status == "optimal"
    assert check_ops(mod, opt.ops) == []
    assert opt.iteration_s == 27.0
    assert schedule_model(mod, "1f1b").iteration_s == 29.0
    assert schedule_model(mod, "greedy").iteration_s == 29.0


@pytest.mark.parametrize("split", [False, True])
def test_cp_sat_proves_optimality_on_4_stages_8_microbatches(split):
    mod = uni(4, 8, lat=1.0, bw=1.0, split=split)
    res = solve_optimal(mod, time_limit_s=60)
    assert res.status == "optimal"
    assert res.bound_s == pytest.approx(res.objective_s)
    assert res.iteration_s <= makespan(onefoneb(mod)) and res.iteration_s <= makespan(greedy(mod))


def test_off_grid_durations_are_rounded_up_and_reported():
    mod = PipelineModel(2, 3, (1.0, 1.0), (2.0, 2.0), boundaries=(Boundary(0, 0, 0.30001, 0.2),))
    res = solve_optimal(mod, time_limit_s=20, resolution_s=0.1)
    assert not res.exact_grid
    assert res.status == "optimal"
    # the grid model rounds 0.30001 up to 0.4: its objective is an upper bound of the real re-timed schedule
    assert res.iteration_s <= res.objective_s + 1e-9
    assert check_ops(mod, res.ops) == []


# ---------------------------------------------------------------------- the model built from an instance

def test_model_from_instance_uses_speeds_routes_and_transfer_formula():
    inst = two_region_instance(latency_ms=40.0, stage_time_s=0.3, stages=4, microbatches=4, activation_mb=50.0,
                               slow_b=True)
    job = inst.job("j")
    mod = build_model(inst, job, [bo.Block("r1", 3), bo.Block("r2", 1)], [bo.Hop(("r1", "r3", "r2"), 2.5)])
    assert mod.t_f == pytest.approx((0.1, 0.1, 0.1, 0.2))        # r2 is half as fast
    assert mod.t_b == pytest.approx((0.2, 0.2, 0.2, 0.4))
    (b,) = mod.boundaries
    assert b.stage == 2 and b.hop == 0
    assert b.latency_s == pytest.approx(0.018)                    # 7 + 11 ms over the transit region
    assert b.transfer_s == F.transfer_s(job, 2.5) == pytest.approx(0.16)
    assert mod.memory_limit == (4, 3, 2, 1)
    assert mod.stage_region == ("r1", "r1", "r1", "r2")
    res = pipeline_iteration_s(inst, job, [("r1", 3), ("r2", 1)], [(("r1", "r3", "r2"), 2.5)], kind="greedy")
    tau = F.tau_s(inst, job, ["r1", "r2"])
    assert res.analytic_iteration_s == F.iteration_s(job, tau, [2.5], [18.0])
    opt = PipelineOptions(forward_fraction=0.25, split_backward=True, wgrad_fraction=0.4, memory_limit=2)
    mod2 = build_model(inst, job, [("r1", 3), ("r2", 1)], [(("r1", "r2"), 2.5)], opt)
    assert mod2.t_f[0] == pytest.approx(0.075) and mod2.t_w[0] == pytest.approx(0.4 * 0.225)
    assert mod2.memory_limit == (2, 2, 2, 2) and mod2.split


def test_api_is_pure_and_cached_and_accepts_schedule_objects():
    inst = two_region_instance(latency_ms=30.0)
    plan = bo.JobPlan("j", "done", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 1.0)])
    sched = make_schedule(inst, [plan], "hand")
    e = sched.job("j")
    a = pipeline_iteration_s(inst, "j", e.blocks, e.hops, kind="greedy")
    b = pipeline_iteration_s(inst, inst.job("j"), [("r1", 2), ("r2", 2)], [(("r1", "r2"), 1.0)], kind="greedy")
    assert a == b and a.ops is b.ops
    assert a.analytic_iteration_s == pytest.approx(e.iteration_s, rel=1e-12)
    d = a.to_dict(ops=True)
    json.dumps(d)
    assert d["kind"] == "greedy" and len(d["ops"]) == len(a.ops)


@pytest.mark.parametrize("blocks,hops,kind,opts,msg", [
    ([("r1", 3)], [], "1f1b", None, "hold 3 stages"),
    ([("r1", 2), ("r2", 2)], [], "1f1b", None, "need 1 hops"),
    ([("r1", 2), ("r2", 2)], [(("r2", "r1"), 1.0)], "1f1b", None, "must run from"),
    ([("r1", 2), ("zz", 2)], [(("r1", "zz"), 1.0)], "1f1b", None, "not a region"),
    ([("r1", 2), ("r1", 2)], [(("r1", "r1"), 1.0)], "1f1b", None, "both in"),
    ([("r1", 2), ("r2", 2)], [(("r1", "r2"), 0.0)], "1f1b", None, "reserved_gbps"),
    ([("r1", 4)], [], "zigzag", None, "kind must be one of"),
    ([("r1", 4)], [], "1f1b", dict(memory_limit=(1, 2)), "2 values given for 4 stages"),
    ([("r1", 4)], [], "1f1b", dict(memory_limit=0), "memory_limit"),
])
def test_bad_input_raises_input_error_naming_it(blocks, hops, kind, opts, msg):
    inst = two_region_instance()
    with pytest.raises(InputError, match=msg):
        pipeline_iteration_s(inst, "j", blocks, hops, kind=kind,
                             options=PipelineOptions(**opts) if opts else None)


def test_options_may_be_a_dict():
    inst = two_region_instance(latency_ms=20.0)
    args = (inst, "j", [("r1", 2), ("r2", 2)], [(("r1", "r2"), 1.0)])
    a = pipeline_iteration_s(*args, kind="greedy", options={"split_backward": True, "memory_limit": 2})
    b = pipeline_iteration_s(*args, kind="greedy", options=PipelineOptions(split_backward=True, memory_limit=2))
    assert a == b and a.model.split and a.memory_limit == (2, 2, 2, 2)
    with pytest.raises(InputError, match="unknown option"):
        pipeline_iteration_s(*args, options={"splitt": True})


def test_unknown_job_is_an_input_error():
    with pytest.raises(InputError, match="not in instance"):
        pipeline_iteration_s(two_region_instance(), "nope", [("r1", 4)], [])


# ---------------------------------------------------------------------- CLI and Gantt

@pytest.fixture
def files(tmp_path):
    inst = two_region_instance(latency_ms=25.0, stage_time_s=0.3, stages=4, microbatches=6, activation_mb=40.0)
    plan = bo.JobPlan("j", "done", 0.0, [("r1", 2), ("r2", 2)], [(("r1", "r2"), 2.0)])
    sched = make_schedule(inst, [plan, bo.JobPlan("k", "blocked")], "hand")
    ip, sp = tmp_path / "inst.json", tmp_path / "sched.json"
    inst.save(ip)
    sched.save(sp)
    return inst, ip, sp


def test_cli_json_for_each_kind(cli, files, tmp_path):
    inst, ip, sp = files
    png = tmp_path / "g.png"
    r = cli("pipeline", ip, sp, "--job", "j", "--kind", "optimal", "--json", "--time-limit", "20",
            "--gantt", png)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["kind"] == "optimal" and d["status"] == "optimal" and d["gap"] == pytest.approx(0.0, abs=1e-9)
    job = inst.job("j")
    assert d["analytic_iteration_s"] == pytest.approx(F.iteration_s(job, 0.3, [2.0], [25.0]))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r1 = cli("pipeline", ip, sp, "--job", "j", "--kind", "1f1b", "--json")
    assert r1.returncode == 0, r1.stderr
    d1 = json.loads(r1.stdout)
    assert set(d1) >= {"iteration_s", "analytic_iteration_s", "kind"} and "status" not in d1
    assert d["iteration_s"] <= d1["iteration_s"] + 1e-9


@pytest.mark.parametrize("args,msg", [
    (["--job", "nope"], "not in schedule"),
    (["--job", "k"], "status 'blocked'"),
    (["--job", "j", "--memory-limit", "0"], "--memory-limit: must be an integer >= 1"),
    (["--job", "j", "--time-limit", "-1"], "time-limit"),
])
def test_cli_bad_input_is_one_clear_message(cli, files, args, msg):
    _, ip, sp = files
    r = cli("pipeline", ip, sp, *args)
    assert r.returncode == 2
    assert msg in r.stderr and "Traceback" not in r.stderr


def test_gantt_png_is_written(tmp_path):
    from bace_opt.pipeline.gantt import draw_gantt
    mod = uni(4, 4, lat=0.5, bw=0.5, split=True)
    p = draw_gantt(mod, greedy(mod), tmp_path / "x.png")
    assert p.read_bytes()[:4] == b"\x89PNG" and p.stat().st_size > 5000
