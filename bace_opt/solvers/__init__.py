"""Solver layer: solver-neutral options and results, one adapter per back end, a registry.

See ``base`` for ``SolveOptions``, ``Termination``, ``SolveResult``.  Adapters live beside it.
"""
from .base import SolveOptions, SolveResult, Termination

__all__ = ["SolveOptions", "SolveResult", "Termination"]
