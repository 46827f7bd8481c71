"""The compact derived tables shipped as package data (``bace_opt/data/tables``; sources: tables/SOURCES.md).

They hold exactly what the builders compute from the raw files, so that an instance built from them is
byte-identical to one built from the raw data folder (``python -m bace_opt.data.derive`` regenerates them;
tests/test_data_tables.py checks both).  Each reader is as strict as the raw readers: a damaged table is an
``InputError`` naming file:line:column, with a note that the installed package is damaged.

- ``skyplane_pairs.csv``: per unordered region pair, count / median / mean / min / max of Skyplane's usable
  throughput rows (bit/s, throughput_2022_11.csv) and RTT rows (ms, latency.csv);
- ``skyplane_egress.csv``: egress USD/GB, one row per source region, one column per destination;
- ``grid_zones.csv``: cloud region -> grid zone (green_dcc/cloud_region_to_grid_zone_curated.csv);
- ``prices_usd_mwh_2023-07-01_168h.csv``: green_dcc's hourly prices (USD/MWh) for the 168 h from 2023-07-01
  00:00 UTC (the builders' default window), every zone;
- ``region_coords.csv``: city coordinates of every cloud region of the data (written here, not derived);
- ``gpu_specs.csv``, ``model_specs.csv``: the llm_hw GPU and model figures (builders.profiles);
- ``nsfnet_chen.txt``: the DeepRMSA NSFNET link list (14 nodes, 22 links, km).
"""
from __future__ import annotations

import functools
from datetime import datetime
from pathlib import Path

from ..errors import InputError
from . import raw
from .csvfile import CsvFile

TABLES_DIR = Path(__file__).resolve().parent / "tables"
THROUGHPUT_FILE = "throughput_2022_11.csv"
PAIRS = "skyplane_pairs.csv"
EGRESS = "skyplane_egress.csv"
ZONES = "grid_zones.csv"
PRICE_DAY, PRICE_HOURS = "2023-07-01", 168
PRICES = f"prices_usd_mwh_{PRICE_DAY}_{PRICE_HOURS}h.csv"
COORDS = "region_coords.csv"
GPUS = "gpu_specs.csv"
MODELS = "model_specs.csv"
NSFNET = "nsfnet_chen.txt"
STATS = ("n", "median", "mean", "min", "max")
PAIR_COLUMNS = ["a", "b", *(f"throughput_{s}{'' if s == 'n' else '_bps'}" for s in STATS),
                *(f"rtt_{s}{'' if s == 'n' else '_ms'}" for s in STATS)]
DAMAGED = "the package's shipped table is damaged: reinstall bace-opt (or report a bug)"


def path(name: str) -> Path:
    return TABLES_DIR / name


def _open(name: str, required) -> CsvFile:
    try:
        return CsvFile(path(name), required, label=str(path(name)))
    except InputError as e:
        raise InputError(f"{e} ({DAMAGED})") from None


def _strict(fn):
    """Re-raise a table's InputError with the damaged-package note; cache the (read-only) result."""
    @functools.lru_cache(maxsize=None)
    @functools.wraps(fn)
    def wrapper(*a):
        try:
            return fn(*a)
        except InputError as e:
            if DAMAGED in str(e):
                raise
            raise InputError(f"{e} ({DAMAGED})") from None
    return wrapper


@_strict
def pair_stats() -> tuple[dict[frozenset, raw.Stats], dict[frozenset, raw.Stats]]:
    """(throughput bit/s, RTT ms): unordered pair -> Stats, as raw.skyplane_stats gives for the raw files."""
    f = _open(PAIRS, PAIR_COLUMNS)
    tp, rtt = {}, {}
    for line, row in f.rows():
        a, b = f.text(line, row, "a"), f.text(line, row, "b")
        if not a < b:
            raise InputError(f"{f.where(line, 'b')}: pair {a} - {b} not in order (a < b)")
        for out, what, unit in ((tp, "throughput", "_bps"), (rtt, "rtt", "_ms")):
            n = f.integer(line, row, f"{what}_n", ge=0)
            vals = [f.number(line, row, f"{what}_{s}{unit}", gt=0, empty_ok=n == 0) for s in STATS[1:]]
            if n and (None in vals or not vals[2] <= vals[0] <= vals[3] or not vals[2] <= vals[1] <= vals[3]):
                raise InputError(f"{f.where(line, what + '_n')}: statistics not consistent")
            if n:
                out[frozenset((a, b))] = raw.Stats(n, *vals)
    return tp, rtt


@_strict
def egress() -> dict[tuple[str, str], float]:
    f = _open(EGRESS, ("src",))
    out = {}
    for line, row in f.rows():
        s = f.text(line, row, "src")
        for d in f.header[1:]:
            v = f.number(line, row, d, ge=0.0, empty_ok=True)
            if v is not None:
                out[(s, d)] = v
    return out


@_strict
def zone_map() -> dict[str, str]:
    return raw.zone_map(path(ZONES))


def prices(zones, start: datetime, hours: int) -> raw.PriceWindow:
    """The shipped window's prices; a window beyond it is refused, naming the --data option."""
    t0 = raw.parse_day(PRICE_DAY)
    if not (start >= t0 and (start - t0).total_seconds() / 3600 + hours <= PRICE_HOURS):
        raise InputError(f"the shipped price table covers {PRICE_HOURS} h from {PRICE_DAY} 00:00 UTC only "
                         f"(asked: {hours} h from {start:%Y-%m-%d %H:%M} UTC); for other days give the raw data "
                         "folder (--data DIR or $BACE_OPT_DATA; docs/data.md)")
    try:
        w = raw.hourly_prices(path(PRICES), zones, start, hours)
    except InputError as e:
        if "no price column" in str(e):
            raise
        raise InputError(f"{e} ({DAMAGED})") from None
    if w.holes:
        raise InputError([*w.holes, DAMAGED])
    return w


@_strict
def coords() -> dict[str, tuple[float, float]]:
    """cloud region -> (latitude, longitude) of the city the provider names for it."""
    f = _open(COORDS, ("region", "city", "lat", "lon"))
    out = {}
    for line, row in f.rows():
        r = f.text(line, row, "region")
        if r in out:
            raise InputError(f"{f.where(line, 'region')}: region {r!r} appears twice")
        lat, lon = f.number(line, row, "lat"), f.number(line, row, "lon")
        if not (-90 <= lat <= 90 and -180 <= lon <= 180):
            raise InputError(f"{f.where(line, 'lat')}: not a coordinate: {lat}, {lon}")
        out[r] = (lat, lon)
    return out


@_strict
def gpus() -> dict[str, tuple[float, float, float | None, str]]:
    f = _open(GPUS, ("name", "tflops", "memory_gb", "power_w", "source"))
    return {f.text(line, row, "name"): (f.number(line, row, "tflops", gt=0), f.number(line, row, "memory_gb", gt=0),
                                        f.number(line, row, "power_w", gt=0, empty_ok=True),
                                        f.text(line, row, "source", nonempty=False))
            for line, row in f.rows()}


@_strict
def models() -> dict[str, tuple[float, int, int, str]]:
    f = _open(MODELS, ("name", "params_b", "layers", "hidden", "source"))
    return {f.text(line, row, "name"): (f.number(line, row, "params_b", gt=0), f.integer(line, row, "layers", ge=1),
                                        f.integer(line, row, "hidden", ge=1),
                                        f.text(line, row, "source", nonempty=False))
            for line, row in f.rows()}
