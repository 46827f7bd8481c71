"""How far above the certified lower bound each policy lands (issue 30 item 2).

A P2 bracket (``gaps.report.p2_figures``; ``python -m benchmarks.bench_schedule --brackets``) gives, per
instance, a lower bound on the mean JCT of every schedule (``lower_s``) and one on its cost (``cost_lower_usd``:
electricity of active GPUs, plus egress only where the instance's objective counts it; the paper family does
not), each valid for the continuous-time offline problem (models/schedule.md section 8).  Every online policy's
schedule is one such schedule, so its mean JCT and cost lie at or above them; the distance above is an upper
bound on how far the policy is from the offline optimum.

``distance_to_bound`` joins the rows of a suite (``regimes``, ``paper``: one row per policy, instance and seed,
priced by the evaluator) with brackets by instance name and averages per policy and regime over the seeds that
have a bracket.  Like with like: a run that left jobs unfinished is not placed (its mean JCT is over fewer
jobs than the bound's); its seeds are counted in ``unfinished``.  A policy below a lower bound means the bound
is wrong: it is counted in ``below_bound`` and the report says so, never hidden.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

import pandas as pd

from ..errors import InputError
from .compare import policy_label

#: the bracket columns read (the rest of a bracket file is ignored)
BRACKET_COLUMNS = ("instance", "lower_s", "cost_lower_usd")
#: relative slack below which a figure counts as below its bound (float rounding of the evaluator's sums)
BELOW_TOL = 1e-9


def read_brackets(paths: Iterable) -> pd.DataFrame:
    """The brackets of every CSV in ``paths`` (columns ``BRACKET_COLUMNS``; ``cost_lower_usd`` may be empty),
    one row per instance, indexed by instance name.  An instance bracketed twice keeps the larger of each bound
    (both are valid lower bounds, so their maximum is).  A missing file or column is an ``InputError`` naming it."""
    frames = []
    for p in paths:
        p = Path(p)
        try:
            df = pd.read_csv(p, keep_default_na=False, na_values=[""])
        except FileNotFoundError:
            raise InputError(f"brackets file not found: {p}") from None
        except OSError as e:            # a folder, no permission, an I/O error
            raise InputError(f"{p}: cannot read the brackets file: {e.strerror or e}") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
            raise InputError(f"{p}: not a brackets CSV ({type(e).__name__}: {e})") from None
        missing = [c for c in BRACKET_COLUMNS[:2] if c not in df.columns]
        if missing:
            raise InputError(f"{p}: not a brackets CSV: no column {', '.join(missing)} "
                             f"(expected {', '.join(BRACKET_COLUMNS)}, as benchmarks.bench_schedule --brackets writes)")
        if "cost_lower_usd" not in df.columns:
            df["cost_lower_usd"] = float("nan")
        for col in ("lower_s", "cost_lower_usd"):
            bad = pd.to_numeric(df[col], errors="coerce")
            nonnum = df[col].notna() & bad.isna()
            if nonnum.any():
                line = int(nonnum.to_numpy().nonzero()[0][0]) + 2
                raise InputError(f"{p}:{line}: {col}: not a number: {df[col][nonnum].iloc[0]!r}")
            df[col] = bad
        frames.append(df[list(BRACKET_COLUMNS)])
    if not frames:
        return pd.DataFrame(columns=list(BRACKET_COLUMNS[1:]), index=pd.Index([], name="instance"))
    return pd.concat(frames).groupby("instance").max()


def _finished_all(row) -> bool:
    try:
        return int(row["jobs_done"]) == int(row["jobs"])
    except (TypeError, ValueError):
        return False


def distance_to_bound(df: pd.DataFrame, brackets: pd.DataFrame) -> pd.DataFrame:
    """Per policy and regime (the rows' ``size`` label): how far above the lower bounds its mean JCT and its
    electricity cost land, in % (mean over bracketed seeds, and the largest), the seeds bracketed, those not
    placed because jobs were left unfinished, and those below a bound (a wrong bound).  Empty when no row's
    instance has a bracket."""
    if df.empty or brackets.empty:
        return pd.DataFrame()
    d = df[df["method"].astype(str).str.startswith("sim:") & df["instance"].isin(brackets.index)]
    out = []
    for (label, method), grp in d.groupby(["size", "method"], sort=True):
        jct, cost, unfinished, below = [], [], 0, 0
        for _, r in grp.iterrows():
            if r.get("status") != "done" or not _finished_all(r):
                unfinished += 1
                continue
            b = brackets.loc[r["instance"]]
            j = float(r["avg_jct_s"]) / float(b["lower_s"]) - 1.0
            jct.append(j)
            below += j < -BELOW_TOL
            if not math.isnan(float(b["cost_lower_usd"])) and float(b["cost_lower_usd"]) > 0:
                c = float(r["total_electricity_usd"]) / float(b["cost_lower_usd"]) - 1.0
                cost.append(c)
                below += c < -BELOW_TOL
        out.append({"policy": policy_label(str(method)), "regime": label, "seeds": len(grp),
                    "unfinished": unfinished, "below_bound": below,
                    "jct_over_lb_pct": 100 * math.fsum(jct) / len(jct) if jct else float("nan"),
                    "jct_over_lb_max_pct": 100 * max(jct) if jct else float("nan"),
                    "cost_over_lb_pct": 100 * math.fsum(cost) / len(cost) if cost else float("nan"),
                    "cost_over_lb_max_pct": 100 * max(cost) if cost else float("nan")})
    return pd.DataFrame(out)


def bound_report(dist: pd.DataFrame, md) -> str:
    """The markdown section of ``distance_to_bound``'s table (``md`` renders a frame), with a warning line
    first when any policy lies below a bound."""
    if dist.empty:
        return ""
    text = ["### Distance to the certified lower bound (P2 brackets)\n\n"
            "Per policy and regime, over the seeds whose instance has a P2 bracket: its mean JCT and its electricity "
            "cost as % above the bracket's lower bounds (mean over seeds / largest). The optimum lies at or above "
            "the bound, so the policy is at most this far from optimal. Seeds whose run left jobs unfinished are "
            "not placed (`unfinished`)."]
    bad = dist[dist["below_bound"] > 0]
    if not bad.empty:
        text.append("**A policy lies below a lower bound** (" + ", ".join(
            f"{r.policy} in {r.regime}" for r in bad.itertuples()) + "): that bound is wrong; do not use these "
            "brackets.")
    text.append(md(dist.set_index(["regime", "policy"]), ".3g"))
    return "\n\n".join(text)
