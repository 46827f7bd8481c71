"""``generate realistic --gpu-types``: a mixed fleet (each region's GPU type a seeded draw), with the datasheet
figures of llm_hw/gpu_specs_curated.csv, reproducible, and exercising P1's speed classes."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

from bace_opt.errors import InputError

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
pytestmark = pytest.mark.skipif(not (DATA / "skyplane").is_dir(), reason="../shared/data not present")
REGIONS = ("aws:us-east-1", "aws:us-west-1", "aws:eu-central-1", "aws:ap-northeast-1")


def build(**kw):
    from bace_opt.builders.realistic import realistic_instance
    return realistic_instance(DATA, REGIONS, jobs=3, **kw)


def test_mixed_fleet_is_seeded_mixed_and_matches_the_datasheets():
    a = build(seed=3, gpu_mix=("A100-80GB", "H100-80GB"))
    assert a.to_json() == build(seed=3, gpu_mix="A100-80GB,H100-80GB").to_json()
    types = {r.gpu_type for r in a.regions}
    assert types == {"A100-80GB", "H100-80GB"}
    assert a.reference_gpu == "A100-80GB" and "gpu_mix_rule" in a.meta and a.name.endswith("-mixed-seed3")
    with (DATA / "llm_hw" / "gpu_specs_curated.csv").open(newline="") as fh:
        rows = {r["gpu"]: r for r in csv.DictReader(fh)}
    for name, sheet in (("A100-80GB", "A100-SXM4-80GB"), ("H100-80GB", "H100-SXM5-80GB")):
        g = a.gpu_types[name]
        assert g.tflops == float(rows[sheet]["bf16_fp16_dense_TFLOPS"])
        assert g.memory_gb == float(rows[sheet]["memory_GB"]) and g.power_w == float(rows[sheet]["tdp_W"])
    assert sorted(set(a.speed.values())) == pytest.approx([1.0, 989.0 / 312.0])


def test_mixed_fleet_bad_input_names_the_field():
    with pytest.raises(InputError, match="gpu_mix"):
        build(seed=1, gpu_mix=("A100-80GB",))
    with pytest.raises(InputError, match="unknown GPU"):
        build(seed=1, gpu_mix=("A100-80GB", "B300"))


def test_cli_gpu_types(tmp_path):
    from bace_opt.cli.main import main
    out = tmp_path / "i.json"
    assert main(["generate", "realistic", "--data", str(DATA), "--regions", ",".join(REGIONS), "--jobs", "2",
                 "--gpu-types", "A100-80GB,H100-80GB", "-o", str(out)]) == 0
    assert '"H100-80GB"' in out.read_text()
