"""Issue 31: the settings of XLRON's reference (tie rule, redraw truncation, reach table, path tables, FF-KSP /
KSP-LF), the fast loops against the policy classes, and the command line's messages, progress and stops."""
from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from bace_opt.errors import InputError
from bace_opt.instance.optical import REACH_TABLE, Fibre, OpticalNetwork, parse_reach
from bace_opt.optical import DynamicOptions, check_lightpaths, record_of, simulate_dynamic
from bace_opt.optical.engine import request_chunks
from bace_opt.optical.network import load_topology, nsfnet_path
from bace_opt.optical.paths import PathTable

ROOT = Path(__file__).resolve().parents[1]
NSF = load_topology(nsfnet_path()).replace(modulations=REACH_TABLE, slots_per_link=100, k_paths=5)
XL = dict(k=5, metric="hops", order="hops-per-se", tie="xlron", directed=True, sizes="gbps:25:100", holding_s=20.0,
          truncate=2.0, truncate_mode="redraw")


def _table(net, tie):
    return [[a, b, [list(p.nodes) for p in net.candidate_paths(a, b, k=5, metric="hops", order="hops-per-se",
                                                                 tie=tie)]]
            for a in net.nodes for b in net.nodes if a != b]


def test_xlron_tie_rule_gives_xlrons_nsfnet_path_table():
    # XLRON's own code (env_funcs._get_k_shortest_paths + init_path_link_array, spectral_resources) run on its
    # nsfnet_deeprmsa_directed.json gave this table, all 182 pairs (docs/research/optical-xlron/log.md)
    got = _table(NSF, "xlron")
    assert hashlib.sha256(json.dumps(sorted(got)).encode()).hexdigest() == \
        "ebd1c6745d1c81a142822c10def733b7867e0c3376f9a98d22c818b15d79da22"
    one = dict(((a, b), p) for a, b, p in got)[("1", "14")]
    assert one[:3] == [["1", "3", "6", "14"], ["1", "8", "9", "13", "14"], ["1", "2", "3", "6", "14"]]


def test_tie_rules_do_not_depend_on_the_order_of_the_fibres():
    flipped = NSF.replace(fibres=tuple(Fibre(f.b, f.a, f.length_km) for f in reversed(NSF.fibres)))
    for tie in ("km", "xlron"):
        assert sorted(_table(flipped, tie)) == sorted(_table(NSF, tie))
    assert _table(NSF, "km") != _table(NSF, "xlron")
    with pytest.raises(InputError, match="tie rule must be one of km, xlron"):
        NSF.candidate_paths("1", "2", tie="hash")


def test_km_rule_lets_every_equal_cost_path_compete_for_the_last_place():
    # a square a-b-c-d-a: two 2-hop paths a->c; with k=1 the shorter wins whatever the fibre order
    fib = (Fibre("a", "b", 500.0), Fibre("b", "c", 500.0), Fibre("c", "d", 100.0), Fibre("d", "a", 100.0))
    for order in (fib, fib[::-1]):
        net = OpticalNetwork(order, 8, k_paths=1)
        assert net.candidate_paths("a", "c", k=1, metric="hops", order="hops")[0].nodes == ("a", "d", "c")


