"""``bace-opt bench``: run a benchmark suite, resumably, and print its report.

Results go to ``results_dir()/<suite>-<size>.csv`` unless ``-o`` names a file: ``$BACE_OPT_RESULTS`` if set,
else the project's ``benchmarks/results`` when bace_opt runs from a checkout (an editable install, as the README
sets up), else ``./benchmarks/results`` (an installed wheel has no project folder).
So a run from any folder of the checkout adds to the same results files.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path

from ..errors import InputError
from ..files import check_output
from ._args import int_arg

log = logging.getLogger("bace_opt.cli.bench")


def add_parser(sub):
    p = sub.add_parser("bench", help="run a benchmark suite (resumable) and print its tables",
                       description="Run every run of SUITE at SIZE that is not yet in the results file (one tidy "
                                   "CSV row per run), then print the suite's report. Interrupt and rerun the same "
                                   "command to resume: finished rows are skipped, none is lost or duplicated.")
    p.add_argument("--suite", help="suite name (see --list)")
    p.add_argument("--size", default="small", help="size label of the suite (default: small)")
    p.add_argument("-o", "--out", help="results CSV (default: <suite>-<size>.csv in " + str(results_dir()) + ")")
    p.add_argument("--workers", type=int_arg, default=1, help="local worker processes (default 1)")
    p.add_argument("--dask", metavar="ADDRESS", help="run on an existing Dask scheduler (or 'local' for a "
                                                     "LocalCluster) instead of local processes")
    p.add_argument("--report", metavar="FILE.md", help="also write the report as markdown (with plots beside it)")
    p.add_argument("--no-run", action="store_true", help="only print the report of the existing results")
    p.add_argument("--list", action="store_true", help="list the suites and their sizes")
    p.add_argument("--progress", action="store_true", default=None, help="force a progress bar")
    p.set_defaults(func=run)


def results_dir() -> Path:
    """Where bench results go by default (module docstring): env BACE_OPT_RESULTS, checkout, else cwd."""
    env = os.environ.get("BACE_OPT_RESULTS")
    if env:
        return Path(env)
    root = Path(__file__).resolve().parents[2]
    if (root / "benchmarks").is_dir() and (root / "setup.cfg").is_file():
        return root / "benchmarks" / "results"
    return Path("benchmarks") / "results"


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
            specs = specs_for(args.suite, args.size)
        except KeyError as e:
            raise InputError(str(e.args[0])) from None
    if not 1 <= args.workers <= 1024:
        raise InputError(f"--workers must be in 1..1024, got {args.workers}")
    if args.out:
        out = check_output(args.out, suffixes=(".csv",))
    else:
        out = results_dir() / f"{args.suite}-{args.size}.csv"
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
    if not args.no_run:
        log.info("suite %s/%s: %d runs, results in %s", args.suite, args.size, len(specs), out)
        c = run_specs(specs, out, workers=args.workers, dask_address=args.dask, progress=False if getattr(args, "verbosity", 0) < 0 else args.progress)
        print(f"{args.suite}/{args.size}: {c['total']} runs, {c['skipped']} already in {out}, ran {c['ran']} "
              f"({c['failed']} failed)")
    from ..bench.report import report
    text = report(args.suite, out, markdown_path=args.report)
    print(text)
    return 0
