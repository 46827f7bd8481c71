"""``gap``'s one-epoch P1 part (``gaps.report.gap``): the free P1 optimum, each policy's decision and own-set
solve, and what the run knows at its end.

* **One incumbent for the whole run** (issue 44, item 5): the best placement known anywhere in the run that
  starts the optimum's (proven) count of jobs, whether the free solve, a policy's decision or a policy's own-set
  solve found it (``decompose.best_placement``).  Every policy's certified lower end is taken against it.
* **One time line** (``timeline``, the ``{t_s, bound, incumbent, bound_source}`` points of
  ``exact.p1.certify.Timeline``, ``t_s`` from the command's start): the free solve's own points, then a point
  wherever a policy's decision or own-set solve lowered the incumbent.  The bound is the free solve's (an own-set
  solve bounds a restricted problem, not the free one).
* **Which side limits a range** (``range_reading``): where the optimum is certified but not proven, the range
  [bound, incumbent] is read from the time line: the side that stopped moving first is the one that limits it
  (a bound that only the cost floor gives always does), with what would narrow it.
"""
from __future__ import annotations

import logging
import math
from typing import Any, Sequence

from .. import clock
from .._format import pct, short
from ..instance import Instance
from .decompose import against_best, best_placement, decompose, heuristic_epoch, solve_p1

log = logging.getLogger("bace_opt.gaps.report")

#: the free P1 optimum's share of the P1 part (the rest is split evenly among the policies' own-set solves)
OPTIMUM_SHARE = 0.5
#: a certified range (incumbent - bound) / incumbent wider than this is "wide": the text says which side
#: limits it and what would narrow it (the JSON's ``range`` holds the reading for every certified range)
WIDE_RANGE = 0.01


def stage(what: str) -> None:
    """One progress line (``-v``, on stderr): the stage starting, the command's clock and the time left."""
    left = clock.left()
    log.info("gap: %s [%s in, %s left]", what, short(clock.wall_s(), "s"),
             "no limit" if math.isinf(left) else short(left, "s"))


def p1_part(inst: Instance, pols: Sequence[Any], solver: str, engine: str, solve=solve_p1) -> dict:
    """The P1 optimum and each policy's decomposition, within the deadline in force (``bace_opt.clock``): the
    optimum gets ``OPTIMUM_SHARE`` of it, each policy an even share of what is left when its turn comes.
    Returns the ``GapReport`` fields: t0_s, optimum, entries (``GapDecomposition`` per policy), incumbent_usd,
    incumbent_from, timeline.  ``solve``: the free P1 solve (``decompose.solve_p1``; ``report`` hands its own
    name, the seam where a test replaces it)."""
    t0 = max((j.arrival_s for j in inst.jobs), default=0.0)
    limit = clock.left()
    stage(f"the P1 optimum ({len(inst.jobs)} jobs, up to {short(limit * (OPTIMUM_SHARE if pols else 1.0), 's')})")
    opt, _ = solve(inst, t0=t0, time_limit_s=max(limit * (OPTIMUM_SHARE if pols else 1.0), 0.01), solver=solver,
                      engine=engine)
    timeline = [dict(p) for p in opt.timeline]
    inc, src = best_placement(opt, [])
    log.info("gap: P1 optimum %s after %s: %s jobs, bound %s (%s), best placement %s%s", opt.status,
             short(opt.wall_s, "s"), short(opt.jobs), short(opt.bound_usd, "USD"), opt.bound_source or "none",
             short(inc, "USD"), _range_text(opt.bound_usd, inc))
    if not opt.proven:
        log.warning("gap: the P1 optimum is not proven in %s (status %s): %s", short(opt.wall_s, "s"), opt.status,
                    "the gaps are certified against its bound" if opt.certified else "no gap is reported")
    entries = []
    for i, pol in enumerate(pols):
        share = clock.left() / (len(pols) - i)
        stage(f"{pol.name}: its decision at t0 = {short(t0, 's')} and its own-set optimum (up to {short(share, 's')})")
        h = heuristic_epoch(inst, pol)
        entries.append(decompose(inst, pol, time_limit_s=max(share, 0.01), solver=solver, optimum=opt, heuristic=h,
                                 engine=engine))
        new, where = best_placement(opt, entries)
        if new is not None and (inc is None or new < inc):
            inc, src = new, where
            timeline.append({"t_s": round(clock.wall_s(), 3), "bound": opt.bound_usd if opt.certified else None,
                             "incumbent": inc, "bound_source": opt.bound_source or "none"})
            log.info("gap: best placement now %s (%s)%s", short(inc, "USD"), src, _range_text(opt.bound_usd, inc))
    if opt.certified and inc is not None and opt.bound_usd is not None and opt.bound_usd > inc * (1 + 1e-6) + 1e-9:
        # a valid bound is at most every feasible placement of the same count: the P1 solve's bound is wrong
        log.error("gap: the P1 bound %s (%s) lies above a feasible placement, %s (%s): the bound is refuted (a bug)",
                  short(opt.bound_usd, "USD"), opt.bound_source or "none", short(inc, "USD"), src)
    entries = [against_best(g, inc) for g in entries]
    return {"t0_s": t0, "optimum": opt, "entries": entries, "incumbent_usd": inc, "incumbent_from": src,
            "timeline": timeline}


