"""Skyplane measurements per region pair: throughput and RTT, aggregated; holes named; optional estimates.

Reads (only reads) the Skyplane profile files in a folder with the layout of docs/data.md
(github.com/skyplane-project/skyplane, Apache-2.0), or their per-pair statistics shipped as package data
(bace_opt.data.tables; the same numbers):

- ``throughput_2022_11.csv`` (or another file of the same format, ``throughput_file``): iperf3 between ONE
  VM pair per row (64 TCP flows, 5 s; AWS m5.8xlarge), column ``throughput_recieved`` in bit/s.
- ``latency.csv``: ping between small VMs, ``avg_rtt`` in ms.

Aggregation (our reading; also in docs/decisions.md and each instance's ``meta``):

- A pair {u, v} takes the rows of BOTH directions (u->v and v->u): the model's links are undirected and a
  hop reserves the same rate each way.  Rows must have ``success`` true, a finite value > 0, and both
  tiers ``PREMIUM`` (GCP's STANDARD tier is a different, cheaper network product; AWS and Azure rows are
  all PREMIUM).  Region names match after dropping a GCP zone suffix (``gcp:us-east4-a`` = ``gcp:us-east4``).
- The statistic (``aggregate``: median by default; mean, min, max) is taken over those rows.  In
  throughput_2022_11.csv every directed pair has one run, so the median is the mean of the two directions.
- Throughput is per VM pair, in Gbit/s (bit/s / 1e9).  How many VM pairs a link stands for is the
  builder's choice (its ``parallel_connections`` / ``vm_pairs_per_link``).
- RTT is the round trip; builders take one-way latency = RTT / 2.

Holes.  ``missing(pairs)`` lists the pairs lacking a throughput or an RTT measurement.  With
``fill_missing="rtt"`` the holes get estimates, each marked in ``PairMeasure.*_source``:

- a missing RTT: the great-circle rule of geo.py (``2 x (1.5 x km / 200 km/ms + 2 ms)``, itself fitted to
  Skyplane's AWS RTTs), from the regions' city coordinates (geo.region_coords(): every region of the data, table
  bace_opt/data/tables/region_coords.csv); a region without coordinates stops with an error naming it;
- a missing throughput: a least-squares fit of ``ln(throughput) = c0 + c1 ln(RTT)`` over every pair of the
  file whose throughput and RTT are both measured (64-flow TCP throughput falls with RTT), restricted to pairs
  of the same two clouds as the hole when there are at least ``MIN_FIT_PAIRS`` of them (else all pairs),
  evaluated at the pair's RTT (measured, or estimated as above).  The fit's coefficients, its pair count and
  its median relative error on its own pairs are returned (``RttFit``) so builders can record them.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path

from ..data import raw
from ..data.raw import norm_region
from ..data.source import DataSource
from ..errors import InputError
from . import geo

THROUGHPUT_FILE = "throughput_2022_11.csv"
LATENCY_FILE = "latency.csv"
AGGREGATES = {"median": statistics.median, "mean": statistics.fmean, "min": min, "max": max}
FILL_MODES = ("none", "rtt")
MIN_FIT_PAIRS = 10
SOURCE_NOTE = ("Skyplane (github.com/skyplane-project/skyplane, Apache-2.0) profiles: iperf3 throughput, 64 TCP "
               "flows between one VM pair (Nov 2022), and ping RTT")


def _cloud(region: str) -> str:
    return norm_region(region).split(":", 1)[0]


@dataclass(frozen=True)
class PairMeasure:
    """One region pair (as the caller names it).  ``throughput_gbps``: per VM pair; ``rtt_ms``: round trip.
    ``*_n``: number of rows aggregated (0 when estimated or missing); ``*_source``: 'measured',
    'estimated: ...' or None (missing)."""
    a: str
    b: str
    throughput_gbps: float | None
    throughput_n: int
    throughput_source: str | None
    rtt_ms: float | None
    rtt_n: int
    rtt_source: str | None

    @property
    def complete(self) -> bool:
        return self.throughput_gbps is not None and self.rtt_ms is not None

    def missing_what(self) -> list[str]:
        return [w for w, v in (("throughput", self.throughput_gbps), ("RTT", self.rtt_ms)) if v is None]


@dataclass(frozen=True)
class RttFit:
    """ln(throughput_gbps) = c0 + c1 ln(rtt_ms) over ``pairs`` measured pairs (``scope``: which clouds)."""
    c0: float
    c1: float
    pairs: int
    scope: str
    median_rel_error: float

    def throughput_gbps(self, rtt_ms: float) -> float:
        return math.exp(self.c0 + self.c1 * math.log(rtt_ms))

    def describe(self) -> str:
        return (f"ln(Gbit/s) = {self.c0:.4f} {self.c1:+.4f} ln(RTT ms), least squares over {self.pairs} measured "
                f"{self.scope} pairs (median relative error {self.median_rel_error:.1%})")


def _file(folder: Path, name: str) -> Path:
    p = folder / name
    if not p.is_file():
        raise InputError(f"Skyplane file not found: {p} (the layout of docs/data.md)")
    return p


class Measurements:
    """The measurements of one Skyplane folder, keyed by unordered normalised region pair."""

    def __init__(self, skyplane_dir=None, throughput_file: str = THROUGHPUT_FILE, latency_file: str = LATENCY_FILE,
                 aggregate: str = "median", *, source: DataSource | None = None):
        """From a raw Skyplane folder (``skyplane_dir``: rows read strictly, data.raw.skyplane_stats) or from a
        ``source`` (data.source: a raw data folder or the shipped per-pair table, the same statistics)."""
        if aggregate not in AGGREGATES:
            raise InputError(f"aggregate must be one of {', '.join(AGGREGATES)}, got {aggregate!r}")
        self.throughput_file, self.latency_file, self.aggregate = throughput_file, latency_file, aggregate
        if source is not None:
            self.folder = source.folder / "skyplane" if source.folder is not None else source.describe()
            self.tp_bps, self.rtt = source.skyplane(throughput_file)
            return
        d = Path(skyplane_dir)
        if not d.is_dir():
            raise InputError(f"Skyplane folder not found: {d}")
        self.folder = d
        self.tp_bps = raw.skyplane_stats(_file(d, throughput_file), "throughput_recieved")
        self.rtt = raw.skyplane_stats(_file(d, latency_file), "avg_rtt")

    def pair(self, a: str, b: str) -> PairMeasure:
        """The aggregated measurements of {a, b} (None where the file has no usable row)."""
        key = frozenset((norm_region(a), norm_region(b)))
        agg = self.aggregate
        tp, rtt = self.tp_bps.get(key), self.rtt.get(key)
        return PairMeasure(a, b,
                           getattr(tp, agg) / 1e9 if tp else None, tp.n if tp else 0, "measured" if tp else None,
                           getattr(rtt, agg) if rtt else None, rtt.n if rtt else 0, "measured" if rtt else None)

    def pairs(self, regions) -> list[PairMeasure]:
        """Every unordered pair of ``regions`` (in the given order: (r0, r1), (r0, r2), ...)."""
        regions = list(regions)
        return [self.pair(a, b) for i, a in enumerate(regions) for b in regions[i + 1:]]

    def rtt_fit(self, a: str, b: str) -> RttFit:
        """The throughput-vs-RTT fit used to estimate a missing throughput of {a, b} (module doc)."""
        clouds = {_cloud(a), _cloud(b)}
        keys = [k for k in sorted(self.tp_bps, key=sorted) if k in self.rtt]
        scoped = [k for k in keys if {_cloud(x) for x in k} == clouds]
        scope = "-".join(sorted(clouds) * (3 - len(clouds)))
        if len(scoped) < MIN_FIT_PAIRS:
            scoped, scope = keys, "(all clouds)"
        if len(scoped) < 3:
            raise InputError(f"cannot estimate throughput from RTT: only {len(scoped)} pair(s) of "
                             f"{self.folder} have both a throughput and an RTT measurement")
        agg = self.aggregate
        xs = [math.log(getattr(self.rtt[k], agg)) for k in scoped]
        ys = [math.log(getattr(self.tp_bps[k], agg) / 1e9) for k in scoped]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        c1 = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
        c0 = my - c1 * mx
        errs = [abs(math.exp(c0 + c1 * x) / math.exp(y) - 1.0) for x, y in zip(xs, ys)]
        return RttFit(c0, c1, len(scoped), scope, statistics.median(errs))


def estimate_rtt_ms(a: str, b: str) -> float:
    """Round trip by the great-circle rule of geo.py (2 x one-way), from the regions' city coordinates."""
    coords = geo.region_coords()
    unknown = [r for r in (a, b) if norm_region(r) not in coords]
    if unknown:
        raise InputError(f"cannot estimate the RTT of {a} - {b}: no coordinates for {', '.join(unknown)} "
                         f"(known: {', '.join(sorted(coords))})")
    return 2.0 * geo.latency_ms(geo.haversine_km(coords[norm_region(a)], coords[norm_region(b)]))


