"""The data the project ships and reads (issue 28 item 3, issue 29 item 2, issue 27 item 4's builder part).

- the tables shipped as package data equal what ``python -m bace_opt.data.derive`` derives from the raw folder
  (when ../shared/data is present), and the builders give byte-identical instances from either;
- a copy of the package in a folder with nothing beside it runs every default (measured paper links, realistic
  default regions and fleet20, hourly prices, GPU and model tables, NSFNET);
- every raw-data reader is strict: a cut file, missing hours, a non-number are refused with file:line[:column]
  (prices: unless --fill-prices previous-hour, which lists every filled hour in meta); a damaged shipped table
  is refused too;
- every region of the data has coordinates; the fleet20 preset.
"""
from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from bace_opt.builders.paper import paper_instance
from bace_opt.builders.realistic import FLEET20, realistic_instance
from bace_opt.cli.main import main
from bace_opt.data import derive, tables
from bace_opt.data.csvfile import CsvFile
from bace_opt.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
needs_raw = pytest.mark.skipif(not (DATA / "skyplane").is_dir(), reason="../shared/data (the raw data) not present")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("BACE_OPT_DATA", raising=False)


# ---------------------------------------------------------------------- shipped tables = derived from raw

@needs_raw
def test_shipped_tables_are_what_derive_gives_from_the_raw_folder(tmp_path):
    texts = derive.derive(DATA)
    assert set(texts) == set(derive.DERIVED)
    for name, text in texts.items():
        assert tables.path(name).read_bytes() == text.encode(), f"{name}: run python -m bace_opt.data.derive"
    assert derive.uncovered_regions(DATA) == []
    # the script itself: writes atomically into --out, and --check agrees
    assert derive.main(["--data", str(DATA), "--out", str(tmp_path)]) == 0
    assert derive.main(["--data", str(DATA), "--out", str(tmp_path), "--check"]) == 0
    (tmp_path / tables.PAIRS).write_text("a,b\n")
    assert derive.main(["--data", str(DATA), "--out", str(tmp_path), "--check"]) == 1


