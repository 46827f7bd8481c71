"""Loading validates everything and reports every problem at once, each with its place."""
import json

import pytest

import bace_opt as bo
from bace_opt.errors import InputError


def base():
    return {
        "schema": "bace-opt/instance/v1", "name": "v",
        "gpu_types": {"A6000": {"tflops": 154.8, "memory_gb": 48, "power_w": 300}},
        "reference_gpu": "A6000",
        "regions": [{"name": "a", "gpu_type": "A6000", "gpus": 8, "price_usd_per_kwh": 0.2},
                    {"name": "b", "gpu_type": "A6000", "gpus": 8, "price_usd_per_kwh": 0.25, "pue": 1.2,
                     "price_series": {"start_s": 0, "step_s": 3600, "usd_per_kwh": [0.2, 0.3]}},
                    {"name": "c", "gpu_type": "A6000", "gpus": 0, "price_usd_per_kwh": 0.1}],
        "links": [{"a": "a", "b": "b", "bandwidth_gbps": 40.0, "latency_ms": 35.0},
                  {"a": "b", "b": "c", "bandwidth_gbps": 10.0, "latency_ms": 5.0, "egress_usd_per_gb": 0.02}],
        "jobs": [{"name": "j1", "arrival_s": 0, "stages": 4, "microbatches": 8, "iterations": 10,
                  "stage_time_s": 0.4, "activation_mb": 30.0, "model": "Llama-3.1-70B"}],
    }


def problems(d):
    with pytest.raises(InputError) as e:
        bo.Instance.from_dict(d)
    return e.value.problems


def test_valid_round_trip(tmp_path):
    inst = bo.Instance.from_dict(base())
    assert inst.region("b").price_series.usd_per_kwh == (0.2, 0.3)
    assert inst.jobs[0].gpus_per_stage == 1 and inst.objective.egress is False
    p = tmp_path / "i.json"
    inst.save(p)
    again = bo.load_instance(p)
    assert again == inst
    assert again.to_json() == inst.to_json()


def test_every_problem_reported_with_its_place():
    d = base()
    d["links"][0]["bandwidth_gbps"] = -5
    d["jobs"][0]["stage_time_s"] = 0
    d["regions"][0]["colour"] = "red"
    d["links"][1]["b"] = "nowhere"
    d["jobs"][0]["stages"] = "four"
    d["regions"][1]["price_series"]["usd_per_kwh"][1] = None
    got = problems(d)
    assert "links[0].bandwidth_gbps: must be > 0, got -5" in got
    assert "jobs[0].stage_time_s: must be > 0, got 0" in got
    assert any(p.startswith("regions[0].colour: unknown field") for p in got)
    assert "links[1].b: unknown region 'nowhere'" in got
    assert "jobs[0].stages: must be an integer, got \"four\"" in got
    assert "regions[1].price_series.usd_per_kwh[1]: must be a number, got null" in got
    assert len(got) == 6


@pytest.mark.parametrize("mutate, expect", [
    (lambda d: d["regions"].append(dict(d["regions"][0])), "regions[3].name: duplicate region name 'a'"),
    (lambda d: d["jobs"].append(dict(d["jobs"][0])), "jobs[1].name: duplicate job name 'j1'"),
    (lambda d: d["links"].append({"a": "a", "b": "a", "bandwidth_gbps": 1, "latency_ms": 1}),
     "links[2]: self-loop: both ends are 'a'"),
    (lambda d: d["links"].append({"a": "b", "b": "a", "bandwidth_gbps": 1, "latency_ms": 1}),
     "links[2]: duplicate link 'b'-'a' (also links[0]); at most one per pair"),
    (lambda d: d["links"].pop(1), "links: topology is disconnected: region(s) c cannot reach a, b"),
    (lambda d: d["jobs"][0].update(stages=17), "jobs[0]: job 'j1' needs 17 GPUs (17 stages x 1), more than "
                                               "the whole instance has (16)"),
    (lambda d: d["jobs"][0].update(gpus_per_stage=3, stages=5),
     "jobs[0]: job 'j1' needs 5 stages of 3 GPUs in one region each; the regions hold only 4 such stages"),
    (lambda d: d["jobs"][0].update(gpus_per_stage=9, stages=1),
     "jobs[0].gpus_per_stage: 9 GPUs per stage, but no region has that many (largest: 8)"),
    (lambda d: d["regions"][0].update(gpu_type="H100"), "regions[0].gpu_type: unknown GPU type 'H100' (known: A6000)"),
    (lambda d: d.update(reference_gpu="X"), "reference_gpu: unknown GPU type 'X' (known: A6000)"),
    (lambda d: d.update(schema="other"), "schema: must be 'bace-opt/instance/v1', got 'other'"),
    (lambda d: d["jobs"][0].update(arrival_s=True), "jobs[0].arrival_s: must be a number, got true"),
    (lambda d: d["jobs"][0].update(iterations=2.0), "jobs[0].iterations: must be an integer (write 2, not 2.0)"),
    (lambda d: d["regions"][0].update(pue=0.9), "regions[0].pue: must be >= 1, got 0.9"),
    (lambda d: d["jobs"][0].update(memory_gb=80), "jobs[0].memory_gb: needs 80 GB per GPU; no region's GPU type "
                                                  "has that much"),
    (lambda d: d.update(objective={"egress": True, "carbon": 1}), "objective.carbon: unknown field (allowed: egress)"),
    (lambda d: d.pop("jobs"), "jobs: is required"),
])
def test_single_faults(mutate, expect):
    d = base()
    mutate(d)
    got = problems(d)
    assert expect in got, got


def test_top_level_not_an_object():
    assert problems([1, 2]) == ["must be an object, got [1, 2]"]


def test_malformed_json_file(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(base())[:120])
    with pytest.raises(InputError) as e:
        bo.load_instance(p)
    assert "not valid JSON" in str(e.value) and "\n" not in str(e.value)


def test_routes_k_shortest_with_latency_and_bottleneck():
    d = base()
    d["links"].append({"a": "a", "b": "c", "bandwidth_gbps": 100.0, "latency_ms": 1.0})
    inst = bo.Instance.from_dict(d)
    rs = inst.routes("a", "b", k=4)
    assert [r.regions for r in rs] == [("a", "c", "b"), ("a", "b")]
    assert rs[0].latency_ms == 6.0 and rs[0].bottleneck_gbps == 10.0
    assert rs[1].latency_ms == 35.0 and rs[1].bottleneck_gbps == 40.0
    assert inst.routes("a", "b", k=1) == rs[:1]
    assert inst.compute_regions == ("a", "b")
    assert inst.eligible_regions(inst.jobs[0]) == ("a", "b")
