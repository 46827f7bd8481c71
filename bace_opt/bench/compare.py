"""Like-with-like comparison of policies: the one place every report compares two runs.

A policy that leaves jobs unfinished must never look faster or cheaper than one that finished them: its
average JCT is taken over fewer (often shorter) jobs, and its electricity omits the jobs it never ran.  So
two runs of one instance are compared only when they finished **the same set of jobs** (``comparable``);
otherwise the comparison carries the counts and no headline change.  For information (never for ranking)
it also gives the change over the jobs *both* finished, from the per-job figures the evaluator priced
(``per_job`` column: ``{job: [jct_s, electricity_usd, egress_usd]}``).

Ranking (``rank_key``): more jobs finished first, then the metric.  A policy with unfinished jobs is
therefore never ranked above one that finished more.
"""
from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass
from typing import Any, Mapping

from .._format import shown

#: the per-job figures a results row may carry, in the order of the ``per_job`` lists
PER_JOB_FIELDS = ("jct_s", "electricity_usd", "egress_usd")
#: per-job figures are stored up to this many done jobs (larger runs: set comparison by count only)
PER_JOB_MAX = 2000


def per_job_figures(figures: Mapping[str, Any]) -> dict[str, list[float]] | None:
    """``{job: [jct_s, electricity_usd, egress_usd]}`` from an evaluator report's ``figures`` (done jobs)."""
    if len(figures) > PER_JOB_MAX:
        return None
    return {n: [f.jct_s, f.electricity_usd, f.egress_usd] for n, f in sorted(figures.items())}


def parse_per_job(cell: Any) -> dict[str, list[float]] | None:
    """The ``per_job`` cell of a results row (JSON text, a dict, or empty/NaN) as a dict, or None."""
    if isinstance(cell, dict):
        return cell
    if cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell == "":
        return None
    try:
        d = json.loads(cell)
    except (TypeError, ValueError):
        return None
    return d if isinstance(d, dict) else None


@dataclass(frozen=True)
class Comparison:
    """Run ``a`` against run ``b`` (same instance).  ``change_pct`` fields are (a / b - 1) * 100 and are
    set only when ``comparable`` (both finished the same jobs); ``common_*`` fields are over the jobs both
    finished, for information only."""
    a_done: int
    b_done: int
    jobs: int
    comparable: bool
    jct_change_pct: float
    electricity_change_pct: float
    egress_change_pct: float
    total_change_pct: float
    common_jobs: int
    common_jct_change_pct: float
    common_electricity_change_pct: float

    @property
    def note(self) -> str:
        if self.comparable:
            return ""
        return (f"not comparable: {self.a_done} vs {self.b_done} of {self.jobs} jobs finished"
                + (f" ({self.common_jobs} in common)" if self.common_jobs >= 0 else ""))


def _pct(a: float, b: float) -> float:
    if a is None or b is None:
        return float("nan")
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b) or b == 0:
        return float("nan")
    return (a / b - 1.0) * 100.0


def _num(row: Mapping[str, Any], key: str) -> float:
    v = row.get(key)
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _count(row: Mapping[str, Any], key: str) -> int:
    """A count of a row as an int; -1 when the row has none (a failed run: NaN or empty)."""
    v = _num(row, key)
    return int(v) if math.isfinite(v) else -1


#: the policies the user named in this command (``bench --policy``), spec -> the policy's own ``name``: only these
#: are labelled by their name (``policy_names``); every other spec is labelled by its text
_NAMED: dict[str, str] = {}


@contextlib.contextmanager
def policy_names(names: Mapping[str, str]):
    """Within the block, label the policies ``names`` (spec -> ``name``, of policies the user named and this
    process built: ``bench --policy``) by their ``name`` (``policy_label``)."""
    old = dict(_NAMED)
    _NAMED.update({k: v for k, v in names.items() if isinstance(v, str) and v})
    try:
        yield
    finally:
        _NAMED.clear()
        _NAMED.update(old)


def policy_label(method: str) -> str:
    """The policy a results row's ``method`` runs (``sim:SPEC``, ``p1-heur:SPEC``), as tables show it: the text
    of SPEC, its control characters escaped.  A results file is data: nothing it names is imported or run here,
    whatever the prefix.  Only a policy the user named in this command (``policy_names``: ``bench --policy``) is
    labelled by its ``name``, with the spec where that name is a shipped policy's."""
    spec = str(method).split(":", 1)[1] if ":" in str(method) else str(method)
    name = _NAMED.get(spec)
    if name is None or name == spec:
        return shown(spec)
    from ..policies.registry import REGISTRY
    return shown(f"{name} ({spec})" if name in REGISTRY else name)


def policy_column(methods):
    """``policy_label`` of each entry of a pandas Series of methods."""
    return methods.map(policy_label)


def finished(df):
    """The rows of a results DataFrame whose run did not fail (``spec.FAILED_STATUSES``: ``error``,
    ``infeasible-schedule``; no figures to compare)."""
    from .spec import FAILED_STATUSES
    return df[~df["status"].isin(FAILED_STATUSES)] if "status" in df else df


def compare_rows(a: Mapping[str, Any], b: Mapping[str, Any]) -> Comparison:
    """Compare two results rows of the same instance (see module doc)."""
    pa, pb = parse_per_job(a.get("per_job")), parse_per_job(b.get("per_job"))
    a_done, b_done = _count(a, "jobs_done"), _count(b, "jobs_done")
    jobs = _count(a, "jobs") if _count(a, "jobs") >= 0 else max(a_done, b_done)
    if a_done < 0 or b_done < 0:     # a run without figures (it failed): nothing to compare
        pa = pb = None
        same, common = False, None
    elif pa is not None and pb is not None:
        same = set(pa) == set(pb)
        common = sorted(set(pa) & set(pb))
    else:
        # without per-job figures only the counts can be compared: equal counts of ALL jobs is the same set
        same = a_done == b_done == jobs
        common = None
    nan = float("nan")
    if common is not None and common:
        ja = math.fsum(pa[n][0] for n in common)
        jb = math.fsum(pb[n][0] for n in common)
        ea = math.fsum(pa[n][1] for n in common)
        eb = math.fsum(pb[n][1] for n in common)
        cj, ce = _pct(ja, jb), _pct(ea, eb)
    else:
        cj = ce = nan
    if same:
        jct = _pct(_num(a, "avg_jct_s"), _num(b, "avg_jct_s"))
        el = _pct(_num(a, "total_electricity_usd"), _num(b, "total_electricity_usd"))
        eg = _pct(_num(a, "total_egress_usd"), _num(b, "total_egress_usd"))
        tot = _pct(_num(a, "total_cost_usd"), _num(b, "total_cost_usd"))
    else:
        jct = el = eg = tot = nan
    return Comparison(a_done=a_done, b_done=b_done, jobs=jobs, comparable=same, jct_change_pct=jct,
                      electricity_change_pct=el, egress_change_pct=eg, total_change_pct=tot,
                      common_jobs=len(common) if common is not None else -1,
                      common_jct_change_pct=cj, common_electricity_change_pct=ce)


def rank_key(jobs_done: float, metric: float) -> tuple:
    """Sort key: more jobs finished first, then the smaller metric (NaN last)."""
    m = float(metric) if metric is not None else float("nan")
    return (-float(jobs_done), math.isnan(m), m if not math.isnan(m) else 0.0)
