"""The claims map: where each of the BACE-Pipe paper's claims holds, in which regime, and why.

Input: the rows of the ``regimes`` suite (the paper family across bandwidth sources and scales, loads and
arrival patterns; every figure priced by the evaluator).  Each claim of the paper (``CLAIMS``) is a
relative change of one policy's figure against another's with the published range.  For every regime it
applies to, the change is measured per seed, only between runs that finished the same jobs
(``compare.compare_rows``), and averaged over seeds; the verdict is

    holds            the mean change lies in the published range (a point claim: within 25 % of its value)
    direction only   same sign as the claim, outside the range
    does not hold    opposite sign, or |change| < 1 % where the claim says more
    not comparable   some seed's two runs finished different sets of jobs (the counts are given)

Cost claims are read under each cost reading (``READINGS``): the paper's (electricity of active GPUs),
idle GPUs of every region over the makespan added, and egress added.  The mechanism figures (peak link
use, stall time, energy-weighted price, unfinished jobs) are the evaluator's, per regime, for the policies
of the claim.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..files import atomic_savefig
from .compare import compare_rows, parse_per_job, policy_column, policy_label

BASELINES = ["lcf", "ldf", "cr-lcf", "cr-ldf"]

#: cost readings: name -> (description, columns summed)
READINGS = {
    "electricity": ("electricity of active GPUs (the paper's)", ("total_electricity_usd",)),
    "with-idle": ("plus idle GPUs of every region over the makespan", ("total_electricity_incl_idle_usd",)),
    "with-egress": ("plus egress", ("total_electricity_usd", "total_egress_usd")),
}


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    a: str                 # the policy whose change is measured ...
    b: str                 # ... against this one: (a / b - 1) * 100
    metric: str            # "jct" or "cost"
    lo: float              # published range of the change (%)
    hi: float
    setting: str           # which regimes the paper's figure is for: main | bw0.3 | bw1.5 | gpu0.5 | gpu1.25 | jobs24


def _claims() -> list[Claim]:
    out = []
    for base in BASELINES:
        out.append(Claim(f"jct-vs-{base}", f"BACE-Pipe's average JCT against {base.upper()}", "bace-pipe", base,
                         "jct", -64.7, -27.9, "main"))
    for base in BASELINES:
        out.append(Claim(f"cost-vs-{base}", f"BACE-Pipe's cost against {base.upper()}", "bace-pipe",
                         base, "cost", -30.6, -12.6, "main"))
    out.append(Claim("paradox-ldf", "cross-region paradox: CR-LDF's JCT above LDF's", "cr-ldf", "ldf", "jct",
                     28.8, 28.8, "main"))
    out.append(Claim("paradox-lcf", "cross-region paradox: CR-LCF's JCT above LCF's", "cr-lcf", "lcf", "jct",
                     13.1, 13.1, "main"))
    for base in BASELINES:
        out.append(Claim(f"bw0.3-cost-vs-{base}", f"bandwidth x0.3: BACE-Pipe's cost against {base.upper()}",
                         "bace-pipe", base, "cost", -34.9, -29.2, "bw0.3"))
    for base in BASELINES:
        out.append(Claim(f"bw1.5-jct-{base}", f"bandwidth x1.5: {base.upper()}'s JCT above BACE-Pipe's", base,
                         "bace-pipe", "jct", 42.9, 240.3, "bw1.5"))
    for base in BASELINES:
        out.append(Claim(f"gpu0.5-jct-vs-{base}", f"GPUs x0.5: BACE-Pipe's JCT against {base.upper()}",
                         "bace-pipe", base, "jct", -69.9, -32.2, "gpu0.5"))
    for base in BASELINES:
        out.append(Claim(f"gpu1.25-jct-{base}", f"GPUs x1.25: {base.upper()}'s JCT above BACE-Pipe's", base,
                         "bace-pipe", "jct", 5.5, 20.7, "gpu1.25"))
        out.append(Claim(f"gpu1.25-cost-{base}", f"GPUs x1.25: {base.upper()}'s cost above BACE-Pipe's", base,
                         "bace-pipe", "cost", 0.2, 9.4, "gpu1.25"))
    for base in BASELINES:
        out.append(Claim(f"jobs24-jct-vs-{base}", f"24 jobs: BACE-Pipe's JCT against {base.upper()}", "bace-pipe",
                         base, "jct", -23.3, -9.7, "jobs24"))
        out.append(Claim(f"jobs24-cost-vs-{base}", f"24 jobs: BACE-Pipe's cost against {base.upper()} (about -1 %)",
                         "bace-pipe", base, "cost", -2.0, -0.5, "jobs24"))
    for abl, (pj, pc) in {"priority": (41.9, 5.0), "pathfinder": (52.5, 20.5), "costmin": (4.6, 13.9)}.items():
        out.append(Claim(f"ablation-{abl}-jct", f"ablation: removing {abl} raises JCT", f"bace-pipe-no-{abl}",
                         "bace-pipe", "jct", pj, pj, "main"))
        out.append(Claim(f"ablation-{abl}-cost", f"ablation: removing {abl} raises cost", f"bace-pipe-no-{abl}",
                         "bace-pipe", "cost", pc, pc, "main"))
    return out


CLAIMS = _claims()


def regime_matches(reg: dict, setting: str) -> bool:
    """Whether a regime (``suites.parse_regime``) is the paper's own setting of a claim, at either bandwidth
    source: ``main`` is 8 jobs in a batch at x1; ``bw0.3`` the same at x0.3; ``gpu0.5`` the same with half
    the GPUs; ``jobs24`` 24 jobs in a batch at x1."""
    base = reg["jobs"] == 8 and reg["arrivals"] == "batch"
    gpu1 = reg["gpu_scale"] == 1.0
    return {"main": base and gpu1 and reg["bandwidth_scale"] == 1.0,
            "bw0.3": base and gpu1 and reg["bandwidth_scale"] == 0.3,
            "bw1.5": base and gpu1 and reg["bandwidth_scale"] == 1.5,
            "gpu0.5": base and reg["gpu_scale"] == 0.5,
            "gpu1.25": base and reg["gpu_scale"] == 1.25,
            "jobs24": reg["jobs"] == 24 and reg["arrivals"] == "batch" and reg["bandwidth_scale"] == 1.0
            and gpu1}[setting]


def in_scope(reg: dict, setting: str) -> bool:
    """The regimes a claim is mapped over: the main claims (setting ``main``) over every regime; a
    sensitivity claim over the regimes that share its change (x0.3 or x1.5 bandwidth at any load and
    arrivals; x0.5 or x1.25 GPUs; 24 jobs at any bandwidth and arrivals)."""
    if setting == "main":
        return True
    if setting in ("bw0.3", "bw1.5"):
        return reg["bandwidth_scale"] == float(setting[2:]) and reg["gpu_scale"] == 1.0
    if setting in ("gpu0.5", "gpu1.25"):
        return reg["gpu_scale"] == float(setting[3:])
    return reg["jobs"] == 24 and reg["gpu_scale"] == 1.0


def _value(row, claim_metric: str, reading: str) -> float:
    if claim_metric == "jct":
        return _f(row.get("avg_jct_s"))
    return math.fsum(_f(row.get(c)) for c in READINGS[reading][1])


def _f(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def verdict(change: float, c: Claim) -> str:
    if math.isnan(change):
        return "no data"
    lo, hi = c.lo, c.hi
    if lo == hi:
        lo, hi = sorted((lo * 0.75, hi * 1.25))
    if lo <= change <= hi:
        return "holds"
    sign = 1 if (c.lo + c.hi) > 0 else -1
    if change * sign >= 1.0:
        return "direction only"
    return "does not hold"


def measure(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (claim, cost reading, regime): mean change over comparable seeds, verdict, counts and the
    mechanism figures."""
    from .compare import finished
    from .suites import parse_regime
    df = finished(df)
    d = df[df["method"].str.startswith("sim:")].copy()
    d["policy"] = policy_column(d["method"])
    records = d.to_dict("records")
    for r in records:      # parsed once here, not at each of the claims x readings comparisons of the row
        r["per_job"] = parse_per_job(r.get("per_job"))
    by = {(r["size"], int(r["seed"]), r["policy"]): r for r in records}
    regimes = sorted(d["size"].unique())
    seeds = sorted({int(s) for s in d["seed"].unique()})
    rows = []
    for c in CLAIMS:
        readings = ["-"] if c.metric == "jct" else list(READINGS)
        for reading in readings:
            for label in regimes:
                reg = parse_regime(label)
                if not in_scope(reg, c.setting):
                    continue
                changes, nc, notes = [], 0, []
                mech = {"a": [], "b": []}
                for s in seeds:
                    ra, rb = by.get((label, s, c.a)), by.get((label, s, c.b))
                    if ra is None or rb is None:
                        continue
                    cmp = compare_rows(ra, rb)
                    mech["a"].append(ra)
                    mech["b"].append(rb)
                    if not cmp.comparable:
                        nc += 1
                        notes.append(f"seed {s}: {c.a} {cmp.a_done}, {c.b} {cmp.b_done} of {cmp.jobs} finished")
                        continue
                    va, vb = _value(ra, c.metric, reading), _value(rb, c.metric, reading)
                    changes.append((va / vb - 1) * 100 if vb else float("nan"))
                if not mech["a"]:
                    continue
                mean = math.fsum(changes) / len(changes) if changes and not nc else float("nan")
                v = "not comparable" if nc else verdict(mean, c)
                rows.append({
                    "claim": c.id, "reading": reading, "regime": label, **reg,
                    "paper_setting": regime_matches(reg, c.setting),
                    "change_pct": mean, "paper_lo": c.lo, "paper_hi": c.hi, "verdict": v,
                    "seeds": len(mech["a"]), "note": "; ".join(notes),
                    **{f"{k}_{side}": _mean(mech[side], col) for side in ("a", "b")
                       for k, col in (("peak_link_util", "peak_link_utilisation"), ("stall_h", "total_stall_s"),
                                      ("price", "energy_weighted_price_usd_per_kwh"),
                                      ("unfinished", "_unfinished"))},
                })
    out = pd.DataFrame(rows)
    if not out.empty:
        out["stall_h_a"] /= 3600
        out["stall_h_b"] /= 3600
    return out


