"""``bace-opt bench``: run a benchmark suite, resumably, and print its report.

Results go to the user's own file, ``results_dir()/<suite>-<size>.csv``, unless ``-o`` names a file:
``$BACE_OPT_RESULTS`` if set, else ``./bace-opt-results`` in the working directory.  The project's committed
results (``benchmarks/results/`` of a checkout) are read, or added to, only when asked: ``--results
committed``.  So a fresh ``bench`` runs its suite and never passes the committed figures off as the user's.

A run that fails is recorded as failed (status ``error``, the reason in ``error``; or ``infeasible-schedule``,
a schedule that broke the rules), listed in the report under "Failed runs" and left out of its every table and
average, and retried by the next ``bench`` of the same suite: its new row replaces the failed one, so the file
holds each run once.  A results file holds one suite: a file with another suite's rows is refused.
``--no-run`` only reads: it never writes the results file (a damaged file is read as it is, not repaired).
A results file is data: a policy it names (``sim:path/to/file.py:Class``, any prefix) is never imported or run,
and the report labels it by that text.  A policy's code runs only where ``--policy`` names it, and the rows of a
policy of one's own are resumed only when ``--policy`` names it again.  A run stopped by a time limit has status
``time_limit``: listed by the report, not retried.

Exit codes (``EXIT_CODES``, also in ``--help``): 0 every run of the batch finished; 1 some run of the batch
failed (the report lists it; rerun the same command to retry it); 2 a refused input (an unknown suite or
policy, a results file of another suite, an unreachable ``--dask`` scheduler) or a Dask scheduler lost mid-batch
(the finished rows are kept: rerun to resume); 3 an internal error; 130 Ctrl-C, 143 SIGTERM.
"""
from __future__ import annotations

import argparse
import logging
import os
import textwrap
from pathlib import Path

from ..errors import InputError
from ..files import check_output
from ._args import int_arg

log = logging.getLogger("bace_opt.cli.bench")

EXIT_CODES = """exit codes:
  0    every run of the batch finished (or --no-run, --list)
  1    some run of the batch failed (status error or infeasible-schedule): the report lists it under
       "Failed runs" and leaves it out of every figure; rerun the same command to retry it
  2    a refused input (unknown suite or policy, a results file that holds another suite, an unreachable
       --dask scheduler), or the Dask scheduler was lost mid-batch (finished rows kept: rerun to resume)
  3    an internal error (a bug)
  130  Ctrl-C; 143 SIGTERM (finished rows kept: rerun to resume)"""


