"""Where the builders' data comes from: a raw data folder, or the tables shipped with the package.

``open_data(data_dir)``: ``data_dir`` if given, else ``$BACE_OPT_DATA`` if set (both: a raw folder with the
layout docs/data.md describes), else the shipped tables (``tables``).  Both give the same numbers for what the
tables cover (tests/test_data_tables.py), so every default builds the byte-identical instance either way.
What the tables do not cover (another throughput file, another price window, Topology Zoo files) needs a
raw folder, and the error says so.
"""
from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from ..errors import InputError
from . import raw, tables
from .topologies import resolve_gml

DATA_ENV = "BACE_OPT_DATA"
#: the name the instances' meta gives the data folder (the layout's usual name), whichever source was read
DEFAULT_NAME = "data"


class DataSource:
    """One source of measurements, prices and topologies.  ``folder``: the raw folder, or None (shipped)."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        self.name = folder.name if folder is not None else DEFAULT_NAME

    @property
    def shipped(self) -> bool:
        return self.folder is None

    def describe(self) -> str:
        return f"data folder {self.folder}" if self.folder is not None else \
            f"the shipped tables ({tables.TABLES_DIR})"

    def _raw(self, *parts: str) -> Path:
        p = self.folder.joinpath(*parts)
        if not p.is_file():
            raise InputError(f"data file not found: {p} (the layout of docs/data.md)")
        return p

    def skyplane(self, throughput_file: str = tables.THROUGHPUT_FILE):
        """(throughput bit/s, RTT ms) Stats per unordered pair."""
        if self.shipped:
            if throughput_file != tables.THROUGHPUT_FILE:
                raise InputError(f"the shipped tables hold Skyplane's {tables.THROUGHPUT_FILE} only; for "
                                 f"{throughput_file} give the raw data folder (--data DIR or ${DATA_ENV})")
            return tables.pair_stats()
        return (raw.skyplane_stats(self._raw("skyplane", throughput_file), "throughput_recieved"),
                raw.skyplane_stats(self._raw("skyplane", "latency.csv"), "avg_rtt"))

    def egress(self) -> dict[tuple[str, str], float]:
        return tables.egress() if self.shipped else raw.egress(self._raw("skyplane", "egress_cost.csv"))

    def zone_map(self) -> dict[str, str]:
        if self.shipped:
            return tables.zone_map()
        return raw.zone_map(self._raw("green_dcc", "cloud_region_to_grid_zone_curated.csv"))

    def prices(self, zones, start: datetime, hours: int) -> raw.PriceWindow:
        """USD/MWh of ``hours`` hours from ``start`` per zone, holes listed (shipped: none allowed)."""
        if self.shipped:
            return tables.prices(zones, start, hours)
        return raw.hourly_prices(self._raw("green_dcc", "electricity_price_usd_mwh_hourly_2023_wide.csv"), zones,
                                 start, hours)

    def topology(self, name) -> Path:
        """A topology file: a path as given, the shipped NSFNET, or one under the raw folder."""
        p = Path(name)
        if p.is_file():
            return p
        if self.shipped:
            if p.name in ("nsfnet_chen", tables.NSFNET, "nsfnet"):
                return tables.path(tables.NSFNET)
            raise InputError(f"topology not found: {name} (the shipped tables hold NSFNET only; for Topology Zoo "
                             f"files give the raw data folder with --data DIR or ${DATA_ENV})")
        return resolve_gml(self.folder, name)


def open_data(data_dir=None) -> DataSource:
    """The raw folder ``data_dir``, else $BACE_OPT_DATA, else the shipped tables."""
    if data_dir is None:
        data_dir = os.environ.get(DATA_ENV) or None
        if data_dir is None:
            return DataSource(None)
        where = f"${DATA_ENV}"
    else:
        where = "the data folder"
    d = Path(data_dir)
    if not d.is_dir():
        raise InputError(f"{where} not found: {d} (leave it out to use the shipped tables)")
    return DataSource(d)
