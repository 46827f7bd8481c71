"""Reports of benchmark results: the tables (markdown) and plots (PNG) of each suite, from the tidy CSV.

Every number here is computed from the rows, which the evaluator priced; nothing is typed in by hand
except the paper's published ranges, printed beside our figures for comparison.  Failed runs (status ``error``
or ``infeasible-schedule``: ``runner.FAILED_STATUSES``) are in no table and no average: ``load`` leaves them
out, and ``report`` lists them, each with its reason, under "Failed runs".  A report is of one suite: a results
file of another registered suite is refused (``runner.check_suite``).
"""
from __future__ import annotations

import json

import math
from pathlib import Path

import pandas as pd

from .._format import shown
from ..files import atomic_savefig
from .compare import finished, policy_column, policy_label
from .markdown import md
from .optical import optical_report
from .runner import FAILED, FAILED_STATUSES, check_suite, read_rows
from .spec import COLUMNS, TIME_LIMIT
from .suites import SUITES

PAPER_JCT = (-64.7, -27.9)     # BACE-Pipe's average-JCT change vs the four baselines (%), as published
PAPER_COST = (-30.6, -12.6)    # total electricity cost change (%)
PAPER_ABLATION = {"bace-pipe-no-priority": (41.9, 5.0), "bace-pipe-no-pathfinder": (52.5, 20.5),
                  "bace-pipe-no-costmin": (4.6, 13.9)}
BASELINES = ["lcf", "ldf", "cr-lcf", "cr-ldf"]


def load(path, repair: bool = True, failed: bool = False) -> pd.DataFrame:
    """The rows of a results file as a DataFrame (read by the runner's reader: a file written by an older
    version is migrated to the current columns, a line cut short is dropped; ``repair=False``: the file is
    only read, never rewritten).  The rows of failed runs (``FAILED_STATUSES``) are left out, so that no figure
    computed from the frame counts them; ``failed=True`` keeps them (the report lists them)."""
    return _frame(read_rows(path, repair=repair), failed)


def _frame(rows: list[dict], failed: bool = False) -> pd.DataFrame:
    if not failed:
        rows = [r for r in rows if r.get("status") not in FAILED_STATUSES]
    df = pd.DataFrame(rows, columns=COLUMNS).replace("", float("nan"))
    df["seed"] = pd.to_numeric(df["seed"], errors="coerce")   # a damaged cell is NaN, not a crash
    for c in ("objective", "bound", "gap", "avg_jct_s", "total_electricity_usd", "total_cost_usd", "p1_cost_usd",
              "total_run_s", "p1_own_set_cost_usd", "decision_s",
              "wall_s", "solve_s", "build_s", "jobs", "jobs_done", "jobs_blocked", "nodes", "total_egress_usd",
              "peak_link_utilisation", "mean_link_utilisation", "links_used", "tight_links", "links_over_90pct",
              "total_stall_s", "total_energy_kwh", "energy_weighted_price_usd_per_kwh", "idle_electricity_usd",
              "total_electricity_incl_idle_usd"):
        if c in df:
            df[c] = pd.to_numeric(df[c], errors="coerce")
    return df


