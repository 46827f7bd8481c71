"""The ``optical`` bench suite's runs and report (suites.py registers the specs, tasks.py calls
``execute_optical`` for every spec of family ``optical``, report.py calls ``optical_report``).

Methods (``RunSpec.method``):
    optical-sweep:<rsa policy>        blocking at one load (instance_args: topology options, load, sizes, requests);
                                      objective = blocking, extra = its 95 % interval over 5 seeds
    optical-cba:<scheme>              one CBA configuration (workload, schedule, micro-batches); scheme ksp-ff,
                                      ksp-ff+cba, sd-ff, sd-ff+cba; objective = mean iteration time (s)
    optical-exact:<scheme>:<solver>   the exact slot assignment of every iteration's batch of that scheme;
                                      objective = the scheme's CB-weighted accepted requests, bound = the proven
                                      optimum's bound, gap = mean per-iteration gap (bound - H) / bound
    optical-xlron:<rsa policy>        blocking at one load in XLRON's reference setting (scenarios.py,
                                      ``xlron-nsfnet-ksp``); extra: per-seed values, CPU seconds
    optical-cba-ref:<scheme>          one CBA configuration on the reference network (100 slots, DeepRMSA
                                      reach table, k = 5 paths by hops / SE, XLRON's tie rule)
Every admitted lightpath (background, PP, exact) passes the independent checker, or the run is an error.
"""
from __future__ import annotations

import json
import math
from dataclasses import replace

from ..optical.cba import CbaConfig, run_cba
from ..optical.checker import check_lightpaths, record_of
from ..optical.dynamic import DynamicOptions, RequestSizes, estimate
from ..optical.exact import BatchRequest, solve_slot_assignment
from ..optical.network import load_topology, nsfnet_path
from ..optical.scenarios import SCENARIOS, XLRON_KSP_FF
from ..instance.optical import parse_reach
from ..optical.spectrum import SpectrumGrid
from ..solvers.base import SolveOptions
from .markdown import md

# The paper's figures (sources.md 3.3), for the report.
PAPER = {"main_case": "Llama 3 8B, GPipe, 64 micro-batches: iteration time -14.35 % (KSP-FF), -15.34 % (SD-FF); "
                      "bubble ratio -4.74 % / -5.22 %",
         "max": {"gpipe": (31.25, 11.81, 19.33), "1f1b": (26.11, 7.35, 17.87)}}


def _network(a: dict):
    net = load_topology(nsfnet_path() if a.get("topology", "nsfnet") == "nsfnet" else a["topology"])
    return net.replace(slots_per_link=int(a.get("slots", net.slots_per_link)), k_paths=int(a.get("k", net.k_paths)))


def reference_network():
    """NSFNET in XLRON's reference setting: 100 slots, 1 guard slot, k = 5, DeepRMSA's reach table."""
    sc = SCENARIOS["xlron-nsfnet-ksp"]
    return load_topology(nsfnet_path()).replace(slots_per_link=sc["slots"], guard_slots=sc["guard"], k_paths=sc["k"],
                                                modulations=parse_reach(sc["reach_table"]))


def reference_options(load: float, policy: str, requests: int | None = None, warmup: int | None = None):
    sc = SCENARIOS["xlron-nsfnet-ksp"]
    return DynamicOptions(load_erlang=float(load), holding_s=sc["holding"], requests=requests or sc["requests"],
                          warmup=sc["warmup"] if warmup is None else warmup, policy=policy,
                          sizes=RequestSizes.parse(sc["sizes"]), k=sc["k"], metric=sc["metric"], order=sc["order"],
                          tie=sc["tie"], directed=sc["directed"], truncate=sc["truncate"],
                          truncate_mode=sc["truncate_mode"])


#: sizes of the reference rows: (seeds, measured requests) of the curve; CBA's micro-batch counts
XLRON_SIZES = {"small": dict(seeds=2, requests=4_000, policies=("ksp-ff", "ksp-lf", "ff-ksp"), mbs=[64], cba_seeds=[1]),
               "full": dict(seeds=50, requests=40_000, policies=("ksp-ff", "ksp-lf", "ff-ksp", "ksp-bf"),
                            mbs=[16, 64], cba_seeds=[1, 2, 3])}


