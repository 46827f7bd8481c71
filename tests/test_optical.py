"""Optical layer: network validation, slot bitsets, RSA policies, the dynamic simulator against Erlang-B, and the
independent lightpath checker on every lightpath the simulator admits."""

import pytest
from hypothesis import given, settings, strategies as st

import bace_opt as bo
from bace_opt.errors import InputError
from bace_opt.optical import (REACH_TABLE, DynamicOptions, Fibre, LightpathRecord, OpticalNetwork, RSA_POLICIES,
                              check_lightpaths, erlang_b, estimate, network_from_dict, record_of, simulate_dynamic,
                              single_link)
from bace_opt.optical.network import load_topology, nsfnet_path
from bace_opt.optical.spectrum import best_fit, first_fit, free_runs, last_fit

from test_instance_validation import base, problems

# A 5-node ring with a chord, lengths in km (tiny, in code).
RING = OpticalNetwork((Fibre("a", "b", 300.0), Fibre("b", "c", 400.0), Fibre("c", "d", 500.0),
                       Fibre("d", "e", 300.0), Fibre("e", "a", 600.0), Fibre("a", "c", 800.0)),
                      slots_per_link=16, guard_slots=1, k_paths=3)


# ---------------------------------------------------------------------- Erlang-B

def test_erlang_b_known_values():
    assert erlang_b(1, 1.0) == pytest.approx(0.5)
    assert erlang_b(2, 1.0) == pytest.approx(0.2)
    assert erlang_b(10, 5.0) == pytest.approx(0.018384, abs=1e-6)


@pytest.mark.parametrize("load", [4.0, 8.0, 12.0])
def test_single_link_matches_erlang_b(load):
    """One link of 10 slots, one-slot requests, no guard: a loss system M/M/10/10."""
    net = single_link(10, guard_slots=0)
    e = estimate(net, DynamicOptions(load_erlang=load, requests=20_000, warmup=2_000, sizes="fixed:1"),
                 seeds=range(1, 6))
    assert e.low <= erlang_b(10, load) <= e.high, (e.mean, e.half_width, erlang_b(10, load))
    assert e.half_width < 0.1 * erlang_b(10, load) + 0.002      # the interval is tight enough to mean something


def test_runs_are_seeded():
    o = DynamicOptions(load_erlang=30, requests=3000, warmup=300, sizes="uniform:1:4")
    a, b, c = (simulate_dynamic(RING, o, s) for s in (7, 7, 8))
    assert (a.blocked, a.offered) == (b.blocked, b.offered) and a.blocked != c.blocked


# ---------------------------------------------------------------------- block search

@settings(max_examples=200, deadline=None)
@given(st.integers(0, (1 << 20) - 1), st.integers(1, 8))
def test_fits_match_brute_force(free, n):
    starts = [s for s in range(20) if all(free >> (s + i) & 1 for i in range(n)) and s + n <= 20]
    assert first_fit(free, n) == (starts[0] if starts else -1)
    assert last_fit(free, n) == (starts[-1] if starts else -1)
    runs = free_runs(free)
    assert sum(ln for _, ln in runs) == bin(free).count("1")
    s, run = best_fit(free, n)
    ok = [ln for _, ln in runs if ln >= n]
    assert (s < 0) == (not ok)
    if ok:
        assert run == min(ok) and s in starts


# ---------------------------------------------------------------------- candidate paths

def test_candidate_paths_k_shortest_by_length_and_hops():
    p = RING.candidate_paths("a", "c", k=3)
    assert [q.nodes for q in p] == [("a", "b", "c"), ("a", "c"), ("a", "e", "d", "c")]
    assert [q.length_km for q in p] == [700.0, 800.0, 1400.0]
    h = RING.candidate_paths("a", "c", k=2, metric="hops", order="hops")
    assert h[0].nodes == ("a", "c")
    assert p[0].latency_s == pytest.approx(700 / 200_000)