def report(suite: str, path, markdown_path=None, repair: bool = True, brackets=()) -> str:
    """The suite's report of the results file ``path`` (markdown text; also written to ``markdown_path``).

    Failed runs (``FAILED_STATUSES``) are left out of every table and average and listed after them, each
    with its reason (the next ``bench`` of the suite retries them); ``repair=False`` never rewrites the results
    file.  A file that holds the rows of another registered suite is refused (``InputError`` naming it and
    that suite).
    ``brackets``: P2 bracket CSVs (``bounds.read_brackets``); each policy's distance above their lower bounds is
    added wherever an instance of the rows has one (``bounds.distance_to_bound``)."""
    path = Path(path)
    if not path.exists():
        return f"(no results yet: {path})"
    rows = read_rows(path, repair=repair)
    check_suite(path, rows, {suite}, known=SUITES)
    df = _frame(rows, failed=True)
    if df.empty:
        return "(no rows)"
    bad = df["status"].isin(FAILED_STATUSES)
    stopped = (df["status"] == TIME_LIMIT) & df["jobs_done"].isna()    # stopped by a time limit, no result
    failed = df[bad]
    ok = df[~bad & ~stopped]
    fn = {"gap": gap_report, "solvers": solvers_report, "paper": paper_report,
          "regimes": regimes_report, "optical": optical_report, "traces": traces_report}.get(suite, generic_report)
    plots_dir = Path(markdown_path).parent if markdown_path else None
    global _PLOT_STEM
    _PLOT_STEM = Path(markdown_path).stem if markdown_path else suite
    text = fn(ok, plots_dir) if not ok.empty else "(no finished runs)"
    if brackets:
        from .bounds import bound_report, distance_to_bound, read_brackets
        section = bound_report(distance_to_bound(ok, read_brackets(brackets)), md)
        text += "\n\n" + (section or "(no instance of these results has a P2 bracket in "
                                      + ", ".join(str(b) for b in brackets) + ")")
    if len(failed):
        text += "\n\n" + failed_runs(failed)
    if stopped.any():
        text += "\n\n" + failed_runs(df[stopped], heading=f"### Runs stopped by a time limit: {int(stopped.sum())} "
                                                          "(left out of the tables above; not retried)")
    if markdown_path:
        from ..files import atomic_write
        atomic_write(markdown_path, text + "\n")
    return text


def failed_runs(failed: pd.DataFrame, limit: int = 20, heading: str | None = None) -> str:
    """The failed runs, each with its reason (the first ``limit``; the rest counted), under ``heading``."""
    lines = [heading or f"### Failed runs: {len(failed)} (left out of the tables above; the next bench of this "
             f"suite retries them, a policy of one's own only where --policy names it again)", ""]
    for _, r in failed.head(limit).iterrows():
        seed = "" if pd.isna(r["seed"]) else int(r["seed"])
        err = str(r["error"]) if isinstance(r["error"], str) else "(no reason recorded)"
        status = "" if r["status"] == FAILED else f"{r['status']}: "     # the kind of failure, where not plain
        lines.append(f"- {shown(r['size'])} seed {seed} {shown(r['method'])}: {status}"
                     f"{shown(err.splitlines()[0]) if err else err}")
    if len(failed) > limit:
        lines.append(f"- ... and {len(failed) - limit} more")
    return "\n".join(lines)


#: plots are named after the report they belong to (``gap-small.md`` -> ``gap-small-distribution.png``), so
#: two reports written to one folder never overwrite each other's pictures
_PLOT_STEM = "report"


def plot_name(what: str) -> str:
    return f"{_PLOT_STEM}-{what}.png"


# ---------------------------------------------------------------------- gap

def p1_gaps(df: pd.DataFrame) -> pd.DataFrame:
    """Per (instance, heuristic): admissions lost and cost gap against the P1 optimum, both in P1's own
    objective (``p1_cost_usd``: electricity at t0 prices, plus egress only where the instance counts it).

    P1 is lexicographic (jobs started, then cost, then run time); a heuristic that starts fewer jobs is
    worse whatever its cost, so the cost gap is reported only where it starts as many (``same_admissions``)."""
    df = finished(df)
    ex = df[df["method"] == "p1:highs"].set_index(["size", "seed"])
    rows = []
    for _, r in df[df["method"].str.startswith("p1-heur:")].iterrows():
        key = (r["size"], r["seed"])
        if key not in ex.index:
            continue
        e = ex.loc[key]
        if e["status"] != "optimal":
            continue
        same = int(r["jobs_done"]) == int(e["jobs_done"])
        opt = e["p1_cost_usd"]
        gap = (r["p1_cost_usd"] - opt) / opt * 100 if same and opt > 0 else float("nan")
        stall = r.get("total_stall_s")
        # selection / placement split (bace_opt.gaps.decompose): the P1 optimum over the heuristic's own started
        # jobs, counted only where that restricted solve is proven optimal
        own = r.get("p1_own_set_cost_usd", float("nan")) if r.get("p1_own_set_status") == "optimal" else float("nan")
        sel = (own / opt - 1) * 100 if same and opt > 0 else float("nan")
        place = (r["p1_cost_usd"] / own - 1) * 100 if same and own > 0 else float("nan")
        rows.append({"size": r["size"], "seed": r["seed"], "method": policy_label(r["method"]),
                     "stalls": bool(stall is not None and not pd.isna(stall) and float(stall) > 0),
                     "opt_jobs": int(e["jobs_done"]), "jobs": int(r["jobs_done"]),
                     "admissions_lost": int(e["jobs_done"]) - int(r["jobs_done"]),
                     "same_admissions": same, "cost_gap_pct": gap, "selection_gap_pct": sel,
                     "placement_gap_pct": place, "decision_ms": 1000 * r.get("decision_s", float("nan"))})
    return pd.DataFrame(rows)


