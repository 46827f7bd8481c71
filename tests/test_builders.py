"""Instance builders: job profiles (hand-checked), K* and memory, the paper family (determinism, scales,
shipped files reproduce byte for byte), the random family, the realistic/WAN family on ../shared/data
(skipped when the folder is absent), and the ``generate`` command."""
import csv
import json
import math
import shlex
import statistics
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bace_opt import formulas as F
from bace_opt.builders import geo
from bace_opt.builders.paper import DATASETS, PAPER_MODELS, PAPER_REGIONS, paper_instance
from bace_opt.builders.profiles import (MODELS, GpuSpec, ModelSpec, choose_stages, job_profile, load_gpu_specs,
                                        load_model_specs, stage_memory_gb, stage_options, stage_time_s)
from bace_opt.builders.synthetic import random_instance
from bace_opt.cli.main import main
from bace_opt.errors import InputError
from bace_opt.instance import Instance, load_instance

ROOT = Path(__file__).resolve().parents[1]
INSTANCES = ROOT / "instances"
DATA = ROOT.parent / "shared" / "data"
needs_data = pytest.mark.skipif(not (DATA / "skyplane").is_dir(), reason="../shared/data not present")


# ---------------------------------------------------------------------- profiles

def test_profile_hand_checked_llama_70b_on_a6000():
    # Llama-3.1-70B: P = 70.6e9, L = 80, d = 8192; A6000: 154.8 TFLOPS, 48 GB; MFU 0.4; b = 1, s = 2048,
    # B = 256 (m = 256); WikiText-103: 0.5e9 bytes / 4 = 1.25e8 tokens, 1 epoch; S = 80 given.
    job = job_profile("Llama-3.1-70B", "A6000", stages=80, dataset_tokens=1.25e8, epochs=1.0, name="j")
    # stage time = 6 * 70.6e9 * 1 * 2048 / 80 / (154.8e12 * 0.4) = 1.084416e13 / 6.192e13
    assert job.stage_time_s == pytest.approx(0.175132, abs=1e-6)
    # activation = 1 * 2048 * 8192 * 2 / 1e6
    assert job.activation_mb == pytest.approx(33.5544, abs=1e-4)
    # iterations = ceil(1.25e8 / (256 * 2048)) = ceil(238.42) = 239
    assert job.iterations == 239
    assert job.microbatches == 256
    # memory = 16 * 70.6e9 / 80 + 80 in flight * 1 layer * 2 * 2048 * 8192 + 34 * 2048 * 8192 bytes
    #        = 14.12e9 + 2.68435e9 + 0.57043e9 = 17.3748e9
    assert job.memory_gb == pytest.approx(17.375, abs=1e-3)
    assert job.stages == 80 and job.gpus_per_stage == 1 and job.model == "Llama-3.1-70B"


def test_profile_whole_layers_and_even_split():
    m = MODELS["Llama-3.1-70B"]
    gpu = GpuSpec("X", 100.0, 80.0, 300.0)
    # 80 layers on 30 stages: the fullest stage holds ceil(80/30) = 3 layers
    t_ceil = stage_time_s(m, gpu, 30)
    t_even = stage_time_s(m, gpu, 30, layer_split="even")
    full = 6 * 70.6e9 * 2048 / (100e12 * 0.4)
    assert t_ceil == pytest.approx(full * 3 / 80)
    assert t_even == pytest.approx(full / 30)          # the spec's literal 6 P b s / S / (tflops MFU)
    assert stage_time_s(m, gpu, 40) == pytest.approx(stage_time_s(m, gpu, 40, layer_split="even"))


def test_kstar_is_memory_feasible_argmin():
    opts = stage_options("Llama-3.1-70B", "A6000", max_stages=64)
    k = choose_stages("Llama-3.1-70B", "A6000", max_stages=64)
    best = opts[k - 1]
    assert best.fits and best.memory_gb <= 0.95 * 48
    # nothing feasible is faster; everything faster is over memory
    for o in opts:
        if o.fits:
            assert o.iteration_s >= best.iteration_s
        if o.iteration_s < best.iteration_s:
            assert not o.fits
    # S = 27..39 put 3 layers (42.4 GB of weights and optimizer state + >= 3.3 GB of activations) on the
    # fullest stage: over 0.95 x 48 = 45.6 GB
    assert all(not o.fits for o in opts[26:39])
    # S = 40..64 all hold 2 layers per stage; the smallest of them has the shortest fill: K* = 40
    assert k == 40


def test_kstar_with_the_spec_formula_is_the_cap():
    # with layer_split="even" T_iter = (m + S - 1) / S * T_1 decreases in S: K* is the largest allowed S
    assert choose_stages("Qwen2.5-14B", "A6000", max_stages=20, layer_split="even") == 20
    assert choose_stages("Qwen2.5-14B", "A6000", max_gpus=13, layer_split="even") == 13


def test_kstar_matches_formulas_iteration_s():
    for o in stage_options("Qwen2.5-14B", "A6000", max_stages=10):
        expected = (256 + o.stages - 1) * o.stage_time_s
        assert o.iteration_s == pytest.approx(expected)


def test_memory_counts_in_flight_microbatches():
    m = ModelSpec("toy", 1.0, 8, 1024)
    # S = 4 (2 layers per stage), m = 2 micro-batches: 2 in flight (not 4)
    got = stage_memory_gb(m, 4, microbatches=2, seq_len=1000)
    bsd = 1000 * 1024
    want = (16 * 1e9 * 2 / 8 + 2 * 2 * 2 * bsd + 34 * bsd) / 1e9
    assert got == pytest.approx(want)
    no_rc = stage_memory_gb(m, 4, microbatches=8, seq_len=1000, recompute=False)
    assert no_rc == pytest.approx((16 * 1e9 * 2 / 8 + 4 * 2 * 34 * bsd) / 1e9)
    # two GPUs per stage halve everything
    assert stage_memory_gb(m, 4, microbatches=2, seq_len=1000, gpus_per_stage=2) == pytest.approx(got / 2)


