"""Strict readers of the raw third-party formats (the layout of the project's data folder; docs/data.md).

Each reader checks its file's shape through ``csvfile.CsvFile`` (header, field count per row, numbers) and
raises an ``InputError`` naming file:line:column and the column for any fault.  What the numbers mean is the
builders' business; these functions only read, filter and aggregate exactly as documented:

- ``skyplane_stats``: Skyplane throughput or RTT profiles -> per unordered region pair the count, median,
  mean, min and max of the usable rows (``success`` true, both tiers PREMIUM, value > 0; both directions);
- ``egress``: Skyplane ``egress_cost.csv`` -> (src, dst) -> USD/GB;
- ``zone_map``: ``cloud_region_to_grid_zone_curated.csv`` -> cloud region -> grid zone;
- ``hourly_prices``: green_dcc's wide hourly price file -> per zone the values of the hours asked for, with
  every hole named (``PriceWindow``);
- ``llm_gpus`` / ``llm_models``: the llm_hw GPU and model figures (curated CSVs and llm-analysis JSON).
"""
from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import NamedTuple

from ..errors import InputError
from .csvfile import CsvFile

TIME_FORMAT = "%Y-%m-%d %H:%M:%S+00:00"


def norm_region(region: str) -> str:
    """Skyplane GCP names carry a zone suffix (gcp:us-east4-a); other files do not."""
    return re.sub(r"^(gcp:.+\d)-[a-z]$", r"\1", str(region).strip())


class Stats(NamedTuple):
    """Aggregates of one pair's usable rows (the builders' ``aggregate`` names a field)."""
    n: int
    median: float
    mean: float
    min: float
    max: float


def stats_of(values: list[float]) -> Stats:
    return Stats(len(values), statistics.median(values), statistics.fmean(values), min(values), max(values))


def skyplane_stats(path, value: str) -> dict[frozenset, Stats]:
    """Per unordered pair {u, v} (normalised names, u != v), the Stats of ``value`` over the usable rows of
    both directions: ``success`` true (when the column exists), both tiers PREMIUM (when given), value > 0.
    A successful row whose value is not a number is an error (file:line:column)."""
    f = CsvFile(path, ("src_region", "dst_region", value))
    has_success = "success" in f.col
    tiers = [t for t in ("src_tier", "dst_tier") if t in f.col]
    by_pair: dict[frozenset, list[float]] = {}
    for line, row in f.rows():
        s, d = f.text(line, row, "src_region"), f.text(line, row, "dst_region")
        if has_success and not f.boolean(line, row, "success"):
            continue
        x = f.number(line, row, value, ge=0.0)
        if x == 0.0 or any((row[f.col[t]].strip() or "PREMIUM") != "PREMIUM" for t in tiers):
            continue
        s, d = norm_region(s), norm_region(d)
        if s != d:
            by_pair.setdefault(frozenset((s, d)), []).append(x)
    return {k: stats_of(v) for k, v in by_pair.items()}


def egress(path) -> dict[tuple[str, str], float]:
    """(src, dst) -> USD/GB from Skyplane's egress_cost.csv (normalised names; a later row overrides)."""
    f = CsvFile(path, ("src", "dest", "cost"))
    out = {}
    for line, row in f.rows():
        out[(norm_region(f.text(line, row, "src")), norm_region(f.text(line, row, "dest")))] = \
            f.number(line, row, "cost", ge=0.0)
    return out


def zone_map(path) -> dict[str, str]:
    """cloud region (normalised) -> grid zone."""
    f = CsvFile(path, ("cloud_region", "grid_zone"))
    out = {}
    for line, row in f.rows():
        r = norm_region(f.text(line, row, "cloud_region"))
        if r in out:
            raise InputError(f"{f.where(line, 'cloud_region')}: region {r!r} appears twice")
        out[r] = f.text(line, row, "grid_zone")
    return out