def binding_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per size: how tight the bandwidth constraints were at the proven P1 optimum, and whether lifting them
    (``p1-nobw``) changes the optimum (more jobs started, or a lower cost)."""
    ex = df[df["method"] == "p1:highs"]
    if "peak_link_utilisation" not in ex or ex["peak_link_utilisation"].isna().all():
        return pd.DataFrame()
    free = df[df["method"] == "p1-nobw:highs"].set_index(["size", "seed"])
    rows = []
    for _, e in ex.iterrows():
        r = {"size": e["size"], "seed": e["seed"], "status": e["status"], "jobs_started": e["jobs_done"],
             "peak_link_utilisation": e["peak_link_utilisation"], "tight_links": e.get("tight_links"),
             "links_over_90pct": e.get("links_over_90pct")}
        key = (e["size"], e["seed"])
        if key in free.index:
            f = free.loc[key]
            r["free_bw_jobs"] = f["jobs_done"]
            r["free_bw_cost_change_pct"] = ((f["p1_cost_usd"] / e["p1_cost_usd"] - 1) * 100
                                            if f["jobs_done"] == e["jobs_done"] and e["p1_cost_usd"] else float("nan"))
            r["bandwidth_binds"] = bool(f["status"] == "optimal" and e["status"] == "optimal" and (
                f["jobs_done"] > e["jobs_done"] or f["p1_cost_usd"] < e["p1_cost_usd"] * (1 - 1e-6)))
        rows.append(r)
    t = pd.DataFrame(rows)
    agg = {"instances": ("seed", "count"), "proven": ("status", lambda s: int((s == "optimal").sum())),
           "peak_util_mean": ("peak_link_utilisation", "mean"), "peak_util_max": ("peak_link_utilisation", "max"),
           "tight_links_mean": ("tight_links", "mean"), "links_over_90pct_mean": ("links_over_90pct", "mean")}
    if "bandwidth_binds" in t:
        agg["bandwidth_binds"] = ("bandwidth_binds", lambda s: f"{int(s.fillna(False).sum())}/{len(s)}")
        agg["free_bw_extra_jobs_mean"] = ("free_bw_jobs", lambda s: float("nan"))
    out = t.groupby("size").agg(**agg)
    if "free_bw_jobs" in t:
        out["free_bw_extra_jobs_mean"] = (t["free_bw_jobs"] - t["jobs_started"]).groupby(t["size"]).mean()
    return out


def gap_report(df: pd.DataFrame, plots_dir=None) -> str:
    out = []
    g = p1_gaps(df)
    if not g.empty:
        t = g.groupby(["size", "method"]).agg(
            instances=("seed", "count"),
            admissions_lost_mean=("admissions_lost", "mean"),
            same_admissions_pct=("same_admissions", lambda s: 100 * s.mean()),
            cost_gap_mean_pct=("cost_gap_pct", "mean"),
            cost_gap_worst_pct=("cost_gap_pct", "max"),
            stalled_pct=("stalls", lambda s: 100 * s.mean()),
            selection_gap_mean_pct=("selection_gap_pct", "mean"),
            placement_gap_mean_pct=("placement_gap_pct", "mean"),
            decision_ms_max=("decision_ms", "max"))
        out.append("### P1: heuristics (one decision epoch) vs the proven P1 optimum\n\n"
                   "admissions_lost: jobs the optimum starts and the heuristic does not; cost gap over instances "
                   "where both start the same number of jobs. stalled_pct: instances where the heuristic reserved "
                   "less than a hop's no-stall demand (a placement outside P1's model, which allows no stall, so "
                   "its gap is not bounded below by 0). The cost gap splits into selection (the P1 optimum over "
                   "the heuristic's own started jobs against the free optimum) and placement (the heuristic "
                   "against that restricted optimum), both proven: 1 + cost = (1 + selection) x (1 + placement)."
                   "\n\n" + md(t))
        ex = df[df["method"] == "p1:highs"]
        out.append(f"P1 exact (HiGHS): {int((ex['status'] == 'optimal').sum())} of {len(ex)} instances proven "
                   f"optimal; solve time median {ex['solve_s'].median():.3g} s, max {ex['solve_s'].max():.3g} s.")
        tight = binding_table(df)
        if not tight.empty:
            out.append("### How tight the network was at the P1 optimum\n\n"
                       "peak_link_utilisation: the largest reserved/capacity of any link; tight_links: links at "
                       "capacity (a binding bandwidth constraint); links_over_90pct; free_bw_*: the optimum with "
                       "link capacities lifted (x1e6): where it starts more jobs or costs less, bandwidth changed "
                       "the optimum.\n\n" + md(tight))
        if plots_dir:
            _plot_gap(g, Path(plots_dir) / plot_name("distribution"))
            out.append(f"![gap distribution]({plot_name('distribution')})")
    p2 = df[df["method"].str.startswith("p2:")]
    if not p2.empty:
        out.append(p2_bracket_report(df, p2))
    return "\n\n".join(out) if out else generic_report(df)


def _extra(v) -> dict:
    if isinstance(v, dict):
        return v
    try:
        return json.loads(v) if isinstance(v, str) and v else {}
    except ValueError:
        return {}


def p2_bracket_report(df: pd.DataFrame, p2: pd.DataFrame) -> str:
    """Online policies against the CERTIFIED P2 lower bound (bace_opt.exact.p2.bound): a gap is measured
    against a bound no feasible schedule can beat, so it is never negative; the bracket [lower, upper] and its
    width are shown per instance.  Rows without a certified bound are listed, not averaged."""
    rows, brackets, unfinished = [], [], 0
    for _, e in p2.iterrows():
        x = _extra(e.get("extra"))
        lb, ub, ok = x.get("lower_bound"), x.get("upper_bound"), bool(x.get("lower_bound_certified"))
        brackets.append({"size": e["size"], "seed": e["seed"], "lower_s": lb, "upper_s": ub,
                         "width_pct": None if x.get("bracket_gap") is None else 100 * x["bracket_gap"],
                         "certified": ok, "p2_status": e["status"]})
        sims = df[(df["size"] == e["size"]) & (df["seed"] == e["seed"]) & df["method"].str.startswith("sim:")]
        for _, s in sims.iterrows():
            if not (s["jobs_done"] == s["jobs"]):
                unfinished += 1
                continue   # an online run that left jobs unfinished is not compared on its average
            rows.append({"size": e["size"], "seed": e["seed"], "method": policy_label(s["method"]),
                         "certified": ok, "avg_jct_s": s["avg_jct_s"],
                         "jct_over_lb_pct": (s["avg_jct_s"] / lb - 1) * 100 if ok and lb else float("nan")})
    b = pd.DataFrame(brackets)
    parts = ["### P2: certified brackets (mu = 0): lower bound valid in continuous time, upper = best schedule\n\n"
             + md(b)]
    t = pd.DataFrame(rows)
    if not t.empty:
        cert = t[t["certified"]]
        if not cert.empty:
            agg = cert.groupby("method").agg(instances=("seed", "count"), mean_pct=("jct_over_lb_pct", "mean"),
                                             worst_pct=("jct_over_lb_pct", "max"),
                                             best_pct=("jct_over_lb_pct", "min"))
            parts.append("### P2: online policies' mean JCT above the certified lower bound (never below it)\n\n"
                         + md(agg))
        if len(cert) < len(t):
            parts.append(f"{len(t) - len(cert)} policy rows have no certified P2 bound (not averaged).")
    if unfinished:
        parts.append(f"{unfinished} policy rows left jobs unfinished (not compared on their average).")
    return "\n\n".join(parts)


def _plot_gap(g: pd.DataFrame, png: Path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 3.5))
    methods = sorted(g["method"].unique())
    data = [g[(g["method"] == m)]["cost_gap_pct"].dropna().values for m in methods]
    ax.boxplot(data, tick_labels=methods, showmeans=True)
    ax.set_ylabel("cost gap to P1 optimum (%)")
    ax.set_title("P1 optimality gap of one decision epoch (same admissions)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    atomic_savefig(fig, png, dpi=110)
    plt.close(fig)


# ---------------------------------------------------------------------- solvers

def solvers_report(df: pd.DataFrame, plots_dir=None) -> str:
    d = df.copy()
    d["solver"] = d["method"].str.split(":").str[1]
    d["optimal"] = d["status"] == "optimal"
    t = d.groupby(["size", "solver"]).agg(runs=("seed", "count"), proven_optimal=("optimal", "sum"),
                                          solve_s_mean=("solve_s", "mean"), solve_s_max=("solve_s", "max"),
                                          build_s_mean=("build_s", "mean"), final_gap=("gap", "max"),
                                          nodes_mean=("nodes", "mean"))
    text = "### P1 by back end\n\n" + md(t)
    # the largest instance (by jobs, then regions) each back end proves optimal within 60 s and within 600 s;
    # solve_s is the time of all three lexicographic levels together
    d["total_s"] = d["solve_s"].fillna(0) + d["build_s"].fillna(0)
    lines = []
    for solver, grp in d.groupby("solver"):
        cells = []
        for limit in (60, 600):
            ok = grp[grp["optimal"] & (grp["total_s"] <= limit)]
            if ok.empty:
                cells.append(f"none within {limit} s")
                continue
            best = ok.sort_values(["jobs", "size"]).iloc[-1]
            cells.append(f"within {limit} s: {best['size']} (seed {best['seed']}, {best['total_s']:.3g} s)")
        lines.append(f"- {solver}: " + "; ".join(cells))
    text += ("\n\nLargest P1 proven optimal (all three levels, build + solve; only the sizes this results file "
             "holds):\n\n" + "\n".join(lines))
    if plots_dir:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(7, 3.5))
        for s, grp in d.groupby("solver"):
            grp = grp.groupby("size")["solve_s"].mean()
            ax.plot(list(grp.index), grp.values, marker="o", label=s)
        ax.set_yscale("log")
        ax.set_ylabel("solve time (s)")
        ax.set_xlabel("instance size (regions-jobs)")
        ax.legend()
        ax.grid(alpha=0.3)
        fig.tight_layout()
        atomic_savefig(fig, Path(plots_dir) / plot_name("time"), dpi=110)
        plt.close(fig)
        text += f"\n\n![solver time]({plot_name('time')})"
    return text


# ---------------------------------------------------------------------- paper

def paper_table(df: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds of average JCT (h) and total electricity (USD) per variant and policy."""
    df = finished(df)
    d = df[df["method"].str.startswith("sim:")].copy()
    d["policy"] = policy_column(d["method"])
    d["avg_jct_h"] = d["avg_jct_s"] / 3600
    t = d.groupby(["size", "policy"]).agg(seeds=("seed", "count"), jobs=("jobs", "mean"),
                                          jobs_done=("jobs_done", "mean"), avg_jct_h=("avg_jct_h", "mean"),
                                          electricity_usd=("total_electricity_usd", "mean"),
                                          egress_usd=("total_egress_usd", "mean"),
                                          total_cost_usd=("total_cost_usd", "mean"))
    # ranked within a variant: more jobs finished first, then average JCT
    t = t.reset_index()
    t["_k"] = -t["jobs_done"]
    t = t.sort_values(["size", "_k", "avg_jct_h"]).drop(columns="_k").set_index(["size", "policy"])
    return t


