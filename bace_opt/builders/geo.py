"""Region coordinates and latency from great-circle distance.

The latency rule (our reading; stated again in instances/README.md):

    one-way latency_ms = inflation * distance_km / 200 km/ms + overhead_ms

200 km/ms is light in fibre (2/3 c).  Cloud-to-cloud defaults (inflation 1.5, overhead 2 ms) were fitted to
Skyplane's ping RTTs (skyplane/latency.csv of the data folder, avg_rtt / 2) between the six AWS regions that
match the paper's: the median ratio of measured one-way latency to straight-fibre time is 1.51.  Checks:
Ireland - N. Virginia 5,466 km -> 43.0 ms (Skyplane 42.5 ms); Singapore - Sydney 6,306 km -> 49.3 ms
(Skyplane 46.7 ms); Tokyo - Singapore 5,314 km -> 41.9 ms (Skyplane 37.3 ms).  The rule underestimates
Europe - Tokyo (72-74 ms against Skyplane's 107-111 ms: that traffic does not follow the great circle).

For the physical links of a WAN topology (GML) the defaults are inflation 1.2, overhead 0.5 ms per link
(fibre slack along one span plus router delay): a route then sums its links.
"""
from __future__ import annotations

import math

from ..data import tables

EARTH_RADIUS_KM = 6371.0088          # mean Earth radius (IUGG)
FIBRE_KM_PER_MS = 200.0              # 2/3 of the speed of light in vacuum
CLOUD_INFLATION = 1.5
CLOUD_OVERHEAD_MS = 2.0
WAN_INFLATION = 1.2
WAN_OVERHEAD_MS = 0.5

# (latitude, longitude) in degrees of the cities hosting the regions used by the builders.
CITY_COORDS: dict[str, tuple[float, float]] = {
    "Ireland": (53.35, -6.26),            # Dublin
    "New York": (40.71, -74.01),
    "N. Virginia": (38.95, -77.45),       # Ashburn
    "Frankfurt": (50.11, 8.68),
    "Tokyo": (35.68, 139.69),
    "Singapore": (1.35, 103.82),
    "Sydney": (-33.87, 151.21),
}


def region_coords() -> dict[str, tuple[float, float]]:
    """(latitude, longitude) of the city of every cloud region of the data (AWS, GCP, Azure; Skyplane naming),
    from bace_opt/data/tables/region_coords.csv (the city each provider names for the region; SOURCES.md);
    used to estimate an RTT that Skyplane did not measure (builders.skyplane.fill) and for pictures."""
    return tables.coords()


def __getattr__(name: str):
    # CLOUD_REGION_COORDS: the earlier name of region_coords(), read lazily from the shipped table
    if name == "CLOUD_REGION_COORDS":
        return dict(region_coords())
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance (km) between two (lat, lon) points in degrees."""
    la1, lo1 = map(math.radians, a)
    la2, lo2 = map(math.radians, b)
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2.0 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def latency_ms(distance_km: float, inflation: float = CLOUD_INFLATION, overhead_ms: float = CLOUD_OVERHEAD_MS) -> float:
    """One-way latency (ms) of a path of great-circle length ``distance_km``: inflation * d / 200 + overhead."""
    return inflation * distance_km / FIBRE_KM_PER_MS + overhead_ms


def pair_latency_ms(a: tuple[float, float], b: tuple[float, float], inflation: float = CLOUD_INFLATION,
                    overhead_ms: float = CLOUD_OVERHEAD_MS) -> float:
    """One-way latency (ms) between two coordinates, rounded to 0.01 ms."""
    return round(latency_ms(haversine_km(a, b), inflation, overhead_ms), 2)
