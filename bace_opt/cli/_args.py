"""Shared argument types of the commands: command-line numbers get the same checks as file fields.

``finite_float`` refuses ``nan``, ``inf`` and numbers beyond ``MAX_ABS`` at parse time (argparse then exits 2
with one line naming the option); ranges specific to an option are checked by ``check_range``, which raises
``InputError`` naming the option.
"""
from __future__ import annotations

import argparse
import math

from ..errors import InputError

MAX_ABS = 1e12   # no command-line number of bace-opt is meaningful beyond this (s, USD, fractions)

#: the one account of ``--engine`` (``solve`` and ``gap``; README "Commands", models/placement.md section 11,
#: ``exact.p1.backend.choose_engine``): "auto" switches at the walk model's size, 2,000,000 binaries
ENGINE_HELP = ("P1 engine (separate from --solver, which names the back end): walk, the compact MILP on --solver; "
               "cg, column generation with branch-and-price on HiGHS; auto (default): walk, measured faster on "
               "every family and tighter at fleet scale, and cg only where the walk model would exceed 2,000,000 "
               "binaries (not built then; fleet20 with 50 jobs has 381,150); solver.extra.engine_rule says which "
               "ran and why (models/placement.md section 11)")


def finite_float(s: str) -> float:
    try:
        v = float(s)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"not a number: {s!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {s!r}")
    if abs(v) > MAX_ABS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ABS:g} in magnitude, got {s!r}")
    return v


def int_arg(s: str) -> int:
    try:
        v = int(s)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"not an integer: {s!r}") from None
    if abs(v) > MAX_ABS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_ABS:g} in magnitude, got {s!r}")
    return v


def check_range(option: str, v, *, gt=None, ge=None, lt=None, le=None) -> None:
    """Raise InputError naming ``option`` when ``v`` (not None) is outside the given bounds."""
    if v is None:
        return
    if gt is not None and not v > gt:
        raise InputError(f"{option}: must be > {gt:g}, got {v:g}")
    if ge is not None and not v >= ge:
        raise InputError(f"{option}: must be >= {ge:g}, got {v:g}")
    if lt is not None and not v < lt:
        raise InputError(f"{option}: must be < {lt:g}, got {v:g}")
    if le is not None and not v <= le:
        raise InputError(f"{option}: must be <= {le:g}, got {v:g}")