def paper_comparisons(df: pd.DataFrame, pairs) -> pd.DataFrame:
    """Per variant and pair (a, b): the mean over seeds of a's change against b, each seed compared only when
    both runs finished the same jobs (``compare.compare_rows``); a variant with any seed that is not
    comparable gets no headline change, only the counts (and, for information, the change over the jobs
    both finished)."""
    from .compare import compare_rows
    d = finished(df)
    d = d[d["method"].str.startswith("sim:")].copy()
    d["policy"] = policy_column(d["method"])
    by = {(r["size"], r["seed"], r["policy"]): r for r in d.to_dict("records")}
    rows = []
    for variant in sorted(d["size"].unique()):
        seeds = sorted(d[d["size"] == variant]["seed"].unique())
        for a, b in pairs:
            cmps = [compare_rows(by[(variant, s, a)], by[(variant, s, b)]) for s in seeds
                    if (variant, s, a) in by and (variant, s, b) in by]
            if not cmps:
                continue
            ok = all(c.comparable for c in cmps)

            def mean(attr):
                vals = [v for v in (getattr(c, attr) for c in cmps) if not math.isnan(v)]
                return math.fsum(vals) / len(vals) if vals else float("nan")
            bad = [c for c in cmps if not c.comparable]
            rows.append({"variant": variant, "policy": a, "vs": b, "seeds": len(cmps),
                         "jct_change_pct": mean("jct_change_pct") if ok else float("nan"),
                         "electricity_change_pct": mean("electricity_change_pct") if ok else float("nan"),
                         "total_cost_change_pct": mean("total_change_pct") if ok else float("nan"),
                         "common_jobs_jct_change_pct": float("nan") if ok else mean("common_jct_change_pct"),
                         "note": "" if ok else "not comparable: " + "; ".join(
                             f"{a} {c.a_done}, {b} {c.b_done} of {c.jobs} jobs finished" for c in bad[:2])})
    return pd.DataFrame(rows)


