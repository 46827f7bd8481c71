"""Entry point of ``bace-opt`` (also ``python -m bace_opt``).

Each command lives in its own module ``bace_opt.cli.<name>`` exposing ``add_parser(subparsers)`` (which sets
``func``).  Errors that bace_opt raises on purpose (``BaceOptError``) become one clear message on stderr and
exit code 2; no traceback reaches the user.  ``BACE_OPT_DEBUG=1`` shows tracebacks for debugging.

Conventions shared by every command (added here, once, to every sub-command's parser by ``add_common``):

- ``-v`` logs the toolkit's progress to stderr (``bace_opt.*`` loggers at INFO), ``-vv`` adds the solvers' own
  logs (and Dask's), ``-q`` shows errors only.  Accepted before or after the command name; counts add up.
- A closed reader on stdout (``bace-opt ... | head -3``) ends the process at once, as for any Unix tool:
  SIGPIPE keeps its default action, so not even a running solver keeps the pipeline waiting.
- ``--version`` names the toolkit and the solver packages it finds.

A policy's failure is the policy's (``policies.gate``): an exception, a wrong return type, a plan that breaks a
rule, ``SystemExit`` or a ``KeyboardInterrupt`` raised inside a policy or a plugin's module, or a call past
``--decision-time-limit`` (default 300 s), is one message naming the policy, where it came from, the event time,
the job and the rule.  The one exception to the no-traceback rule: that message ends with the frames of the
policy's own code (never the toolkit's), since the code at fault is the user's.  Per command: ``simulate``,
``gap`` exit 2 when the policy fails; ``bench`` records the run as failed and exits 1; ``adversary`` counts the
candidate as an error (never a gap), prints the first reason and exits 0 when some candidates were judged, 1
when none was.  A plugin (entry point) whose module fails on import is named where it is used; a command that
does not name it runs as before.

Exit codes: 0 done; 1 done, but some runs of a batch failed (``bench``: their rows say why, a rerun retries
them; ``adversary``: every candidate failed), or a limited command ended without what it was asked for
(``solve``: status ``time_limit``, ``infeasible`` or ``error``, with ``--json`` still printed and ``-o`` written, an
empty schedule with the status when nothing was found; ``gap``: the optimum neither proven nor certified); 2 a refused input, a failing policy, a lost Dask scheduler (the
finished rows are kept; rerun to resume) or an output fault (a full, read-only or failing disk, a closed pipe, an unreachable
``--dask`` scheduler: one message naming the path, ``OUTPUT_FAULTS``; stdout closed at start: nothing is
done); 3 an internal error (a bug); 130 Ctrl-C, 143 SIGTERM (a job scheduler's or a container's stop): both
stop the command the same way (``procs.signals_as_interrupt``: no output file, a batch keeps its finished
rows, every worker process is ended).
"""
from __future__ import annotations

import argparse
import errno
import importlib
import io
import logging
import os
import signal
import sys

from .. import installed
from ..errors import BaceOptError

#: the commands that run a policy: each takes ``--decision-time-limit`` (``policies.gate``)
POLICY_COMMANDS = ("simulate", "gap", "bench", "adversary")
COMMANDS = ["validate", "generate", "evaluate", "solve", "simulate", "gap", "policies", "pipeline", "bench",
            "optical", "adversary", "plot"]


def version_text() -> str:
    """``bace-opt X.Y.Z`` plus Python and the versions of the solver packages installed (no solver import)."""
    from importlib.metadata import PackageNotFoundError, version

    from .. import __version__
    parts = [f"python {sys.version.split()[0]}"]
    for pkg in ("highspy", "ortools", "pyomo"):
        try:
            parts.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            parts.append(f"{pkg} missing")
    return f"bace-opt {__version__} ({', '.join(parts)})"


