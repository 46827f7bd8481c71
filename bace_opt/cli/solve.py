"""``bace-opt solve INSTANCE --problem placement|schedule --solver ... -o OUT``: exact P1 / P2 models."""
from __future__ import annotations

from ..errors import InputError
from ..files import check_output
from ._args import check_range, finite_float, int_arg
from ..evaluate import MONEY_KEYS, format_metrics
from ..instance import load_instance
from ..schedule import load_schedule

SOLVERS = ("highs", "cpsat", "scip", "mathopt-highs", "race")


def add_parser(sub):
    p = sub.add_parser("solve", help="solve P1 (placement) or P2 (schedule) exactly",
                       description="Solve the placement problem P1 (which waiting jobs start at t0, where, over "
                                   "which routes; lexicographic: jobs started, cost, run time) or the offline "
                                   "schedule P2 exactly, print a summary (status, objective, bound, gap, times, "
                                   "jobs started) and write the Schedule JSON. See models/placement.md.")
    p.add_argument("instance", help="instance JSON file")
    p.add_argument("--problem", choices=("placement", "schedule"), default="placement")
    p.add_argument("--solver", choices=SOLVERS, default="highs",
                   help="highs: HiGHS via Pyomo; scip / mathopt-highs: the same model via MPS and OR-Tools "
                        "MathOpt; cpsat: OR-Tools CP-SAT model; race (placement): --race-members in parallel "
                        "processes, the first proof wins")
    p.add_argument("--race-members", default=None, metavar="A,B",
                   help="back ends of --solver race (default highs,cpsat; e.g. highs,cpsat,scip)")
    p.add_argument("--time-limit", type=finite_float, default=60.0, metavar="S", help="wall-clock limit, s (default 60)")
    p.add_argument("--mu", type=finite_float, default=0.0, metavar="X", help="P2 weight of cost, s/USD (default 0)")
    p.add_argument("--gap", type=finite_float, default=None, metavar="G", help="relative gap to stop at (default 1e-9)")
    p.add_argument("--threads", type=int_arg, default=None, metavar="N", help="solver threads (default 1)")
    p.add_argument("--t0", type=finite_float, default=None, metavar="S",
                   help="P1 decision time (default: the latest arrival)")
    p.add_argument("--warm-start", metavar="SCHEDULE", default=None,
                   help="a schedule (e.g. a heuristic's) whose placements start the solver")
    p.add_argument("--time-unit", type=finite_float, default=None, metavar="S",
                   help="P2: time unit in s (CP-SAT's resolution, the MILP's slot length; default: chosen from "
                        "the horizon, see models/schedule.md)")
    p.add_argument("--max-blocks", type=int_arg, default=None, metavar="K",
                   help="P2: at most K blocks per placement (the optimum is then over that candidate set)")
    p.add_argument("--routes-k", type=int_arg, default=None, metavar="K",
                   help="P2: at most K routes per hop (the optimum is then over that candidate set)")
    p.add_argument("--bracket", action="store_true",
                   help="P2: also prove a lower bound valid in continuous time (half of the time limit) and print "
                        "the bracket [lower, upper] (models/schedule.md section 8)")
    p.add_argument("--log", action="store_true", help="show the solver's log")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="schedule JSON to write")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..exact import solve
    check_output(args.output, suffixes=(".json",), inputs=(args.instance, args.warm_start))
    check_range("--time-limit", args.time_limit, gt=0)
    check_range("--threads", args.threads, ge=1, le=1024)
    if args.gap is not None and not 0 <= args.gap < 1:
        raise InputError(f"--gap: must be in [0, 1), got {args.gap:g}")
    check_range("--mu", args.mu, ge=0)
    check_range("--t0", args.t0, ge=0)
    inst = load_instance(args.instance)
    warm = None
    if args.warm_start:
        warm = load_schedule(args.warm_start)
    kw = {}
    if args.race_members is not None:
        if args.solver != "race":
            raise InputError("--race-members applies to --solver race only")
        kw["race_members"] = [m.strip() for m in args.race_members.split(",") if m.strip()]
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
        if not v > 0:
            raise InputError(f"--{opt.replace('_', '-')}: must be > 0, got {v:g}")
        kw[name] = v
    sched = solve(inst, problem=args.problem, solver=args.solver, time_limit=args.time_limit, mu=args.mu,
                  gap=args.gap, threads=args.threads, log_output=args.log, warm_start=warm, **kw)
    sched.save(args.output)
    s = sched.solver
    m = sched.metrics

    def fmt(v):
        return "-" if v is None else (f"{v:.9g}" if isinstance(v, float) else str(v))
    print(f"problem: {args.problem}   solver: {args.solver}   status: {s.status if s else '-'}"
          + (f"   proved by: {s.extra.get('proved_by') or '-'}" if s is not None and args.solver == "race" else ""))
    if s is not None:
        print(f"objective: {fmt(s.objective)}   bound: {fmt(s.bound)}   gap: {fmt(s.gap)}")
        print(f"time: wall {fmt(s.wall_s)} s (build {fmt(s.build_s)} s, solve {fmt(s.solve_s)} s)   "
              f"nodes: {fmt(s.nodes)}")
        for lv in (s.extra or {}).get("levels", []):
            print(f"  level {lv['level']} {lv['name']} ({lv['sense']}): {lv['status']}  objective "
                  f"{fmt(lv['objective'])}  bound {fmt(lv['bound'])}  gap {fmt(lv['gap'])}  "
                  f"solve {fmt(lv['solve_s'])} s")
        if s.message:
            print(f"message: {s.message}")
        x = s.extra or {}
        if "bracket_gap" in x:
            print(f"bracket: lower {fmt(x.get('lower_bound'))} ({x.get('lower_bound_kind')}, "
                  f"{'certified' if x.get('lower_bound_certified') else 'NOT certified'})   upper "
                  f"{fmt(x.get('upper_bound'))}   width {fmt(x.get('bracket_gap'))}")
    if args.problem == "placement":
        print(f"jobs started: {m.get('jobs_done')}   not started: {m.get('jobs_not_started')}   "
              f"unscheduled (arrive after t0): {m.get('jobs_unscheduled')}")
    else:
        print(f"jobs done: {m.get('jobs_done')}   unscheduled: {m.get('jobs_unscheduled')}")
    print("the evaluator's figures:")
    for line in format_metrics(m, links=False, keys=MONEY_KEYS + (
            "total_electricity_incl_idle_usd", "avg_jct_s", "peak_link_utilisation", "total_stall_s")):
        print("  " + line)
    if args.problem == "placement" and sched.meta.get("t0") is not None:
        what, key = (("electricity + egress", "total_cost_usd") if inst.objective.egress
                     else ("electricity only: objective.egress is off", "total_electricity_usd"))
        print(f"P1 cost objective ({what}): {fmt(sched.meta.get('cost_at_t0_usd'))} USD at t0 = "
              f"{fmt(sched.meta['t0'])} s prices; {fmt(sched.meta.get('evaluated_cost_usd'))} USD priced over "
              f"each run by the evaluator (= {key})")
    print(f"wrote {args.output}")
    return 0 if (s is None or s.status in ("optimal", "feasible")) else 1