def paper_report(df: pd.DataFrame, plots_dir=None) -> str:
    t = paper_table(df)
    out = ["### Average JCT and electricity per policy (mean over seeds)\n\n"
           "Ranked within each variant by jobs finished, then average JCT: an average over fewer jobs is not "
           "a faster policy.\n\n" + md(t)]
    r = paper_comparisons(df, [("bace-pipe", b) for b in BASELINES])
    if not r.empty:
        out.append(f"### BACE-Pipe against each baseline (paper: JCT {PAPER_JCT[0]}..{PAPER_JCT[1]} %, "
                   f"electricity {PAPER_COST[0]}..{PAPER_COST[1]} %)\n\n"
                   "Changes are (BACE-Pipe / baseline - 1), averaged over seeds; a variant where some seed's two "
                   "runs finished different jobs is marked not comparable (the change over the jobs both "
                   "finished is shown for information only).\n\n"
                   + md(r.drop(columns=["policy"]).set_index(["variant", "vs"])))
    ab = paper_comparisons(df[df["size"] == "main"], [(a, "bace-pipe") for a in PAPER_ABLATION])
    if not ab.empty:
        ab["removed"] = ab["policy"].str.replace("bace-pipe-no-", "", regex=False)
        ab["paper_jct_pct"] = ab["policy"].map(lambda a: PAPER_ABLATION[a][0])
        ab["paper_electricity_pct"] = ab["policy"].map(lambda a: PAPER_ABLATION[a][1])
        cols = ["removed", "jct_change_pct", "paper_jct_pct", "electricity_change_pct", "paper_electricity_pct",
                "note"]
        out.append("### Ablation (main setup; change against full BACE-Pipe)\n\n" + md(ab[cols].set_index("removed")))
    return "\n\n".join(out)