def test_reach_table_picks_format_by_length():
    net = RING.replace(modulations=REACH_TABLE)
    assert net.modulation_for(400).name == "16QAM" and net.modulation_for(1500).name == "QPSK"
    path = net.candidate_paths("a", "c")[0]            # 700 km: 8QAM, 37.5 Gbit/s per slot
    assert net.slots_for_gbps(100, path) == 3


# ---------------------------------------------------------------------- the checker on admitted lightpaths

@pytest.mark.parametrize("policy", RSA_POLICIES)
@pytest.mark.parametrize("directed", [False, True])
def test_every_admitted_lightpath_passes_the_checker(policy, directed):
    o = DynamicOptions(load_erlang=25, requests=1500, warmup=0, sizes="uniform:1:4", policy=policy,
                       directed=directed, truncate=3.0)
    run = simulate_dynamic(RING, o, seed=3, record=True)
    assert 0 < run.blocked < run.offered                     # the spectrum was contended
    recs = [record_of(lp, directed=directed, start_s=s, end_s=e) for lp, s, e in run.lightpaths]
    assert check_lightpaths(RING, recs, directed=directed) == []
    assert len(recs) == run.offered - run.blocked


def test_bit_rate_requests_pass_the_checker():
    net = RING.replace(modulations=REACH_TABLE, slots_per_link=32)
    o = DynamicOptions(load_erlang=20, requests=1000, warmup=0, sizes="gbps:10:200", order="hops-per-se")
    run = simulate_dynamic(net, o, seed=1, record=True)
    assert run.blocked > 0
    assert check_lightpaths(net, [record_of(lp, start_s=s, end_s=e) for lp, s, e in run.lightpaths]) == []


def _rec(req, nodes, slots, data=2, src=None, dst=None, **kw):
    links = {tuple(sorted(uv)): tuple(s) for uv, s in zip(zip(nodes, nodes[1:]), slots)}
    return LightpathRecord(req, src or nodes[0], dst or nodes[-1], tuple(nodes), links, data, **kw)


def test_checker_finds_each_kind_of_violation():
    ok = _rec(1, ["a", "b", "c"], [(0, 1, 2), (0, 1, 2)])
    assert check_lightpaths(RING, [ok]) == []
    cases = {
        "continuity": _rec(2, ["a", "b", "c"], [(0, 1, 2), (3, 4, 5)]),
        "not contiguous": _rec(3, ["a", "b"], [(0, 2, 3)]),
        "want data 2 + guard 1": _rec(4, ["a", "b"], [(0, 1)]),
        "no fibre": _rec(5, ["a", "d"], [(0, 1, 2)]),
        "outside": _rec(6, ["a", "b"], [(14, 15, 16)]),
        "does not run from": _rec(7, ["a", "b"], [(0, 1, 2)], dst="c"),
    }
    for word, rec in cases.items():
        probs = check_lightpaths(RING, [rec])
        assert any(word in p for p in probs), (word, probs)
    over = check_lightpaths(RING, [ok, _rec(8, ["b", "c"], [(2, 3, 4)])])
    assert any("overlaps lightpath 1" in p for p in over)
    # the same cells at disjoint times do not overlap; an occupied state does
    assert check_lightpaths(RING, [_rec(9, ["a", "b"], [(0, 1, 2)], end_s=1.0),
                                   _rec(10, ["a", "b"], [(0, 1, 2)], start_s=1.0)]) == []
    assert any("already occupied" in p for p in check_lightpaths(RING, [ok], occupied={("a", "b"): [2]}))


# ---------------------------------------------------------------------- validation (instance's optical section)

def optical_instance():
    d = base()
    d["optical"] = {"slots_per_link": 40, "guard_slots": 1, "k_paths": 2,
                    "fibres": [{"a": "a", "b": "c", "length_km": 500.0}, {"a": "c", "b": "b", "length_km": 700.0}]}
    return d


