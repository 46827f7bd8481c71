"""Regenerate the shipped tables (``bace_opt/data/tables``) from a raw data folder.

    python -m bace_opt.data.derive --data ../shared/data            # rewrite the tables (atomically)
    python -m bace_opt.data.derive --data ../shared/data --check    # exit 1 if a shipped table differs
    python -m bace_opt.data.derive --data DIR --out OTHER_DIR        # write elsewhere

Each table is exactly what the builders compute from the raw files (module ``tables`` lists them; numbers are
written with Python's shortest round-trip repr, so reading them back gives the same floats).  Every table
starts with ``#`` lines naming its source files and licence (SOURCES.md in the same folder has the full
attribution).  ``region_coords.csv`` is written by hand, not derived; ``--check`` verifies that it covers every
region of the Skyplane files and of the grid-zone map.
"""
from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path

from ..errors import InputError
from ..files import atomic_write, csv_text as _csv_text
from . import raw, tables
from .csvfile import CsvFile
from .topologies import read_link_list

SKYPLANE = "Skyplane (github.com/skyplane-project/skyplane @4602d9c history), Apache-2.0"
GREEN_DCC = ("green-dcc (github.com/HewlettPackard/green-dcc @3f6ea95), MIT; prices from ENTSO-E, OMIE, AEMO, IESO, "
             "CAISO, PJM, NYISO, ERCOT, JEPX, KPX, EMC, ONS, CDEC-SIC, POSOCO, Eskom")
CURATED = "cloud_region_to_grid_zone_curated.csv of the project's data folder (public region cities)"
LLM_HW = "llm-analysis (github.com/cli99/llm-analysis @d841e40), Apache-2.0; curated datasheet/paper figures"
NSFNET_SRC = ("carlosnatalino/optical-rl-gym examples/topologies/nsfnet_chen.txt (DeepRMSA NSFNET, Chen et al. "
              "JLT 2019), MIT, Copyright (c) 2020 Carlos Natalino")


def csv_text(fieldnames, rows) -> str:
    return _csv_text(fieldnames, rows, lineterminator="\n")


def _head(source: str, files: str) -> str:
    return (f"# Derived by python -m bace_opt.data.derive from {files}.\n"
            f"# Source and licence: {source}. Full attribution: SOURCES.md beside this file.\n")


def _num(x) -> str:
    return "" if x is None else repr(float(x))


def _pairs(d: Path) -> str:
    tp = raw.skyplane_stats(d / "skyplane" / tables.THROUGHPUT_FILE, "throughput_recieved")
    rtt = raw.skyplane_stats(d / "skyplane" / "latency.csv", "avg_rtt")
    rows = []
    for a, b in sorted(tuple(sorted(k)) for k in set(tp) | set(rtt)):
        row = [a, b]
        for m in (tp, rtt):
            s = m.get(frozenset((a, b)))
            row += [str(s.n), *map(_num, s[1:])] if s else ["0", "", "", "", ""]
        rows.append(row)
    return _head(SKYPLANE, f"skyplane/{tables.THROUGHPUT_FILE} (throughput_recieved, bit/s) and "
                           "skyplane/latency.csv (avg_rtt, ms): usable rows (success, PREMIUM tiers, value > 0) of "
                           "both directions per pair") + csv_text(tables.PAIR_COLUMNS, rows)


def _egress(d: Path) -> str:
    eg = raw.egress(d / "skyplane" / "egress_cost.csv")
    src = sorted({s for s, _ in eg})
    dst = sorted({t for _, t in eg})
    rows = [[s, *(_num(eg.get((s, t))) for t in dst)] for s in src]
    return _head(SKYPLANE, "skyplane/egress_cost.csv (cost, USD/GB; rows: source region, columns: destination)") + \
        csv_text(["src", *dst], rows)


def _zones(d: Path) -> str:
    zm = raw.zone_map(d / "green_dcc" / "cloud_region_to_grid_zone_curated.csv")
    return _head(CURATED, "green_dcc/cloud_region_to_grid_zone_curated.csv (GCP zone suffix dropped)") + \
        csv_text(["cloud_region", "grid_zone"], [[r, z] for r, z in zm.items()])


