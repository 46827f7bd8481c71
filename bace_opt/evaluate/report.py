"""What the evaluator returns: a ``Report`` (feasibility, its ``Violation``s, recomputed figures and metrics),
and ``format_metrics``, the metrics as the ``key: value`` lines every command prints.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from .._format import short, unit_of
from .figures import JobFigures


@dataclass(frozen=True)
class Violation:
    rule: int
    message: str
    job: str | None = None
    resource: str | None = None
    t0: float | None = None
    t1: float | None = None

    def __str__(self) -> str:
        return f"[rule {self.rule}] {self.message}"


@dataclass
class Report:
    """Feasibility and recomputed figures of a schedule."""
    feasible: bool
    violations: list[Violation]
    figures: dict[str, JobFigures]
    metrics: dict[str, Any]
    statuses: dict[str, str] = field(default_factory=dict)
    arrival_s: dict[str, float] = field(default_factory=dict)

    def to_frame(self):
        """One row per job of the schedule: status and arrival for every job, the figures for done jobs
        (money as ``electricity_usd``, ``egress_usd`` and their total ``cost_usd``)."""
        import pandas as pd
        rows = []
        for name, st in self.statuses.items():
            f = self.figures.get(name)
            row = {"job": name, "status": st, "arrival_s": self.arrival_s.get(name)}
            if f is not None:
                row.update(arrival_s=f.arrival_s, start_s=f.start_s, finish_s=f.finish_s, wait_s=f.wait_s,
                           jct_s=f.jct_s, run_s=f.run_s, iteration_s=f.iteration_s, tau_s=f.tau_s,
                           demand_gbps=f.demand_gbps, power_kw=f.power_kw, energy_kwh=f.energy_kwh,
                           electricity_usd=f.electricity_usd, egress_usd=f.egress_usd, cost_usd=f.cost_usd,
                           comm_bound=f.comm_bound, stall_s=f.stall_s)
            rows.append(row)
        return pd.DataFrame(rows).set_index("job") if rows else pd.DataFrame()

    def summary(self) -> str:
        lines = [f"feasible: {'yes' if self.feasible else 'NO'} ({len(self.violations)} violation(s))"]
        lines += ["  " + str(v) for v in self.violations[:50]]
        if len(self.violations) > 50:
            lines.append(f"  ... and {len(self.violations) - 50} more")
        lines += format_metrics(self.metrics)
        return "\n".join(lines)


_NOTES = {
    "total_electricity_usd": "electricity: active GPUs only (cost reading a; the paper's cost)",
    "total_egress_usd": "egress",
    "total_cost_usd": "total = electricity + egress (cost reading c)",
    "total_electricity_incl_idle_usd": "electricity + idle GPUs of every region over the makespan (cost reading b)",
    "idle_electricity_usd": "idle GPUs of every region over the makespan",
    "energy_weighted_price_usd_per_kwh": "total_electricity_usd / total_energy_kwh",
    "peak_link_utilisation": "largest reserved/capacity of any link at any instant",
    "mean_link_utilisation": "time-weighted over the makespan; mean over links carrying traffic",
    "mean_link_utilisation_all_links": "time-weighted over the makespan; mean over all links",
    "total_stall_s": "run time lost to communication-bound hops (against every hop at b_j)",
    "blocking_probability": "rejected in blocking mode / jobs",
}
MAX_LINK_LINES = 12


def format_metrics(metrics: Mapping[str, Any], links: bool = True, keys: Sequence[str] | None = None) -> list[str]:
    """The metrics as ``key: value`` lines (the keys of the schedule file; money under its three names, each
    with what it counts), then one line per link carrying traffic.  Used by every command that prints metrics.
    ``keys``: only these (in this order, where present)."""
    lines = []
    items = metrics.items() if keys is None else [(k, metrics[k]) for k in keys if k in metrics]
    for k, v in items:
        if isinstance(v, Mapping):
            continue
        note = _NOTES.get(k)
        lines.append(f"{k}: {short(v, unit_of(k))}" + (f"   # {note}" if note else ""))
    per = metrics.get("link_utilisation") or {}
    if links and per:
        lines.append("link utilisation (reserved/capacity, both directions; peak, time-weighted mean):")
        ranked = sorted(per.items(), key=lambda kv: -kv[1]["peak"])
        for name, d in ranked[:MAX_LINK_LINES]:
            lines.append(f"  {name}: peak {short(d['peak'])}, mean {short(d['mean'])}")
        if len(ranked) > MAX_LINK_LINES:
            lines.append(f"  ... and {len(ranked) - MAX_LINK_LINES} more (--json lists every link)")
    return lines
