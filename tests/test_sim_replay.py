"""Replay test of issue 15: the incremental simulator (``bace_opt.sim`` with ``policies.queue``) makes exactly
the decisions of the simulator it replaced (``tests/reference_sim.py``, kept verbatim).

On every generated instance (full meshes and sparse graphs with transit nodes, hourly prices, mixed GPU types,
one or two GPUs per stage, egress, arrivals together or spread so that a queue builds) and for every
registered policy (BACE-Pipe, its ablations, the baselines, the pathfinder's cheapest-seed option, and exact-p1
on tiny instances) in queue and blocking modes, the two schedules must be equal: every plan (status, start,
blocks, routes, reservations) and every figure the evaluator computes (``make_schedule``'s per-job figures and
metrics), and the simulator's meta (events, decisions, end time, waits, run times; for exact-p1 the solver
calls and statuses, not their wall time).  The one figure compared
with a tolerance is each job's head-of-line-blocked time: the reference adds the length of every interval
between events, the incremental simulator adds (leave - enter) once per stretch, so the float sums may differ
in the last bits (relative 1e-9).
"""
from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bace_opt as bo
from bace_opt.builders.synthetic import random_instance
from bace_opt.policies import ABLATIONS, HEURISTICS, ClusterState, make_policy
from bace_opt.policies import queue as Q
from bace_opt.policies import queue_data as QD
from reference_sim import reference_run_simulation

POLICIES = [(p, {}) for p in HEURISTICS + ABLATIONS] + [("bace-pipe", {"seeds": "cheapest"}),
                                                        ("lcf", {"hol": "skip"}), ("bace-pipe", {"hol": "block"})]


def assert_same(ref, new, label):
    a, b = ref.to_dict(), new.to_dict()
    ja, jb = a["meta"].pop("jobs"), b["meta"].pop("jobs")
    ha, hb = a["meta"].pop("total_hol_blocked_s"), b["meta"].pop("total_hol_blocked_s")
    for d in (a, b):           # exact-p1's solver wall time is a measurement, not a decision
        d["meta"].get("policy_stats", {}).pop("solver_wall_s", None)
    assert a["jobs"] == b["jobs"], label
    assert a == b, label
    assert ja.keys() == jb.keys()
    for n in ja:
        x, y = dict(ja[n]), dict(jb[n])
        hx, hy = x.pop("hol_blocked_s"), y.pop("hol_blocked_s")
        assert x == y, (label, n)
        assert math.isclose(hx, hy, rel_tol=1e-9, abs_tol=1e-6), (label, n, hx, hy)
    assert math.isclose(ha, hb, rel_tol=1e-9, abs_tol=1e-6), label


def replay(inst, policies=POLICIES, modes=("queue", "blocking")):
    for policy, opts in policies:
        for mode in modes:
            ref, _ = reference_run_simulation(inst, policy, mode=mode, **opts)
            new = bo.simulate(inst, policy, mode=mode, **opts)
            assert_same(ref, new, (inst.name, policy, opts, mode))


def scarce(inst, factor: float):
    """``inst`` with every link's bandwidth scaled by ``factor`` (scarce links: chains and reservations fail
    for some demands and not others, the case the demand bands and component bounds of ``policies.queue`` cut)."""
    if factor == 1.0:
        return inst
    links = [dataclasses.replace(l, bandwidth_gbps=round(l.bandwidth_gbps * factor, 4)) for l in inst.links]
    return dataclasses.replace(inst, links=links, name=f"{inst.name}-x{factor}")