def test_profile_errors_name_the_model():
    with pytest.raises(InputError, match="FLM-101B"):
        choose_stages("FLM-101B", "A6000", max_stages=39)    # needs <= 2 layers per stage: 40 stages
    assert choose_stages("FLM-101B", "A6000", max_stages=64) == 40
    with pytest.raises(InputError, match="FLM-101B"):        # 2 layers (40.4 GB + activations) > 0.9 x 48 GB
        choose_stages("FLM-101B", "A6000", max_stages=64, memory_headroom=0.9)
    with pytest.raises(InputError, match="Llama-3.1-70B.*10 stages"):
        job_profile("Llama-3.1-70B", "A6000", stages=10, dataset_tokens=1e6)
    with pytest.raises(InputError, match="unknown model"):
        job_profile("GPT-9", "A6000", dataset_tokens=1e6)
    with pytest.raises(InputError, match="multiple of micro_batch"):
        job_profile("Qwen2.5-14B", "A6000", dataset_tokens=1e6, micro_batch=3, global_batch=256)


@pytest.mark.skipif(not (DATA / "llm_hw").is_dir(), reason="../shared/data/llm_hw not present")
def test_llm_hw_readers():
    gpus = load_gpu_specs(DATA)
    assert gpus["a6000-48gb"].tflops == 154.8 and gpus["a6000-48gb"].memory_gb == 48
    assert gpus["A100-SXM4-80GB"].tflops == 312 and gpus["A100-SXM4-80GB"].power_w == 400
    models = load_model_specs(DATA / "llm_hw")
    assert models["Llama-3.1 70B"].layers == 80 and models["Llama-3.1 70B"].hidden == 8192
    # params estimated from the llm-analysis config agree with the published 69B within 1%
    assert models["upstage_Llama-2-70b-instruct-v2"].params_b == pytest.approx(69.0, rel=0.01)
    # a spec read from the files builds a job like a built-in one
    job = job_profile(models["Llama-3.1 70B"], GpuSpec("A6000", 154.8, 48, 300), dataset_tokens=1e8)
    assert job.memory_gb <= 0.95 * 48


def test_llm_hw_reader_bad_folder(tmp_path):
    with pytest.raises(InputError, match="no model configs"):
        load_model_specs(tmp_path)


# ---------------------------------------------------------------------- geo

def test_great_circle_and_latency_rule():
    # London - Paris is about 344 km; Dublin - Ashburn 5,466 km -> 1.5 * 5466 / 200 + 2 = 43.0 ms
    assert geo.haversine_km((51.5074, -0.1278), (48.8566, 2.3522)) == pytest.approx(344, abs=2)
    d = geo.haversine_km(geo.CITY_COORDS["Ireland"], geo.CITY_COORDS["N. Virginia"])
    assert geo.latency_ms(d) == pytest.approx(1.5 * d / 200 + 2)
    assert geo.latency_ms(d) == pytest.approx(43.0, abs=0.2)


# ---------------------------------------------------------------------- paper family

def test_paper_instance_follows_the_setup():
    inst = paper_instance(1)
    assert [r.name for r in inst.regions] == [r.name for r in PAPER_REGIONS]
    assert inst.meta["seed"] == 1 and "paper" in inst.meta["source"]
    assert inst.gpu_types["A6000"].power_w == 300 and inst.gpu_types["A6000"].memory_gb == 48
    for r in inst.regions:
        assert r.gpus in (16, 32, 64, 128)
        assert 0.156 <= r.price_usd_per_kwh <= 0.295
    assert len(inst.links) == 15                                  # full mesh of 6
    region_bw = inst.meta["region_bandwidth_gbps"]
    coords = {r.name: geo.CITY_COORDS[r.city] for r in PAPER_REGIONS}
    for l in inst.links:
        assert 25 <= region_bw[l.a] <= 100
        assert l.bandwidth_gbps == pytest.approx((region_bw[l.a] + region_bw[l.b]) / 2, abs=1e-3)
        assert l.latency_ms == pytest.approx(geo.latency_ms(geo.haversine_km(coords[l.a], coords[l.b])), abs=0.01)
    assert len(inst.jobs) == 8
    assert sorted(j.model for j in inst.jobs) == sorted(PAPER_MODELS)    # 8 jobs: each model once
    total = inst.total_gpus
    for j in inst.jobs:
        assert 14 <= MODELS[j.model].params_b <= 101
        assert j.gpus <= total and j.memory_gb <= 0.95 * 48
        assert j.arrival_s == 0.0
        run_h = j.iterations * F.iteration_s(j, j.stage_time_s, [], []) / 3600
        assert 0.1 < run_h < 24 * 5                               # hours to days, single region
    assert {n["dataset"] for n in inst.meta["job_profiles"]} <= {d.name for d in DATASETS}


def test_paper_determinism_and_seeds():
    assert paper_instance(2).to_json() == paper_instance(2).to_json()
    assert paper_instance(1).to_json() != paper_instance(2).to_json()


def test_paper_scales_and_prefix_stability():
    base = paper_instance(1)
    bw = paper_instance(1, bandwidth_scale=0.3)
    gp = paper_instance(1, gpu_scale=0.5)
    many = paper_instance(1, jobs=24)
    for l0, l1 in zip(base.links, bw.links):
        assert l1.bandwidth_gbps == pytest.approx(l0.bandwidth_gbps * 0.3, abs=2e-3)
        assert l1.latency_ms == l0.latency_ms
    assert [r.gpus for r in gp.regions] == [max(1, math.floor(r.gpus * 0.5 + 0.5)) for r in base.regions]
    assert [r.price_usd_per_kwh for r in gp.regions] == [r.price_usd_per_kwh for r in base.regions]
    assert gp.jobs == base.jobs and bw.jobs == base.jobs      # the sensitivity variants share the jobs
    assert many.jobs[:8] == base.jobs and len(many.jobs) == 24
    assert paper_instance(1, gpu_scale=1.25).total_gpus == sum(math.floor(r.gpus * 1.25 + 0.5) for r in base.regions)