def _range_text(bound: float | None, inc: float | None) -> str:
    if bound is None or inc is None or not inc > 0:
        return ""
    return f", certified range {pct(max(inc - bound, 0.0) / inc)}"


def _last_move(timeline: Sequence[dict], key: str) -> float | None:
    """When ``key`` (bound or incumbent) last changed on the time line (its t_s), None if it never had a value."""
    last, prev = None, None
    for p in timeline:
        v = p.get(key)
        if v is not None and (prev is None or abs(v - prev) > 1e-9 * max(1.0, abs(prev))):   # not rounding noise
            last, prev = p["t_s"], v
    return last


def range_reading(optimum, incumbent: float | None, timeline: Sequence[dict]) -> dict | None:
    """Where the optimum is certified but not proven: the range's width (incumbent - bound) / incumbent, which
    side limits it (``limited_by``: "bound" or "incumbent"), why, and what would narrow it.  None otherwise.

    The rule: a bound that is only the cost floor (or none) limits it; otherwise the side that stopped moving
    first on the time line (the other kept closing the range after it; a tie goes to the bound, which at this
    scale stops at a relaxation's root value while the search still finds placements)."""
    from ..exact.p1.certify import SOURCE_FLOOR, SOURCE_NONE
    b = optimum.bound_usd if optimum is not None and optimum.certified else None
    if optimum is None or optimum.proven or b is None or incumbent is None or not incumbent > 0:
        return None
    width = max(incumbent - b, 0.0) / incumbent
    src = optimum.bound_source or SOURCE_NONE
    tb, ti = _last_move(timeline, "bound"), _last_move(timeline, "incumbent")
    if src in (SOURCE_FLOOR, SOURCE_NONE):
        side = "bound"
        why = ("only the cost floor arrived (each started job's least cost alone, blind to the others): the stage "
               "relaxation and the search did not finish in the time")
    elif tb is not None and ti is not None and ti > tb:
        side = "bound"
        why = (f"the bound ({src}) has not risen since {short(tb, 's')} while the incumbent fell until "
               f"{short(ti, 's')}")
    elif tb is not None and ti is not None and tb > ti:
        side = "incumbent"
        why = (f"the best placement has not improved since {short(ti, 's')} while the bound ({src}) rose until "
               f"{short(tb, 's')}")
    else:
        side = "bound"
        why = f"neither side moved after {short(tb or ti, 's')}; the bound is a relaxation's ({src})"
    narrow = ("a longer --time-limit: the walk engine's branch and bound raises the bound past the relaxation "
              "(benchmarks/README.md, 'Convergence', for how fast on the fleet20 seeds)" if side == "bound" else
              "a longer --time-limit, or more policies (--policy): each one's own-set solve that starts as many "
              "jobs can lower the incumbent")
    return {"width": width, "limited_by": side, "why": why, "narrow": narrow, "bound_source": src,
            "bound_last_moved_s": tb, "incumbent_last_moved_s": ti}