def xlron_specs(size: str) -> list:
    """The reference curve (every load x policy, seeds 1..n in one row) and CBA on the reference network."""
    from .spec import RunSpec
    c = XLRON_SIZES[size]
    out = []
    for pol in c["policies"]:
        for load in XLRON_KSP_FF:
            out.append(RunSpec("optical", "optical", f"xlron-nsfnet-{load:g}E", 1, f"optical-xlron:{pol}",
                               {"load": load, "seeds": c["seeds"], "requests": c["requests"]}))
    for bg in (60, 5):
        for sch in ("gpipe", "1f1b"):
            for mb in c["mbs"]:
                ia = {"workload": "llama3-8b", "schedule": sch, "microbatches": mb, "iterations": 20, "bg_count": bg}
                for seed in c["cba_seeds"]:
                    for sc in ("ksp-ff", "ksp-ff+cba", "sd-ff", "sd-ff+cba"):
                        out.append(RunSpec("optical", "optical", f"ref-llama3-8b-{sch}-{mb}-bg{bg}", seed,
                                           f"optical-cba-ref:{sc}", ia))
    return out


def check_run(net, run) -> list[str]:
    """Checker problems of every lightpath a recorded CBA run admitted."""
    return check_lightpaths(net, [lp for it in run.iterations for lp in it.lightpaths])


def _cfg(a: dict, seed: int, scheme: str, paths: str = "length") -> CbaConfig:
    bl, _, c = scheme.partition("+")
    return CbaConfig(workload=a["workload"], schedule=a["schedule"], microbatches=int(a["microbatches"]),
                     iterations=int(a.get("iterations", 20)), bg_count=int(a.get("bg_count", 60)),
                     initial_slots=int(a.get("initial_slots", 1)), baseline=bl, cba=(c == "cba"), seed=seed,
                     paths=paths)


def exact_gaps(net, cfg: CbaConfig, solver: str = "highs", options: SolveOptions | None = None,
               schemes=("ksp-ff", "ksp-ff+cba", "sd-ff", "sd-ff+cba")) -> list[dict]:
    """Per scheme: solve every iteration's PP batch exactly on the spectrum state the scheme met, compare with
    the scheme's own first attempt (accepted CB-weighted requests; highest slot used)."""
    options = options or SolveOptions(time_limit_s=60.0)
    rows = []
    for scheme in schemes:
        bl, _, c = scheme.partition("+")
        run = run_cba(net, replace(cfg, baseline=bl, cba=(c == "cba")), record_batches=True)
        bad = check_run(net, run)
        if bad:
            raise RuntimeError(f"{scheme}: admitted lightpaths break the checker: {bad[:3]}")
        gaps, hw, ow, hs, os_, proven, solve_s = [], 0.0, 0.0, [], [], 0, 0.0
        grid = SpectrumGrid(net)
        for it in run.iterations:
            reqs = [BatchRequest(q.src, q.dst, q.data_slots, q.weight) for q in it.batch]
            res = solve_slot_assignment(net, reqs, it.occupancy, solver=solver, options=options)
            grid.occ = list(it.occupancy)
            bad = check_lightpaths(net, [record_of(lp, reqs[lp.request].src, reqs[lp.request].dst)
                                         for lp in res.lightpaths], occupied=grid.occupied_by_link())
            if bad:
                raise RuntimeError(f"{scheme}: exact lightpaths break the checker: {bad[:3]}")
            if res.accepted_weight is not None and res.accepted_weight + 1e-6 < it.accepted_weight:
                raise RuntimeError(f"{scheme}: heuristic ({it.accepted_weight}) beats the 'optimum' "
                                   f"({res.accepted_weight}) at iteration {it.iteration}")
            proven += res.proven
            solve_s += res.wall_s
            g = res.gap_of(it.accepted_weight)
            gaps.append(math.nan if g is None else g)
            hw += it.accepted_weight
            ow += res.accepted_weight or 0.0
            if res.max_slot is not None and abs((res.accepted_weight or 0) - it.accepted_weight) < 1e-6:
                hs.append(it.max_slot)          # highest slot: comparable only at equal accepted weight
                os_.append(res.max_slot)
        fin = [g for g in gaps if not math.isnan(g)]
        rows.append({"policy": scheme, "solver": solver, "iterations": len(run.iterations), "proven": proven,
                     "mean_gap": sum(fin) / len(fin) if fin else math.nan, "max_gap": max(fin) if fin else math.nan,
                     "iterations_with_gap": sum(1 for g in fin if g > 1e-9),
                     "heuristic_weight": hw, "optimal_weight": ow,
                     "heuristic_max_slot": sum(hs) / len(hs) if hs else math.nan,
                     "optimal_max_slot": sum(os_) / len(os_) if os_ else math.nan, "solve_s": solve_s})
    return rows