def _mean(rows, col) -> float:
    vals = []
    for r in rows:
        if col == "_unfinished":
            vals.append(_f(r.get("jobs")) - _f(r.get("jobs_done")))
        else:
            vals.append(_f(r.get(col)))
    vals = [v for v in vals if not math.isnan(v)]
    return math.fsum(vals) / len(vals) if vals else float("nan")


def claims_map(m: pd.DataFrame) -> pd.DataFrame:
    """One row per (claim, reading): the change in the paper's own setting (per source), and in how many of
    all regimes the claim holds / holds in direction / fails / is not comparable."""
    rows = []
    for (cid, reading), g in m.groupby(["claim", "reading"], sort=False):
        c = next(x for x in CLAIMS if x.id == cid)
        row = {"claim": c.text, "reading": reading,
               "paper_pct": f"{c.lo:+g}" if c.lo == c.hi else f"{c.lo:+g}..{c.hi:+g}"}
        for src in ("nominal", "measured"):
            ps = g[g["paper_setting"] & (g["source"] == src)]
            row[f"{src}_setting_pct"] = (_fmt_change(ps.iloc[0]) if len(ps) else "-")
        counts = g["verdict"].value_counts()
        row["holds"] = f"{int(counts.get('holds', 0))}/{len(g)}"
        row["direction_only"] = int(counts.get("direction only", 0))
        row["fails"] = int(counts.get("does not hold", 0))
        row["not_comparable"] = int(counts.get("not comparable", 0))
        held = g[g["verdict"] == "holds"]["regime"].tolist()
        row["holds_in"] = (", ".join(held[:4]) + (f" (+{len(held) - 4} more)" if len(held) > 4 else "")
                           if held else "nowhere")
        rows.append(row)
    return pd.DataFrame(rows)