# ---------------------------------------------------------------------- regimes (claims map)

def regimes_report(df: pd.DataFrame, plots_dir=None) -> str:
    from . import claims as C
    m = C.measure(df)
    if m.empty:
        return generic_report(df)
    out = ["### Claims map: where each of the paper's claims holds\n\n"
           "Per claim (and, for cost claims, per cost reading: " + "; ".join(
               f"`{k}` {v[0]}" for k, v in C.READINGS.items()) + "): the change measured in the paper's own "
           "setting at nominal and at measured bandwidth, and the number of regimes (bandwidth source x scale "
           "x jobs x arrivals) where it holds (inside the published range), holds in direction only, fails, "
           "or cannot be compared (the two policies finished different jobs). Every figure is the "
           "evaluator's.\n\n" + md(C.claims_map(m), ".3g")]
    mech = C.mechanism_table(m)
    out.append("### Mechanism figures per regime (mean over seeds)\n\n"
               "Per policy: peak link use (largest reserved/capacity of any link) / hours that "
               "communication-bound hops added to run times (stall) / jobs never started. "
               "no-pathfinder: BACE-Pipe without its pathfinder (reserves what is left, may stall). "
               "bace_price_usd_per_kwh, lcf_price_usd_per_kwh: energy-weighted electricity price of BACE-Pipe and "
               "of LCF (with identical GPUs, active-GPU electricity differs only through it); bace_jct_vs_closest_pct: "
               "BACE-Pipe's JCT change against the baseline closest to it among those that finished the same "
               "jobs.\n\n" + md(mech.set_index("regime"), ".3g"))
    vs = C.versus(df)
    if not vs.empty:
        out.append("### Your policies beside BACE-Pipe, per regime (mean over comparable seeds)\n\n"
                   "Each policy run with `bench --policy`: its mean JCT and its cost (electricity of active GPUs) "
                   "against BACE-Pipe's on the same instances, over the seeds where both finished the same jobs "
                   "(negative is better; '-' where a seed is not comparable).\n\n"
                   + md(vs.set_index(["policy", "regime"]), ".3g"))
    if plots_dir:
        for name in C.plot_heatmaps(m, Path(plots_dir), stem=_PLOT_STEM):
            out.append(f"![{name}]({name})")
    return "\n\n".join(out)