def test_paper_small_cluster_caps_stages_by_gpus():
    # gpu_scale 0.3 of seed 1 leaves 86 GPUs: every job still fits (K* re-chosen among S <= 86 if needed)
    inst = paper_instance(1, gpu_scale=0.3)
    assert all(j.gpus <= inst.total_gpus for j in inst.jobs)
    with pytest.raises(InputError, match="does not fit"):
        paper_instance(1, gpu_scale=0.05)


def test_paper_poisson_arrivals():
    inst = paper_instance(3, jobs=10, arrivals="poisson", mean_interarrival_s=600.0)
    arr = [j.arrival_s for j in inst.jobs]
    assert arr[0] == 0.0 and all(b > a for a, b in zip(arr, arr[1:]))
    assert inst.to_json() == paper_instance(3, jobs=10, arrivals="poisson", mean_interarrival_s=600.0).to_json()
    assert [j.model for j in inst.jobs] == [j.model for j in paper_instance(3, jobs=10).jobs]


def test_paper_bad_arguments_listed_together():
    with pytest.raises(InputError) as e:
        paper_instance(-1, jobs=0, bandwidth_scale=0, gpu_scale=-2)
    assert len(e.value.problems) == 4


def _paper_files():
    return sorted(p for p in INSTANCES.glob("paper-*.json"))


def test_shipped_paper_instances_reproduce_byte_for_byte(tmp_path):
    """Every paper-* file, nominal and measured: the measured ones from the shipped per-pair table, and again
    from the raw files of ../shared/data when present."""
    files = _paper_files()
    assert len(files) >= 16
    measured = [p for p in files if "measured" in p.name]
    assert {p.name for p in measured} == {f"paper-6r-8j-seed{s}-measured.json" for s in (1, 2, 3)} | {
        f"paper-6r-8j-seed1-{v}-measured.json" for v in ("bw0.3", "bw1.5", "gpu0.5", "gpu1.25")} | {
        "paper-6r-24j-seed1-measured.json"}
    for p in files:
        meta = json.loads(p.read_text())["meta"]
        argv = shlex.split(meta["command"])[1:] + ["-o", str(tmp_path / p.name)]
        if p in measured:
            assert "Skyplane" in meta["source"] and meta["bandwidth_source"] == "measured"
            if (DATA / "skyplane").is_dir():
                assert main(argv + ["--data", str(DATA)]) == 0
                assert (tmp_path / p.name).read_bytes() == p.read_bytes(), p.name
        assert main(argv) == 0
        assert (tmp_path / p.name).read_bytes() == p.read_bytes(), p.name


def test_shipped_instances_are_valid_and_round_trip():
    files = sorted(INSTANCES.glob("*.json"))
    assert {"tiny-2r-2j.json", "small-4r-6j.json", "paper-6r-8j-seed1.json"} <= {p.name for p in files}
    for p in files:
        inst = load_instance(p)
        assert inst.name == p.stem
        assert inst.meta.get("source"), p.name
        assert inst.to_json() == p.read_text(), p.name


# ---------------------------------------------------------------------- random family