def test_reach_table_is_deeprmsas_and_can_be_given():
    assert [(m.name, m.max_km) for m in REACH_TABLE] == [("BPSK", 100_000.0), ("QPSK", 2_500.0), ("8QAM", 1_250.0),
                                                         ("16QAM", 625.0)]
    assert parse_reach("deeprmsa") == REACH_TABLE
    mods = parse_reach("QPSK:2:2500,16QAM:4:inf")
    assert mods[1].gbps_per_slot == 50.0 and math.isinf(mods[1].max_km)
    for bad, msg in (("QPSK:2", "NAME:SE:KM"), ("QPSK:0:100", "spectral efficiency must be in (0, 64]"),
                     ("QPSK:2:-1", "reach must be > 0 km"), ("A:1:1,A:2:2", "given twice")):
        with pytest.raises(InputError, match=msg.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
            parse_reach(bad)


def test_redraw_truncation_mean_is_0687_of_nominal_and_clip_is_0865():
    want_redraw = (1 - 3 * math.exp(-2)) / (1 - math.exp(-2))      # 0.6870: E[h | h < 2m] / m
    for mode, want in (("redraw", want_redraw), ("clip", 1 - math.exp(-2))):
        holds = [h for c in request_chunks(3, 200_000, 1.0, 4, 1, 1, 20.0, 40.0, mode) for h in c[2]]
        assert max(holds) <= 40.0
        assert abs(sum(holds) / len(holds) / 20.0 - want) < 0.005, (mode, sum(holds) / len(holds) / 20.0)
    assert abs(want_redraw - 0.687) < 0.0005


@pytest.mark.parametrize("policy", ["ksp-ff", "ksp-lf", "ff-ksp", "lf-ksp", "sd-ff"])
def test_fast_loops_agree_with_the_policy_classes_and_pass_the_checker(policy):
    o = DynamicOptions(load_erlang=230, requests=3000, warmup=300, policy=policy, **XL)
    fast = simulate_dynamic(NSF, o, 5)
    ref = simulate_dynamic(NSF, o, 5, record=True)       # record: the policy class's choose() on the same stream
    assert (fast.blocked, fast.offered_slots, fast.blocked_slots) == (ref.blocked, ref.offered_slots,
                                                                      ref.blocked_slots)
    assert fast.blocked > 0
    recs = [record_of(lp, directed=True, start_s=s, end_s=e) for lp, s, e in ref.lightpaths]
    assert check_lightpaths(NSF, recs, directed=True) == []


def test_ksp_lf_equals_ksp_ff_and_ff_ksp_blocks_more():
    base = DynamicOptions(load_erlang=250, requests=6000, warmup=1000, **XL)
    ff, lf, ffk = (sum(simulate_dynamic(NSF, replace(base, policy=p), s).blocked for s in (1, 2))
                   for p in ("ksp-ff", "ksp-lf", "ff-ksp"))
    assert ff == lf > 0
    assert ffk > ff


def test_exported_path_table_read_back_gives_identical_blocking_seed_by_seed(tmp_path):
    pairs = [(a, b) for a in NSF.nodes for b in NSF.nodes if a != b]
    table = PathTable.build(NSF, pairs, 5, "hops", "hops-per-se", "xlron")
    f = tmp_path / "paths.json"
    table.save(NSF, f)
    back = PathTable.load(NSF, f)
    assert back.paths == table.paths
    o = DynamicOptions(load_erlang=250, requests=4000, warmup=500, **XL)
    for seed in (1, 2, 3):
        a = simulate_dynamic(NSF, o, seed)
        b = simulate_dynamic(NSF, replace(o, path_table=back, tie="km"), seed)
        assert (a.blocked, a.blocked_slots) == (b.blocked, b.blocked_slots)


def test_a_broken_path_table_is_refused_with_the_field(tmp_path):
    d = PathTable.build(NSF, [("1", "2"), ("2", "1")], 2).to_dict(NSF)
    d["pairs"][0]["paths"][0]["nodes"] = ["1", "14", "2"]
    d["pairs"][1]["paths"][0]["modulation"] = "64QAM"
    with pytest.raises(InputError) as e:
        PathTable.from_dict(NSF, d, "t.json")
    msg = str(e.value)
    assert "pairs[0].paths[0].nodes: no fibre '1'-'14' in the network" in msg
    assert "pairs[1].paths[0].modulation: the reach table gives '8QAM' for 1050 km" in msg


# ---------------------------------------------------------------------- command line

@pytest.mark.parametrize("args, msg", [
    (["--load", "0"], "--load: must be > 0, got 0"),
    (["--load", "100", "--seeds", "0"], "--seeds: must be >= 1, got 0"),
    (["--load", "100", "--seed", "-1"], "--seed: must be >= 0, got -1"),
    (["--load", "100", "--truncate", "0"], "--truncate: must be > 0, got 0"),
    (["--load", "100", "--holding", "-2"], "--holding: must be > 0, got -2"),
    (["--load", "100", "--k", "0"], "--k: must be >= 1, got 0"),
    (["--load", "100", "--reach-table", "QPSK:x:1"], "--reach-table: each entry must be NAME:SE:KM"),
    (["--scenario", "nope"], "--scenario must be one of xlron-nsfnet-ksp, got 'nope'"),
    (["--load", "100", "--policy", "ff-best"], "RSA policy must be one of"),
    (["--load", "100", "--paths", "missing.json"], "--paths missing.json: file not found"),
    (["--load", "100", "--requests", "0"], "--requests: requests must be in 1..100,000,000 per seed"),
    ([], "--load: give one or more loads in Erlang (or a --scenario)"),
    (["--load", "10", "--truncate-mode", "redraw"], "--truncate-mode redraw: give --truncate X as well"),
    (["--load", "10", "20", "--requests", "100000000", "--seeds", "100"], "at most 10,000,000,000 per command"),
])
def test_bad_simulate_input_is_one_message_and_exit_2(cli, args, msg):
    r = cli("optical", "simulate", *args)
    assert r.returncode == 2 and msg in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_scenario_round_trips_its_path_table_through_the_command_line(cli, tmp_path):
    f = tmp_path / "p.json"
    common = ["optical", "simulate", "--scenario", "xlron-nsfnet-ksp", "--load", "250", "--seeds", "2",
              "--requests", "2000", "--warmup", "300", "--json"]
    a = cli(*common, "--export-paths", f)
    b = cli(*common, "--paths", f)
    assert a.returncode == b.returncode == 0, a.stderr + b.stderr
    ra, rb = json.loads(a.stdout)[0], json.loads(b.stdout)[0]
    assert ra["per_seed"] == rb["per_seed"] and len(ra["per_seed"]) == 2 and ra["seed_list"] == [1, 2]
    assert json.loads(f.read_text())["format"] == "bace-opt-path-table"
    r = cli(*common, "--export-paths", f, "--paths", f)       # never over an input
    assert r.returncode == 2 and "--export-paths" in r.stderr


def test_sigterm_stops_a_long_run_with_progress_and_keeps_finished_seeds():
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    p = subprocess.Popen([sys.executable, "-m", "bace_opt.cli.main", "optical", "simulate", "--scenario",
                          "xlron-nsfnet-ksp", "--requests", "3000", "--warmup", "0", "--seeds", "10000", "--json",
                          "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        line = p.stderr.readline()             # the first progress line comes after about 5 s
        assert "optical simulate:" in line and "requests" in line, line
        t = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        assert time.monotonic() - t < 5
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err
    done = json.loads(out)
    assert done["interrupted"] and len(done["finished_seeds"]) > 0
    assert {"policy", "load_erlang", "seed", "blocking"} <= set(done["finished_seeds"][0])
