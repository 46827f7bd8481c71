"""Unit tests of BACE-Pipe's three stages and of the baselines, on hand-built instances."""
from __future__ import annotations

import pytest

import bace_opt as bo
from bace_opt import formulas as F
from bace_opt.instance import GpuType, Instance, Job, Link, Region
from bace_opt.policies import (ABLATIONS, HEURISTICS, ClusterState, PolicyError, allocate, allocate_even, available,
                               find_chains, make_policy, prioritize, priorities)
from bace_opt.policies.greedy_chains import price_chain
from bace_opt.policies.pathfinder import Chain

A = {"A": GpuType("A", 100.0, 48.0, 300.0)}


def job(name, stages=2, stage_time_s=0.1, activation_mb=10.0, microbatches=8, iterations=10, arrival_s=0.0,
        gpus_per_stage=1):
    return Job(name, arrival_s, stages, microbatches, iterations, stage_time_s, activation_mb, gpus_per_stage)


def make(regions, links, jobs):
    return Instance("t", A, "A", [Region(n, "A", g, p) for n, g, p in regions],
                    [Link(a, b, bw, lat) for a, b, bw, lat in links], jobs).validated()


def state_with(inst, now=0.0, gpus=None, gbps=None):
    free = {r.name: r.gpus for r in inst.regions}
    free.update(gpus or {})
    bw = [l.bandwidth_gbps for l in inst.links]
    for (a, b), v in (gbps or {}).items():
        bw[inst.link_index[(a, b)]] = v
    return ClusterState(inst, now, free, bw)


# ---------------------------------------------------------------------- stage 1: prioritization

def test_priority_flips_from_short_first_to_bandwidth_light_first():
    # "short": little compute, big activation (bandwidth-heavy); "light": long compute, small activation
    short = job("short", stage_time_s=0.1, activation_mb=50.0, iterations=10)    # b = 4 Gbit/s, I small
    light = job("light", stage_time_s=0.1, activation_mb=1.0, iterations=1000)   # b = 0.08 Gbit/s, I large
    inst = make([("x", 4, 0.1), ("y", 4, 0.2)], [("x", "y", 10.0, 10.0)], [short, light])
    # two jobs: min-max gives short (I=0, D=1) -> 1 - alpha;  light (I=1, D=0) -> alpha
    idle = state_with(inst)                                 # no reservation: alpha = 0
    assert idle.alpha() == 0.0
    assert [j.name for j in prioritize([light, short], idle)] == ["short", "light"]
    busy = state_with(inst, gbps={("x", "y"): 2.0})         # 8 of 10 reserved: alpha = 0.8
    assert busy.alpha() == pytest.approx(0.8)
    assert [j.name for j in prioritize([short, light], busy)] == ["light", "short"]
    pr = priorities([short, light], busy)
    assert pr["short"] == pytest.approx(0.2) and pr["light"] == pytest.approx(0.8)
    # the crossover is at alpha = 1/2: just below, short first; just above, light first
    assert [j.name for j in prioritize([short, light], idle, alpha=0.49)] == ["short", "light"]
    assert [j.name for j in prioritize([short, light], idle, alpha=0.51)] == ["light", "short"]


def test_priority_alpha_is_mean_over_links_in_use_only():
    inst = make([("x", 1, 0.1), ("y", 1, 0.1), ("z", 1, 0.1)],
                [("x", "y", 10.0, 1.0), ("y", "z", 10.0, 1.0), ("x", "z", 10.0, 1.0)], [job("a")])
    st = state_with(inst, gbps={("x", "y"): 5.0, ("y", "z"): 9.0})   # 0.5 and 0.1 used, x-z idle
    assert st.alpha() == pytest.approx(0.3)


def test_priority_equal_jobs_keep_fifo_order():
    a, b = job("a", arrival_s=5.0), job("b", arrival_s=1.0)
    inst = make([("x", 4, 0.1)], [], [a, b])
    assert [j.name for j in prioritize([a, b], state_with(inst))] == ["b", "a"]


# ---------------------------------------------------------------------- stage 2: pathfinder