@dataclass
class PriceWindow:
    """The values (USD/MWh) of ``hours`` hours from ``start`` for each zone, and each hole found."""
    start: datetime
    hours: int
    values: dict[str, list[float | None]]
    holes: list[str] = field(default_factory=list)      # one human line per hole, with file:line[:column]

    def hour_label(self, h: int) -> str:
        return (self.start + timedelta(hours=h)).strftime("%Y-%m-%d %H:%M UTC")


def parse_day(price_day: str) -> datetime:
    try:
        return datetime.strptime(price_day, "%Y-%m-%d").replace(tzinfo=timezone.utc)
    except (TypeError, ValueError):
        raise InputError(f"price_day must be a date YYYY-MM-DD, got {price_day!r}") from None


def hourly_prices(path, zones, start: datetime, hours: int, *, label: str | None = None) -> PriceWindow:
    """Read a wide hourly price file (``datetime_utc`` then one column per zone, USD/MWh; one row per hour,
    in increasing time).  Every row is checked (timestamp format and order, every non-empty cell a number);
    the window's missing rows and empty cells are listed in ``holes`` (the caller refuses or fills them)."""
    zones = list(dict.fromkeys(zones))
    f = CsvFile(path, ("datetime_utc",), label=label)
    lacking = [z for z in zones if z not in f.col]
    if lacking:
        raise InputError(f"{f.label}:1: no price column for zone(s) {', '.join(lacking)} "
                         f"(zones: {', '.join(h for h in f.header if h != 'datetime_utc')})")
    end = start + timedelta(hours=hours)
    out = {z: [None] * hours for z in zones}
    holes: list[str] = []
    prev_t, prev_line = None, None
    first_in, last_in = None, None
    for line, row in f.rows():
        ts = f.text(line, row, "datetime_utc")
        try:
            t = datetime.strptime(ts, TIME_FORMAT).replace(tzinfo=timezone.utc)
        except ValueError:
            raise InputError(f"{f.where(line, 'datetime_utc')}: not a time YYYY-MM-DD HH:MM:SS+00:00: "
                             f"{ts!r}") from None
        if t.minute or t.second:
            raise InputError(f"{f.where(line, 'datetime_utc')}: not on the hour: {ts!r}")
        if prev_t is not None and t <= prev_t:
            raise InputError(f"{f.where(line, 'datetime_utc')}: {ts} is not after the previous row's time "
                             f"(line {prev_line})")
        vals = {z: f.number(line, row, z, empty_ok=True) for z in f.header if z != "datetime_utc"}
        if prev_t is not None and t - prev_t > timedelta(hours=1):
            lo, hi = max(prev_t + timedelta(hours=1), start), min(t, end)
            if lo < hi:
                n = int((hi - lo) / timedelta(hours=1))
                holes.append(f"{f.label}:{line}: {n} hour(s) missing before this row "
                             f"({lo:%Y-%m-%d %H:%M} .. {hi - timedelta(hours=1):%Y-%m-%d %H:%M} UTC)")
        if start <= t < end:
            h = int((t - start) / timedelta(hours=1))
            first_in = line if first_in is None else first_in
            last_in = line
            for z in zones:
                if vals[z] is None:
                    holes.append(f"{f.where(line, z)}: empty (no price at {t:%Y-%m-%d %H:%M} UTC)")
                out[z][h] = vals[z]
        prev_t, prev_line = t, line
    covered = [h for h in range(hours) if any(out[z][h] is not None for z in zones) or not zones]
    if not covered and zones:
        raise InputError(f"{f.label}: no row in the {hours} h from {start:%Y-%m-%d %H:%M} UTC")
    lead = min(covered) if covered else 0
    if lead and first_in is not None:
        holes.insert(0, f"{f.label}:{first_in}: {lead} hour(s) missing before this row (from "
                        f"{start:%Y-%m-%d %H:%M} UTC)")
    tail = hours - 1 - (max(covered) if covered else hours - 1)
    if tail and last_in is not None:
        holes.append(f"{f.label}:{last_in}: {tail} hour(s) missing after this row (to "
                     f"{end - timedelta(hours=1):%Y-%m-%d %H:%M} UTC)")
    return PriceWindow(start, hours, out, holes)


