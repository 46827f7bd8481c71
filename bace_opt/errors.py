"""Errors raised by bace_opt.

Every error that reaches a user names the input at fault.  The CLI turns these into one clear message
and a non-zero exit code, never a traceback.
"""
from __future__ import annotations


class BaceOptError(Exception):
    """Base class of every error bace_opt raises on purpose."""


class InputError(BaceOptError):
    """An input file or argument is malformed.  ``problems`` lists every fault found, each with its place.

    The message is one line per problem, so that all faults of a file are reported at once.
    """

    def __init__(self, problems, source: str | None = None):
        if isinstance(problems, str):
            problems = [problems]
        self.problems = list(problems)
        self.source = source
        head = f"{source}: " if source else ""
        if len(self.problems) == 1:
            msg = head + self.problems[0]
        else:
            msg = head + f"{len(self.problems)} problems:\n" + "\n".join("  " + p for p in self.problems)
        super().__init__(msg)


class InfeasibleError(BaceOptError):
    """A problem has no feasible solution; the message gives the reason."""


class SolverUnavailableError(BaceOptError):
    """A requested solver back end is not installed or cannot be imported."""