def _pathfinder_instance():
    # job needs 3 stages; b_j = 8 * 25 / 1000 / 0.1 = 2 Gbit/s.
    # cheapest region s (1 GPU) is the seed.  Region big (2 GPUs) would complete the job in a 2-region chain,
    # but every link to big carries only 1 Gbit/s.  The feasible chain is the longer s -> m -> n.
    j = job("j", stages=3, stage_time_s=0.1, activation_mb=25.0)
    regions = [("s", 1, 0.10), ("big", 2, 0.11), ("m", 1, 0.30), ("n", 1, 0.30)]
    links = [("s", "big", 1.0, 5.0), ("m", "big", 1.0, 5.0), ("n", "big", 1.0, 5.0),
             ("s", "m", 3.0, 5.0), ("m", "n", 2.5, 5.0), ("s", "n", 2.2, 5.0)]
    return make(regions, links, [j]), j


def test_pathfinder_refuses_thin_hop_and_finds_longer_feasible_chain():
    inst, j = _pathfinder_instance()
    st = state_with(inst)
    assert F.demand_gbps(j, 0.1) == pytest.approx(2.0)
    chains = find_chains(j, st, seeds="cheapest")
    assert len(chains) == 1
    c = chains[0]
    # s -> m preferred over s -> n (3.0 > 2.2 Gbit/s), then m -> n; never big
    assert c.regions == ("s", "m", "n")
    assert c.routes == (("s", "m"), ("m", "n"))
    assert c.demand_gbps == pytest.approx(2.0)
    # every seed grows (default seeds="all"); none of the chains touches "big" over its thin links
    assert {x.regions for x in find_chains(j, st)} == {("s", "m", "n"), ("m", "s", "n"), ("n", "m", "s")}
    # the policy's plan reserves b_j on each hop, so the pipeline does not stall
    plan = make_policy("bace-pipe", seeds="cheapest").place(j, st)
    assert [b.region for b in plan.blocks] == ["s", "m", "n"]
    assert all(h.reserved_gbps == pytest.approx(2.0) for h in plan.hops)
    assert not bo.price_plan(inst, plan).comm_bound


def test_pathfinder_returns_nothing_when_no_chain_carries_the_demand():
    inst, j = _pathfinder_instance()
    st = state_with(inst, gbps={("m", "n"): 1.5, ("s", "n"): 1.9})   # m-n and s-n now too thin
    assert find_chains(j, st) == []
    assert make_policy("bace-pipe").place(j, st) is None
    # the no-pathfinder ablation still places it (by price, bandwidth unchecked), stalling on thin hops
    plan = make_policy("bace-pipe-no-pathfinder").place(j, st)
    assert plan is not None
    assert [b.region for b in plan.blocks] == ["s", "big"]
    assert plan.hops[0].reserved_gbps == pytest.approx(1.0)      # min(b_j, residual)
    assert bo.price_plan(inst, plan).comm_bound


def test_pathfinder_recomputes_demand_with_slower_gpu():
    # a slower region raises tau and lowers b_j: the hop to the slow region only needs b at its speed
    gt = {"fast": GpuType("fast", 200.0, 48.0, 300.0), "slow": GpuType("slow", 100.0, 48.0, 300.0)}
    j = job("j", stages=2, stage_time_s=0.1, activation_mb=25.0)   # at fast: tau 0.05 -> 4 Gbit/s; slow: 2
    inst = Instance("t", gt, "slow", [Region("f", "fast", 1, 0.1), Region("s", "slow", 1, 0.2)],
                    [Link("f", "s", 2.5, 5.0)], [j]).validated()
    c = find_chains(j, state_with(inst))
    assert [x.regions for x in c] == [("f", "s"), ("s", "f")]      # every seed, cheapest first
    assert c[0].tau_s == pytest.approx(0.1) and c[0].demand_gbps == pytest.approx(2.0)


def test_pathfinder_all_seeds_keeps_cheapest_chain():
    inst, j = _pathfinder_instance()
    many = find_chains(j, state_with(inst), seeds="all")
    assert {c.regions[0] for c in many} >= {"s"}
    plan = make_policy("bace-pipe", seeds="all").place(j, state_with(inst))
    # every chain found is feasible; the one kept is the cheapest of them
    costs = []
    for c in many:
        blocks = allocate(j, c, state_with(inst))
        from bace_opt.policies.plans import make_plan, plan_cost
        costs.append(plan_cost(inst, j, make_plan(inst, j, c, blocks, 0.0))[0])
    assert bo.price_plan(inst, plan).electricity_usd == pytest.approx(min(costs))