# ---------------------------------------------------------------------- llm_hw

def llm_gpus(llm_hw: Path) -> dict[str, tuple[float, float, float | None, str]]:
    """name -> (dense bf16/fp16 TFLOPS, memory GB, power W or None, source) from llm-analysis's GPU configs
    (no power figure) and gpu_specs_curated.csv (which wins for a name in both)."""
    out: dict[str, tuple] = {}
    jdir = llm_hw / "llm_analysis_gpu_configs"
    if jdir.is_dir():
        for p in sorted(jdir.glob("*.json")):
            try:
                c = json.loads(p.read_text(encoding="utf-8"))
                out[c.get("name", p.stem)] = (float(c["peak_fp16_TFLOPS"]), float(c["mem_per_GPU_in_GB"]), None,
                                              f"llm-analysis {p.name}")
            except (KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
                raise InputError(f"{p}: cannot read GPU config: {e}") from None
    cur = llm_hw / "gpu_specs_curated.csv"
    if cur.is_file():
        f = CsvFile(cur, ("gpu", "bf16_fp16_dense_TFLOPS", "memory_GB", "tdp_W"))
        for line, row in f.rows():
            note = row[f.col["source_note"]] if "source_note" in f.col else ""
            out[f.text(line, row, "gpu")] = (f.number(line, row, "bf16_fp16_dense_TFLOPS", gt=0),
                                             f.number(line, row, "memory_GB", gt=0), f.number(line, row, "tdp_W", gt=0),
                                             note + f" ({cur.name})")
    if not out:
        raise InputError(f"no GPU configs found in {llm_hw}")
    return out


def _estimate_params(layers: int, d: int, ffn: int, heads: int, kv_heads: int, vocab: int, glu: bool) -> float:
    """Parameter count of a decoder-only transformer (billions): attention (q, o: d^2 each; k, v: d * kv_dim),
    MLP (3 or 2 matrices d x ffn), untied input and output embeddings.  Norms and biases are ignored."""
    kv_dim = d * kv_heads // heads
    per_layer = 2 * d * d + 2 * d * kv_dim + (3 if glu else 2) * d * ffn
    return (layers * per_layer + 2 * vocab * d) / 1e9


def llm_models(llm_hw: Path) -> dict[str, tuple[float, int, int, str]]:
    """name -> (params in billions, layers, hidden size, source) from llm_model_configs_curated.csv (params as
    given) and llm-analysis's model configs (params estimated by ``_estimate_params``; these win)."""
    out: dict[str, tuple] = {}
    cur = llm_hw / "llm_model_configs_curated.csv"
    if cur.is_file():
        f = CsvFile(cur, ("model", "params_B", "n_layers", "d_model"))
        for line, row in f.rows():
            src = row[f.col["source"]] if "source" in f.col else ""
            out[f.text(line, row, "model")] = (f.number(line, row, "params_B", gt=0),
                                               f.integer(line, row, "n_layers", ge=1),
                                               f.integer(line, row, "d_model", ge=1), src + f" ({cur.name})")
    jdir = llm_hw / "llm_analysis_model_configs"
    if jdir.is_dir():
        for p in sorted(jdir.glob("*.json")):
            try:
                c = json.loads(p.read_text(encoding="utf-8"))
                L, hd, heads = int(c["num_layers"]), int(c["hidden_dim"]), int(c["n_head"])
                ffn = int(c.get("ffn_embed_dim") or 4 * hd)
                kv = int(c.get("num_key_value_heads") or heads)
                P = _estimate_params(L, hd, ffn, heads, kv, int(c.get("vocab_size", 0)),
                                     bool(c.get("mlp_gated_linear_units", False)))
                out[c.get("name", p.stem)] = (round(P, 2), L, hd, f"llm-analysis {p.name} (params estimated)")
            except (KeyError, ValueError, TypeError, json.JSONDecodeError) as e:
                raise InputError(f"{p}: cannot read model config: {e}") from None
    if not out:
        raise InputError(f"no model configs found in {llm_hw}")
    return out