def _fmt_change(r) -> str:
    if r["verdict"] == "not comparable":
        return "n/c"
    return f"{r['change_pct']:+.1f} ({r['verdict']})"


def mechanism_table(m: pd.DataFrame) -> pd.DataFrame:
    """Per regime: BACE-Pipe's and each baseline's peak link use (%), stall hours and unfinished jobs
    (``peak% / stall h / unfinished``), BACE-Pipe's energy-weighted price, and BACE-Pipe's JCT change against
    the baseline closest to it among those that finished the same jobs (from the JCT-vs-baseline claims)."""
    g = m[m["claim"].str.startswith("jct-vs-")]
    rows = []

    def cell(util, stall_h, unfinished):
        u = "-" if math.isnan(util) else f"{100 * util:.0f}%"
        return f"{u} / {stall_h:.1f} h / {unfinished:.0f}"
    for label, grp in g.groupby("regime", sort=False):
        first = grp.iloc[0]
        row = {"regime": label,
               "bace-pipe": cell(first["peak_link_util_a"], first["stall_h_a"], first["unfinished_a"]),
               "bace_price_usd_per_kwh": first["price_a"]}
        for _, r in grp.iterrows():
            base = r["claim"].removeprefix("jct-vs-")
            row[base] = cell(r["peak_link_util_b"], r["stall_h_b"], r["unfinished_b"])
        abl = m[(m["claim"] == "ablation-pathfinder-jct") & (m["regime"] == label)]
        if len(abl):
            a = abl.iloc[0]
            row["no-pathfinder"] = cell(a["peak_link_util_a"], a["stall_h_a"], a["unfinished_a"])
        lcf = grp[grp["claim"] == "jct-vs-lcf"]
        if len(lcf):
            row["lcf_price_usd_per_kwh"] = lcf.iloc[0]["price_b"]
        row["bace_jct_vs_closest_pct"] = _best(grp)
        rows.append(row)
    return pd.DataFrame(rows).sort_values("regime")