def test_pathfinder_via_routes_crosses_transit_node():
    # a and b only connect through a transit node t (0 GPUs); direct-link chains cannot use it
    j = job("j", stages=2, stage_time_s=0.1, activation_mb=10.0)
    inst = make([("a", 1, 0.1), ("t", 0, 0.1), ("b", 1, 0.2)], [("a", "t", 5.0, 3.0), ("t", "b", 5.0, 4.0)], [j])
    assert find_chains(j, state_with(inst), via="links") == []
    # the default (auto) uses routes here: the GPU regions a and b are not directly linked
    assert find_chains(j, state_with(inst))[0].routes == (("a", "t", "b"),)
    c = find_chains(j, state_with(inst), via="routes")
    assert c[0].regions == ("a", "b") and c[0].routes == (("a", "t", "b"),)
    sched = bo.simulate(inst, "bace-pipe", via="routes")
    assert bo.evaluate(inst, sched).feasible and sched.job("j").status == "done"


def test_pathfinder_prefers_bandwidth_by_default_and_price_as_an_option():
    j = job("j", stages=2, stage_time_s=0.1, activation_mb=25.0)     # b_j = 2 Gbit/s
    inst = make([("s", 1, 0.1), ("fat", 1, 0.5), ("cheap", 1, 0.2)],
                [("s", "fat", 10.0, 5.0), ("s", "cheap", 3.0, 5.0), ("fat", "cheap", 1.0, 5.0)], [j])
    st = state_with(inst)
    assert find_chains(j, st)[0].regions == ("s", "fat")
    assert find_chains(j, st, prefer="price")[0].regions == ("s", "cheap")
    # once the cheap hop is too thin for b_j, prefer=price must still refuse it
    assert find_chains(j, state_with(inst, gbps={("s", "cheap"): 1.9}), prefer="price")[0].regions == ("s", "fat")
    with pytest.raises(bo.InputError, match="prefer"):
        make_policy("bace-pipe", prefer="nope")


# ---------------------------------------------------------------------- stage 3: allocator

def test_allocator_one_stage_per_region_then_cheapest_first():
    j = job("j", stages=7)
    inst = make([("a", 4, 0.30), ("b", 4, 0.10), ("c", 4, 0.20)],
                [("a", "b", 10.0, 1.0), ("b", "c", 10.0, 1.0), ("a", "c", 10.0, 1.0)], [j])
    chain = Chain(("a", "b", "c"), (("a", "b"), ("b", "c")), 0.1, F.demand_gbps(j, 0.1))
    st = state_with(inst)
    # one each (3), then 4 more: b (cheapest) up to its 4 GPUs (+3), then c (+1); a keeps its one
    assert allocate(j, chain, st) == [("a", 1), ("b", 4), ("c", 2)]
    # fewer free GPUs in b: the rest spills to c, then a
    st2 = state_with(inst, gpus={"b": 2, "c": 3})
    assert allocate(j, chain, st2) == [("a", 2), ("b", 2), ("c", 3)]
    # not enough room on the chain
    assert allocate(j, chain, state_with(inst, gpus={"a": 1, "b": 1, "c": 1})) is None
    # the no-cost-min ablation spreads evenly (7 / 3 -> 2 each, leftover to the region with most room left)
    assert allocate_even(j, chain, st) == [("a", 3), ("b", 2), ("c", 2)]


def test_allocator_respects_gpus_per_stage():
    j = job("j", stages=3, gpus_per_stage=2)
    inst = make([("a", 4, 0.3), ("b", 3, 0.1)], [("a", "b", 10.0, 1.0)], [j])
    chain = Chain(("a", "b"), (("a", "b"),), 0.1, F.demand_gbps(j, 0.1))
    assert allocate(j, chain, state_with(inst)) == [("a", 2), ("b", 1)]   # b holds one 2-GPU stage only


# ---------------------------------------------------------------------- baselines

def _baseline_instance():
    j = job("j", stages=4)
    inst = make([("cheap", 2, 0.10), ("mid", 4, 0.20), ("big", 8, 0.30)],
                [("cheap", "mid", 0.5, 5.0), ("mid", "big", 20.0, 5.0), ("cheap", "big", 1.0, 5.0)], [j])
    return inst, j


