"""The maintained benchmarks; run each from the repository root: ``python -m benchmarks.bench_<name>``."""
