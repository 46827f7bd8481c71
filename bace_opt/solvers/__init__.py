"""Solver layer: solver-neutral options and results, one adapter per back end, a registry.

See ``base`` for ``SolveOptions``, ``Termination``, ``SolveResult``.  Adapters live beside it.  No solver writes
to standard output: banners go nowhere, logs to standard error (``output``).
"""
from .base import SolveOptions, SolveResult, Termination
from .output import quiet_highs_banner

quiet_highs_banner()    # before any HiGHS object of bace_opt is made: stdout stays the caller's (output.py)

__all__ = ["SolveOptions", "SolveResult", "Termination"]