def test_single_region_baselines():
    inst, j = _baseline_instance()
    st = state_with(inst)
    assert [b.region for b in make_policy("lcf").place(j, st).blocks] == ["mid"]     # cheapest with room
    assert [b.region for b in make_policy("ldf").place(j, st).blocks] == ["big"]     # most free GPUs
    st2 = state_with(inst, gpus={"big": 3, "mid": 3})
    assert make_policy("lcf").place(j, st2) is None and make_policy("ldf").place(j, st2) is None


def test_cross_region_baselines_do_not_check_bandwidth():
    inst, j = _baseline_instance()
    st = state_with(inst)
    b = F.demand_gbps(j, 0.1)   # 0.8 Gbit/s
    p = make_policy("cr-lcf").place(j, st)
    assert [(x.region, x.stages) for x in p.blocks] == [("cheap", 2), ("mid", 2)]
    assert p.hops[0].reserved_gbps == pytest.approx(min(b, 0.5))               # stalls: 0.5 < 0.8
    p = make_policy("cr-ldf").place(j, state_with(inst, gpus={"big": 3}))
    assert [(x.region, x.stages) for x in p.blocks] == [("mid", 4)]             # mid has most free now
    p = make_policy("cr-ldf").place(j, state_with(inst, gpus={"big": 3, "mid": 3}))
    # most free: big (3) and mid (3) tie -> cheaper mid first; then big (3 free) via the 20 Gbit/s link
    assert [(x.region, x.stages) for x in p.blocks] == [("mid", 3), ("big", 1)]
    assert p.hops[0].reserved_gbps == pytest.approx(b)


def test_cross_region_skips_region_without_residual_bandwidth():
    inst, j = _baseline_instance()
    st = state_with(inst, gbps={("cheap", "mid"): 0.0}, gpus={"mid": 4})
    c = price_chain(j, st)
    # cheap -> mid has no bandwidth left: mid is skipped, big is joined over cheap-big
    assert c.regions == ("cheap", "big")
    assert all(w > 0 for w in c.reserve_gbps)


def test_fifo_blocks_head_of_line_but_bace_pipe_skips():
    big = job("big", stages=4, arrival_s=0.0)
    small = job("small", stages=1, arrival_s=1.0)
    inst = make([("x", 4, 0.1)], [], [big, small])
    st = state_with(inst, gpus={"x": 2})
    assert make_policy("fifo").decide(0.0, [big, small], st) == []
    assert [p.name for p in make_policy("bace-pipe-no-priority").decide(0.0, [big, small], st)] == ["small"]
    assert [p.name for p in make_policy("lcf", hol="skip").decide(0.0, [big, small], st)] == ["small"]


def test_hol_block_skips_jobs_that_can_never_fit_the_policy():
    # lcf cannot place a job larger than every region: it must not block the queue forever
    huge = job("huge", stages=5, arrival_s=0.0)
    small = job("small", stages=1, arrival_s=1.0)
    inst = make([("x", 4, 0.1), ("y", 4, 0.2)], [("x", "y", 10.0, 1.0)], [huge, small])
    sched = bo.simulate(inst, "lcf")
    assert sched.job("huge").status == "unscheduled" and sched.job("small").status == "done"
    assert bo.evaluate(inst, sched).feasible


# ---------------------------------------------------------------------- registry and state

def test_registry_lists_every_policy():
    names = available()
    for n in HEURISTICS + ABLATIONS + ("exact-p1",):
        assert n in names
    with pytest.raises(bo.InputError, match="unknown policy"):
        make_policy("nope")
    with pytest.raises(bo.InputError, match="seeds"):
        make_policy("bace-pipe", seeds="bogus")


def test_cluster_state_is_read_only_and_copy_commits():
    inst, j = _baseline_instance()
    st = state_with(inst)
    with pytest.raises(TypeError):
        st.free_gpus["mid"] = 0                     # read-only view
    res = st.copy()
    p = make_policy("cr-lcf").place(j, st)
    res.commit(j, p)
    assert res.free("cheap") == 0 and st.free("cheap") == 2
    assert res.free_gbps(inst.link_index[("cheap", "mid")]) == pytest.approx(0.0)
    with pytest.raises(PolicyError, match="free"):
        res.commit(j, p)                            # a second time over-commits


