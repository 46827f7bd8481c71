"""CBA on the pipeline layer, the exact slot assignment (HiGHS and CP-SAT) and the optical CLI."""
import json

import pytest
from hypothesis import given, settings, strategies as st

from bace_opt.optical import Fibre, OpticalNetwork, SpectrumGrid, check_lightpaths, record_of
from bace_opt.optical.cba import CbaConfig, compare, label_cb, run_cba
from bace_opt.optical.exact import BatchRequest, solve_slot_assignment
from bace_opt.optical.rsa import get_rsa_policy
from bace_opt.pipeline import PipelineModel, check_ops, schedule_model
from bace_opt.pipeline.model import Boundary

from test_instance_validation import base
from test_optical import RING

# A 7-node mesh, lengths in km: small enough that a CBA run takes a fraction of a second.
MESH = OpticalNetwork(tuple(Fibre(a, b, km) for a, b, km in [
    ("1", "2", 400), ("2", "3", 500), ("3", "4", 300), ("4", "5", 600), ("5", "6", 400), ("6", "7", 500),
    ("7", "1", 700), ("1", "4", 900), ("2", "6", 800), ("3", "7", 1000)]), slots_per_link=40, guard_slots=1,
    k_paths=3)


def small_cfg(**kw):
    d = dict(workload="llama3-8b", schedule="gpipe", microbatches=8, iterations=6, datacenters=5, bg_count=6,
             seed=2)
    d.update(kw)
    return CbaConfig(**d)


# ---------------------------------------------------------------------- CB labels

@pytest.mark.parametrize("transfer_s, cb", [(0.5, True), (0.001, False)])
def test_cb_label_is_a_transfer_bubble(transfer_s, cb):
    m = PipelineModel(2, 4, (0.1, 0.1), (0.2, 0.2), boundaries=(Boundary(0, 0, 0.0, transfer_s),))
    res = schedule_model(m, "gpipe")
    assert label_cb(m, res.ops) == {0: cb}
    assert label_cb(m, res.ops, label_fill=True) == {0: True}       # the fill always waits


# ---------------------------------------------------------------------- the CBA loop

def test_cba_runs_admit_only_valid_lightpaths_and_follow_the_sizing_rule():
    runs = compare(MESH, small_cfg(), record_batches=True)
    for name, run in runs.items():
        recs = [lp for it in run.iterations for lp in it.lightpaths]
        assert recs and check_lightpaths(MESH, recs) == [], name
        res = run.last_result
        assert check_ops(res.model, res.ops, res.memory_limit) == []
        c = run.config
        for prev, cur in zip(run.iterations, run.iterations[1:]):
            for i, n in enumerate(cur.sizes):
                if not c.cba:
                    want = c.initial_slots
                elif prev.blocked[i]:
                    want = max(c.fs_min, prev.sizes[i] - 1)
                elif cur.cb[i]:
                    want = min(c.fs_max, prev.sizes[i] + 1)
                else:
                    want = prev.sizes[i]
                assert n == want, (name, cur.iteration, i)
    # the same background for every scheme of one seed
    assert [it.bg_offered for it in runs["ksp-ff"].iterations] == [it.bg_offered for it in runs["ksp-ff+cba"].iterations]
    assert runs["ksp-ff"].mapping == runs["sd-ff+cba"].mapping
    # CBA gives communication-bound boundaries more slots
    assert runs["ksp-ff+cba"].summary()["mean_slots"] > 1.0 == runs["ksp-ff"].summary()["mean_slots"]


def test_cba_is_deterministic_and_metrics_are_consistent():
    a, b = run_cba(MESH, small_cfg(cba=True)), run_cba(MESH, small_cfg(cba=True))
    assert a.summary() == b.summary()
    s = a.summary()
    assert 0 <= s["mean_bubble_ratio"] < 1 and 0 <= s["pp_blocking"] <= 1
    t_f, t_b = 0, 0
    for it in a.iterations:
        # never faster than the compute-bound pipeline (m + S - 1) (T_F + T_B)
        from bace_opt.optical.cba import stage_times_s
        t_f, t_b = stage_times_s(a.config)
        assert it.iteration_s >= (8 + 8 - 1) * (t_f + t_b) - 1e-9


def test_cba_config_rejects_bad_values():
    from bace_opt.errors import InputError
    with pytest.raises(InputError) as e:
        CbaConfig(workload="gpt", schedule="x", fs_min=3, initial_slots=1)
    msg = str(e.value)
    assert "workload" in msg and "schedule" in msg and "fs_min" in msg


# ---------------------------------------------------------------------- exact slot assignment

LINE = OpticalNetwork((Fibre("a", "b", 100.0), Fibre("b", "c", 100.0)), slots_per_link=6, guard_slots=1, k_paths=1)


