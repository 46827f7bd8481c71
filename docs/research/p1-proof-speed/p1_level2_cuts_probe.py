"""Record, not maintained: a one-off probe of issue 11 (P1 proof speed), measured on highspy 1.12 (HiGHS 1.12)
and kept as the record of those measurements (output and reading in results/p1_level2_cuts_probe.md; the rounds in
log.md, which names each run's commit and load).  Moved from benchmarks/ in issue 26; no test imports it,
and it may not run against today's bace_opt.  Run it from the repository root, as it was run (PYTHONPATH=.
makes ``benchmarks.common`` importable; the sibling probes it imports are found beside it):

    PYTHONPATH=. python docs/research/p1-proof-speed/p1_level2_cuts_probe.py ...

Probes of issue 11's ninth round: can cuts across jobs, or a tighter cost product, lift level 2's bound on the
realistic instances (benchmarks/README.md, "Ninth round"; models/placement.md 9h)?  Scratch measurements, one
process, HiGHS one thread, level 2 of the walk model with level 1 fixed and the price-pack start as MIP start (as
the level driver solves it).  Each prints one JSON line per solve.  Nothing here changes the solver.

    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_cuts_probe.py gap 2,3         # where the root LP's gap lies
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_cuts_probe.py flowcover 2,3   # flow covers on the GPU rows
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_cuts_probe.py rlt 2,3 full    # product rows on every arc: root LP
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_cuts_probe.py rlt 2 full --mip
    PYTHONPATH=. .venv/bin/python docs/research/p1-proof-speed/p1_level2_cuts_probe.py rlt 2,3 none,sep --mip --rs 0,1,2

gap:       the root LP's cost split into its electricity term (sum pi base n) and its latency term (lat sum l q),
           beside the start's (within 1e-4 of the optimum on both seeds), and the LP of the electricity term alone.
flowcover: rounds of separation of simple flow covers of each region's GPU row with the bounds n_jr <= cap_jr
           u_jr (for a cover C of jobs with sum_C g cap = F_r + lam, lam > 0: sum_C [g n_jr + (g cap_jr - lam)^+
           (1 - u_jr)] <= F_r, valid for every integral point); the root LP after each round.
rlt:       the product q_jed = P_j F_jed written per region: w_jred = n_jr F_jed with w <= cap_jr F, w <= n_jr,
           w >= n_jr - cap_jr (x_j - F), sum_r w = S_j F, q >= sum_r pi_jr w (valid: every integral point extends
           with w = n F, and then q >= Pi_j F, its exact value).  "full": on every arc of every job; "sep": only on
           the arcs the root LP uses (F > 1e-4), added in rounds until none is new; "none": no product rows.
"""
from __future__ import annotations

import itertools
import json
import os
import sys
import time

import pyomo.environ as pyo

from p1_second_core_probe import _level2_model
from bace_opt.exact.p1 import walk as fm
from bace_opt.exact.p1.common import stages_in
from bace_opt.solvers.base import SolveOptions
from bace_opt.solvers import highs as H


def _lp(m):
    """The LP relaxation of ``m`` solved (a relaxed clone)."""
    from pyomo.contrib.appsi.solvers.highs import Highs
    r = m.clone()
    pyo.TransformationFactory("core.relax_integer_vars").apply_to(r)
    Highs().solve(r)
    return r


def _terms(m):
    """(electricity term, latency term) of P1.39 (egress is off on these instances)."""
    inst, el, la = m.data.inst, [], []
    for d in m.data.jobs:
        el += [d.pi[r] * d.base_s[c] * m.n[d.j, r, c] for r in d.regions for c in range(len(d.classes))
               if (d.j, r, c) in m.n]
        if d.K > 1:
            la += [d.lat_coef * inst.links[e].latency_ms * m.q[d.j, e, dd] for e in d.links for dd in (0, 1)
                   if inst.links[e].latency_ms]
    return sum(el), sum(la)


def gap(seeds):
    for s in seeds:
        _, m, ws = _level2_model(s)
        m.obj_cost.activate()
        r = _lp(m)
        el, la = _terms(r)
        fm.load_solution_into_pyomo(m, ws)
        sel, sla = _terms(m)
        m.obj_cost.deactivate()
        m.obj_el = pyo.Objective(expr=_terms(m)[0])
        r2 = _lp(m)
        print(json.dumps(dict(seed=s, lp=pyo.value(r.obj_cost.expr), lp_el=pyo.value(el), lp_lat=pyo.value(la),
                              start=pyo.value(sel + sla), start_el=pyo.value(sel), start_lat=pyo.value(sla),
                              lp_el_only=pyo.value(r2.obj_el.expr))), flush=True)


def _solve(m, rs, c0):
    """Level 2 of ``m`` from the values loaded in it (MIP start), HiGHS random seed ``rs``; the figures of one JSON
    line (``cpu_all`` counts from ``c0``, so it includes building and separating)."""
    l0 = round(os.getloadavg()[0], 2)
    t = time.perf_counter()
    res = H.solve_pyomo(m, SolveOptions(time_limit_s=300, threads=1, seed=rs), warm_start=True)
    return dict(rs=rs, wall=round(time.perf_counter() - t, 1), cpu_all=round(time.process_time() - c0, 1),
                nodes=res.nodes, obj=res.objective, st=res.termination.value, load=[l0, round(os.getloadavg()[0], 2)])