class _Version(argparse.Action):
    """``--version``: one unwrapped line on stdout (argparse's own action wraps it to the terminal's width)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def add_common(p: argparse.ArgumentParser) -> None:
    """-v/-q on a sub-command's parser (and on the parsers of its own sub-commands, e.g. generate's families)."""
    if not any("--quiet" in a.option_strings for a in p._actions):
        g = p.add_argument_group("output")
        g.add_argument("-v", "--verbose", dest="_verbose_sub", action="count", default=0,
                       help="-v: the toolkit's progress on stderr; -vv: also the solvers' logs")
        g.add_argument("-q", "--quiet", dest="_quiet_sub", action="store_true", help="no warnings or progress on stderr")
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for child in a.choices.values():
                add_common(child)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bace-opt", description="Schedule LLM training jobs across geo-distributed "
                                 "cloud regions: instances, exact models, heuristics, simulator, evaluator.")
    ap.add_argument("--version", action=_Version, help="print the version of bace-opt and its solvers, and exit")
    ap.add_argument("-v", "--verbose", dest="_verbose_top", action="count", default=0,
                    help="-v: the toolkit's progress on stderr; -vv: also the solvers' logs")
    ap.add_argument("-q", "--quiet", dest="_quiet_top", action="store_true", help="no warnings or progress on stderr")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            mod = importlib.import_module(f"bace_opt.cli.{name}")
        except ModuleNotFoundError as e:
            if e.name == f"bace_opt.cli.{name}":
                continue  # command not built in this version
            raise
        mod.add_parser(sub)
    for p in sub.choices.values():
        add_common(p)
    for name in POLICY_COMMANDS:
        if name in sub.choices:
            sub.choices[name].add_argument(
                "--decision-time-limit", type=float, default=None, metavar="S",
                help="limit on one call into a policy, s (default 300, or $BACE_OPT_DECISION_TIME_LIMIT_S); a "
                     "policy past it is stopped and named (exit 2)")
    return ap


def verbosity(args) -> int:
    """-1 quiet, 0 default, 1 progress, 2 solver logs (from -v/-q before and after the command name)."""
    if getattr(args, "_quiet_top", False) or getattr(args, "_quiet_sub", False):
        return -1
    return min(2, getattr(args, "_verbose_top", 0) + getattr(args, "_verbose_sub", 0))


def configure_logging(level: int) -> None:
    """Log levels for a verbosity (see ``verbosity``): the root logger at WARNING (ERROR with -q, INFO with
    -vv, which lets the solvers' and Dask's INFO logs through), ``bace_opt.*`` at INFO from -v on.

    Dask configures its own loggers from its config when ``distributed`` is imported (in this process and in
    every worker it spawns), so below -vv the environment variable that config reads is set before any import.
    A root logger that already has handlers (an embedding program, pytest) keeps them.
    """
    root = {-1: logging.ERROR, 0: logging.WARNING, 1: logging.WARNING, 2: logging.INFO}[level]
    logging.basicConfig(level=root, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger().setLevel(root)
    logging.getLogger("bace_opt").setLevel(logging.INFO if level == 1 else logging.NOTSET)
    # the progress of long work (``bace_opt.progress``) is shown on a terminal even without -v; never with -q
    logging.getLogger("bace_opt.progress").setLevel(
        logging.INFO if level >= 1 or (level == 0 and sys.stderr.isatty()) else logging.NOTSET)
    # tornado (Dask's event loop) logs a callback's failure with its traceback; one seen: distributed's own
    # ``sync`` cancel callback raising NameError when a stop interrupts it.  It is Dask's, on a path being
    # abandoned anyway: shown from -vv on only
    logging.getLogger("tornado.application").setLevel(logging.NOTSET if level >= 2 else logging.CRITICAL)
    if level < 2:
        os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "warning")
        if "distributed" in sys.modules:  # already configured in this process
            logging.getLogger("distributed").setLevel(logging.WARNING)
    elif os.environ.get("DASK_LOGGING__DISTRIBUTED") == "warning":
        del os.environ["DASK_LOGGING__DISTRIBUTED"]


def _default_sigpipe() -> None:
    """Let a closed reader end the process (SIGPIPE's default action), as `cat`, `grep` do; Python ignores it."""
    if hasattr(signal, "SIGPIPE"):
        try:
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        except (ValueError, OSError):  # not the main thread (e.g. main() called from a test thread)
            pass


def _exit_now_if_solver_abandoned(code: int) -> None:
    """After Ctrl-C, a solver thread that did not stop in time must not delay or crash the exit."""
    from ..solvers.base import ABANDONED
    if ABANDONED:
        _flush_and_exit(code)


#: errno values of an output fault (a full, read-only or failing disk, a closed pipe or descriptor, a path that
#: refuses writes): one message naming the path and exit 2, never the internal-error exit
OUTPUT_FAULTS = {errno.ENOSPC, errno.EROFS, errno.EIO, errno.EPIPE, errno.EDQUOT, errno.EFBIG, errno.EACCES,
                 errno.EPERM, errno.EBADF, errno.ENXIO, errno.ENOTDIR, errno.EISDIR, errno.ENOENT}


def output_fault(e: OSError) -> str | None:
    """The one-line message of an I/O fault (``OUTPUT_FAULTS``, or any OSError naming a file), else None."""
    if e.errno not in OUTPUT_FAULTS and not e.filename:
        return None
    where = e.filename if e.filename is not None else "output"
    return f"{where}: {e.strerror or e}"


#: the commands whose ``--time-limit`` bounds the whole command's wall clock, from the process start to exit
#: (``bace_opt.clock``); ``adversary``'s is per candidate, ``bench``'s per run
DEADLINE_COMMANDS = ("solve", "gap", "pipeline")
#: seconds of a command's limit kept for what it does after its last stage: writing its output, printing
CLI_RESERVE_S = 0.3


def main(argv=None) -> int:
    from .. import clock
    # a command run inside a program's own process (a test) counts from this call, not the process start
    clock.start_command(clock.PROCESS_START if argv is None else None)
    installed.hold()       # said once logging is set up (the parser lists the policies: installed.guard)
    ap = build_parser()
    args = ap.parse_args(argv)
    args.verbosity = verbosity(args)
    configure_logging(args.verbosity)
    installed.warn_damaged(now=True)     # a damaged entry_points.txt of another package: one warning
    if not getattr(args, "func", None):
        ap.print_help()
        return 2
    if sys.stdout is None:   # started with fd 1 closed (`>&-`): every command's result would be lost
        print(f"bace-opt {args.command}: error: standard output is closed; nothing done", file=sys.stderr)
        return 2
    if argv is None:  # the console script or python -m: behave as a Unix tool on a closed pipe
        _default_sigpipe()
        from ..policies.gate import allow_hard_exit
        allow_hard_exit()      # a policy that cannot be stopped otherwise ends the process, named (policies.gate)
    limit = getattr(args, "decision_time_limit", None)
    if limit is not None:      # for this process and the worker processes it starts
        from ..policies.gate import DECISION_LIMIT_ENV, decision_limit
        try:
            os.environ[DECISION_LIMIT_ENV] = repr(decision_limit(limit))
        except BaceOptError as e:
            print(f"bace-opt {args.command}: error: --decision-time-limit: {e}", file=sys.stderr)
            return 2
    from ..procs import signals_as_interrupt
    real, real_err = sys.stdout, sys.stderr
    sys.stdout = _NamedStdout(real)
    sys.stderr = _NamedStdout(real_err, "standard error")
    final, own = final_stream(real_err)
    _FINAL.append(final)
    # the log handler configured above writes to the same stderr: through the private copy too, so that a solver
    # thread's capture of descriptor 2 (``_FINAL``) does not swallow the progress and warnings logged meanwhile
    log_stream = _NamedStdout(final, "standard error") if own else sys.stderr
    for h in logging.getLogger().handlers:
        if isinstance(h, logging.StreamHandler) and h.stream is real_err:
            h.setStream(log_stream)
    try:
        limit = getattr(args, "time_limit", None) if args.command in DEADLINE_COMMANDS else None
        with signals_as_interrupt() as got, clock.scope(limit, start=clock.command_start(), reserve=CLI_RESERVE_S):
            code = _run(args, got)
        if argv is None and _FAST_EXIT:       # the console script or python -m, not a program's own call
            _restore_streams(real, real_err, log_stream)
            _fast_exit(code)
        return code
    finally:
        _FINAL.pop()
        _restore_streams(real, real_err, log_stream)
        if own:
            final.close()


def _restore_streams(real, real_err, log_stream=None) -> None:
    for h in logging.getLogger().handlers:
        if isinstance(h, logging.StreamHandler) and h.stream in (sys.stderr, log_stream):
            h.flush()
            h.setStream(real_err)
    if isinstance(sys.stdout, _NamedStdout):
        sys.stdout = real
    if isinstance(sys.stderr, _NamedStdout):
        sys.stderr = real_err


#: terminal control characters (C0 but newline and tab, DEL, C1): an instance or job name holding an escape
#: sequence must not drive the user's terminal, so the CLI's output shows them escaped (``\x1b``)
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), *range(0x7f, 0xa0)] if c not in (0x09, 0x0a)}


