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
    inc = r.incumbent_usd if r.incumbent_usd is not None else o.cost_usd
    found = "" if r.incumbent_from in (None, "none", "the P1 optimum's solve") else r.incumbent_from
    beside = "; ".join(x for x in (found, _egress_beside(r, o)) if x)
    lines = [f"gap on {shown(r.instance)} ({r.jobs} jobs): one decision at t0 = {short(r.t0_s, 's')}, every resource free",
             f"P1 optimum: {short(o.jobs)} jobs started, cost {short(inc, 'USD')}{f' ({beside})' if beside else ''}, "
             f"{o.status} (bound {short(o.bound_usd, 'USD')}"
             + (f", {o.bound_source}" if o.bound_source and not o.proven and o.bound_usd is not None else "")
             + f"), solved in {short(o.wall_s, 's')}"]
    egress = _egress_column(r)
    head = ("policy", "jobs started", "cost", "cost gap", "selection", "placement", "proven") + (
        ("egress (not in the objective)",) if egress else ())
    rows = [head]
    for p in r.policies:
        g = p.p1
        lost = "" if not g.admissions_lost else f" ({g.admissions_lost} lost)"
        rows.append((p.policy, f"{g.heuristic_jobs} of {short(o.jobs)}{lost}", short(g.heuristic_cost_usd, "USD"),
                     _cost_gap_cell(g), pct(g.selection_gap), _placement_cell(g), _proven(g))
                    + ((short(g.heuristic_egress_usd, "USD"),) if egress else ()))
    lines += _table(rows)
    if not o.proven and o.certified:
        lines.append(f"the optimum is not proven ({o.status}, engine {o.engine or '-'}): each cost gap is certified, "
                     f"at most against the bound {short(o.bound_usd, 'USD')}, at least against the best placement "
                     f"found {short(inc, 'USD')}" + (f" ({r.incumbent_from})" if found else ""))
        lines += range_lines(r)
    elif not o.proven:
        lines.append(f"no gap: the optimum is not proven ({o.status}) and no bound was reached"
                     + ("" if o.count_proven else " (the most jobs that can start is not proven)"))
    lines += own_set_lines(r) + egress_lines(r)
    return lines


def range_lines(r: "GapReport") -> list[str]:
    """Which side limits a wide certified range, and what would narrow it (``GapReport.range``)."""
    from .p1part import WIDE_RANGE
    rd = r.range
    if rd is None or rd["width"] <= WIDE_RANGE:
        return []
    return [f"the range is {pct(rd['width'])} wide, limited by the {rd['limited_by']}: {rd['why']}; "
            f"what would narrow it: {rd['narrow']}"]


def own_set_lines(r: "GapReport") -> list[str]:
    """A policy that starts fewer jobs than the optimum has no cost gap; its own-set solve still says how well it
    places the jobs it starts."""
    out = []
    for p in r.policies:
        g = p.p1
        if not g.admissions_lost or g.own_set is None or g.own_set.cost_usd is None:
            continue
        out.append(f"{p.policy} starts {g.admissions_lost} job(s) fewer than the optimum, so it has no cost gap; "
                   f"the cheapest placement of its own {g.heuristic_jobs} jobs found costs "
                   f"{short(g.own_set.cost_usd, 'USD')} ({g.own_set.status}) against its "
                   f"{short(g.heuristic_cost_usd, 'USD')}: placement {_placement_cell(g)}")
    return out


def _egress_outweighs(x) -> bool:
    e, c = getattr(x, "egress_usd", None), getattr(x, "electricity_usd", None)
    return e is not None and c is not None and e > c


def _egress_beside(r: "GapReport", o) -> str:
    if r.objective_counts_egress or not _egress_outweighs(o):
        return ""
    return f"electricity only: its egress, {short(o.egress_usd, 'USD')}, is not in the objective"


def _egress_column(r: "GapReport") -> bool:
    """Show the policies' egress beside their cost: the objective is electricity only and some placement's
    egress outweighs its electricity."""
    if r.objective_counts_egress:
        return False
    return _egress_outweighs(r.optimum) or any(
        p.p1.heuristic_egress_usd is not None and p.p1.heuristic_electricity_usd is not None
        and p.p1.heuristic_egress_usd > p.p1.heuristic_electricity_usd for p in r.policies)


def egress_lines(r: "GapReport") -> list[str]:
    """Where egress outweighs electricity and the objective counts electricity only: say so, and name the option
    that optimises the total."""
    if not _egress_column(r):
        return []
    o = r.optimum
    fig = (f" (the optimum's placement: egress {short(o.egress_usd, 'USD')} against electricity "
           f"{short(o.electricity_usd, 'USD')}, the evaluator's figures over each run)"
           if o.egress_usd is not None and o.electricity_usd is not None else "")
    return [f"egress outweighs electricity{fig}: the objective is electricity only (the paper's), so these "
            "placements do not minimise the total cost; to optimise electricity + egress, set "
            '"objective": {"egress": true} in the instance file (Instance.objective.egress, models/placement.md)']


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


def _placement_cell(g: "GapDecomposition") -> str:
    """The placement gap: of a proven split, else against the proven own-set optimum (also where admissions are
    lost), else its certified range against the own-set solve's bound and best placement."""
    if g.placement_gap is not None:
        return pct(g.placement_gap)
    if g.own_placement_gap is not None:
        return pct(g.own_placement_gap)
    lo, hi = g.own_placement_range
    if hi is None:
        return "-" if not lo else f">= {pct(lo)}"
    return f"{pct(lo)} .. {pct(hi)}" if lo else f"<= {pct(hi)}"


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
