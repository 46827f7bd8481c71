"""Property: the evaluator never accepts a schedule that over-uses a region or a link, and never rejects
one that does not.  Random placements on a small fixed instance are checked against a brute-force count of
the usage at every start instant (usage only rises at starts, so that is where any excess shows)."""
import math
from collections import defaultdict

from hypothesis import given, settings, strategies as st

import bace_opt as bo
from bace_opt.schedule import JobPlan

GT = bo.GpuType("G", 100.0, 40, 250)
INST = bo.Instance(
    name="prop", gpu_types={"G": GT}, reference_gpu="G",
    regions=[bo.Region("r0", "G", 6, 0.2), bo.Region("r1", "G", 5, 0.3), bo.Region("r2", "G", 4, 0.1)],
    links=[bo.Link("r0", "r1", 4.0, 5.0), bo.Link("r1", "r2", 3.0, 5.0), bo.Link("r0", "r2", 2.0, 20.0)],
    jobs=[bo.Job(f"j{i}", 0.0, S, 4, 3, 1.0, 100.0 * (i + 1)) for i, S in enumerate([3, 4, 2, 5])],
).validated()
REGIONS = ["r0", "r1", "r2"]


@st.composite
def plans(draw):
    out = []
    for job in INST.jobs:
        if draw(st.booleans()) and draw(st.booleans()):
            out.append(JobPlan(job.name, "blocked"))
            continue
        start = float(draw(st.integers(0, 6)) * 10)
        k = draw(st.integers(1, min(3, job.stages)))
        order = draw(st.permutations(REGIONS))[:k]
        cuts = sorted(draw(st.lists(st.integers(1, job.stages - 1), min_size=k - 1, max_size=k - 1, unique=True))) \
            if k > 1 else []
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [job.stages])]
        if len(sizes) != k:
            out.append(JobPlan(job.name, "blocked"))
            continue
        hops = []
        for u, v in zip(order, order[1:]):
            route = draw(st.sampled_from([r.regions for r in INST.routes(u, v, k=None)]))
            hops.append(bo.Hop(route, draw(st.sampled_from([0.5, 1.0, 1.6, 2.5]))))
        out.append(JobPlan(job.name, "done", start, tuple(bo.Block(r, n) for r, n in zip(order, sizes)),
                           tuple(hops)))
    return out


def brute_force_overuse(sched) -> bool:
    done = [(e, INST.job(e.name)) for e in sched.jobs if e.status == "done"]
    for e0, _ in done:
        t = e0.start_s
        gpus, bw = defaultdict(float), defaultdict(float)
        for e, job in done:
            if e.start_s <= t < e.finish_s:
                for b in e.blocks:
                    gpus[b.region] += b.stages * job.gpus_per_stage
                for h in e.hops:
                    for u, v in zip(h.route, h.route[1:]):
                        bw[frozenset((u, v))] += h.reserved_gbps
        if any(gpus[r.name] > r.gpus for r in INST.regions):
            return True
        if any(bw[frozenset((l.a, l.b))] > l.bandwidth_gbps + 1e-9 for l in INST.links):
            return True
    return False


@settings(max_examples=300, deadline=None)
@given(plans())
def test_evaluator_flags_exactly_the_overuse(ps):
    sched = bo.make_schedule(INST, ps, "random")
    rep = bo.evaluate(INST, sched)
    capacity_violations = [v for v in rep.violations if v.rule in (2, 3)]
    assert all(v.rule in (2, 3) for v in rep.violations), rep.violations
    assert bool(capacity_violations) == brute_force_overuse(sched)
    assert rep.feasible == (not capacity_violations)


@settings(max_examples=150, deadline=None)
@given(plans())
def test_link_and_stall_figures_match_a_brute_force_count(ps):
    """Per-link peak and time-weighted mean utilisation equal a count over every interval between events;
    the peak exceeds 1 exactly when rule 3 is broken; stall is positive exactly for communication-bound jobs;
    reading (b) never undercuts reading (a)."""
    sched = bo.make_schedule(INST, ps, "random")
    rep = bo.evaluate(INST, sched, check_reported=False)
    m = rep.metrics
    done = [e for e in sched.jobs if e.status == "done"]
    if not done:
        assert m["peak_link_utilisation"] is None and m["links_used"] == 0
        return
    t0, t1 = min(INST.job(e.name).arrival_s for e in done), max(e.finish_s for e in done)
    times = sorted({e.start_s for e in done} | {e.finish_s for e in done})
    expected = {}
    for link in INST.links:
        key = frozenset((link.a, link.b))

        def load(t):
            return math.fsum(h.reserved_gbps * sum(1 for u, v in zip(h.route, h.route[1:]) if frozenset((u, v)) == key)
                             for e in done if e.start_s <= t < e.finish_s for h in e.hops)
        loads = [load(t) for t in times[:-1]]
        if any(x > 0 for x in loads):
            area = sum(x * (b - a) for x, a, b in zip(loads, times, times[1:]))
            expected[f"{link.a}<->{link.b}"] = (max(loads) / link.bandwidth_gbps,
                                                area / link.bandwidth_gbps / (t1 - t0))
    got = m["link_utilisation"]
    assert set(got) == set(expected)
    for k, (peak, mean) in expected.items():
        assert abs(got[k]["peak"] - peak) <= 1e-9 and abs(got[k]["mean"] - mean) <= 1e-9
    assert abs(m["peak_link_utilisation"] - max((p for p, _ in expected.values()), default=0.0)) <= 1e-12
    assert (m["peak_link_utilisation"] > 1 + 1e-9) == any(v.rule == 3 for v in rep.violations)
    for f in rep.figures.values():
        assert (f.stall_s > 0) == f.comm_bound and f.stall_s < f.run_s
    assert m["total_electricity_incl_idle_usd"] >= m["total_electricity_usd"]
