"""How the command line prints numbers: short, with their unit (one place, so every command agrees).

    short(20.5978139, "s")    -> '20.6 s'
    short(243721.179, "s")    -> '243,721 s (67.7 h)'
    short(146.308256, "USD")  -> '146.31 USD'
    short(0.00026509, None)   -> '0.000265'

Figures keep four significant digits (money two decimals from 100 USD up); large figures get thousands
separators instead of an exponent; seconds of an hour or more also show hours.  ``--json`` output is never
shortened: it carries the full floats.
"""
from __future__ import annotations

import math


def short(v, unit: str | None = None, digits: int = 4) -> str:
    """``v`` with ``digits`` significant digits (no exponent for |v| < 1e15) and its unit; '-' for None."""
    if v is None:
        return "-"
    if isinstance(v, bool) or isinstance(v, int):
        s = f"{v:,}" if abs(v) >= 10_000 else str(v)
    elif isinstance(v, float):
        if not math.isfinite(v):
            s = str(v)
        elif v == 0:
            s = "0"
        elif unit == "USD" and abs(v) >= 100:
            s = f"{v:,.2f}"
        elif abs(v) >= 10 ** digits:
            s = f"{v:,.0f}"
        else:
            s = f"{v:.{digits}g}"
    else:
        return str(v)
    if not unit:
        return s
    out = f"{s} {unit}"
    if unit == "s" and isinstance(v, (int, float)) and abs(v) >= 3600:
        out += f" ({v / 3600:.3g} h)"
    return out


def unit_of(name: str) -> str | None:
    """The unit a figure's name carries (``*_s`` seconds, ``*_usd`` USD, ``*_kwh``, ``*_gbps``; jobs_* jobs)."""
    for suffix, unit in (("_usd_per_kwh", "USD/kWh"), ("_s_per_usd", "s/USD"), ("_usd", "USD"), ("_s", "s"),
                         ("_kwh", "kWh"), ("_gbps", "Gbit/s"), ("_h", "h"), ("_pct", "%")):
        if name.endswith(suffix):
            return unit
    if name.startswith("jobs_"):
        return "jobs"
    return None


def pct(v) -> str:
    """A relative gap (fraction) as a percentage: 0.000265 -> '0.0265 %'."""
    return "-" if v is None else f"{100.0 * v:.3g} %"


#: every control character (newline and tab included) as its escape: a name shown inside a line stays one line
_ESCAPES = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), *range(0x7f, 0xa0)]}
_ESCAPES.update({0x0a: "\\n", 0x0d: "\\r", 0x09: "\\t"})


def shown(name) -> str:
    """A name from an input file (instance, job, region) as a line of text shows it: its control characters,
    newlines included, escaped (``a\\nb``), everything else as it is."""
    return str(name).translate(_ESCAPES)