@st.composite
def instances(draw):
    sparse = draw(st.booleans())
    n_jobs = draw(st.integers(1, 40))
    factor = draw(st.sampled_from([1.0, 1.0, 0.2, 0.03]))
    return scarce(random_instance(
        draw(st.integers(0, 100_000)), n_regions=draw(st.integers(1, 7)), n_jobs=n_jobs,
        topology="sparse" if sparse else "mesh", transit=draw(st.integers(0, 2)) if sparse else 0,
        hourly_prices=draw(st.booleans()), mixed_gpus=draw(st.booleans()),
        max_gpus_per_region=draw(st.sampled_from([2, 4, 8, 16])), max_stages=draw(st.integers(1, 8)),
        max_gpus_per_stage=draw(st.integers(1, 2)),
        max_arrival_s=draw(st.sampled_from([0.0, 1.0 * n_jobs, 30.0 * n_jobs, 20_000.0])),
        egress=draw(st.booleans())), factor)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=instances())
def test_replay_identical_on_generated_instances(inst):
    replay(inst)


def test_replay_head_of_line_of_a_job_in_a_new_group():
    # found by hypothesis: a 1-GPU-per-stage job arriving behind 2-GPU jobs starts a new job group; LCF's
    # head-of-line set must measure that group's bounds at once (it fits the idle region r1 from its arrival)
    inst = random_instance(2, n_regions=2, n_jobs=4, max_gpus_per_region=2, max_stages=1, max_gpus_per_stage=2,
                           max_arrival_s=4.0)
    replay(inst, policies=[("lcf", {}), ("ldf", {}), ("cr-lcf", {}), ("fifo", {})], modes=("queue",))
    new = bo.simulate(inst, "lcf")
    assert new.meta["jobs"]["j3"]["hol_blocked_s"] == pytest.approx(new.meta["jobs"]["j3"]["wait_s"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_replay_identical_on_a_contended_queue(seed):
    # the issue's family, scaled down: 10 regions, sparse, hourly prices, mixed GPUs, ~1 job per second
    inst = random_instance(seed, n_regions=10, n_jobs=150, topology="sparse", hourly_prices=True, mixed_gpus=True,
                           max_gpus_per_region=32, max_stages=12, max_arrival_s=150.0)
    replay(inst)


class _Probe:
    """Counts, during a replay, how often each caching rule of ``policies.queue`` decided something, so that a
    test can show its instances exercise every rule (a rule never taken could be wrong unnoticed)."""

    def __init__(self, monkeypatch):
        self.n = dict.fromkeys(["band_partial", "band_full_or_empty", "band_beyond", "bucket_in", "component_cut",
                                "price_step", "head_fits_false", "never_fits", "state_reused", "quiet_skips",
                                "quiet_runs", "pruned_buckets", "band_kept", "limit_hits", "parked",
                                "rule_fits_early"], 0)
        n = self.n
        open_band, set_mode, prefix = Q.QueueSession._open_band, Q.QueueSession._set_mode, Q.QueueSession._bmin_prefix
        key, never, fits = QD.PriceClock.key, Q.QueueSession._never_fits, Q.QueueSession._fits

        def _open_band(q, grp, b, S, state, now):
            open_band(q, grp, b, S, state, now)
            a = b.active
            if a is not None:
                n["band_partial" if 0 < a.hi - a.lo < len(a.bs) else "band_full_or_empty"] += 1
            n["band_beyond"] += 0 if a is None else a.nin   # jobs above the uncapped interval passing their replay

        def _set_mode(q, grp, b, mode, *args):
            n["bucket_in"] += mode == QD.IN and b.mode != QD.IN and bool(b.jobs)
            set_mode(q, grp, b, mode, *args)

        def _bmin_prefix(q, b, S, steps):
            out = prefix(q, b, S, steps)
            n["component_cut"] += len(b.by_bmin) - len(out)
            return out

        def _key(clock, now):
            old = clock._key
            out = key(clock, now)
            n["price_step"] += out != old
            return out

        def _never_fits(q, job, state):
            n["never_fits"] += 1
            return never(q, job, state)

        def _fits(q, job, state):
            out = fits(q, job, state)
            n["head_fits_false"] += q.pol.hol == "block" and not out
            return out

        monkeypatch.setattr(Q.QueueSession, "_open_band", _open_band)
        monkeypatch.setattr(Q.QueueSession, "_set_mode", _set_mode)
        monkeypatch.setattr(Q.QueueSession, "_bmin_prefix", _bmin_prefix)
        monkeypatch.setattr(QD.PriceClock, "key", _key)
        monkeypatch.setattr(Q.QueueSession, "_never_fits", _never_fits)
        monkeypatch.setattr(Q.QueueSession, "_fits", _fits)
        rule_fits = Q.QueueSession._rule_fits

        def _rule_fits(q, job, state):
            # the demand rule asked for a job one region holds (after a failed placement at this version)
            n["rule_fits_early"] += job.stages <= q.group_of[job.name].T
            return rule_fits(q, job, state)
        monkeypatch.setattr(Q.QueueSession, "_rule_fits", _rule_fits)
        hol_update = Q.QueueSession.hol_update

        def _hol_update(q, state, now=0.0):
            n["state_reused"] += state._in_use is not None      # the decision's state (it carries the hint)
            hol_update(q, state, now)
            # the set the session keeps (bucket modes, demand bands, individual members) is exactly the set of
            # waiting jobs that place() starts alone on this state
            for name, job in q.waiting.items():
                b = q.group_of[name].buckets[job.stages]
                a = b.active
                kept = b.mode == QD.IN or (b.mode == QD.MIX and (name in b.ind or (
                    a is not None and (a.lo <= a.pos[name] < a.hi or bool(a.inm[a.pos[name]])))))
                assert kept == (q.pol.place(job, state) is not None), (q.pol.name, now, name)
        monkeypatch.setattr(Q.QueueSession, "hol_update", _hol_update)
        init = Q.QueueSession.__init__

        def _init(q, *args, **kw):
            init(q, *args, **kw)
            sessions.append(q)
        sessions: list = []
        self.sessions = sessions
        monkeypatch.setattr(Q.QueueSession, "__init__", _init)

    def counts(self) -> dict:
        """The rule counts, with the shortcuts each session counted itself (``QueueSession.stats``)."""
        n = dict(self.n)
        for q in self.sessions:
            for k in ("quiet_skips", "quiet_runs", "pruned_buckets", "band_kept", "limit_hits", "parked"):
                n[k] += q.stats[k]
        return n


def test_replay_identical_with_scarce_links_and_every_rule_exercised(monkeypatch):
    # sparse graphs with transit nodes, scarce links, hourly prices, a queue (150 jobs in 150 s): every caching
    # rule must decide something on these two instances together, and the schedules (decisions, evaluator
    # figures, head-of-line times) must equal the former simulator's
    probe = _Probe(monkeypatch)
    for seed, factor in ((4, 0.2), (5, 0.5)):
        inst = scarce(random_instance(seed, n_regions=8, n_jobs=150, topology="sparse", transit=2,
                                      hourly_prices=True, mixed_gpus=True, max_gpus_per_region=16, max_stages=8,
                                      max_arrival_s=150.0), factor)
        replay(inst, policies=[(p, {}) for p in ("bace-pipe", "lcf", "ldf", "cr-lcf", "cr-ldf", "fifo",
                                                  "bace-pipe-no-pathfinder", "bace-pipe-no-priority")])
    n = probe.counts()
    assert all(v > 0 for v in n.values()), str(n)


def test_replay_identical_for_exact_p1():
    pytest.importorskip("highspy")
    for seed in (1, 2):
        inst = random_instance(seed, n_regions=3, n_jobs=4, topology="mesh", hourly_prices=True,
                               max_gpus_per_region=4, max_stages=3, max_arrival_s=20.0)
        replay(inst, policies=[("exact-p1", {})])


def test_replay_identical_for_exact_p1_under_contention(monkeypatch):
    # exact-p1's queue session leaves proven-unfit jobs out of decisions and of the head-of-line measurement
    # (exact/online.py); scarce links and a queue over price steps exercise every saving
    pytest.importorskip("highspy")
    from bace_opt.exact import online as E
    sessions = []
    init = E.ExactQueue.__init__

    def track(self, pol):
        init(self, pol)
        sessions.append(self)
    monkeypatch.setattr(E.ExactQueue, "__init__", track)
    for seed, n, spread in ((2, 20, 3000.0), (3, 10, 30.0)):
        inst = scarce(random_instance(seed, n_regions=4, n_jobs=n, topology="sparse", hourly_prices=True,
                                      mixed_gpus=True, max_gpus_per_region=8, max_stages=6, max_arrival_s=spread),
                      0.05)
        replay(inst, policies=[("exact-p1", {})], modes=("queue",))
    saved = {k: sum(getattr(q, k) for q in sessions) for k in ("saved_place", "saved_decisions", "saved_offers")}
    assert all(v > 0 for v in saved.values()), saved


@pytest.mark.parametrize("seed", [1, 2])
def test_replay_identical_for_policies_with_their_own_decide(seed):
    # price-pack overrides decide(): the simulator must take the generic path for it, not the ordered queue
    inst = random_instance(seed, n_regions=5, n_jobs=25, topology="sparse", hourly_prices=True, mixed_gpus=True,
                           max_gpus_per_region=8, max_stages=6, max_arrival_s=25.0)
    assert make_policy("price-pack").queue_session(inst) is None
    replay(inst, policies=[("price-pack", {})])


@st.composite
def busy_states(draw):
    """A generated instance and a residual state: some GPUs and link bandwidth taken."""
    inst = draw(instances())
    free = {r.name: draw(st.integers(0, r.gpus)) for r in inst.regions}
    bw = [l.bandwidth_gbps * draw(st.sampled_from([0.0, 0.01, 0.1, 0.5, 1.0])) for l in inst.links]
    return inst, ClusterState(inst, draw(st.sampled_from([0.0, 5000.0, 40_000.0])), free, bw)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=busy_states())
def test_fits_answers_as_place(case):
    # the queue asks policy.fits(job, state) for the head-of-line set; it must agree with place() exactly
    inst, state = case
    for policy, opts in POLICIES:
        pol = make_policy(policy, **opts)
        for job in inst.jobs:
            assert pol.fits(job, state) == (pol.place(job, state) is not None), (policy, opts, job.name)


def test_replay_band_kept_only_while_its_residuals_are_unchanged():
    # a demand band stays open while its chain speed, links and their residuals are unchanged; on this instance
    # the same links come back with other residuals (a band kept on the links alone gives other schedules)
    inst = scarce(random_instance(1, n_regions=8, n_jobs=150, topology="sparse", transit=2, hourly_prices=True,
                                  mixed_gpus=True, max_gpus_per_region=16, max_stages=8, max_arrival_s=150.0), 0.2)
    replay(inst, policies=[("cr-lcf", {}), ("cr-ldf", {})], modes=("queue",))


@st.composite
def replays(draw):
    """A reservation replay (``baselines._Replay``) over 1-4 hops of 1-3 links from a pool of 4 (hops share
    links), residuals from values whose thirds and halves round, and sorted demands around its closed-form b*."""
    from bace_opt.policies.greedy_chains import _Replay
    rep = _Replay.__new__(_Replay)
    rep.ks = [draw(st.lists(st.integers(0, 3), min_size=1, max_size=3, unique=True))
              for _ in range(draw(st.integers(1, 4)))]
    rep.free = [draw(st.sampled_from([0.3, 0.7, 1.0, 1.1, 2.9, 10.0 / 3.0, 100.1, 1e-9])) for _ in range(4)]
    lim = rep.limit()
    near = [lim]
    for _ in range(draw(st.integers(1, 4))):
        near += [math.nextafter(near[-1], math.inf), math.nextafter(near[0], 0.0)]
    bs = sorted(set(x for x in near + draw(st.lists(st.floats(2e-9, 200.0), max_size=6)) if x > 1e-9))
    return rep, bs


@settings(max_examples=300, deadline=None)
@given(case=replays())
def test_uncapped_interval_end_is_exact(case):
    # the end of the uncapped interval, placed by the closed form and checked, equals the brute force one;
    # uncapped is an interval on sorted demands (what the demand bands rely on)
    rep, bs = case
    flags = [rep.uncapped(b) for b in bs]
    assert flags == sorted(flags, reverse=True)
    assert QD.uncapped_end(rep, bs, 0, len(bs))[0] == sum(flags)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from([1.0, 2.5, 3.0, 7.25, 1e4]), st.sampled_from([0.5, 0.5, 2.0, 9.0]),
                               st.sampled_from([0.1, 1.0, 5.0]), st.sampled_from([0.0, 1.0, 1.0, 3.0])),
                     min_size=1, max_size=30),
       alpha=st.sampled_from([None, 0.0, 0.3, 1.0, 0.7777]), cap=st.sampled_from([None, 1.0, 5.0]),
       removed=st.sets(st.integers(0, 29)), after_at=st.one_of(st.none(), st.integers(0, 29)),
       later=st.lists(st.one_of(st.integers(0, 29),
                                st.tuples(st.sampled_from([1.0, 2.5, 3.0, 7.25, 1e4]),
                                          st.sampled_from([0.5, 0.5, 2.0, 9.0]),
                                          st.sampled_from([0.1, 1.0, 5.0]), st.sampled_from([0.0, 1.0, 3.0]))),
                      max_size=8),
       same_key=st.booleans())