@needs_raw
@pytest.mark.parametrize("argv", [
    ["paper", "--seed", "1", "--bandwidth-source", "measured"],
    ["paper", "--seed", "2", "--jobs", "3", "--bandwidth-source", "measured", "--aggregate", "mean"],
    ["realistic"],
    ["realistic", "--seed", "2", "--jobs", "2", "--aggregate", "min", "--hours", "30"],
    ["realistic", "--seed", "1", "--jobs", "2", "--fill-missing", "rtt", "--regions",
     "aws:us-east-1,aws:eu-west-3,gcp:us-west2,azure:southeastasia,aws:ap-southeast-4"],
], ids=["paper-measured", "paper-mean", "realistic-default", "realistic-min", "realistic-fill"])
def test_generate_from_shipped_tables_and_from_raw_is_byte_identical(tmp_path, argv):
    a, b = tmp_path / "shipped.json", tmp_path / "raw.json"
    assert main(["generate", *argv, "-o", str(a)]) == 0
    assert main(["generate", *argv, "--data", str(DATA), "-o", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()


@needs_raw
def test_gpu_and_model_tables_equal_the_raw_llm_hw():
    from bace_opt.builders.profiles import load_gpu_specs, load_model_specs
    assert load_gpu_specs() == load_gpu_specs(DATA) and load_model_specs() == load_model_specs(DATA)


def test_shipped_tables_hold_what_the_defaults_need():
    from bace_opt.builders.profiles import GPUS, load_gpu_specs, load_model_specs
    gpus, models = load_gpu_specs(), load_model_specs()
    assert gpus["A100-SXM4-80GB"].tflops == GPUS["A100-80GB"].tflops and gpus["A100-SXM4-80GB"].power_w == 400
    assert len(models) > 20 and all(m.layers >= 1 and m.params_b > 0 for m in models.values())
    tp, rtt = tables.pair_stats()
    assert len(tp) > 2000 and len(rtt) > 2000
    s = tp[frozenset(("aws:us-east-1", "aws:eu-west-1"))]
    assert s.n >= 1 and s.min <= s.median <= s.max and 1e9 < s.median < 2e10
    coords = tables.coords()
    regions = {r for k in (*tp, *rtt) for r in k} | set(tables.zone_map()) | {s for s, _ in tables.egress()}
    assert regions <= set(coords), sorted(regions - set(coords))


# ---------------------------------------------------------------------- a fresh clone: nothing beside it

def test_a_copy_with_nothing_beside_it_runs_every_default(tmp_path):
    """The package and instances copied into an empty folder (no ../shared), run as a user would."""
    repo = tmp_path / "clone"
    shutil.copytree(ROOT / "bace_opt", repo / "bace_opt", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "instances", repo / "instances")
    assert not (tmp_path / "shared").exists()
    env = {k: v for k, v in os.environ.items() if k != "BACE_OPT_DATA"}
    env.update(PYTHONPATH=str(repo), PYTHONWARNINGS="ignore")

    def run(*args):
        return subprocess.run([sys.executable, "-m", "bace_opt", *args], cwd=repo, env=env, capture_output=True,
                              text=True, timeout=600)

    cases = {"paper-6r-8j-seed1-measured.json": ["paper", "--seed", "1", "--bandwidth-source", "measured"],
             "realistic-6r-8j-seed1.json": ["realistic", "--seed", "1"],
             "realistic-20r-50j-seed3.json": ["realistic", "--seed", "3", "--regions", "fleet20", "--jobs", "50",
                                              "--gpu-types", "A100-80GB,H100-80GB", "--fill-missing", "rtt",
                                              "--name", "realistic-20r-50j-seed3"]}
    for fname, argv in cases.items():
        r = run("generate", *argv, "-o", str(tmp_path / fname))
        assert r.returncode == 0, r.stderr
        assert (tmp_path / fname).read_bytes() == (ROOT / "instances" / fname).read_bytes(), fname
    r = run("optical", "simulate", "--topology", "nsfnet", "--slots", "20", "--k", "2", "--load", "20",
            "--requests", "300")
    assert r.returncode == 0 and "14 nodes, 22 links" in r.stdout + r.stderr, r.stderr
    code = ("from bace_opt.builders.profiles import load_gpu_specs, load_model_specs; import bace_opt.data.tables as t; "
            "print(len(load_gpu_specs()), len(load_model_specs()), t.TABLES_DIR)")
    r = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and str(repo) in r.stdout, r.stderr
    # what the shipped tables do not hold is refused with a clear message naming --data
    r = run("generate", "realistic", "--price-day", "2023-03-01", "-o", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "--data" in r.stderr and "Traceback" not in r.stderr
    r = run("generate", "realistic", "--data", str(tmp_path / "nowhere"), "-o", str(tmp_path / "x.json"))
    assert r.returncode == 2 and "data folder not found" in r.stderr


def test_setup_cfg_ships_the_tables():
    text = (ROOT / "setup.cfg").read_text()
    assert "[options.package_data]" in text and "tables/*.csv" in text and "tables/*.txt" in text
    for name in (*derive.DERIVED, tables.COORDS, "SOURCES.md"):
        assert tables.path(name).is_file(), name


# ---------------------------------------------------------------------- strict raw readers

REGS = ("aws:us-east-1", "aws:us-west-1", "aws:eu-central-1")
ZONES = {"aws:us-east-1": "US-MIDA-PJM", "aws:us-west-1": "US-CAL-CISO", "aws:eu-central-1": "DE-LU"}
TP_HEAD = ("src_region,src_tier,src_instance_class,dst_region,dst_tier,dst_instance_class,iperf3_connections,"
           "iperf3_runtime,throughput_sent,throughput_recieved,cpu_utilization,success")
RTT_HEAD = "src_region,src_tier,src_instance_class,dst_region,dst_tier,dst_instance_class,min_rtt,avg_rtt,max_rtt,mdev_rtt"


def mini_data(folder: Path, hours: int = 48) -> Path:
    """A small raw data folder in the real formats: 3 AWS regions, both directions of each pair, 48 h prices."""
    (folder / "skyplane").mkdir(parents=True)
    (folder / "green_dcc").mkdir()
    tp, rtt, eg = [TP_HEAD], [RTT_HEAD], ["src,dest,src_tier,dest_tier,cost"]
    for i, a in enumerate(REGS):
        for j, b in enumerate(REGS):
            if a != b:
                tp.append(f"{a},PREMIUM,m5.8xlarge,{b},PREMIUM,m5.8xlarge,64,5,5e9,{(3 + i + j) * 1e9},7.5,True")
                rtt.append(f"{a},PREMIUM,m5.large,{b},PREMIUM,m5.large,50,{60 + 10 * (i + j)},70,0.2")
            eg.append(f"{a},{b},PREMIUM,PREMIUM,{0.0 if a == b else 0.02}")
    (folder / "skyplane" / "throughput_2022_11.csv").write_text("\n".join(tp) + "\n")
    (folder / "skyplane" / "latency.csv").write_text("\n".join(rtt) + "\n")
    (folder / "skyplane" / "egress_cost.csv").write_text("\n".join(eg) + "\n")
    zm = ["cloud_region,city_or_state,grid_zone"] + [f"{r},x,{z}" for r, z in ZONES.items()]
    (folder / "green_dcc" / "cloud_region_to_grid_zone_curated.csv").write_text("\n".join(zm) + "\n")
    t0 = datetime(2023, 7, 1)
    pr = ["datetime_utc," + ",".join(ZONES.values())]
    for h in range(hours):
        pr.append(f"{t0 + timedelta(hours=h):%Y-%m-%d %H:%M:%S}+00:00,{50 + h},{80 - h},{h % 7 * 10 - 20}")
    (folder / "green_dcc" / "electricity_price_usd_mwh_hourly_2023_wide.csv").write_text("\n".join(pr) + "\n")
    return folder


def gen(data: Path, out: Path, *extra: str) -> list[str]:
    return ["generate", "realistic", "--data", str(data), "--regions", ",".join(REGS), "--jobs", "2", "--gpus", "64",
            "--hours", "48", *extra, "-o", str(out)]


def test_mini_data_builds(tmp_path):
    d = mini_data(tmp_path / "d")
    assert main(gen(d, tmp_path / "i.json")) == 0
    inst = json.loads((tmp_path / "i.json").read_text())
    assert len(inst["links"]) == 3 and "estimated_prices" not in inst["meta"]


def test_throughput_file_cut_in_the_middle_is_refused_with_file_and_line(tmp_path, capsys):
    d = mini_data(tmp_path / "d")
    p = d / "skyplane" / "throughput_2022_11.csv"
    text = p.read_text()
    p.write_text(text[: text.rindex(",5e9,") + 3])                 # the last line ends inside a field
    nlines = len(p.read_text().splitlines())
    with pytest.raises(InputError, match=rf"throughput_2022_11.csv:{nlines}: .*incomplete"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    p.write_text(text[: text.rindex(",5e9,") + 3] + "\n")          # ... or with a line end: fields missing
    with pytest.raises(InputError, match=rf"throughput_2022_11.csv:{nlines}: 9 field\(s\), the header has 12"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    assert main(gen(d, tmp_path / "i.json")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"throughput_2022_11.csv:{nlines}:" in err[0] and not (tmp_path / "i.json").exists()


def test_rtt_and_egress_non_numbers_name_file_line_column(tmp_path):
    d = mini_data(tmp_path / "d")
    p = d / "skyplane" / "latency.csv"
    lines = p.read_text().splitlines()
    lines[3] = lines[3].replace(",70,", ",70,").replace(f",{lines[3].split(',')[7]},", ",n/a,", 1)
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"latency.csv:4:8: column 'avg_rtt': not a number: 'n/a'"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    d2 = mini_data(tmp_path / "d2")
    p = d2 / "skyplane" / "egress_cost.csv"
    p.write_text(p.read_text().replace("0.02\n", "0.02x\n", 1))
    with pytest.raises(InputError, match=r"egress_cost.csv:\d+:5: column 'cost': not a number: '0.02x'"):
        realistic_instance(d2, REGS, jobs=1, hours=48)


def test_price_file_missing_30_hours_is_refused_or_filled_with_every_hour_listed(tmp_path, capsys, caplog):
    d = mini_data(tmp_path / "d")
    p = d / "green_dcc" / "electricity_price_usd_mwh_hourly_2023_wide.csv"
    lines = p.read_text().splitlines()
    p.write_text("\n".join(lines[:11] + lines[41:]) + "\n")          # hours 10..39 gone
    with pytest.raises(InputError, match=r"wide.csv:12: 30 hour\(s\) missing before this row "
                                         r"\(2023-07-01 10:00 .. 2023-07-02 15:00 UTC\)"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    assert main(gen(d, tmp_path / "i.json")) == 2
    assert "--fill-prices previous-hour" in capsys.readouterr().err
    assert main(gen(d, tmp_path / "f.json", "--fill-prices", "previous-hour")) == 0
    warned = [r.getMessage() for r in caplog.records if "hourly price(s) missing" in r.getMessage()]
    assert len(warned) == 1 and warned[0].startswith("90 hourly price(s) missing")
    meta = json.loads((tmp_path / "f.json").read_text())["meta"]
    est = meta["estimated_prices"]
    assert meta["fill_prices"] == "previous-hour" and len(est) == 3 * 30
    assert {(e["zone"], e["hour"]) for e in est} == {(z, h) for z in ZONES.values() for h in range(10, 40)}
    pjm = next(e for e in est if e["zone"] == "US-MIDA-PJM" and e["hour"] == 25)
    assert pjm["usd_per_kwh"] == round((50 + 9) / 1000 + 0.10, 5) and pjm["rule"] == "previous hour's price"
    assert pjm["utc"] == "2023-07-02 01:00 UTC"


def test_price_non_number_and_empty_cells(tmp_path, capsys):
    d = mini_data(tmp_path / "d")
    p = d / "green_dcc" / "electricity_price_usd_mwh_hourly_2023_wide.csv"
    lines = p.read_text().splitlines()
    cells = lines[5].split(",")
    lines[5] = ",".join([cells[0], cells[1], "n/a", cells[3]])
    p.write_text("\n".join(lines) + "\n")
    assert main(gen(d, tmp_path / "i.json")) == 2
    err = capsys.readouterr().err
    assert "wide.csv:6:3: column 'US-CAL-CISO': not a number: 'n/a'" in err and "internal error" not in err
    lines[5] = ",".join([cells[0], cells[1], "", cells[3]])
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"wide.csv:6:3: column 'US-CAL-CISO': empty \(no price at 2023-07-01 04:00"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    inst = realistic_instance(d, REGS, jobs=1, hours=48, fill_prices="previous-hour")
    assert inst.meta["estimated_prices"] == [{"zone": "US-CAL-CISO", "hour": 4, "utc": "2023-07-01 04:00 UTC",
                                              "usd_per_kwh": round(77 / 1000 + 0.1, 5),
                                              "rule": "previous hour's price"}]
    with pytest.raises(InputError, match="fill_prices must be one of"):
        realistic_instance(d, REGS, jobs=1, hours=48, fill_prices="guess")


def test_price_rows_out_of_order_and_bad_times(tmp_path):
    d = mini_data(tmp_path / "d")
    p = d / "green_dcc" / "electricity_price_usd_mwh_hourly_2023_wide.csv"
    lines = p.read_text().splitlines()
    p.write_text("\n".join([lines[0], lines[2], lines[1], *lines[3:]]) + "\n")
    with pytest.raises(InputError, match=r"wide.csv:3:1: column 'datetime_utc': .* is not after the previous row"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    p.write_text("\n".join([lines[0], lines[1].replace("00:00:00", "00:30:00"), *lines[2:]]) + "\n")
    with pytest.raises(InputError, match=r"wide.csv:2:1: column 'datetime_utc': not on the hour"):
        realistic_instance(d, REGS, jobs=1, hours=48)


def test_zone_map_and_link_list_are_strict(tmp_path):
    d = mini_data(tmp_path / "d")
    p = d / "green_dcc" / "cloud_region_to_grid_zone_curated.csv"
    p.write_text("cloud_region,city_or_state\naws:us-east-1,x\n")
    with pytest.raises(InputError, match=r"curated.csv:1: no column\(s\) 'grid_zone'"):
        realistic_instance(d, REGS, jobs=1, hours=48)
    from bace_opt.data.topologies import read_link_list
    ll = tmp_path / "n.txt"
    ll.write_text("# c\n3\n2\n1 2 100\n2 3 x\n")
    with pytest.raises(InputError, match=r"n.txt:5:3: length_km: not a number"):
        read_link_list(ll)
    ll.write_text("# c\n3\n3\n1 2 100\n2 3 50\n")
    with pytest.raises(InputError, match=r"n.txt:5: 2 link line\(s\), the file says 3"):
        read_link_list(ll)


def test_a_damaged_shipped_table_is_an_error_not_a_default(tmp_path, monkeypatch):
    shutil.copytree(tables.TABLES_DIR, tmp_path / "t")
    p = tmp_path / "t" / tables.PAIRS
    lines = p.read_text().splitlines()
    lines[5] = lines[5].rsplit(",", 3)[0]
    p.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(tables, "TABLES_DIR", tmp_path / "t")
    tables.pair_stats.cache_clear()
    try:
        with pytest.raises(InputError, match=r"skyplane_pairs.csv:6: 9 field\(s\), the header has 12 .*damaged"):
            paper_instance(1, bandwidth_source="measured")
    finally:
        tables.pair_stats.cache_clear()
    q = tmp_path / "t" / tables.COORDS
    q.write_text(q.read_text().replace("aws:us-east-2,Ohio (Columbus),39.96,-83.0", "aws:us-east-2,Ohio,north,-83"))
    tables.coords.cache_clear()
    try:
        with pytest.raises(InputError, match=r"region_coords.csv:\d+:3: column 'lat': not a number: 'north'.*damaged"):
            tables.coords()
    finally:
        tables.coords.cache_clear()


def test_csvfile_rejects_duplicate_columns(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b,a\n1,2,3\n")
    with pytest.raises(InputError, match="x.csv:1: column\\(s\\) 'a' appear twice"):
        CsvFile(p, ("a",))


# ---------------------------------------------------------------------- regions: coordinates, fleet20

def test_fleet20_regions_have_prices_and_three_clouds():
    zm = tables.zone_map()
    assert len(FLEET20) == len(set(FLEET20)) == 20 and all(r in zm for r in FLEET20)
    clouds = [r.split(":")[0] for r in FLEET20]
    assert min(clouds.count(c) for c in ("aws", "gcp", "azure")) >= 6
    inst = realistic_instance(None, "fleet20", jobs=2, gpu_mix=("A100-80GB", "H100-80GB"), fill_missing="rtt")
    assert len(inst.regions) == 20 and len(inst.links) == 190 and inst.meta["estimated_pairs"] == []
    assert {r.gpu_type for r in inst.regions} == {"A100-80GB", "H100-80GB"}
    assert all(r.price_series is not None for r in inst.regions)
    with pytest.raises(InputError, match="unknown preset 'fleet99'"):
        realistic_instance(None, "fleet99")


def test_regions_without_measurements_are_estimated_from_coordinates_and_named_in_meta():
    """The issue's failure: gcp:us-east4 and aws:ap-southeast-4 had no coordinates."""
    regs = ["aws:us-east-1", "gcp:us-east4", "gcp:us-west2", "aws:ap-southeast-4", "azure:southeastasia"]
    with pytest.raises(InputError, match="pass --fill-missing rtt"):
        realistic_instance(None, regs, jobs=1, hours=24)
    inst = realistic_instance(None, regs, jobs=1, hours=24, fill_missing="rtt")
    est = inst.meta["estimated_pairs"]
    named = {tuple(e["pair"]) for e in est}
    assert ("aws:us-east-1", "gcp:us-west2") in named and ("gcp:us-east4", "aws:ap-southeast-4") in named
    assert all(e["rtt"] == "measured" or e["rtt"].startswith("estimated: great-circle") for e in est)
    assert all(e["throughput"] == "measured" or e["throughput"].startswith("estimated from RTT") for e in est)
    assert len(inst.links) == 10


@pytest.mark.parametrize("damage, where", [
    (lambda b: b[: len(b) // 2], r"wide.csv:\d+: the last line is incomplete"),              # cut mid-line
    (lambda b: b[:120] + b"\xff" + b[120:], r"wide.csv:\d+:\d+: not UTF-8 \(byte 0xff\)"),     # a torn byte
    (lambda b: b"", r"wide.csv: empty \(no header line\)"),
])
def test_a_damaged_price_file_is_refused_with_file_and_line(tmp_path, capsys, damage, where):
    d = mini_data(tmp_path / "d")
    p = d / "green_dcc" / "electricity_price_usd_mwh_hourly_2023_wide.csv"
    p.write_bytes(damage(p.read_bytes()))
    assert main(gen(d, tmp_path / "i.json")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(where, err[0]) and "internal error" not in err[0], err
    assert not (tmp_path / "i.json").exists()