def test_exact_p1_without_exact_model_raises_solver_unavailable(monkeypatch):
    """An install without the exact models: the policy says so clearly (simulated by blocking the import)."""
    import sys
    monkeypatch.setitem(sys.modules, "bace_opt.exact.placement", None)   # makes the import raise ImportError
    inst, j = _baseline_instance()
    with pytest.raises(bo.SolverUnavailableError, match="exact-p1"):
        bo.simulate(inst, "exact-p1")


# ---------------------------------------------------------------------- fast pathfinder == reference (issue 15)

from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from bace_opt.instance import Objective, PriceSeries  # noqa: E402
from bace_opt.policies.bace_pipe import BacePipe  # noqa: E402

_GT2 = {"A": GpuType("A", 100.0, 48.0, 300.0), "B": GpuType("B", 50.0, 24.0, 250.0),
        "C": GpuType("C", 100.0, 80.0, 400.0)}


@st.composite
def _residual_case(draw):
    """A small instance (2-6 regions, names out of sorted order, mixed speeds, sparse or full links, constant or
    hourly prices, sometimes negative, egress on or off) with values drawn from small sets so that ties in
    bandwidth, price, cost and run time are common; 1-3 jobs; and three residual states of it."""
    n = draw(st.integers(2, 6))
    names = draw(st.permutations(["q", "b", "x", "d", "m", "a"]))[:n]
    regions = []
    for r in names:
        series = None
        if draw(st.booleans()):
            series = PriceSeries(0.0, 100.0, tuple(draw(st.lists(st.sampled_from([-0.05, 0.0, 0.1, 0.2, 0.3]),
                                                                 min_size=1, max_size=4))))
        regions.append(Region(r, draw(st.sampled_from(sorted(_GT2))), draw(st.sampled_from([0, 1, 2, 3, 4, 6])),
                              draw(st.sampled_from([0.1, 0.2, 0.3])), draw(st.sampled_from([1.0, 1.2])), series))
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    full = draw(st.booleans())
    keep = pairs if full else [p for p in pairs if draw(st.booleans())]
    links = [Link(a, b, draw(st.sampled_from([1.0, 2.0, 4.0, 8.0])), draw(st.sampled_from([0.0, 5.0, 20.0])),
                  draw(st.sampled_from([0.0, 0.01]))) for a, b in keep]
    jobs = [Job(f"j{k}", 0.0, draw(st.integers(1, 8)), draw(st.sampled_from([4, 8])), draw(st.sampled_from([10, 50])),
                draw(st.sampled_from([0.1, 0.2])), draw(st.sampled_from([5.0, 12.5, 25.0, 50.0])),
                draw(st.sampled_from([1, 1, 2])), None, draw(st.sampled_from([None, None, 40.0])))
            for k in range(draw(st.integers(1, 3)))]
    try:
        inst = Instance("h", _GT2, "A", regions, links, jobs, Objective(egress=draw(st.booleans()))).validated()
    except bo.BaceOptError:
        from hypothesis import assume
        assume(False)
    states = []
    for _ in range(3):
        free = {r.name: draw(st.integers(0, r.gpus)) for r in inst.regions}
        bw = [draw(st.sampled_from([0.0, l.bandwidth_gbps / 2, l.bandwidth_gbps, 1.0, 1.5])) for l in inst.links]
        states.append(ClusterState(inst, draw(st.sampled_from([0.0, 50.0, 150.0, 250.0])), free, bw))
    return inst, states


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_residual_case())
def test_fast_pathfinder_makes_the_reference_decisions(case):
    """``chain_search`` (tables, residual caches, seeds out of order, cost-bound and component pruning) gives
    exactly the reference's plan (every float equal) and ``fits`` answer, for every pathfinder option, on
    states asked in turn on one instance (so its residual-keyed caches are hit and missed)."""
    inst, states = case
    for seeds in ("all", "cheapest"):
        for prefer in ("bandwidth", "price"):
            for allocator in ("costmin", "even", "fill"):
                for via in ("links", "routes"):
                    pol = BacePipe(seeds=seeds, prefer=prefer, allocator=allocator, via=via)
                    ref = BacePipe(seeds=seeds, prefer=prefer, allocator=allocator, via=via)
                    ref.reference_path = True
                    for state in states + states[:1]:
                        for j in inst.jobs:
                            want = ref.place(j, state)
                            assert pol.place(j, state) == want, (seeds, prefer, allocator, via, j, state._free,
                                                                 state._bw)
                            assert pol.fits(j, state) == (want is not None) == ref.fits(j, state)