def _covers(rm, data, seen):
    """Most violated simple flow covers (up to 3 per region) at the LP point ``rm``: every subset of the (up to
    12 largest) jobs with stages in the region, by enumeration."""
    out = []
    for r, name in enumerate(data.region_names):
        F = data.free_gpus[name]
        val = {d.j: (d.job.gpus_per_stage * pyo.value(stages_in(rm, d, r)), pyo.value(rm.u[d.j, r]),
                     d.job.gpus_per_stage * d.cap[r]) for d in data.jobs if (d.j, r) in rm.u}
        sup = sorted((j for j, v in val.items() if v[0] > 1e-6 or v[1] > 1e-6), key=lambda j: -val[j][0])[:12]
        found = []
        for k in range(2, len(sup) + 1):
            for C in itertools.combinations(sup, k):
                lam = sum(val[j][2] for j in C) - F
                if lam > 1e-9:
                    lhs = sum(val[j][0] + max(val[j][2] - lam, 0) * (1 - val[j][1]) for j in C)
                    if lhs - F > 1e-4:
                        found.append((lhs - F, C, lam))
        for _, C, lam in sorted(found, reverse=True)[:3]:
            if (r, C) not in seen:
                seen.add((r, C))
                out.append((r, C, lam))
    return out


def flowcover(seeds, mip=False, rss=(0,), rounds=30):
    for s, rs in itertools.product(seeds, rss):
        c0 = time.process_time()
        data, m, ws = _level2_model(s)
        m.obj_cost.activate()
        m.fcov = pyo.ConstraintList()
        J = {d.j: d for d in data.jobs}
        seen, hist = set(), []
        for _ in range(rounds):
            rm = _lp(m)
            cuts = _covers(rm, data, seen)
            hist.append((round(pyo.value(rm.obj_cost.expr), 5), len(cuts)))
            if not cuts:
                break
            for r, C, lam in cuts:
                F = data.free_gpus[data.region_names[r]]
                g = {j: J[j].job.gpus_per_stage for j in C}
                m.fcov.add(sum(g[j] * stages_in(m, J[j], r) + max(g[j] * J[j].cap[r] - lam, 0) * (1 - m.u[j, r])
                               for j in C) <= F)
        out = dict(seed=s, rounds=hist, cuts=len(seen))
        if mip:
            fm.load_solution_into_pyomo(m, ws)
            out.update(_solve(m, rs, c0))
        print(json.dumps(out), flush=True)


def _product_rows(m, d, e, dd):
    """The rows of ``rlt`` for job d, arc (e, dd); returns the new w columns by region."""
    j, ws = d.j, {}
    for r in d.regions:
        w = pyo.Var(bounds=(0, d.cap[r]))
        m.add_component(f"w_{j}_{r}_{e}_{dd}", w)
        ws[r] = w
        m.rlt.add(w <= d.cap[r] * m.F[j, e, dd])
        m.rlt.add(w <= stages_in(m, d, r))
        m.rlt.add(w >= stages_in(m, d, r) - d.cap[r] * (m.x[j] - m.F[j, e, dd]))
    m.rlt.add(sum(ws.values()) == d.S * m.F[j, e, dd])
    m.rlt.add(m.q[j, e, dd] >= sum(d.pi[r] * ws[r] for r in d.regions))
    return ws


def _with_products(s, how, rounds=20):
    data, m, ws = _level2_model(s)
    m.obj_cost.activate()
    m.rlt = pyo.ConstraintList()
    J = {d.j: d for d in data.jobs}
    added, hist = {}, []
    if how == "full":
        for (j, e, dd) in m.q:
            added[j, e, dd] = _product_rows(m, J[j], e, dd)
    t = time.perf_counter()
    for _ in range(rounds if how == "sep" else 1):
        rm = _lp(m)
        new = [k for k in m.q if how == "sep" and pyo.value(rm.F[k]) > 1e-4 and k not in added]
        hist.append((round(pyo.value(rm.obj_cost.expr), 5), len(new)))
        if not new:
            break
        for k in new:
            added[k] = _product_rows(m, J[k[0]], k[1], k[2])
    return data, m, ws, added, hist, time.perf_counter() - t


def rlt(seeds, hows, mip, rss):
    for s in seeds:
        for how in hows:
            for rs in rss:
                c0 = time.process_time()
                data, m, ws, added, hist, sep_s = _with_products(s, how)
                out = dict(seed=s, how=how, blocks=len(added), rounds=hist, lp_s=round(sep_s, 2))
                if mip:
                    fm.load_solution_into_pyomo(m, ws)
                    J = {d.j: d for d in data.jobs}
                    for (j, e, dd), wv in added.items():
                        for r, w in wv.items():
                            w.value = pyo.value(stages_in(m, J[j], r)) * pyo.value(m.F[j, e, dd])
                    out.update(_solve(m, rs, c0))
                print(json.dumps(out), flush=True)
                if not mip:
                    break


def main(argv):
    if len(argv) < 2 or argv[0] not in ("gap", "flowcover", "rlt"):
        print("usage: p1_level2_cuts_probe.py gap|flowcover|rlt SEEDS [none,sep,full] [--mip] [--rs 0,1,2]",
              file=sys.stderr)
        return 2
    seeds = [int(x) for x in argv[1].split(",")]
    rss = [int(x) for x in argv[argv.index("--rs") + 1].split(",")] if "--rs" in argv else [0]
    if argv[0] == "gap":
        gap(seeds)
    elif argv[0] == "flowcover":
        flowcover(seeds, "--mip" in argv, rss)
    else:
        hows = argv[2].split(",") if len(argv) > 2 and not argv[2].startswith("--") else ["sep"]
        bad = [h for h in hows if h not in ("none", "sep", "full")]
        if bad:
            print(f"rlt: unknown mode {bad[0]!r} (none, sep or full)", file=sys.stderr)
            return 2
        rlt(seeds, hows, "--mip" in argv, rss)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