def execute_optical(spec) -> dict:
    """One bench row (see the module docstring); raises on failure (the runner records the error)."""
    a = dict(spec.instance_args)
    kind, _, rest = spec.method.partition(":")
    if kind == "optical-xlron":
        net = reference_network()
        e = estimate(net, reference_options(a["load"], rest, int(a["requests"])),
                     range(spec.seed, spec.seed + int(a["seeds"])))
        return {"instance": "xlron-nsfnet", "status": "done", "objective": e.mean, "extra": e.to_dict()}
    if kind == "optical-cba-ref":
        net = reference_network()
        run = run_cba(net, _cfg(a, spec.seed, rest, paths="xlron"), record_batches=True)
        bad = check_run(net, run)
        if bad:
            raise RuntimeError(f"admitted lightpaths break the checker: {bad[:3]}")
        return {"instance": "xlron-nsfnet", "status": "done", "feasible": True,
                "objective": run.summary()["mean_iteration_s"], "extra": run.summary()}
    net = _network(a)
    if kind == "optical-sweep":
        opt = DynamicOptions(load_erlang=float(a["load"]), holding_s=float(a.get("holding", 1.0)),
                             requests=int(a["requests"]), warmup=int(a.get("warmup", int(a["requests"]) // 10)),
                             policy=rest, sizes=RequestSizes.parse(a.get("sizes", "fixed:1")))
        e = estimate(net, opt, range(spec.seed, spec.seed + int(a.get("seeds", 5))))
        return {"instance": net.name, "status": "done", "objective": e.mean, "extra": e.to_dict()}
    if kind == "optical-cba":
        run = run_cba(net, _cfg(a, spec.seed, rest), record_batches=True)
        bad = check_run(net, run)
        if bad:
            raise RuntimeError(f"admitted lightpaths break the checker: {bad[:3]}")
        s = run.summary()
        return {"instance": net.name, "status": "done", "feasible": True, "objective": s["mean_iteration_s"],
                "extra": s}
    if kind == "optical-exact":
        scheme, _, solver = rest.partition(":")
        cfg = _cfg(a, spec.seed, scheme)
        tl = float(spec.method_args.get("time_limit", 60))
        r = exact_gaps(net, cfg, solver, SolveOptions(time_limit_s=tl), schemes=(scheme,))[0]
        return {"instance": net.name, "status": "done", "feasible": True, "objective": r["heuristic_weight"],
                "bound": r["optimal_weight"], "gap": r["mean_gap"], "solve_s": r["solve_s"], "extra": r}
    raise ValueError(f"unknown optical method {spec.method!r}")


# ---------------------------------------------------------------------- report

def _extra(df):
    import pandas as pd
    return pd.DataFrame([json.loads(x) if isinstance(x, str) else {} for x in df["extra"]], index=df.index)


def paper_comparison(t) -> str:
    """The paper's headline figures beside ours: the largest reduction CBA gives over the micro-batch counts
    and models (iteration time, bubble ratio, PP blocking; positive = CBA lower), per schedule and background,
    and the main case (Llama 3 8B, GPipe, 64 micro-batches)."""
    import pandas as pd
    t = t.copy()
    t["iter_red"] = -t["iter Δ%"]
    t["bubble_red"] = 100 * (1 - t["bubble +CBA"] / t["bubble"])
    t["bubble_pts"] = 100 * (t["bubble"] - t["bubble +CBA"])
    t["block_red"] = [100 * (1 - c / b) if b > 0 else (0.0 if c == 0 else -math.inf)
                      for b, c in zip(t["block"], t["block +CBA"])]
    rows = []
    for (bgc, sch), sub in t.groupby(["background", "schedule"]):
        p = PAPER["max"].get(sch)
        rows.append({"background per event": bgc, "schedule": sch,
                     "max iter. time red. % (ours)": sub["iter_red"].max(), "(paper)": p[0],
                     "max bubble red. % (ours)": sub["bubble_red"].max(),
                     "max bubble red. points (ours)": sub["bubble_pts"].max(), "(paper) ": p[1],
                     "max blocking red. % (ours)": sub["block_red"].max(), "(paper)  ": p[2]})
    main = t[(t["workload"] == "llama3-8b") & (t["schedule"] == "gpipe") & (t["micro-batches"] == 64)]
    lines = []
    for _, r in main.iterrows():
        paper = {"ksp-ff": (14.35, 4.74), "sd-ff": (15.34, 5.22)}[r["baseline"]]
        lines.append(f"- main case (Llama 3 8B, GPipe, 64 micro-batches), background {r['background']}, "
                     f"{r['baseline']}: iteration time {r['iter Δ%']:+.2f} % with CBA (paper {-paper[0]:.2f} %), "
                     f"bubble ratio {r['bubble']:.3f} -> {r['bubble +CBA']:.3f} ({-r['bubble_red']:+.2f} %; "
                     f"paper {-paper[1]:.2f} %), PP blocking "
                     f"{r['block']:.3f} -> {r['block +CBA']:.3f}")
    return ("CBA's largest reductions over models and micro-batch counts, beside the paper's (JOCN, sources.md "
            "3.3; the paper does not say whether its bubble figure is relative or in points; negative blocking "
            "reduction = CBA raises blocking):\n\n" + md(pd.DataFrame(rows), ".4g") + "\n\n" + "\n".join(lines))


def optical_report(df, plots_dir=None) -> str:
    """Markdown: blocking versus load per policy; CBA against its baselines; the exact slot assignment's gap."""
    import pandas as pd
    out = []
    ok = df[df["status"] == "done"]
    sw = ok[ok["method"].str.startswith("optical-sweep:")]
    if len(sw):
        x = _extra(sw)
        t = x.pivot_table(index="load_erlang", columns="policy", values="blocking", aggfunc="first")
        hw = x.pivot_table(index="load_erlang", columns="policy", values="half_width", aggfunc="first")
        cell = t.map(lambda v: f"{v:.4f}") + " ± " + hw.map(lambda v: f"{v:.4f}")
        out.append("Blocking probability versus load (95 % interval over seeds):\n\n" + md(cell))
        wall = x.groupby("policy")["wall_s"].max()
        out.append("Slowest load point per policy (s, all seeds): " +
                   ", ".join(f"{p} {w:.1f}" for p, w in wall.items()))
    cb = ok[ok["method"].str.startswith("optical-cba:")]
    if len(cb):
        x = _extra(cb)
        x["bg_count"] = [json.loads(o)["instance"].get("bg_count", 60) for o in cb["options"]]
        g = x.groupby(["bg_count", "workload", "schedule", "microbatches", "policy"])[
            ["mean_iteration_s", "mean_bubble_ratio", "pp_blocking", "mean_slots"]].mean()
        rows = []
        for (bgc, wl, sch, mb), sub in g.groupby(level=[0, 1, 2, 3]):
            sub = sub.droplevel([0, 1, 2, 3])
            for bl in ("ksp-ff", "sd-ff"):
                if bl in sub.index and bl + "+cba" in sub.index:
                    b, c = sub.loc[bl], sub.loc[bl + "+cba"]
                    rows.append({"workload": wl, "schedule": sch, "micro-batches": mb, "background": bgc,
                                 "baseline": bl,
                                 "iter_s": b["mean_iteration_s"], "iter_s +CBA": c["mean_iteration_s"],
                                 "iter Δ%": 100 * (c["mean_iteration_s"] / b["mean_iteration_s"] - 1),
                                 "bubble": b["mean_bubble_ratio"], "bubble +CBA": c["mean_bubble_ratio"],
                                 "block": b["pp_blocking"], "block +CBA": c["pp_blocking"],
                                 "slots +CBA": c["mean_slots"]})
        t = pd.DataFrame(rows)
        out.append(paper_comparison(t))
        out.append(f"CBA against its baselines (mean over seeds {sorted(set(cb['seed']))}):\n\n" +
                   md(t, ".4g"))
    out.extend(xlron_report(ok))
    ex = ok[ok["method"].str.startswith("optical-exact:")]
    if len(ex):
        x = _extra(ex)
        x["workload"] = [json.loads(o)["instance"]["workload"] for o in ex["options"]]
        x["schedule"] = [json.loads(o)["instance"]["schedule"] for o in ex["options"]]
        x["background"] = [json.loads(o)["instance"].get("bg_count", 60) for o in ex["options"]]
        x = x.sort_values(["background", "workload", "schedule"], kind="stable")
        cols = ["background", "workload", "schedule", "policy", "solver", "iterations", "proven", "iterations_with_gap", "mean_gap",
                "max_gap", "heuristic_weight", "optimal_weight", "heuristic_max_slot", "optimal_max_slot", "solve_s"]
        out.append("Exact slot assignment per iteration (gap = (bound - heuristic) / bound of CB-weighted "
                   "accepted requests):\n\n" + md(x[cols], ".4g"))
    return "\n\n".join(out) if out else "(no optical rows)"


def xlron_report(ok) -> list[str]:
    """The reference curve beside XLRON's published KSP-FF values, and CBA's gain on the reference network."""
    import pandas as pd
    out = []
    xr = ok[ok["method"].str.startswith("optical-xlron:")]
    if len(xr):
        x = _extra(xr)
        t = x.pivot_table(index="load_erlang", columns="policy", values="blocking", aggfunc="first")
        hw = x.pivot_table(index="load_erlang", columns="policy", values="half_width", aggfunc="first")
        per_seed = {(lo, po): tuple(v) for lo, po, v in zip(x["load_erlang"], x["policy"], x["per_seed"])}
        rows = []
        for load in t.index:
            pub = XLRON_KSP_FF.get(float(load))
            r = {"load (E)": load, "XLRON KSP-FF (published)": pub}
            for pol in t.columns:
                r[pol] = f"{t.loc[load, pol]:.3e} ± {hw.loc[load, pol]:.1e}"
            if "ksp-ff" in t.columns and pub:
                r["KSP-FF vs published"] = f"{100 * (t.loc[load, 'ksp-ff'] / pub - 1):+.1f} %"
            if "ff-ksp" in t.columns and "ksp-ff" in t.columns:
                r["FF-KSP vs KSP-FF"] = f"{100 * (t.loc[load, 'ff-ksp'] / t.loc[load, 'ksp-ff'] - 1):+.1f} %"
            lf, ff = per_seed.get((load, "ksp-lf")), per_seed.get((load, "ksp-ff"))
            if lf is not None and ff is not None:
                r["KSP-LF = KSP-FF per seed"] = "yes" if lf == ff else "no"
            rows.append(r)
        seeds, req = int(x["seeds"].iloc[0]), int(x["requests_per_seed"].iloc[0])
        cpu = x["cpu_s"].sum()
        n = (seeds * len(x)) * (req + SCENARIOS["xlron-nsfnet-ksp"]["warmup"])
        out.append(f"XLRON's reference (scenario xlron-nsfnet-ksp; {seeds} seeds x (3,000 + {req:,}) requests; 95 % "
                   f"interval over seeds) beside XLRON's published KSP-FF service blocking:\n\n"
                   + md(pd.DataFrame(rows), ".4g")
                   + f"\n\n{n:,} requests in {cpu:.0f} CPU-s of the event loops ({n / max(cpu, 1e-9):,.0f} per CPU-s).")
    cr = ok[ok["method"].str.startswith("optical-cba-ref:")]
    if len(cr):
        x = _extra(cr)
        x["bg_count"] = [json.loads(o)["instance"].get("bg_count", 60) for o in cr["options"]]
        g = x.groupby(["bg_count", "schedule", "microbatches", "policy"])[["mean_iteration_s", "pp_blocking",
                                                                          "bg_blocking"]].mean()
        rows = []
        for (bgc, sch, mb), sub in g.groupby(level=[0, 1, 2]):
            sub = sub.droplevel([0, 1, 2])
            for bl in ("ksp-ff", "sd-ff"):
                if bl in sub.index and bl + "+cba" in sub.index:
                    b, c = sub.loc[bl], sub.loc[bl + "+cba"]
                    rows.append({"background": bgc, "schedule": sch, "micro-batches": mb, "baseline": bl,
                                 "iter_s": b["mean_iteration_s"], "iter_s +CBA": c["mean_iteration_s"],
                                 "iter Δ%": 100 * (c["mean_iteration_s"] / b["mean_iteration_s"] - 1),
                                 "PP block": b["pp_blocking"], "PP block +CBA": c["pp_blocking"],
                                 "bg block": b["bg_blocking"]})
        out.append("CBA on the reference network (Llama 3 8B; NSFNET 100 slots, DeepRMSA reach table, KSP-FF on "
                   "XLRON's k = 5 paths; mean over seeds; paper: iteration time up to -31.25 % (GPipe), PP blocking "
                   "-13.20 % ... -19.33 %):\n\n" + md(pd.DataFrame(rows), ".4g"))
    return out
