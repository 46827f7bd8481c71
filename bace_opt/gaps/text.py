"""The text of ``gap``'s report (``GapReport.summary``): the P1 table, the online brackets, in words."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .._format import pct, short, shown

if TYPE_CHECKING:
    from .decompose import GapDecomposition
    from .report import GapReport, OnlineGap


# ---------------------------------------------------------------------------- text

def summary_lines(r: "GapReport") -> list[str]:
    if r.p1_skipped:
        lines = [f"gap on {shown(r.instance)} ({r.jobs} jobs): the one-epoch P1 part is skipped ({r.p1_skipped})"]
    else:
        lines = p1_lines(r)
    if any(p.online for p in r.policies):
        lines += online_lines(r)
    lines += [f"note: {n}" for n in r.notes]
    return lines


def p1_lines(r: "GapReport") -> list[str]:
    """The P1 part: the optimum and each policy's cost gap at the decision epoch."""
    o = r.optimum
    lines = [f"gap on {shown(r.instance)} ({r.jobs} jobs): one decision at t0 = {short(r.t0_s, 's')}, every resource free",
             f"P1 optimum: {short(o.jobs)} jobs started, cost {short(o.cost_usd, 'USD')}, {o.status} "
             f"(bound {short(o.bound_usd, 'USD')}), solved in {short(o.wall_s, 's')}"]
    head = ("policy", "jobs started", "cost", "cost gap", "selection", "placement", "proven")
    rows = [head]
    for p in r.policies:
        g = p.p1
        lost = "" if not g.admissions_lost else f" ({g.admissions_lost} lost)"
        rows.append((p.policy, f"{g.heuristic_jobs} of {short(o.jobs)}{lost}", short(g.heuristic_cost_usd, "USD"),
                     _cost_gap_cell(g), pct(g.selection_gap), pct(g.placement_gap),
                     _proven(g)))
    lines += _table(rows)
    if not o.proven and o.certified:
        lines.append(f"the optimum is not proven ({o.status}, engine {o.engine or '-'}): each cost gap is certified, "
                     f"at most against the bound {short(o.bound_usd, 'USD')}, at least against the best placement "
                     f"found {short(o.cost_usd, 'USD')}")
    elif not o.proven:
        lines.append(f"no gap: the optimum is not proven ({o.status}) and no bound was reached"
                     + ("" if o.count_proven else " (the most jobs that can start is not proven)"))
    return lines


def online_lines(r: "GapReport") -> list[str]:
    """The online part: the bracket, each policy's mean JCT, waiting time and cost against it."""
    b = r.bracket or {}
    lines = ["", "online (whole run, queue mode), against certified P2 figures:",
              f"  mean JCT: lower bound {short(b.get('jct_lower_bound_s'), 's')} "
              f"({b.get('jct_lower_bound_kind') or 'none'}), best schedule found "
              f"{short(b.get('jct_best_s'), 's')}",
              f"  cost: lower bound {short(b.get('cost_lower_bound_usd'), 'USD')} ({b.get('cost_lower_bound_kind')})",
              "  least cost at its JCT: no schedule at least as fast as the policy costs less (P2.40, "
              "models/schedule.md 8.5)"]
    if b.get("mean_shortest_run_s") is not None:
        lines.append(f"  mean wait (JCT minus the job's shortest run time, mean {short(b['mean_shortest_run_s'], 's')}):"
                     f" lower bound {short(b.get('wait_lower_bound_s'), 's')}, best schedule found "
                     f"{short(b.get('wait_best_s'), 's')}")
    rows = [("policy", "jobs done", "mean JCT", "above optimum", "mean wait", "wait above optimum", "cost",
             "above optimum (cost)", "above least cost at its JCT")]
    for p in r.policies:
        og = p.online
        if og is None:
            continue
        rng = f"<= {pct(og.jct_gap_at_most)}"
        if og.jct_gap_at_least:
            rng = f"{pct(og.jct_gap_at_least)} .. {pct(og.jct_gap_at_most)}"
        if not og.complete:
            rng = "- (unfinished jobs)"
        rows.append((p.policy, f"{og.jobs_done} of {og.jobs}", short(og.mean_jct_s, "s"), rng,
                     short(og.mean_wait_s, "s"), _wait_cell(og),
                     short(og.cost_usd, "USD"),
                     "- (unfinished jobs)" if not og.complete else
                     "-" if og.cost_gap_at_most is None else f"<= {pct(og.cost_gap_at_most)}",
                     "-" if og.cost_gap_at_jct_at_most is None else f"<= {pct(og.cost_gap_at_jct_at_most)}"))
    lines += _table(rows)
    lines += [""] + [f"  {line}" for p in r.policies if p.online is not None
                     for line in [distance_sentence(p.policy, p.online)]]
    return lines


def _wait_cell(og: "OnlineGap") -> str:
    """How far the policy's mean wait is above the optimum's: at most (against the certified wait bound), as a
    share of it when that bound is positive."""
    if not og.complete or og.mean_wait_s is None or og.wait_lower_bound_s is None:
        return "-"
    over = og.mean_wait_s - og.wait_lower_bound_s
    if og.wait_lower_bound_s > 0:
        return f"<= {short(over, 's')} ({pct(over / og.wait_lower_bound_s)})"
    return f"<= {short(over, 's')}"


def distance_sentence(policy: str, og: "OnlineGap") -> str:
    """A policy's distance from the optimal whole run, in words: "at most x % above optimal" against the certified
    lower bound, "at least y %" against the best schedule found (a schedule the evaluator accepted)."""
    if not og.complete:
        return (f"{policy}: left {og.jobs - og.jobs_done} of {og.jobs} jobs unfinished, so it is not ranked on its "
                "mean JCT")
    if og.jct_gap_at_most is None:
        return f"{policy}: no certified lower bound, so no distance from optimal"
    out = f"{policy}: mean JCT at most {pct(og.jct_gap_at_most)} above optimal (against the certified lower bound)"
    if og.jct_gap_at_least is not None:
        out += (f", at least {pct(og.jct_gap_at_least)} above it (against the best schedule found)"
                if og.jct_gap_at_least > 0 else ", and no worse than the best schedule found")
    return out


def _cost_gap_cell(g: "GapDecomposition") -> str:
    """The cost gap, or its certified range when the optimum is not proven ("0.4 % .. 1.2 %", "<= 1.2 %")."""
    if g.cost_gap is not None or g.cost_gap_at_most is None:
        return pct(g.cost_gap)
    if g.cost_gap_at_least:
        return f"{pct(g.cost_gap_at_least)} .. {pct(g.cost_gap_at_most)}"
    return f"<= {pct(g.cost_gap_at_most)}"


def _proven(g: "GapDecomposition") -> str:
    if g.cost_gap_at_most is not None and g.cost_gap is None:
        return "certified"
    if g.split_proven:
        return "yes"
    if g.proven:
        return "cost gap only"
    if (g.optimum.proven or g.optimum.count_proven) and g.admissions_lost:
        return "yes (admissions)"
    return "no"


def _table(rows: list[tuple]) -> list[str]:
    w = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(c).ljust(w[i]) for i, c in enumerate(row)).rstrip() for row in rows]