def test_fast_pathfinder_bound_skips_dear_seeds_without_changing_the_plan():
    # one cheap region holds the job alone; the dear small regions could only grow dearer chains: the cost bound
    # skips their growth, and the plan is the reference's
    from bace_opt.policies import chain_search
    j = job("j", stages=4, activation_mb=1.0)
    inst = make([("cheap", 8, 0.1), ("d1", 2, 0.5), ("d2", 2, 0.6)],
                [("cheap", "d1", 10.0, 1.0), ("d1", "d2", 10.0, 1.0), ("cheap", "d2", 10.0, 1.0)], [j])
    st_ = state_with(inst)
    grown = []
    orig = chain_search.grow
    try:
        chain_search.grow = lambda *a: grown.append(a[2]) or orig(*a)
        plan = BacePipe().place(j, st_)
    finally:
        chain_search.grow = orig
    assert grown == []                                   # d1, d2 (2 stages each) never grown
    assert plan == BacePipe().reference_place(j, st_)
    assert [b.region for b in plan.blocks] == ["cheap"]


def _reference_greedy_chain(job, state, by_capacity, via):
    """The former ``bace_pipe._greedy_chain`` (before issue 15), kept verbatim as the reference: every candidate
    scored, one ``inst.routes`` / link lookup per hop."""
    from bace_opt.policies.base import MIN_GBPS
    from bace_opt.policies.base import eligible_set as _eligible
    from bace_opt.policies.greedy_chains import _hop_route
    from bace_opt.policies.pathfinder import resolve_via
    inst = state.inst
    via = resolve_via(inst, via)
    elig = _eligible(inst, job)
    hosts = {r: state.free(r) // job.gpus_per_stage for r in inst.region_index
             if r in elig and state.free(r) // job.gpus_per_stage > 0}
    if by_capacity:
        order = sorted(hosts, key=lambda r: (-state.free(r), state.price(r), r))
    else:
        order = sorted(hosts, key=lambda r: (state.price(r), r))
    if sum(hosts.values()) < job.stages or not order:
        return None
    li = inst.link_index
    chain, slots, routes, rest = [order[0]], hosts[order[0]], [], list(order[1:])
    while slots < job.stages:
        tail = chain[-1]
        scored = []
        for pos, r in enumerate(rest):
            route = _hop_route(inst, tail, r, via)
            if route is None:
                continue
            cap = min(state.free_gbps(li[(u, v)]) for u, v in zip(route, route[1:]))
            if cap <= MIN_GBPS:
                continue
            scored.append((pos, r, route, cap))
        if not scored:
            return None
        if by_capacity:
            pos, r, route, cap = min(scored, key=lambda s: (-state.free(s[1]), -s[3], s[0]))
        else:
            pos, r, route, cap = scored[0]
        rest.remove(r)
        chain.append(r)
        routes.append(route)
        slots += hosts[r]
    tau = F.tau_s(inst, job, chain)
    b = F.demand_gbps(job, tau)
    left, res = {}, []
    for route in routes:
        ks = [li[(u, v)] for u, v in zip(route, route[1:])]
        cap = min(left.get(k, state.free_gbps(k)) for k in ks)
        w = min(b, cap)
        if w <= MIN_GBPS:
            return None
        for k in ks:
            left[k] = left.get(k, state.free_gbps(k)) - w
        res.append(w)
    return Chain(tuple(chain), tuple(routes), tau, b, tuple(res))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_residual_case())
def test_greedy_chains_make_the_reference_decisions(case):
    """``price_chain`` / ``capacity_chain`` (no-pathfinder ablation, CR-LCF, CR-LDF; early exit and shared
    tables) and their shared-growth ``fits`` equal the former code on random residual states."""
    from bace_opt.policies.greedy_chains import capacity_chain, greedy_chain_fits
    inst, states = case
    for via in ("links", "routes"):
        for state in states + states[:1]:
            for j in inst.jobs:
                for by_cap, fn in ((False, price_chain), (True, capacity_chain)):
                    want = _reference_greedy_chain(j, state, by_cap, via)
                    assert fn(j, state, via=via) == want
                    assert greedy_chain_fits(j, state, by_cap, via, {}) == (want is not None)