def _best(grp) -> float:
    vals = grp[grp["verdict"] != "not comparable"]["change_pct"].dropna()
    return float(vals.max()) if len(vals) else float("nan")


def plot_heatmaps(m: pd.DataFrame, png_dir: Path, stem: str = "regimes") -> list[str]:
    """Heatmaps of BACE-Pipe's mean JCT and electricity change against each baseline, over bandwidth
    (source x scale) and load (jobs x arrivals); cells whose runs are not comparable are marked n/c."""
    import matplotlib
    import matplotlib.pyplot as plt
    if matplotlib.get_backend().lower() not in ("agg", "module://matplotlib_inline.backend_inline"):
        plt.switch_backend("Agg")
    names = []
    base = m[(m["gpu_scale"] == 1.0)]
    for metric, prefix, reading in (("JCT", "jct-vs-", "-"), ("electricity", "cost-vs-", "electricity")):
        sub = base[base["claim"].str.startswith(prefix) & (base["reading"] == reading)]
        if sub.empty:
            continue
        cols = sorted({(r["source"], r["bandwidth_scale"]) for _, r in sub.iterrows()},
                      key=lambda t: (t[0] != "nominal", -t[1]))
        rows_ = sorted({(r["jobs"], r["arrivals"]) for _, r in sub.iterrows()})
        fig, axes = plt.subplots(2, 2, figsize=(11, 6.5), sharex=True, sharey=True)
        for ax, b in zip(axes.flat, BASELINES):
            s = sub[sub["claim"] == f"{prefix}{b}"]
            grid = [[float("nan")] * len(cols) for _ in rows_]
            nc = [[False] * len(cols) for _ in rows_]
            for _, r in s.iterrows():
                i, j = rows_.index((r["jobs"], r["arrivals"])), cols.index((r["source"], r["bandwidth_scale"]))
                grid[i][j] = r["change_pct"]
                nc[i][j] = r["verdict"] == "not comparable"
            im = ax.imshow(grid, cmap="RdBu_r", vmin=-60, vmax=60, aspect="auto")
            for i in range(len(rows_)):
                for j in range(len(cols)):
                    txt = "n/c" if nc[i][j] else ("" if math.isnan(grid[i][j]) else f"{grid[i][j]:+.0f}")
                    ax.text(j, i, txt, ha="center", va="center", fontsize=7)
            ax.set_title(f"vs {b.upper()}", fontsize=9)
            ax.set_xticks(range(len(cols)), [f"{'nom' if s_ == 'nominal' else 'meas'} x{x:g}" for s_, x in cols],
                          rotation=45, ha="right", fontsize=7)
            ax.set_yticks(range(len(rows_)), [f"{n} jobs, {a}" for n, a in rows_], fontsize=7)
        fig.colorbar(im, ax=axes, shrink=0.8, label=f"BACE-Pipe {metric} change (%)")
        fig.suptitle(f"BACE-Pipe's {metric} change against each baseline (mean over seeds; n/c: the runs "
                     f"finished different jobs)", fontsize=9)
        name = f"{stem}-{metric.lower()}-heatmap.png"
        atomic_savefig(fig, Path(png_dir) / name, dpi=110, bbox_inches="tight")
        plt.close(fig)
        names.append(name)
    return names


