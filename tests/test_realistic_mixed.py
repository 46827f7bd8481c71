"""``generate realistic --gpu-types``: a mixed fleet (each region's GPU type a seeded draw), with the datasheet
figures of llm_hw/gpu_specs_curated.csv, reproducible, and exercising P1's speed classes."""
from __future__ import annotations

import pytest

from bace_opt.builders.profiles import load_gpu_specs
from bace_opt.errors import InputError

DATA = None     # the tables shipped with the package (tests/test_data_tables.py: the same numbers as the raw files)
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
    sheets = load_gpu_specs()          # llm_hw/gpu_specs_curated.csv's figures
    for name, sheet in (("A100-80GB", "A100-SXM4-80GB"), ("H100-80GB", "H100-SXM5-80GB")):
        g, s = a.gpu_types[name], sheets[sheet]
        assert (g.tflops, g.memory_gb, g.power_w) == (s.tflops, s.memory_gb, s.power_w)
    assert sorted(set(a.speed.values())) == pytest.approx([1.0, 989.0 / 312.0])


def test_mixed_fleet_bad_input_names_the_field():
    with pytest.raises(InputError, match="gpu_mix"):
        build(seed=1, gpu_mix=("A100-80GB",))
    with pytest.raises(InputError, match="unknown GPU"):
        build(seed=1, gpu_mix=("A100-80GB", "B300"))


def test_cli_gpu_types(tmp_path):
    from bace_opt.cli.main import main
    out = tmp_path / "i.json"
    assert main(["generate", "realistic", "--regions", ",".join(REGIONS), "--jobs", "2",
                 "--gpu-types", "A100-80GB,H100-80GB", "-o", str(out)]) == 0
    assert '"H100-80GB"' in out.read_text()
