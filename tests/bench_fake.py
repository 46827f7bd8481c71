"""A deterministic, slow stand-in for bace_opt.bench.tasks.execute, to test the runner's bookkeeping
(resume after a kill, no loss, no duplicates) without depending on solver timing."""
import time

from bace_opt.bench.runner import RunSpec


def execute_slow(spec: RunSpec) -> dict:
    time.sleep(0.15)
    return {"run_id": spec.run_id, "suite": spec.suite, "instance": f"fake-{spec.seed}", "family": spec.family,
            "size": spec.size, "seed": spec.seed, "method": spec.method, "status": "done",
            "objective": spec.seed * 1.5, "avg_jct_s": 100.0 + spec.seed, "wall_s": 0.15}


def specs(n=24):
    return [RunSpec("fake", "random", "s", seed, method) for seed in range(n) for method in ("m:a",)]