@pytest.mark.parametrize("solver", ["highs", "cpsat"])
def test_exact_on_a_line_beats_first_fit_with_the_known_optimum(solver):
    reqs = [BatchRequest("a", "c", 2, 1.0), BatchRequest("a", "b", 3, 2.0), BatchRequest("b", "c", 2, 1.0)]
    res = solve_slot_assignment(LINE, reqs, solver=solver)
    assert res.proven and res.accepted_weight == pytest.approx(3.0) and res.accepted_bound == pytest.approx(3.0)
    assert res.max_slot == pytest.approx(4.0) and sorted(res.choices) == [1, 2]
    assert check_lightpaths(LINE, [record_of(lp, reqs[lp.request].src, reqs[lp.request].dst)
                                   for lp in res.lightpaths]) == []
    # first fit in request order takes r0 then cannot place r1: weight 2, gap 1/3
    assert res.gap_of(2.0) == pytest.approx(1 / 3)


def _first_fit_weight(net, reqs, occ):
    g = SpectrumGrid(net)
    g.occ = list(occ)
    pol = get_rsa_policy("ksp-ff")
    w = 0.0
    for r in reqs:
        paths = net.candidate_paths(r.src, r.dst)
        links = [g.links_of(p.nodes) for p in paths]
        c = pol.choose(g, links, [r.data_slots + net.guard_slots] * len(links))
        if c is not None:
            g.allocate(links[c[0]], c[1], r.data_slots + net.guard_slots)
            w += r.weight
    return w


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(0, (1 << 16) - 1), min_size=6, max_size=6),
       st.lists(st.tuples(st.sampled_from("abcde"), st.sampled_from("abcde"), st.integers(1, 4), st.booleans()),
                min_size=1, max_size=5))
def test_exact_solvers_agree_and_no_heuristic_beats_them(occ_bits, raw):
    occ = [b & 0b1010101010101010 | b & 0b0000000011110000 for b in occ_bits]     # sparse-ish occupancy
    reqs = [BatchRequest(a, b, n, 2.0 if cb else 1.0) for a, b, n, cb in raw if a != b]
    if not reqs:
        return
    h = solve_slot_assignment(RING, reqs, occ, solver="highs")
    c = solve_slot_assignment(RING, reqs, occ, solver="cpsat")
    assert h.proven and c.proven
    assert h.accepted_weight == pytest.approx(c.accepted_weight)
    assert h.max_slot == pytest.approx(c.max_slot)
    assert _first_fit_weight(RING, reqs, occ) <= h.accepted_weight + 1e-9
    g = SpectrumGrid(RING)
    g.occ = list(occ)
    for res in (h, c):
        recs = [record_of(lp, reqs[lp.request].src, reqs[lp.request].dst) for lp in res.lightpaths]
        assert check_lightpaths(RING, recs, occupied=g.occupied_by_link()) == []


def test_exact_gaps_of_a_cba_run():
    from bace_opt.bench.optical import exact_gaps
    rows = exact_gaps(MESH, small_cfg(iterations=3), "cpsat")
    assert [r["policy"] for r in rows] == ["ksp-ff", "ksp-ff+cba", "sd-ff", "sd-ff+cba"]
    for r in rows:
        assert r["proven"] == 3 and 0 <= r["mean_gap"] <= r["max_gap"] <= 1
        assert r["heuristic_weight"] <= r["optimal_weight"] + 1e-9


# ---------------------------------------------------------------------- CLI

def _topology_file(tmp_path):
    p = tmp_path / "ring.json"
    p.write_text(json.dumps(RING.to_dict()))
    return p


def test_cli_simulate_prints_blocking_with_interval(cli, tmp_path):
    topo = _topology_file(tmp_path)
    out = tmp_path / "sweep.csv"
    r = cli("optical", "simulate", "--topology", topo, "--load", "10", "30", "--requests", "2000", "--seeds", "3",
            "--sizes", "uniform:1:3", "--policy", "ksp-ff", "ksp-bf", "-o", out)
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith(("ksp-ff", "ksp-bf"))]
    assert len(lines) == 4
    assert out.read_text().startswith("load_erlang,policy,blocking,ci95_low,ci95_high")


def test_cli_bad_input_is_one_clear_message(cli, tmp_path):
    topo = _topology_file(tmp_path)
    r = cli("optical", "simulate", "--topology", topo, "--load", "-3", "--requests", "100")
    assert r.returncode == 2 and "--load: must be > 0, got -3" in r.stderr and "Traceback" not in r.stderr
    r = cli("optical", "simulate", "--topology", topo, "--load", "3", "--sizes", "lots")
    assert r.returncode == 2 and "request sizes must be" in r.stderr
    r = cli("optical", "simulate", "--topology", tmp_path / "nope.txt", "--load", "3")
    assert r.returncode == 2 and "not found" in r.stderr


def test_cli_validate_lists_every_optical_problem(cli, tmp_path):
    d = base()
    d["optical"] = {"slots_per_link": -1, "fibres": [{"a": "a", "b": "q", "length_km": -2}]}
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    r = cli("validate", p)
    assert r.returncode == 2
    for want in ("optical.slots_per_link", "optical.fibres[0].b", "optical.fibres[0].length_km"):
        assert want in r.stderr


