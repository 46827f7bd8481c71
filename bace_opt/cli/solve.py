"""``bace-opt solve INSTANCE --problem placement|schedule --solver ... -o OUT``: exact P1 / P2 models."""
from __future__ import annotations

import json
import logging

from .. import clock
from ..errors import InputError
from ..files import check_output
from ..options import check_solve_options
from ._args import ENGINE_HELP, finite_float, int_arg
from ..evaluate import MONEY_KEYS, format_metrics
from ..instance import load_instance
from ..schedule import load_schedule
from .._format import pct, short, unit_of

log = logging.getLogger("bace_opt.cli.solve")

SOLVERS = ("highs", "cpsat", "scip", "mathopt-highs", "race")


def add_parser(sub):
    p = sub.add_parser("solve", help="solve P1 (placement) or P2 (schedule) exactly",
                       description="Solve the placement problem P1 (which waiting jobs start at t0, where, over "
                                   "which routes; lexicographic: jobs started, cost, run time) or the offline "
                                   "schedule P2 exactly, print a summary (status, objective, bound, gap, times, "
                                   "jobs started) and write the Schedule JSON. P2's status, bound and gap are for "
                                   "the continuous-time problem: a slotted optimum says so, and its own bound "
                                   "is printed apart. See models/placement.md and models/schedule.md.")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--problem", choices=("placement", "schedule"), default="placement")
    p.add_argument("--solver", choices=SOLVERS, default="highs",
                   help="highs: HiGHS via Pyomo; scip / mathopt-highs: the same model via MPS and OR-Tools "
                        "MathOpt; cpsat: OR-Tools CP-SAT model; race (placement): --race-members in parallel "
                        "processes, the first proof wins")
    p.add_argument("--engine", choices=("auto", "walk", "cg"), default=None, help="placement: " + ENGINE_HELP)
    p.add_argument("--race-members", default=None, metavar="A,B",
                   help="back ends of --solver race (default highs,cpsat; e.g. highs,cpsat,scip)")
    p.add_argument("--time-limit", type=finite_float, default=60.0, metavar="S", help="wall-clock limit, s (default 60)")
    p.add_argument("--mu", type=finite_float, default=0.0, metavar="X", help="P2 weight of cost, s/USD (default 0)")
    p.add_argument("--gap", type=finite_float, default=None, metavar="G", help="relative gap to stop at (default 1e-9)")
    p.add_argument("--threads", type=int_arg, default=None, metavar="N", help="solver threads (default: the cores available to this process; a race's "
                        "members share them)")
    p.add_argument("--t0", type=finite_float, default=None, metavar="S",
                   help="P1 decision time (default: the latest arrival)")
    p.add_argument("--warm-start", metavar="SCHEDULE", default=None,
                   help="a schedule (e.g. a heuristic's) whose placements start the solver")
    p.add_argument("--time-unit", type=finite_float, default=None, metavar="S",
                   help="P2: time unit in s (CP-SAT's resolution, the MILP's slot length; default: chosen from "
                        "the horizon, see models/schedule.md)")
    p.add_argument("--max-blocks", type=int_arg, default=None, metavar="K",
                   help="P2: at most K blocks per placement (the optimum is then over that candidate set; default: "
                        "chosen inside, every placement when the exact model can hold them, else fewer regions "
                        "and routes; the choice is printed)")
    p.add_argument("--routes-k", type=int_arg, default=None, metavar="K",
                   help="P2: at most K routes per hop (the optimum is then over that candidate set; default: chosen "
                        "inside with --max-blocks)")
    p.add_argument("--bracket", action="store_true",
                   help="P2: also prove a lower bound valid in continuous time and print the bracket [lower, "
                        "upper] (models/schedule.md section 8); a problem too large for the exact P2 gets the "
                        "bracket without it")
    p.add_argument("--log", action="store_true", help="show the solver's log (as -vv does)")
    p.add_argument("--json", action="store_true", help="print one JSON object (status, objective with its unit, "
                                                       "bound, gap, levels, times, metrics) instead of the summary")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="schedule JSON to write")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..exact import solve
    check_output(args.output, suffixes=(".json",), inputs=(args.instance, args.warm_start))
    unit = "time_resolution_s" if args.solver == "cpsat" else "slot_s"
    given = {"time_limit": args.time_limit, "threads": args.threads, "gap": args.gap, "mu": args.mu,
             "t0": args.t0, unit: args.time_unit, "max_blocks": args.max_blocks, "routes_k": args.routes_k}
    check_solve_options(given, names={unit: "--time-unit", **{k: "--" + k.replace("_", "-") for k in given
                                                              if k != unit}})
    inst = load_instance(args.instance)
    warm = None
    if args.warm_start:
        warm = load_schedule(args.warm_start)
    kw = {}
    if args.race_members is not None:
        if args.solver != "race":
            raise InputError("--race-members applies to --solver race only")
        kw["race_members"] = [m.strip() for m in args.race_members.split(",") if m.strip()]
    if args.engine is not None:
        if args.problem != "placement":
            raise InputError("--engine applies to --problem placement only")
        kw["engine"] = args.engine
    if args.bracket:
        if args.problem != "schedule":
            raise InputError("--bracket applies to --problem schedule only")
        kw["bracket"] = True
    if args.t0 is not None:
        if args.problem != "placement":
            raise InputError("--t0 applies to --problem placement only")
        kw["t0"] = args.t0
    p2 = {"time_unit": "time_resolution_s" if args.solver == "cpsat" else "slot_s",
          "max_blocks": "max_blocks", "routes_k": "routes_k"}
    for opt, name in p2.items():
        v = getattr(args, opt)
        if v is None:
            continue
        if args.problem != "schedule":
            raise InputError(f"--{opt.replace('_', '-')} applies to --problem schedule only")
        kw[name] = v
    log.info("loaded %s: %d regions, %d jobs; solving %s with %s (time limit %s)", inst.name, len(inst.regions),
             len(inst.jobs), "P1" if args.problem == "placement" else "P2", args.solver,
             short(args.time_limit, "s"))
    # -vv: HiGHS's log already reaches the logger through pyomo (at INFO); the other back ends write theirs to
    # stderr when asked (solvers.output), so --json's stdout stays the JSON alone
    log_output = bool(args.log or (getattr(args, "verbosity", 0) >= 2 and args.solver != "highs"))
    sched = solve(inst, problem=args.problem, solver=args.solver, time_limit=args.time_limit, mu=args.mu,
                  gap=args.gap, threads=args.threads, log_output=log_output, warm_start=warm, **kw)
    sched.save(args.output)
    log.info("wrote %s", args.output)
    s = sched.solver
    d = summary(args, sched, inst)
    if args.json:
        d["wall_s"] = clock.wall_s()     # the command's wall clock from its start (bace_opt.clock), not a stage's
        print(json.dumps(d, indent=1))
    else:
        print_summary(d)
    return 0 if (s is None or s.status in ("optimal", "feasible")) else 1