def add_parser(sub):
    about = ("Run every run of SUITE at SIZE that is not yet in the results file (one tidy CSV row per run), then "
             "print the suite's report. Interrupt and rerun the same command to resume: finished rows are skipped, "
             "none is lost or duplicated; failed runs are retried, their new rows replacing the failed ones.")
    p = sub.add_parser("bench", help="run a benchmark suite (resumable) and print its tables",
                       description=textwrap.fill(about, 78), epilog=EXIT_CODES,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--suite", help="suite name (see --list)")
    p.add_argument("--size", default="small", help="size label of the suite (default: small)")
    p.add_argument("-o", "--out", help="results CSV (default: <suite>-<size>.csv in $BACE_OPT_RESULTS or "
                                       "./bace-opt-results)")
    p.add_argument("--results", choices=("own", "committed"), default="own",
                   help="own (default): your results file (see -o); committed: the project's committed "
                        "results in benchmarks/results/ (read, or resumed, only with this option)")
    p.add_argument("--policy", action="append", default=[], metavar="P",
                   help="also run this policy (a registered name, package.module:Class or path/to/file.py:Class) "
                        "wherever the suite runs BACE-Pipe, on the same instances; repeatable")
    p.add_argument("--workers", type=int_arg, default=1, help="local worker processes (default 1)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on an existing Dask scheduler (or 'local' for a "
                                                     "LocalCluster) instead of local processes")
    p.add_argument("--report", metavar="FILE.md", help="also write the report as markdown (with plots beside it)")
    p.add_argument("--no-run", action="store_true", help="only print the report of the existing results")
    p.add_argument("--brackets", action="append", default=[], metavar="FILE.csv",
                   help="P2 brackets (as python -m benchmarks.bench_schedule --brackets writes): the report adds "
                        "each policy's distance above their certified lower bounds, per regime; repeatable")
    p.add_argument("--list", action="store_true", help="list the suites and their sizes")
    p.add_argument("--progress", action="store_true", default=None,
                   help="force a progress bar (default: on a terminal; -v prints a line per run instead)")
    p.set_defaults(func=run)


def results_dir(committed: bool = False) -> Path:
    """Where bench results go by default (module docstring): env BACE_OPT_RESULTS, else ./bace-opt-results;
    ``committed``: the project's benchmarks/results (a checkout only)."""
    if committed:
        root = Path(__file__).resolve().parents[2]
        if not ((root / "benchmarks" / "results").is_dir() and (root / "setup.cfg").is_file()):
            raise InputError("--results committed: this installation has no project checkout with "
                             "benchmarks/results; give the file with -o")
        return root / "benchmarks" / "results"
    env = os.environ.get("BACE_OPT_RESULTS")
    if env:
        return Path(env)
    return Path("bace-opt-results")


def run(args) -> int:
    from ..bench import SUITES, run_specs, specs_for
    if args.list or not args.suite:
        for name, (desc, _, sizes) in sorted(SUITES.items()):
            print(f"{name:10s} sizes: {', '.join(sizes):22s} {desc}")
        return 0 if args.list else 2
    if args.no_run and args.suite in SUITES:
        specs = []    # only the report: any size label names a results file
    else:
        try:
            specs = specs_for(args.suite, args.size, **({"policies": args.policy} if args.policy else {}))
        except KeyError as e:
            raise InputError(str(e.args[0])) from None
    names = {}      # the policies named here: the only ones the report labels by their name (a file's are data)
    if args.policy:
        from ..policies import make_policy
        for spec in args.policy:       # refused before any run: an unknown name, a bad file, a non-policy
            names[spec] = make_policy(spec).name
    if args.brackets:
        from ..bench.bounds import read_brackets
        read_brackets(args.brackets)        # refused before any run: a missing or malformed file
    if not 1 <= args.workers <= 1024:
        raise InputError(f"--workers must be in 1..1024, got {args.workers}")
    if args.out and args.results == "committed":
        raise InputError("-o and --results committed: give one of them")
    if args.out:
        out = Path(args.out) if args.no_run else check_output(args.out, suffixes=(".csv",))
        if args.no_run and out.suffix.lower() != ".csv":
            raise InputError(f"-o {args.out}: unsupported file type {out.suffix or '(none)'!r}; use .csv")
    else:
        out = results_dir(args.results == "committed") / f"{args.suite}-{args.size}.csv"
        if not args.no_run:
            try:
                out.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InputError(f"cannot create {out.parent}: {e.strerror or e}") from None
            check_output(out, option="results file", suffixes=(".csv",))
    if args.report:
        check_output(args.report, option="--report", suffixes=(".md",), inputs=(out,))
    if args.no_run and out.exists() and not out.is_file():
        raise InputError(f"{out}: is not a file")
    c = None
    if not args.no_run:
        log.info("suite %s/%s: %d runs, results in %s", args.suite, args.size, len(specs), out)
        # progress on stderr: a line per run with -v, else a bar on a terminal (or with --progress); -q: none
        level = getattr(args, "verbosity", 0)
        c = run_specs(specs, out, workers=args.workers, dask_address=args.dask,
                      progress=False if level < 0 else args.progress if args.progress or level < 1 else False)
        retried = f"; {c['retried']} retried after failing before" if c.get("retried") else ""
        print(f"{args.suite}/{args.size}: {c['total']} runs, {c['skipped']} already in {out}, ran {c['ran']} "
              f"({c['failed']} failed{retried})")
    from ..bench.compare import policy_names
    from ..bench.report import report
    with policy_names(names):
        text = report(args.suite, out, markdown_path=args.report, repair=not args.no_run, brackets=args.brackets)
    if args.no_run and not out.exists() and not args.out and args.results != "committed":
        text += ("\n(the project's committed results are read with --results committed; "
                 "run the suite without --no-run to make your own)")
    print(text)
    if c is not None and c["failed"]:
        log.warning("%d run(s) failed (their rows say why); rerun the same command to retry them", c["failed"])
        return 1
    return 0