def test_stream_yields_the_sorted_decision_order(rows, alpha, cap, removed, after_at, later, same_key):
    # a bucket's stream (vectorized keys, minimum then sort, rows moved on removals, the key's terms kept in
    # the table while the normalization stays) yields exactly the candidates sorted by (key, arrival, index),
    # the key computed one job at a time as bace_pipe.priorities does; then again after more jobs come and go,
    # under the same normalization (terms kept) or another (terms recomputed)
    b, grp = QD.Bucket(), QD.Group(("g",), 1, ())
    names = [f"j{i}" for i in range(len(rows))]
    for n, (c, d, bmin, arr) in zip(names, rows):
        b.table.add(n, (c, d, bmin, arr, int(n[1:])))
    for i in sorted(removed):
        if i < len(rows):
            b.table.remove(names[i])
    for i in sorted(removed)[:3]:       # back, out of order
        if i < len(rows):
            b.table.add(names[i], rows[i][:4] + (i,))

    def check(key, after_at):
        live = [i for i in range(len(rows)) if names[i] in b.table.slot]
        want = sorted((key(rows[i][0], rows[i][1]), rows[i][3], i, names[i]) for i in live
                      if cap is None or rows[i][2] <= cap)
        after = None
        if after_at is not None and want:
            after = want[after_at % len(want)][:3]
            want = [w for w in want if w[:3] > after]
        s = QD.Stream(grp, b, 1, cap, key, after)
        got = []
        while (x := s.pop()) is not None:
            got.append(x)
        assert got == want

    def make_key():
        live = [i for i in range(len(rows)) if names[i] in b.table.slot] or [0]
        cs, ds = [rows[i][0] for i in live], [rows[i][1] for i in live]
        return QD.Key() if alpha is None else QD.Key(alpha, min(cs), max(cs), min(ds), max(ds))
    key = make_key()
    check(key, after_at)
    rows, names = list(rows), list(names)
    for x in later:         # a job leaves (an index) or a new one comes (a row)
        if isinstance(x, int):
            if x < len(rows) and names[x] in b.table.slot:
                b.table.remove(names[x])
        else:
            names.append(f"j{len(rows)}")
            b.table.add(names[-1], x + (len(rows),))
            rows.append(x)
    check(key if same_key else make_key(), None)
