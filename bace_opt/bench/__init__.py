"""Batch benchmarks: a registry of suites, a resumable runner writing tidy rows, reports.

    from bace_opt.bench import specs_for, run_specs
    run_specs(specs_for("gap", "small"), "benchmarks/results/gap-small.csv", workers=2)
"""
from .runner import read_rows, run_specs
from .spec import COLUMNS, DETERMINISTIC_COLUMNS, RunSpec
from .suites import SUITES, specs_for

__all__ = ["COLUMNS", "DETERMINISTIC_COLUMNS", "RunSpec", "read_rows", "run_specs", "SUITES", "specs_for"]