def test_random_instance_valid_and_deterministic():
    a = random_instance(7, 5, 6, topology="sparse", transit=2, hourly_prices=True, mixed_gpus=True,
                        max_gpus_per_stage=2, max_arrival_s=100.0, egress=True)
    b = random_instance(7, 5, 6, topology="sparse", transit=2, hourly_prices=True, mixed_gpus=True,
                        max_gpus_per_stage=2, max_arrival_s=100.0, egress=True)
    assert a.to_json() == b.to_json()
    assert a.to_json() != random_instance(8, 5, 6, topology="sparse", transit=2).to_json()
    assert nx.is_connected(a.graph)
    for t in ("t0", "t1"):
        assert a.region(t).gpus == 0 and a.graph.degree(t) >= 2
    assert all(r.price_series is not None and len(r.price_series.usd_per_kwh) == 24 for r in a.regions[:5])
    assert a.objective.egress
    for j in a.jobs:
        assert sum(r.gpus // j.gpus_per_stage for r in a.regions) >= j.stages
        assert 0 <= j.arrival_s <= 100


def test_random_mesh_is_complete():
    inst = random_instance(3, 4, 2)
    assert len(inst.links) == 6 and inst.meta["seed"] == 3


def test_random_instance_bad_arguments():
    with pytest.raises(InputError, match="transit regions need topology='sparse'"):
        random_instance(1, transit=1)
    with pytest.raises(InputError, match="n_regions"):
        random_instance(1, n_regions=0)


# ---------------------------------------------------------------------- realistic family (needs the data)

def _rows(*parts):
    with DATA.joinpath(*parts).open(newline="") as f:
        return list(csv.DictReader(f))


@needs_data
def test_realistic_bandwidth_latency_egress_from_skyplane():
    from bace_opt.builders.realistic import realistic_instance
    regs = ["aws:us-east-1", "aws:us-west-1", "aws:ap-northeast-1"]
    inst = realistic_instance(DATA, regs, gpus=32, jobs=2, hours=24, vm_pairs_per_link=4)
    tp = [float(r["throughput_recieved"]) for r in _rows("skyplane", "throughput_2022_11.csv")
          if {r["src_region"], r["dst_region"]} == {"aws:us-east-1", "aws:ap-northeast-1"}]
    rtt = [float(r["avg_rtt"]) for r in _rows("skyplane", "latency.csv")
           if {r["src_region"], r["dst_region"]} == {"aws:us-east-1", "aws:ap-northeast-1"}]
    eg = [float(r["cost"]) for r in _rows("skyplane", "egress_cost.csv")
          if {r["src"], r["dest"]} == {"aws:us-east-1", "aws:ap-northeast-1"}]
    link = inst.links[inst.link_index[("aws:us-east-1", "aws:ap-northeast-1")]]
    assert link.bandwidth_gbps == pytest.approx(statistics.median(tp) / 1e9 * 4, abs=1e-3)
    assert link.latency_ms == pytest.approx(statistics.median(rtt) / 2, abs=1e-3)
    assert link.egress_usd_per_gb == pytest.approx(sum(eg) / len(eg), abs=1e-5)
    assert all(r.gpus == 32 for r in inst.regions) and len(inst.jobs) == 2
    assert "Skyplane" in inst.meta["source"]
    mx = realistic_instance(DATA, regs, gpus=32, jobs=2, hours=24, vm_pairs_per_link=4, aggregate="max")
    assert mx.links[inst.link_index[("aws:us-east-1", "aws:ap-northeast-1")]].bandwidth_gbps == \
        pytest.approx(max(tp) / 1e9 * 4, abs=1e-3)


@needs_data
def test_realistic_hourly_prices_adder_and_clip():
    from bace_opt.builders.realistic import realistic_instance
    inst = realistic_instance(DATA, ["aws:eu-central-1", "aws:us-east-1"], gpus=128, jobs=1,
                              price_day="2023-07-01", hours=48)
    rows = {r["datetime_utc"]: r for r in _rows("green_dcc", "electricity_price_usd_mwh_hourly_2023_wide.csv")}
    series = inst.region("aws:eu-central-1").price_series
    assert series.step_s == 3600 and len(series.usd_per_kwh) == 48
    clipped = 0
    for h, v in enumerate(series.usd_per_kwh):
        ts = f"2023-07-{1 + h // 24:02d} {h % 24:02d}:00:00+00:00"
        raw = float(rows[ts]["DE-LU"]) / 1000 + 0.10
        assert v == pytest.approx(max(0.0, raw), abs=1e-5)
        clipped += raw < 0
    assert clipped > 0            # 2 July 2023 had deeply negative German prices: clipped to 0
    assert inst.region("aws:eu-central-1").price_usd_per_kwh == pytest.approx(statistics.fmean(series.usd_per_kwh), abs=1e-5)


@needs_data
def test_realistic_errors():
    from bace_opt.builders.realistic import realistic_instance
    with pytest.raises(InputError, match="no grid zone"):
        realistic_instance(DATA, ["aws:us-east-1", "aws:nowhere-1"])
    with pytest.raises(InputError, match="aggregate"):
        realistic_instance(DATA, aggregate="mode")
    with pytest.raises(InputError, match="data folder not found"):
        realistic_instance(DATA / "nope")
    with pytest.raises(InputError, match="price_day"):
        realistic_instance(DATA, price_day="July")


@needs_data
def test_wan_from_gml_with_transit_nodes():
    from bace_opt.builders.realistic import OC_UNIT_GBPS, realistic_instance
    sites = {"New York": {"zone": "US-NY-NYIS", "gpus": 64}, "Los Angeles": {"zone": "aws:us-west-1", "gpus": 80}}
    inst = realistic_instance(DATA, topology_gml="Abilene", sites=sites, jobs=3, hours=24)
    assert len(inst.regions) == 11 and len(inst.links) == 14
    assert inst.region("Los Angeles").gpus == 80 and inst.region("Denver").gpus == 0
    assert len(inst.compute_regions) == 2
    assert all(l.bandwidth_gbps == pytest.approx(192 * OC_UNIT_GBPS, abs=1e-3) for l in inst.links)   # OC-192
    r = inst.routes("New York", "Los Angeles", 1)[0]
    assert len(r.regions) > 2                                  # traffic crosses transit nodes
    assert inst.meta["sites"]["Los Angeles"]["zone"] == "US-CAL-CISO"   # cloud region mapped to its zone
    with pytest.raises(InputError, match="not a node"):
        realistic_instance(DATA, topology_gml="Abilene", sites={"Paris": {"zone": "FR", "gpus": 8}})


@needs_data
def test_gml_parallel_edges_are_merged(tmp_path):
    from bace_opt.builders.realistic import realistic_instance
    gml = tmp_path / "Toy.gml"
    gml.write_text("""graph [
  label "Toy"
  node [ id 0 label "A" Latitude 40.71 Longitude -74.01 ]
  node [ id 1 label "B" Latitude 38.90 Longitude -77.04 ]
  node [ id 2 label "C" Latitude 41.85 Longitude -87.65 ]
  edge [ source 0 target 1 LinkSpeedRaw 10000000000 ]
  edge [ source 0 target 1 LinkSpeedRaw 40000000000 ]
  edge [ source 1 target 2 ]
]
""")
    inst = realistic_instance(DATA, topology_gml=gml, sites={"A": {"zone": "US-NY-NYIS", "gpus": 80},
                                                             "C": {"zone": "US-MIDA-PJM", "gpus": 80}},
                              jobs=1, hours=2, default_capacity_gbps=7.0)
    ab = inst.links[inst.link_index[("A", "B")]]
    bc = inst.links[inst.link_index[("B", "C")]]
    assert ab.bandwidth_gbps == pytest.approx(50.0) and bc.bandwidth_gbps == pytest.approx(7.0)
    assert inst.region("B").gpus == 0


def test_shipped_realistic_instances_reproduce_from_the_shipped_tables(tmp_path, monkeypatch):
    """The realistic files of instances/README.md, with no data folder: from the tables shipped as package data."""
    monkeypatch.delenv("BACE_OPT_DATA", raising=False)
    fleet = ["--regions", "fleet20", "--jobs", "50", "--gpu-types", "A100-80GB,H100-80GB", "--fill-missing", "rtt"]
    cmds = {"realistic-6r-8j-seed1.json": ["generate", "realistic", "--seed", "1"],
            **{f"realistic-20r-50j-seed{s}.json": ["generate", "realistic", "--seed", str(s), *fleet,
                                                   "--name", f"realistic-20r-50j-seed{s}"] for s in (1, 2, 3)}}
    for fname, argv in cmds.items():
        out = tmp_path / fname
        assert main(argv + ["-o", str(out)]) == 0
        assert out.read_bytes() == (INSTANCES / fname).read_bytes(), fname


@needs_data
def test_shipped_realistic_instances_reproduce(tmp_path):
    fleet = ["--regions", "fleet20", "--jobs", "50", "--gpu-types", "A100-80GB,H100-80GB", "--fill-missing", "rtt"]
    cmds = {
        "realistic-20r-50j-seed2.json": ["generate", "realistic", "--data", str(DATA), "--seed", "2", *fleet,
                                         "--name", "realistic-20r-50j-seed2"],
        "realistic-6r-8j-seed1.json": ["generate", "realistic", "--data", str(DATA), "--seed", "1"],
        "wan-abilene-4s-7t-8j-seed1.json": [
            "generate", "realistic", "--data", str(DATA), "--seed", "1", "--topology-gml", "Abilene",
            "--site", "New York=US-NY-NYIS:64", "--site", "Washington DC=US-MIDA-PJM:64",
            "--site", "Houston=US-TEX-ERCO:32", "--site", "Los Angeles=US-CAL-CISO:64"],
    }
    for fname, argv in cmds.items():
        out = tmp_path / fname
        assert main(argv + ["-o", str(out)]) == 0
        assert out.read_bytes() == (INSTANCES / fname).read_bytes(), fname


# ---------------------------------------------------------------------- CLI

def test_generate_cli_writes_and_reports(tmp_path, capsys):
    out = tmp_path / "p.json"
    assert main(["generate", "paper", "--seed", "2", "--jobs", "3", "--gpu-scale", "1.25", "-o", str(out)]) == 0
    inst = load_instance(out)
    assert len(inst.jobs) == 3 and inst.meta["gpu_scale"] == 1.25
    assert main(["generate", "random", "--seed", "4", "--regions", "3", "--jobs", "2", "--topology", "sparse",
                 "--transit", "1"]) == 0
    text = capsys.readouterr().out
    assert Instance.from_dict(json.loads(text)).meta["seed"] == 4


@pytest.mark.parametrize("argv, msg", [
    (["generate", "paper", "--seed", "-3"], "--seed: must be >= 0"),
    (["generate", "paper", "--seed", "1", "--bandwidth-scale", "zero"], "not a number"),
    (["generate", "paper"], "required: --seed"),
    (["generate", "random", "--seed", "1", "--transit", "1"], "need topology='sparse'"),
    (["generate", "paper", "--seed", "1", "--gpu-scale", "0.01"], "does not fit"),
    (["generate", "realistic", "--data", "/no/such/folder"], "data folder not found"),
    (["generate"], "choose a family"),
])
def test_generate_cli_bad_input_one_line(argv, msg, capsys):
    try:
        rc = main(argv)
    except SystemExit as e:
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err
    assert len([l for l in err.splitlines() if "error" in l]) == 1


def test_generate_help_for_each_family(capsys):
    for fam in ("paper", "random", "realistic"):
        with pytest.raises(SystemExit) as e:
            main(["generate", fam, "--help"])
        assert e.value.code == 0
        assert "--seed" in capsys.readouterr().out


@needs_data
def test_wan_from_nsfnet_link_list():
    from bace_opt.builders.realistic import realistic_instance
    sites = {"1": {"zone": "US-CAL-CISO", "gpus": 64}, "9": {"zone": "US-MIDA-PJM", "gpus": 64},
             "13": {"zone": "US-NY-NYIS", "gpus": 32}}
    inst = realistic_instance(DATA, topology_gml="nsfnet_chen", sites=sites, jobs=2, hours=24,
                              default_capacity_gbps=400.0)
    assert len(inst.regions) == 14 and len(inst.links) == 22
    assert inst.region("5").gpus == 0 and inst.region("13").gpus == 32
    l = inst.links[inst.link_index[("13", "14")]]          # "13 14 150": 150 km of fibre
    assert l.latency_ms == pytest.approx(150 / 200 + 0.5) and l.bandwidth_gbps == 400.0
    assert "DeepRMSA" in inst.meta["source"]


# ---------------------------------------------------------------------- measured bandwidth (Skyplane format)

_TP_HEAD = ("src_region,src_tier,src_instance_class,dst_region,dst_tier,dst_instance_class,iperf3_connections,"
            "iperf3_runtime,throughput_sent,throughput_recieved,cpu_utilization,success")
_RTT_HEAD = ("src_region,src_tier,src_instance_class,dst_region,dst_tier,dst_instance_class,min_rtt,avg_rtt,"
             "max_rtt,mdev_rtt")
AWS_PAPER = [r.aws_region for r in PAPER_REGIONS]


_PAIRS_DIRECTED = [(a, b) for a in AWS_PAPER for b in AWS_PAPER if a != b]


def _write_skyplane(folder: Path, tp_rows, rtt_rows) -> Path:
    """A tiny Skyplane-format folder: tp_rows (src, dst, bit/s[, tier, success]), rtt_rows (src, dst, avg ms)."""
    d = folder / "skyplane"
    d.mkdir(parents=True, exist_ok=True)
    lines = [_TP_HEAD]
    for row in tp_rows:
        s, t, bps, *rest = row
        tier, ok = (tuple(rest) + ("PREMIUM", "True")[len(rest):])[:2]
        lines.append(f"{s},{tier},m5.8xlarge,{t},PREMIUM,m5.8xlarge,64,5,{bps * 1.02},{bps},7.5,{ok}")
    (d / "throughput_2022_11.csv").write_text("\n".join(lines) + "\n")
    lines = [_RTT_HEAD] + [f"{s},PREMIUM,m5.large,{t},PREMIUM,m5.large,{ms - 0.1},{ms},{ms + 0.1},0.1"
                           for s, t, ms in rtt_rows]
    (d / "latency.csv").write_text("\n".join(lines) + "\n")
    return folder


def _paper_pairs():
    return [(a, b) for i, a in enumerate(AWS_PAPER) for b in AWS_PAPER[i + 1:]]


def _full_paper_data(folder: Path, drop_tp=(), drop_rtt=()) -> Path:
    """Both directions of every paper pair: pair k gets (2 + k/10) and (2.2 + k/10) Gbit/s, RTT 20+5k and 21+5k."""
    tp, rtt = [], []
    for k, (a, b) in enumerate(_paper_pairs()):
        if (a, b) not in drop_tp:
            tp += [(a, b, (2.0 + k / 10) * 1e9), (b, a, (2.2 + k / 10) * 1e9)]
        if (a, b) not in drop_rtt:
            rtt += [(a, b, 20.0 + 5 * k), (b, a, 21.0 + 5 * k)]
    return _write_skyplane(folder, tp, rtt)


def test_skyplane_aggregation_both_directions_median(tmp_path):
    from bace_opt.builders.skyplane import Measurements
    a, b, c = "aws:us-east-1", "aws:eu-west-1", "gcp:us-east4-a"
    _write_skyplane(tmp_path, [(a, b, 4e9), (b, a, 2e9), (a, b, 3.5e9), (a, b, 9e9, "PREMIUM", "False"),
                               (a, c, 5e9), (c, a, 1e9, "STANDARD")],
                    [(a, b, 80.0), (b, a, 84.0), (b, a, 90.0)])
    m = Measurements(tmp_path / "skyplane")
    ab = m.pair(b, a)
    assert (ab.throughput_gbps, ab.throughput_n) == (3.5, 3)          # median of 4, 2, 3.5; failed run dropped
    assert (ab.rtt_ms, ab.rtt_n) == (84.0, 3) and ab.complete
    ac = m.pair(a, "gcp:us-east4")                                     # zone suffix dropped; STANDARD tier dropped
    assert (ac.throughput_gbps, ac.throughput_n, ac.rtt_ms) == (5.0, 1, None)
    assert ac.missing_what() == ["RTT"] and not ac.complete
    assert Measurements(tmp_path / "skyplane", aggregate="max").pair(a, b).throughput_gbps == 4.0
    with pytest.raises(InputError, match="aggregate must be one of"):
        Measurements(tmp_path / "skyplane", aggregate="mode")


def test_paper_measured_links_and_meta(tmp_path):
    data = _full_paper_data(tmp_path)
    inst = paper_instance(1, 3, bandwidth_scale=0.5, bandwidth_source="measured", data_dir=data,
                          parallel_connections=2)
    nominal = paper_instance(1, 3, bandwidth_scale=0.5)
    assert inst.name == "paper-6r-3j-seed1-bw0.5-measured"
    for k, (a, b) in enumerate(_paper_pairs()):
        ra, rb = (next(r.name for r in PAPER_REGIONS if r.aws_region == x) for x in (a, b))
        l = inst.links[inst.link_index[(ra, rb)]]
        assert l.bandwidth_gbps == pytest.approx((2.1 + k / 10) * 2 * 0.5, abs=1e-3)   # median of 2 runs x 2 x 0.5
        assert l.latency_ms == pytest.approx((20.5 + 5 * k) / 2, abs=1e-3)
    # everything but the links is the nominal instance's
    assert [r.gpus for r in inst.regions] == [r.gpus for r in nominal.regions]
    assert [r.price_usd_per_kwh for r in inst.regions] == [r.price_usd_per_kwh for r in nominal.regions]
    assert inst.jobs == nominal.jobs
    m = inst.meta
    assert m["bandwidth_source"] == "measured" and m["parallel_connections"] == 2 and m["fill_missing"] == "none"
    assert "Skyplane" in m["source"] and "throughput_2022_11.csv" in m["source"] and "latency.csv" in m["source"]
    assert "median" in m["bandwidth_rule"] and "both directions" in m["bandwidth_rule"] and "2 parallel" in m["bandwidth_rule"]
    assert m["region_match"]["us-east"].startswith("aws:us-east-1")
    assert len(m["link_measurements"]) == 15
    assert all(n["throughput"] == "measured" and n["rtt"] == "measured" and n["throughput_runs"] == 2
               for n in m["link_measurements"])
    assert m["command"] == "bace-opt generate paper --seed 1 --jobs 3 --bandwidth-scale 0.5 --bandwidth-source " \
                           "measured --parallel-connections 2"
    assert "region_bandwidth_gbps" not in m
    # deterministic
    again = paper_instance(1, 3, bandwidth_scale=0.5, bandwidth_source="measured", data_dir=data,
                           parallel_connections=2)
    assert again.to_json() == inst.to_json()


def test_paper_measured_missing_pairs_named(tmp_path):
    ie, sg = "aws:eu-west-1", "aws:ap-southeast-1"
    data = _full_paper_data(tmp_path, drop_tp=[(ie, sg)], drop_rtt=[(ie, "aws:us-east-1")])
    with pytest.raises(InputError) as e:
        paper_instance(1, 2, bandwidth_source="measured", data_dir=data)
    msg = str(e.value)
    assert "2 region pair(s)" in msg and f"{ie} - {sg} (throughput)" in msg
    assert f"{ie} - aws:us-east-1 (RTT)" in msg and "--fill-missing rtt" in msg


def test_paper_measured_fill_missing_rtt(tmp_path):
    from bace_opt.builders.skyplane import Measurements, estimate_rtt_ms
    ie, sg, us = "aws:eu-west-1", "aws:ap-southeast-1", "aws:us-east-1"
    data = _full_paper_data(tmp_path, drop_tp=[(ie, sg)], drop_rtt=[(ie, us)])
    inst = paper_instance(1, 2, bandwidth_source="measured", data_dir=data, fill_missing="rtt")
    notes = {tuple(n["skyplane_pair"]): n for n in inst.meta["link_measurements"]}
    # RTT hole: great-circle rule (2 x one way); its throughput stays measured
    assert notes[(ie, us)]["rtt"].startswith("estimated: great-circle")
    assert notes[(ie, us)]["rtt_ms"] == pytest.approx(estimate_rtt_ms(ie, us), abs=1e-3)
    assert notes[(ie, us)]["throughput"] == "measured"
    l = inst.links[inst.link_index[("eu-west", "us-east")]]
    assert l.latency_ms == pytest.approx(estimate_rtt_ms(ie, us) / 2, abs=1e-3)
    # throughput hole: the log-log fit on RTT over the 14 measured pairs, at the pair's measured RTT
    fit = Measurements(data / "skyplane").rtt_fit(ie, sg)
    assert fit.pairs == 13 and fit.scope == "aws-aws"          # 15 pairs minus the two holes
    assert fit.c1 > 0                                           # in this synthetic file throughput rises with RTT
    n = notes[(ie, sg)]
    assert n["throughput"].startswith("estimated from RTT") and n["rtt"] == "measured"
    assert inst.links[inst.link_index[("eu-west", "ap-southeast")]].bandwidth_gbps == \
        pytest.approx(fit.throughput_gbps(n["rtt_ms"]), abs=1e-3)
    assert inst.meta["fill_missing"] == "rtt" and inst.meta["command"].endswith("--fill-missing rtt")
    # a region without coordinates cannot have its RTT estimated: the error names it
    with pytest.raises(InputError, match="no coordinates for azure:mars"):
        estimate_rtt_ms(us, "azure:mars")


def test_paper_measured_bad_arguments(tmp_path):
    with pytest.raises(InputError) as e:
        paper_instance(1, bandwidth_source="satellite", parallel_connections=0, fill_missing="guess")
    assert len(e.value.problems) == 3
    with pytest.raises(InputError, match="only to bandwidth_source='measured'"):
        paper_instance(1, parallel_connections=4)
    with pytest.raises(InputError, match="data file not found: .*skyplane/throughput_2022_11.csv"):
        paper_instance(1, bandwidth_source="measured", data_dir=tmp_path)
    with pytest.raises(InputError, match="data folder not found"):
        paper_instance(1, bandwidth_source="measured", data_dir=tmp_path / "nowhere")


def test_generate_paper_measured_cli(tmp_path, capsys):
    data = _full_paper_data(tmp_path / "d")
    out = tmp_path / "m.json"
    assert main(["generate", "paper", "--seed", "2", "--jobs", "2", "--bandwidth-source", "measured", "--data",
                 str(data), "--parallel-connections", "3", "-o", str(out)]) == 0
    inst = load_instance(out)
    assert inst.name == "paper-6r-2j-seed2-measured" and inst.meta["parallel_connections"] == 3
    assert max(l.bandwidth_gbps for l in inst.links) == pytest.approx((2.1 + 1.4) * 3, abs=1e-3)
    capsys.readouterr()
    # a hole: one error line naming the pair, exit 2, no traceback
    holes = _full_paper_data(tmp_path / "h", drop_tp=[("aws:eu-central-1", "aws:ap-southeast-2")])
    for argv, msg in [(["--data", str(holes)], "aws:eu-central-1 - aws:ap-southeast-2 (throughput)"),
                      (["--parallel-connections", "2"], None)]:
        full = ["generate", "paper", "--seed", "1", "--bandwidth-source", "measured"] + argv
        if msg is None:     # the option is fine with measured; without it, it is an error
            full = ["generate", "paper", "--seed", "1"] + argv
            msg = "--parallel-connections: only with --bandwidth-source measured"
        assert main(full + ["-o", str(tmp_path / "x.json")]) == 2
        err = capsys.readouterr().err
        assert msg in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x.json").exists()


@needs_data
def test_realistic_missing_pairs_named_and_filled():
    from bace_opt.builders.realistic import realistic_instance
    # Skyplane's latency.csv (Apr 2022) predates aws:eu-west-3 and aws:eu-central-2 measurements
    regs = ["aws:us-east-1", "aws:eu-central-1", "aws:eu-west-3", "aws:eu-central-2"]
    with pytest.raises(InputError) as e:
        realistic_instance(DATA, regs, gpus=32, jobs=1, hours=24)
    msg = str(e.value)
    assert "topology is disconnected" in msg and "aws:us-east-1 - aws:eu-west-3 (RTT)" in msg
    assert "aws:eu-west-3 - aws:eu-central-2 (RTT)" in msg and "--fill-missing rtt" in msg
    inst = realistic_instance(DATA, regs, gpus=32, jobs=1, hours=24, fill_missing="rtt", vm_pairs_per_link=1)
    assert len(inst.links) == 6 and inst.meta["fill_missing"] == "rtt"
    est = {tuple(p["pair"]): p for p in inst.meta["estimated_pairs"]}
    assert set(est) == {(a, b) for i, a in enumerate(regs) for b in regs[i + 1:]} - {("aws:us-east-1",
                                                                                     "aws:eu-central-1")}
    assert all(p["rtt"].startswith("estimated") and p["throughput"] == "measured" for p in est.values())


def peak_link_use(inst, sched) -> float:
    """Peak over time and links of reserved Gbit/s / link capacity, from the schedule's hops (a hop reserves
    on every link of its route while the job runs, [start, finish))."""
    events = []
    for e in sched.jobs:
        if e.status != "done":
            continue
        res: dict[int, float] = {}
        for h in e.hops:
            for u, v in zip(h.route, h.route[1:]):
                li = inst.link_index[(u, v)]
                res[li] = res.get(li, 0.0) + h.reserved_gbps
        events += [(e.start_s, 1, res), (e.finish_s, -1, res)]
    load: dict[int, float] = {}
    peak = 0.0
    for _, sign, res in sorted(events, key=lambda x: (x[0], x[1])):
        for li, w in res.items():
            load[li] = load.get(li, 0.0) + sign * w
            peak = max(peak, load[li] / inst.links[li].bandwidth_gbps)
    return peak


def test_peak_link_use_helper():
    from bace_opt.evaluate import make_schedule
    from bace_opt.schedule import Block, Hop, JobPlan
    inst = Instance.from_dict({
        "schema": "bace-opt/instance/v1", "name": "t", "reference_gpu": "G", "gpu_types": {"G": {"tflops": 100, "memory_gb": 80,
                                                                           "power_w": 300}},
        "regions": [{"name": n, "gpu_type": "G", "gpus": 2, "price_usd_per_kwh": 0.1} for n in "ABC"],
        "links": [{"a": "A", "b": "B", "bandwidth_gbps": 4.0, "latency_ms": 1.0},
                  {"a": "B", "b": "C", "bandwidth_gbps": 2.0, "latency_ms": 1.0}],
        "jobs": [{"name": f"j{k}", "arrival_s": 0.0, "stages": 2, "microbatches": 4, "iterations": 10, "stage_time_s": 0.1,
                  "activation_mb": 10.0} for k in range(2)]})
    plans = [JobPlan("j0", "done", 0.0, (Block("A", 1), Block("B", 1)), (Hop(("A", "B"), 1.5),)),
             JobPlan("j1", "done", 0.0, (Block("A", 1), Block("C", 1)), (Hop(("A", "B", "C"), 1.5),))]
    s = make_schedule(inst, plans, "hand")
    assert peak_link_use(inst, s) == pytest.approx(0.75)    # A-B: 3.0 / 4; B-C: 1.5 / 2
    assert peak_link_use(inst, make_schedule(inst, plans[:1], "hand")) == pytest.approx(1.5 / 4)


@needs_data
def test_measured_paper_network_binds():
    """Nominal links (39-91 Gbit/s) are never more than 10 % used; measured (one VM pair, 2.6-4.7 Gbit/s) they
    are: every cross-region policy uses >= 57 % of some link on seed 1, and on the 24-job instance CR-LCF
    (which reserves what is left on a link) reaches >= 90 %.  Every schedule passes the evaluator."""
    from bace_opt.evaluate import evaluate
    from bace_opt.sim import simulate
    peaks = {}
    for fname in ("paper-6r-8j-seed1.json", "paper-6r-8j-seed1-measured.json", "paper-6r-24j-seed1-measured.json"):
        inst = load_instance(INSTANCES / fname)
        for pol in ("bace-pipe", "bace-pipe-no-pathfinder", "cr-lcf", "cr-ldf"):
            s = simulate(inst, pol)
            rep = evaluate(inst, s)
            assert rep.feasible, (fname, pol)
            assert all(e.status == "done" for e in s.jobs), (fname, pol)
            peaks[fname, pol] = peak_link_use(inst, s)
            if rep.metrics.get("peak_link_utilisation") is not None:   # the evaluator's figure, once it has one
                assert rep.metrics["peak_link_utilisation"] == pytest.approx(peaks[fname, pol], abs=1e-9)
    measured = load_instance(INSTANCES / "paper-6r-8j-seed1-measured.json")
    assert 2.5 < min(l.bandwidth_gbps for l in measured.links) < max(l.bandwidth_gbps for l in measured.links) < 5
    assert max(v for (f, _), v in peaks.items() if f == "paper-6r-8j-seed1.json") < 0.1
    assert min(v for (f, _), v in peaks.items() if f == "paper-6r-8j-seed1-measured.json") > 0.57
    assert peaks["paper-6r-24j-seed1-measured.json", "cr-lcf"] >= 0.9


def test_paper_measured_older_throughput_file(tmp_path, capsys):
    """An older release's throughput file (same format, fewer pairs) is chosen by name; its holes are named."""
    data = _full_paper_data(tmp_path)
    sky = data / "skyplane"
    rows = (sky / "throughput_2022_11.csv").read_text().splitlines()
    old = [r for r in rows if "aws:ap-southeast-2" not in r or "aws:eu-west-1" not in r]
    (sky / "throughput_old.csv").write_text("\n".join(old) + "\n")
    argv = ["generate", "paper", "--seed", "1", "--jobs", "2", "--bandwidth-source", "measured", "--data", str(data),
            "--throughput-file", "throughput_old.csv"]
    assert main(argv + ["-o", str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err
    assert "1 region pair(s)" in err and "aws:eu-west-1 - aws:ap-southeast-2 (throughput)" in err
    assert main(argv + ["--fill-missing", "rtt", "-o", str(tmp_path / "b.json")]) == 0
    inst = load_instance(tmp_path / "b.json")
    assert "skyplane/throughput_old.csv" in inst.meta["source"]
    assert inst.meta["command"].endswith("--fill-missing rtt --throughput-file throughput_old.csv")
    est = [n for n in inst.meta["link_measurements"] if n["throughput"] != "measured"]
    assert [n["link"] for n in est] == [["eu-west", "ap-southeast-2"]]


_RUN = st.tuples(st.floats(0.1, 20.0), st.floats(1.0, 300.0))


@settings(max_examples=20, deadline=None)
@given(first=st.lists(st.tuples(st.booleans(), _RUN), min_size=15, max_size=15),
       extra=st.lists(st.tuples(st.sampled_from(_PAIRS_DIRECTED), _RUN), max_size=30),
       conns=st.integers(1, 16), scale=st.sampled_from([0.3, 1.0, 1.5]))
def test_measured_links_are_the_median_of_both_directions(first, extra, conns, scale):
    """Property: for any set of runs covering every pair, link = median over both directions' runs x
    connections x scale, latency = median RTT / 2, and the instance does not depend on the row order."""
    import tempfile
    runs = [((b, a) if rev else (a, b), g, ms) for (a, b), (rev, (g, ms)) in zip(_paper_pairs(), first)]
    runs += [(ab, g, ms) for ab, (g, ms) in extra]
    with tempfile.TemporaryDirectory() as tmp:
        tp = [(a, b, gbps * 1e9) for (a, b), gbps, _ in runs]
        rtt = [(a, b, ms) for (a, b), _, ms in runs]
        inst = paper_instance(1, 1, bandwidth_scale=scale, bandwidth_source="measured",
                              data_dir=_write_skyplane(Path(tmp) / "a", tp, rtt), parallel_connections=conns)
        rev = paper_instance(1, 1, bandwidth_scale=scale, bandwidth_source="measured",
                             data_dir=_write_skyplane(Path(tmp) / "b", tp[::-1], rtt[::-1]),
                             parallel_connections=conns)
    assert [l for l in inst.links] == [l for l in rev.links]
    for a, b in _paper_pairs():
        ra, rb = (next(r.name for r in PAPER_REGIONS if r.aws_region == x) for x in (a, b))
        sel = [(g, ms) for (u, v), g, ms in runs if {u, v} == {a, b}]
        l = inst.links[inst.link_index[(ra, rb)]]
        assert l.bandwidth_gbps == pytest.approx(round(statistics.median(g for g, _ in sel) * conns * scale, 3),
                                                 abs=2e-3)
        assert l.latency_ms == pytest.approx(statistics.median(ms for _, ms in sel) / 2, abs=1e-3)
