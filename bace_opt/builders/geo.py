"""Region coordinates and latency from great-circle distance.

The latency rule (our reading; stated again in instances/README.md):

    one-way latency_ms = inflation * distance_km / 200 km/ms + overhead_ms

200 km/ms is light in fibre (2/3 c).  Cloud-to-cloud defaults (inflation 1.5, overhead 2 ms) were fitted to
Skyplane's ping RTTs (../shared/data/skyplane/latency.csv, avg_rtt / 2) between the six AWS regions that
match the paper's: the median ratio of measured one-way latency to straight-fibre time is 1.51.  Checks:
Ireland - N. Virginia 5,466 km -> 43.0 ms (Skyplane 42.5 ms); Singapore - Sydney 6,306 km -> 49.3 ms
(Skyplane 46.7 ms); Tokyo - Singapore 5,314 km -> 41.9 ms (Skyplane 37.3 ms).  The rule underestimates
Europe - Tokyo (72-74 ms against Skyplane's 107-111 ms: that traffic does not follow the great circle).

For the physical links of a WAN topology (GML) the defaults are inflation 1.2, overhead 0.5 ms per link
(fibre slack along one span plus router delay): a route then sums its links.
"""
from __future__ import annotations

import math

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

# (latitude, longitude) of the city of each AWS region (Skyplane naming), from AWS's public region list
# (region -> city); used only to estimate an RTT that Skyplane did not measure (builders.skyplane.fill).
CLOUD_REGION_COORDS: dict[str, tuple[float, float]] = {
    "aws:us-east-1": (38.95, -77.45),       # N. Virginia (Ashburn)
    "aws:us-east-2": (39.96, -83.00),       # Ohio (Columbus)
    "aws:us-west-1": (37.77, -122.42),      # N. California (San Francisco)
    "aws:us-west-2": (45.84, -119.70),      # Oregon (Boardman)
    "aws:ca-central-1": (45.50, -73.57),    # Montreal
    "aws:sa-east-1": (-23.55, -46.63),      # Sao Paulo
    "aws:eu-west-1": (53.35, -6.26),        # Ireland (Dublin)
    "aws:eu-west-2": (51.51, -0.13),        # London
    "aws:eu-west-3": (48.86, 2.35),         # Paris
    "aws:eu-central-1": (50.11, 8.68),      # Frankfurt
    "aws:eu-central-2": (47.37, 8.54),      # Zurich
    "aws:eu-north-1": (59.33, 18.07),       # Stockholm
    "aws:eu-south-1": (45.46, 9.19),        # Milan
    "aws:eu-south-2": (41.65, -0.88),       # Spain (Zaragoza, Aragon)
    "aws:me-south-1": (26.07, 50.56),       # Bahrain
    "aws:me-central-1": (25.20, 55.27),     # UAE (Dubai)
    "aws:af-south-1": (-33.92, 18.42),      # Cape Town
    "aws:ap-east-1": (22.32, 114.17),       # Hong Kong
    "aws:ap-south-1": (19.08, 72.88),       # Mumbai
    "aws:ap-northeast-1": (35.68, 139.69),  # Tokyo
    "aws:ap-northeast-2": (37.57, 126.98),  # Seoul
    "aws:ap-northeast-3": (34.69, 135.50),  # Osaka
    "aws:ap-southeast-1": (1.35, 103.82),   # Singapore
    "aws:ap-southeast-2": (-33.87, 151.21), # Sydney
    "aws:ap-southeast-3": (-6.21, 106.85),  # Jakarta
}


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