def fill(meas: Measurements, pm: PairMeasure) -> tuple[PairMeasure, RttFit | None]:
    """``pm`` with its holes estimated (module doc); the fit used for a missing throughput, if any."""
    rtt, rtt_src = pm.rtt_ms, pm.rtt_source
    if rtt is None:
        rtt = estimate_rtt_ms(pm.a, pm.b)
        rtt_src = (f"estimated: great-circle rule 2 x ({geo.CLOUD_INFLATION} x km / {geo.FIBRE_KM_PER_MS:g} km/ms "
                   f"+ {geo.CLOUD_OVERHEAD_MS:g} ms)")
    tp, tp_src, fit = pm.throughput_gbps, pm.throughput_source, None
    if tp is None:
        fit = meas.rtt_fit(pm.a, pm.b)
        tp = fit.throughput_gbps(rtt)
        tp_src = f"estimated from RTT {rtt:.1f} ms: {fit.describe()}"
    return PairMeasure(pm.a, pm.b, tp, pm.throughput_n, tp_src, rtt, pm.rtt_n, rtt_src), fit


def describe_missing(missing: list[PairMeasure], limit: int = 12) -> str:
    """'a - b (RTT), c - d (throughput, RTT), ...' for an error message."""
    parts = [f"{m.a} - {m.b} ({', '.join(m.missing_what())})" for m in missing[:limit]]
    if len(missing) > limit:
        parts.append(f"... {len(missing) - limit} more")
    return ", ".join(parts)