def versus(df: pd.DataFrame, reference: str = "bace-pipe", policies=None) -> pd.DataFrame:
    """Every policy the claims do not name (a policy of one's own, run with ``bench --policy``; or only those of
    ``policies``, as given to ``--policy``) beside ``reference``, per regime: the mean change of mean JCT and of
    cost (electricity, the paper's reading) against it over the seeds where both finished the same jobs
    (``compare.compare_rows``), and how many seeds were not comparable.  Negative is better.  One row per policy
    and regime, the policy in column ``policy``; empty when the rows hold no such policy."""
    from .compare import finished
    named = {c.a for c in CLAIMS} | {c.b for c in CLAIMS} | {reference}
    d = finished(df)
    d = d[d["method"].str.startswith("sim:")].copy()
    d["policy"] = d["method"].str.split(":", n=1).str[1]
    records = d.to_dict("records")
    by = {(r["size"], int(r["seed"]), r["policy"]): r for r in records}
    others = sorted({r["policy"] for r in records} - named)
    if policies is not None:
        others = [p for p in others if p in set(policies)]
    rows = []
    for pol in others:
        for label in sorted(d["size"].unique()):
            jct, cost, nc = [], [], 0
            for s in sorted({int(x) for x in d["seed"].unique()}):
                ra, rb = by.get((label, s, pol)), by.get((label, s, reference))
                if ra is None or rb is None:
                    continue
                if not compare_rows(ra, rb).comparable:
                    nc += 1
                    continue
                jct.append((_value(ra, "jct", "-") / _value(rb, "jct", "-") - 1) * 100)
                cost.append((_value(ra, "cost", "electricity") / _value(rb, "cost", "electricity") - 1) * 100)
            if jct or nc:
                rows.append({"policy": policy_label(f"sim:{pol}"), "regime": label, "seeds": len(jct) + nc, "not_comparable": nc,
                             f"jct_vs_{reference}_pct": math.fsum(jct) / len(jct) if jct and not nc else float("nan"),
                             f"cost_vs_{reference}_pct": math.fsum(cost) / len(cost) if cost and not nc else float("nan")})
    return pd.DataFrame(rows)