def test_cli_cba_and_exact_on_an_instance_topology(cli, tmp_path):
    d = base()
    d["optical"] = MESH.to_dict()
    d["regions"] = [{"name": str(i), "gpu_type": "A6000", "gpus": 8, "price_usd_per_kwh": 0.2} for i in range(1, 8)]
    d["links"] = [{"a": f["a"], "b": f["b"], "bandwidth_gbps": 100.0, "latency_ms": 2.0} for f in d["optical"]["fibres"]]
    p = tmp_path / "inst.json"
    p.write_text(json.dumps(d))
    r = cli("optical", "cba", "--topology", p, "--iterations", "2", "--microbatches", "8", "--bg-count", "4", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    assert {x["policy"] for x in rows} == {"ksp-ff", "ksp-ff+cba", "sd-ff", "sd-ff+cba"}
    r = cli("optical", "exact", "--topology", p, "--iterations", "2", "--microbatches", "8", "--bg-count", "4",
            "--solver", "cpsat")
    assert r.returncode == 0, r.stderr
    assert "mean_gap" in r.stdout and "sd-ff+cba" in r.stdout


@pytest.mark.parametrize("kind", ["gpipe", "1f1b", "greedy"])
def test_pipeline_boundary_ready_delays_only_until_the_link_is_up(kind):
    """A lightpath set up late (Boundary.ready_s): no transfer before it; the schedule passes check_ops."""
    fast = PipelineModel(3, 6, (0.1,) * 3, (0.2,) * 3, boundaries=(Boundary(0, 0, 0.01, 0.05),))
    late = PipelineModel(3, 6, (0.1,) * 3, (0.2,) * 3, boundaries=(Boundary(0, 0, 0.01, 0.05, ready_s=0.5),))
    a, b = schedule_model(fast, kind), schedule_model(late, kind)
    assert check_ops(late, b.ops, b.memory_limit) == []
    assert min(o.start_s for o in b.ops if o.is_transfer) >= 0.5
    assert a.iteration_s < b.iteration_s <= a.iteration_s + 0.5 + 1e-9
    bad = [o if not o.is_transfer else o.__class__(o.kind, o.stage, o.mb, 0.1, 0.15, 0.16) for o in a.ops]
    assert any("before its link is ready" in p for p in check_ops(late, bad, late.memory_limit))


def test_optical_bench_rows_and_report(tmp_path):
    from bace_opt.bench import RunSpec, run_specs
    from bace_opt.bench.report import report
    topo = str(tmp_path / "mesh.json")
    (tmp_path / "mesh.json").write_text(json.dumps(MESH.to_dict()))
    net = {"topology": topo, "slots": 40, "k": 3}
    cba = dict(net, workload="llama3-8b", schedule="gpipe", microbatches=8, iterations=2, bg_count=4)
    specs = [RunSpec("optical", "optical", "mesh", 1, "optical-sweep:ksp-ff",
                     dict(net, load=20, requests=500, sizes="uniform:1:3", seeds=3))]
    specs += [RunSpec("optical", "optical", "mesh", 1, f"optical-cba:{s}", cba)
              for s in ("ksp-ff", "ksp-ff+cba", "sd-ff", "sd-ff+cba")]
    specs += [RunSpec("optical", "optical", "mesh", 1, "optical-exact:ksp-ff+cba:cpsat", cba, {"time_limit": 10})]
    out = tmp_path / "optical.csv"
    run_specs(specs, out)
    text = report("optical", out)
    assert "error" not in text
    for head in ("Blocking probability versus load", "beside the paper's", "CBA against its baselines",
                 "Exact slot assignment per iteration"):
        assert head in text


def test_cba_path_rank_prefers_short_uncongested_unfragmented_paths():
    from bace_opt.optical.cba import rank_paths
    g = SpectrumGrid(RING)
    paths = RING.candidate_paths("a", "c", k=3)             # a-b-c 700 km, a-c 800 km, a-e-d-c 1400 km
    links = [g.links_of(p.nodes) for p in paths]
    assert rank_paths(g, paths, links) == [0, 1, 2]         # empty spectrum: by length
    for e in links[0]:
        g.occ[e] = 0b0101010101010101                       # the shortest path: half used, fragmented
    assert rank_paths(g, paths, links)[0] == 1


@settings(max_examples=6, deadline=None)
@given(st.integers(1, 10_000), st.sampled_from(["gpipe", "1f1b"]), st.integers(0, 30), st.booleans(),
       st.sampled_from(["ksp-ff", "sd-ff"]))
def test_any_cba_run_admits_only_valid_lightpaths(seed, schedule, bg_count, cba, baseline):
    run = run_cba(MESH, small_cfg(seed=seed, schedule=schedule, bg_count=bg_count, cba=cba, baseline=baseline,
                                  iterations=3), record_batches=True)
    assert check_lightpaths(MESH, [lp for it in run.iterations for lp in it.lightpaths]) == []
    res = run.last_result
    assert check_ops(res.model, res.ops, res.memory_limit) == []
    for it in run.iterations:
        assert all(1 <= n <= 6 for n in it.sizes) and all(w >= 0 for w in it.waits_s)
        if bg_count == 0:
            # nothing else competes: 7 boundaries x (3 + 1 guard) slots at most in 3 iterations < 40 slots
            assert it.bg_offered == 0 and not any(it.blocked)