def objective_unit(problem: str, solver_info) -> tuple[str | None, str]:
    """Unit and meaning of the solver's objective: P1's is its last lexicographic level, P2's is in s."""
    if problem == "schedule":
        return "s", "mean JCT + mu x cost (models/schedule.md P2.1)"
    levels = (solver_info.extra or {}).get("levels", []) if solver_info is not None else []
    if levels:
        done = [lv for lv in levels if lv.get("objective") is not None]
        last = done[-1] if done else levels[0]
        # the reported objective is the last level proven or found (the message names it)
        for lv in levels:
            if solver_info.objective is not None and lv.get("objective") == solver_info.objective:
                last = lv
                break
        return unit_of(last["name"]), f"level {last['level']} {last['name']} ({last['sense']})"
    return None, "objective"


def summary(args, sched, inst) -> dict:
    """What solve reports, as one dict (the --json output; the text summary prints the same)."""
    s, m = sched.solver, sched.metrics
    unit, meaning = objective_unit(args.problem, s)
    d = {"instance": sched.instance, "problem": args.problem, "solver": args.solver,
         "status": s.status if s else None, "objective": s.objective if s else None,
         "objective_unit": unit, "objective_is": meaning, "bound": s.bound if s else None,
         "gap": s.gap if s else None, "wall_s": None,
         "times": {"solver_wall_s": s.wall_s if s else None, "build_s": s.build_s if s else None,
                   "solve_s": s.solve_s if s else None},
         "time_limit_s": args.time_limit, "nodes": s.nodes if s else None,
         "message": s.message if s else None, "levels": list((s.extra or {}).get("levels", [])) if s else [],
         "mu_s_per_usd": args.mu if args.problem == "schedule" else None,
         "metrics": dict(m), "output": str(args.output)}
    x = (s.extra or {}) if s else {}
    if args.solver == "race":
        d["proved_by"] = x.get("proved_by")
        d["levels_proved_by"] = {str(k): v for k, v in (x.get("levels_proved_by") or {}).items()}
    if "bracket_gap" in x:
        d["bracket"] = {k: x.get(k) for k in ("lower_bound", "lower_bound_kind", "lower_bound_certified",
                                              "upper_bound", "bracket_gap", "bound_is_for")}
    if args.problem == "schedule" and s is not None:
        honest_schedule_fields(d, s, x)
    if args.problem == "placement" and sched.meta.get("t0") is not None:
        d["t0_s"] = sched.meta["t0"]
        d["cost_at_t0_usd"] = sched.meta.get("cost_at_t0_usd")
        d["evaluated_cost_usd"] = sched.meta.get("evaluated_cost_usd")
        d["p1_cost_counts_egress"] = bool(inst.objective.egress)
        d["engine"] = sched.meta.get("engine")
        d["engine_rule"] = x.get("engine_rule")
        d["start"] = sched.meta.get("start")
        d["timeline"] = x.get("timeline", [])      # issue 44: p1.certify.Timeline's points
    return d