def escape_controls(s: str) -> str:
    """``s`` with terminal control characters written as ``\\xNN`` (newline and tab kept)."""
    return s.translate(_CONTROL) if isinstance(s, str) else s


class _NamedStdout:
    """``sys.stdout`` (or stderr) whose write faults name it (``OSError.filename`` = "standard output"), so that a
    full disk or a closed pipe behind stdout gives a message naming it, and whose text has its terminal control
    characters escaped (``escape_controls``); everything else is the real stream's."""

    def __init__(self, stream, what: str = "standard output"):
        self._stream = stream
        self._what = what

    def _named(self, fn, *a):
        try:
            return fn(*a)
        except OSError as e:
            e.filename = e.filename or self._what
            raise

    def write(self, s):
        return self._named(self._stream.write, escape_controls(s))

    def writelines(self, lines):
        return self._named(self._stream.writelines, [escape_controls(x) for x in lines])

    def flush(self):
        return self._named(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _run(args, got) -> int:
    """Run the command; map every error to its exit code (module docstring)."""
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()     # a write fault of the output shows here, not at exit
        if args.command in DEADLINE_COMMANDS:
            _FAST_EXIT.append(True)
        return code
    except BaceOptError as e:
        _tell(f"bace-opt {args.command}: error: {e}")
        return 2
    except BrokenPipeError:  # SIGPIPE ignored (an embedding program): the reader of stdout left
        _silence_stdout()
        _tell(f"bace-opt {args.command}: error: cannot write standard output: the reader closed the pipe")
        return 2
    except KeyboardInterrupt:
        code = 128 + (got.signum or signal.SIGINT)
        _tell(f"bace-opt {args.command}: {'terminated' if got.signum else 'interrupted'}")
        _exit_now_if_solver_abandoned(code)
        return code
    except MemoryError as e:   # a model too large for this machine: the input's size, not a bug
        _tell(f"bace-opt {args.command}: error: out of memory{f' ({e})' if str(e) else ''}; give the problem "
              "less to hold (fewer jobs, a smaller grid or candidate set, a tighter time limit) or more memory")
        return 2
    except OSError as e:
        if e.filename == "standard output":
            _silence_stdout()
        msg = output_fault(e)
        if msg is None:
            return _internal(args, e)
        _tell(f"bace-opt {args.command}: error: {msg}")
        return 2
    except Exception as e:  # a bug: say so plainly, no traceback unless asked
        return _internal(args, e)


#: the stream of the command's last word (its error, "interrupted"): a private copy of standard error's descriptor,
#: set by ``main`` (``final_stream``).  A solver interface running in another thread may hold descriptors 1 and 2
#: and ``sys.stderr`` captured while the command ends (the Pyomo HiGHS interface's ``capture_output``, in a
#: race's in-process member abandoned after Ctrl-C): the message must not go into that capture and be lost.
_FINAL: list = []


def final_stream(err):
    """A line-buffered text stream on a duplicate of ``err``'s descriptor (``err`` itself when it has none: a
    program's own stream, a test's capture), and whether it is a new one to close."""
    try:
        fd = os.dup(err.fileno())
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return err, False
    return open(fd, "w", buffering=1, encoding=getattr(err, "encoding", None) or "utf-8",
                errors="backslashreplace"), True


def _tell(text: str) -> None:
    """Print the command's last word on its own standard error (``_FINAL``), flushed; a fault there is too late
    to report."""
    out = _FINAL[-1] if _FINAL and _FINAL[-1] is not None else sys.stderr
    if out is None:
        return
    try:
        if out is not sys.stderr and sys.stderr is not None:
            sys.stderr.flush()       # what was logged before comes first
        print(text, file=out, flush=True)
    except (OSError, ValueError):
        pass


def _internal(args, e: Exception) -> int:
    if os.environ.get("BACE_OPT_DEBUG"):
        raise e
    _tell(f"bace-opt {args.command}: internal error: {type(e).__name__}: {e} "
          f"(set BACE_OPT_DEBUG=1 for a traceback; please report it)")
    return 3


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush does not raise BrokenPipeError again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def console() -> None:
    """The installed ``bace-opt`` script and ``python -m bace_opt``.  A command with a deadline
    (``DEADLINE_COMMANDS``) ends the process as soon as its output is flushed: tearing down a large model's
    objects took 1.5 s after a fleet-scale solve had printed, time the user's limit does not have (its files
    are written and closed, its workers ended, before ``main`` returns)."""
    sys.exit(main())


def _fast_exit(code: int) -> None:
    """End the process now (``console``'s docstring), output flushed and logs closed."""
    logging.shutdown()
    _flush_and_exit(code)


def _flush_and_exit(code: int) -> None:
    """Flush stdout and stderr (a fault there is too late to report), then end the process with ``code``."""
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            pass
    os._exit(code)


#: set by ``_run`` for a command in ``DEADLINE_COMMANDS`` that ran to its end
_FAST_EXIT: list = []


if __name__ == "__main__":
    console()