# ---------------------------------------------------------------------- traces

TRACE_COLUMNS = ("offered_load", "mean_jct_s", "p50_jct_s", "p90_jct_s", "p99_jct_s", "mean_wait_s", "p99_wait_s",
                 "mean_slowdown", "p99_slowdown", "gpu_utilisation", "cost_usd")


def traces_report(df: pd.DataFrame, plots_dir=None) -> str:
    """Per load (the row's ``size``) and policy, the mean over seeds of the figures a trace run's ``extra`` holds
    (``tasks.trace_figures``: the evaluator's ``workload_report``)."""
    from .compare import policy_label
    rows = []
    for _, r in df.iterrows():
        x = _extra(r.get("extra"))
        if not x:
            continue
        rows.append({"load": r["size"], "policy": policy_label(r["method"]), "seed": r["seed"],
                     "jobs_done": r["jobs_done"], "jobs": r["jobs"], **{k: x.get(k) for k in TRACE_COLUMNS}})
    if not rows:
        return generic_report(df)
    t = pd.DataFrame(rows)
    num = ["jobs", "jobs_done", *TRACE_COLUMNS]
    t[num] = t[num].apply(pd.to_numeric, errors="coerce")
    g = t.groupby(["load", "policy"], sort=True)[num].mean()
    g.insert(0, "seeds", t.groupby(["load", "policy"], sort=True)["seed"].nunique())
    return ("### Trace runs per load and policy (mean over seeds)\n\n"
            "JCT, waiting time (start - arrival) and slowdown (JCT / the job's run alone on the fastest GPU) over "
            "the measured jobs; GPU utilisation over the whole run; cost = electricity + egress; offered load = "
            "GPU-hours offered / GPU-hours of the fleet over the window.  Every figure is the evaluator's "
            "(`evaluate.workload_report`).\n\n" + md(g, ".4g"))


def generic_report(df: pd.DataFrame, plots_dir=None) -> str:
    cols = [c for c in ("status", "jobs_done", "avg_jct_s", "total_electricity_usd", "wall_s", "solve_s", "gap")
            if c in df]
    return md(df.set_index(["size", "seed", "method"])[cols])