def honest_schedule_fields(d: dict, s, x: dict) -> None:
    """P2's status, bound and gap for the problem the user posed (the continuous-time P2, issue 38): the status
    says when it is an optimum of the slotted model or over a restricted candidate set; ``bound`` is a lower
    bound of the continuous-time P2 or None (the slotted model's own bound goes to ``slotted_bound``: a solution
    in continuous time may beat it); which problem each bound is for; the candidate set used."""
    d["solver_status"] = s.status
    d["status"] = x.get("status_for_posed_problem") or s.status
    bracket = "bracket_gap" in x
    if not bracket:                      # a slotted solve: its bound is not a lower bound of the posed problem
        d["slotted_bound"], d["slotted_gap"] = s.bound, s.gap
        d["bound"] = d["gap"] = None
        d["bound_is_for"] = None
        d["slotted_bound_is_for"] = x.get("model")
    else:
        d["bound_is_for"] = x.get("bound_is_for")
        if x.get("slotted_bound") is not None:
            d["slotted_bound"] = x["slotted_bound"]
            d["slotted_bound_is_for"] = x.get("model")
    d["model"] = x.get("model")
    d["candidates_used"] = x.get("candidates_used")
    d["candidate_steps"] = x.get("candidate_steps", [])


def print_summary(d: dict) -> None:
    u = d["objective_unit"]
    print(f"problem: {d['problem']}   solver: {d['solver']}   status: {d['status'] or '-'}"
          + (f"   proved by: {d.get('proved_by') or '-'}" if "proved_by" in d else "")
          + (f"   engine: {d['engine']} ({d.get('engine_rule')})" if d.get("engine") else ""))
    if d["status"] is not None:
        mu = f", mu = {short(d['mu_s_per_usd'])} s/USD" if d["mu_s_per_usd"] is not None else ""
        none = ("" if d["bound"] is not None or d["problem"] != "schedule" else
                " (no lower bound of the continuous-time problem computed; --bracket proves one)")
        print(f"objective: {short(d['objective'], u)} [{d['objective_is']}{mu}]   bound: {short(d['bound'], u)}{none}"
              f"   gap: {pct(d['gap'])}")
        if d.get("bound_is_for"):
            print(f"  the bound is for {d['bound_is_for']}")
        if d.get("slotted_bound") is not None:
            print(f"slotted model: bound {short(d['slotted_bound'], u)}"
                  + (f", gap {pct(d['slotted_gap'])}" if d.get("slotted_gap") is not None else "")
                  + f" for {d.get('slotted_bound_is_for') or 'the slotted model'}: not a lower bound of the "
                    "continuous-time problem")
        if d.get("candidates_used"):
            skipped = [f"{st['candidates']} ({st['not_used']})" for st in d.get("candidate_steps", [])
                       if st.get("not_used")]
            print(f"candidates: {d['candidates_used']}" + (f"; not used: {'; '.join(skipped)}" if skipped else ""))
        t = d["times"]
        print(f"time: wall {short(clock.wall_s(), 's')} of the limit {short(d['time_limit_s'], 's')} (the solver "
              f"{short(t['solver_wall_s'], 's')}: build {short(t['build_s'], 's')}, solve {short(t['solve_s'], 's')})"
              f"   nodes: {short(d['nodes'])}")
        for lv in d["levels"]:
            lu = unit_of(lv["name"])
            print(f"  level {lv['level']} {lv['name']} ({lv['sense']}): {lv['status']}  objective "
                  f"{short(lv['objective'], lu)}  bound {short(lv['bound'], lu)}  gap {pct(lv['gap'])}  "
                  f"solve {short(lv['solve_s'], 's')}"
                  + (f"  columns {lv['columns']}" if lv.get("columns") is not None else "")
                  + (f"  (bound: {lv['bound_source']})" if lv.get("bound_source") else "")
                  + (f"  proved by {by}" if (by := (d.get("levels_proved_by") or {}).get(str(lv["level"]))) else ""))
        if d["message"]:
            print(f"message: {d['message']}")
        br = d.get("bracket")
        if br:
            print(f"bracket: lower {short(br['lower_bound'], u)} ({br['lower_bound_kind']}, "
                  f"{'certified' if br['lower_bound_certified'] else 'NOT certified'})   upper "
                  f"{short(br['upper_bound'], u)}   width {pct(br['bracket_gap'])}")
    m = d["metrics"]
    if d["problem"] == "placement":
        print(f"jobs started: {m.get('jobs_done')}   not started: {m.get('jobs_not_started')}   "
              f"unscheduled (arrive after t0): {m.get('jobs_unscheduled')}")
    else:
        print(f"jobs done: {m.get('jobs_done')}   unscheduled: {m.get('jobs_unscheduled')}")
    print("the evaluator's figures:")
    for line in format_metrics(m, links=False, keys=MONEY_KEYS + (
            "total_electricity_incl_idle_usd", "avg_jct_s", "peak_link_utilisation", "total_stall_s")):
        print("  " + line)
    if "t0_s" in d:
        what, key = (("electricity + egress", "total_cost_usd") if d["p1_cost_counts_egress"]
                     else ("electricity only: objective.egress is off", "total_electricity_usd"))
        print(f"P1 cost objective ({what}): {short(d['cost_at_t0_usd'], 'USD')} at t0 = {short(d['t0_s'], 's')} "
              f"prices; {short(d['evaluated_cost_usd'], 'USD')} priced over each run by the evaluator (= {key})")
    print(f"wrote {d['output']}")