def _prices(d: Path) -> str:
    p = d / "green_dcc" / "electricity_price_usd_mwh_hourly_2023_wide.csv"
    zones = [h for h in CsvFile(p, ("datetime_utc",)).header if h != "datetime_utc"]
    start = raw.parse_day(tables.PRICE_DAY)
    w = raw.hourly_prices(p, zones, start, tables.PRICE_HOURS)
    if w.holes:
        raise InputError(w.holes)
    rows = [[(start + timedelta(hours=h)).strftime(raw.TIME_FORMAT), *(_num(w.values[z][h]) for z in zones)]
            for h in range(tables.PRICE_HOURS)]
    return _head(GREEN_DCC, f"green_dcc/{p.name} (USD/MWh, UTC), the {tables.PRICE_HOURS} h from "
                            f"{tables.PRICE_DAY} 00:00 UTC") + csv_text(["datetime_utc", *zones], rows)


def _gpus(d: Path) -> str:
    g = raw.llm_gpus(d / "llm_hw")
    return _head(LLM_HW, "llm_hw/llm_analysis_gpu_configs/*.json and llm_hw/gpu_specs_curated.csv") + csv_text(
        ["name", "tflops", "memory_gb", "power_w", "source"], [[n, _num(t), _num(m), _num(w), s]
                                                                for n, (t, m, w, s) in g.items()])


def _models(d: Path) -> str:
    m = raw.llm_models(d / "llm_hw")
    return _head(LLM_HW, "llm_hw/llm_model_configs_curated.csv and llm_hw/llm_analysis_model_configs/*.json") + \
        csv_text(["name", "params_b", "layers", "hidden", "source"],
                 [[n, _num(p), str(L), str(h), s] for n, (p, L, h, s) in m.items()])


def _nsfnet(d: Path) -> str:
    g = read_link_list(d / "topologies" / "nsfnet" / "nsfnet_chen.txt")
    edges = sorted((min(u, v), max(u, v), a["length_km"]) for u, v, a in g.edges(data=True))
    lines = [f"# NSFNET, DeepRMSA variant (14 nodes, 22 links). Derived by python -m bace_opt.data.derive from "
             "topologies/nsfnet/nsfnet_chen.txt.", f"# Source and licence: {NSFNET_SRC}. See SOURCES.md.",
             str(g.number_of_nodes()), str(len(edges)), *(f"{u} {v} {km:g}" for u, v, km in edges)]
    return "\n".join(lines) + "\n"


DERIVED = {tables.PAIRS: _pairs, tables.EGRESS: _egress, tables.ZONES: _zones, tables.PRICES: _prices,
           tables.GPUS: _gpus, tables.MODELS: _models, tables.NSFNET: _nsfnet}


def derive(data_dir) -> dict[str, str]:
    """table file name -> its text, from the raw data folder."""
    d = Path(data_dir)
    if not d.is_dir():
        raise InputError(f"data folder not found: {d}")
    return {name: fn(d) for name, fn in DERIVED.items()}


def uncovered_regions(data_dir) -> list[str]:
    """Regions of the raw Skyplane files or the grid-zone map without a row in region_coords.csv."""
    d = Path(data_dir)
    tp = raw.skyplane_stats(d / "skyplane" / tables.THROUGHPUT_FILE, "throughput_recieved")
    rtt = raw.skyplane_stats(d / "skyplane" / "latency.csv", "avg_rtt")
    regions = {r for k in (*tp, *rtt) for r in k}
    regions |= {s for s, _ in raw.egress(d / "skyplane" / "egress_cost.csv")}
    regions |= set(raw.zone_map(d / "green_dcc" / "cloud_region_to_grid_zone_curated.csv"))
    known = tables.coords()
    return sorted(r for r in regions if r not in known)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bace_opt.data.derive", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the raw data folder (docs/data.md)")
    ap.add_argument("--out", default=None, help=f"where to write (default: {tables.TABLES_DIR})")
    ap.add_argument("--check", action="store_true", help="compare with the tables in --out; write nothing")
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else tables.TABLES_DIR
    try:
        texts = derive(a.data)
        missing = uncovered_regions(a.data)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if missing:
        print(f"region_coords.csv lacks {len(missing)} region(s): {', '.join(missing)}", file=sys.stderr)
    if a.check:
        bad = [n for n, t in texts.items() if not (out / n).is_file() or (out / n).read_bytes() != t.encode()]
        for n in bad:
            print(f"{out / n}: differs from the table derived from {a.data}", file=sys.stderr)
        return 1 if bad or missing else 0
    for n, t in texts.items():
        atomic_write(out / n, t)
        print(f"{out / n}: {len(t.encode())} bytes", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
