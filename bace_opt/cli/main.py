"""Entry point of ``bace-opt``.

Each command lives in its own module ``bace_opt.cli.<name>`` exposing ``add_parser(subparsers)`` (which sets
``func``).  Errors that bace_opt raises on purpose (``BaceOptError``) become one clear message on stderr and
exit code 2; no traceback reaches the user.  ``BACE_OPT_DEBUG=1`` shows tracebacks for debugging.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from ..errors import BaceOptError

COMMANDS = ["validate", "generate", "evaluate", "solve", "simulate", "pipeline", "bench", "optical",
            "adversary"]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bace-opt", description="Schedule LLM training jobs across geo-distributed "
                                 "cloud regions: instances, exact models, heuristics, simulator, evaluator.")
    ap.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"bace_opt.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"bace_opt.cli.{name}":
                continue  # command not built in this version
            raise
        mod.add_parser(sub)
    return ap



def _exit_now_if_solver_abandoned(code: int) -> None:
    """After Ctrl-C, a solver thread that did not stop in time must not delay or crash the exit."""
    from ..solvers.base import ABANDONED
    if ABANDONED:
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        os._exit(code)


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        ap.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BaceOptError as e:
        print(f"bace-opt {args.command}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that closed early (e.g. `| head`): not an error
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        print(f"bace-opt {args.command}: interrupted", file=sys.stderr)
        _exit_now_if_solver_abandoned(130)
        return 130
    except Exception as e:  # a bug: say so plainly, no traceback unless asked
        if os.environ.get("BACE_OPT_DEBUG"):
            raise
        print(f"bace-opt {args.command}: internal error: {type(e).__name__}: {e} "
              f"(set BACE_OPT_DEBUG=1 for a traceback; please report it)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