def test_optical_section_round_trip(tmp_path):
    inst = bo.Instance.from_dict(optical_instance())
    assert inst.optical.slots_per_link == 40 and inst.optical.modulations[0].gbps_per_slot == 75.0
    p = tmp_path / "o.json"
    inst.save(p)
    again = bo.load_instance(p)
    assert again == inst and again.to_json() == inst.to_json()
    assert [q.nodes for q in again.optical.candidate_paths("a", "b")] == [("a", "c", "b")]
    assert "optical" not in bo.Instance.from_dict(base()).to_dict()      # optional: absent stays absent


def test_broken_optical_layer_reports_every_problem_with_its_path():
    d = optical_instance()
    o = d["optical"]
    o.update(slots_per_link=0, k_paths=0, modulations=[{"name": "x"}, {"name": "y", "gbps_per_slot": 10, "max_km": -1}],
             colour="red")
    o["fibres"] = [{"a": "a", "b": "zz", "length_km": 0}, {"a": "a", "b": "a", "length_km": 5},
                   {"a": "a", "b": "c", "length_km": 10}, {"a": "c", "b": "a", "length_km": 10}, {"b": "c"}]
    probs = problems(d)
    for want in ["optical.slots_per_link: must be >= 1", "optical.k_paths: must be >= 1",
                 "optical.colour: unknown field", "optical.modulations[0].gbps_per_slot: is required",
                 "optical.modulations[1].max_km: must be > 0", "optical.fibres[0].b: unknown region 'zz'",
                 "optical.fibres[0].length_km: must be > 0", "optical.fibres[1]: self-loop",
                 "optical.fibres[3]: duplicate fibre", "optical.fibres[4].a: is required",
                 "optical.fibres[4].length_km: is required"]:
        assert any(p.startswith(want) for p in probs), (want, probs)


def test_unreachable_pair_and_guard_are_problems():
    d = optical_instance()
    d["optical"]["fibres"] = [{"a": "a", "b": "c", "length_km": 500.0}]
    assert any("has GPUs but no fibre" in p for p in problems(d))
    d = optical_instance()
    d["optical"].update(guard_slots=40)
    assert any(p.startswith("optical.guard_slots: must be < slots_per_link") for p in problems(d))
    d = optical_instance()
    d["optical"]["modulations"] = [{"name": "16QAM", "gbps_per_slot": 50, "max_km": 600}]
    assert any("no modulation reaches from 'a' to 'b'" in p for p in problems(d))


def test_stand_alone_network_validation():
    with pytest.raises(InputError) as e:
        network_from_dict({"fibres": []})
    assert "optical.fibres: must not be empty" in str(e.value)


@pytest.mark.skipif(not nsfnet_path().is_file(), reason="needs ../shared/data/topologies/nsfnet")
def test_nsfnet_topology():
    net = load_topology(nsfnet_path())
    assert (len(net.nodes), len(net.fibres)) == (14, 22)
    assert net.length_km("13", "14") == 150.0
    p = net.candidate_paths("1", "14", k=5)
    assert len(p) == 5 and p[0].length_km == min(q.length_km for q in p)


ABILENE = nsfnet_path().parents[1] / "topozoo" / "Abilene.gml"


@pytest.mark.skipif(not ABILENE.is_file(), reason="needs ../shared/data/topologies/topozoo")
def test_gml_topology_lengths_from_coordinates():
    net = load_topology(ABILENE)
    assert (len(net.nodes), len(net.fibres)) == (11, 14)
    assert all(f.length_km > 0 for f in net.fibres)
    run = simulate_dynamic(net, DynamicOptions(load_erlang=40, requests=500, warmup=0, sizes="uniform:1:4"), 1,
                           record=True)
    assert check_lightpaths(net, [record_of(lp, start_s=s, end_s=e) for lp, s, e in run.lightpaths]) == []
