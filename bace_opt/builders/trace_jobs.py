"""From a trace job (GPUs, duration, optional model) to a pipeline-parallel training job (builders.trace).

The rule (docs/decisions.md, "Real workloads"):

- Model: the trace's ``model`` when given; else the largest shipped model (by parameters) whose minimum GPU
  count fits the job's GPUs; when none fits (fewer GPUs than the smallest model needs: most 1-GPU jobs),
  the smallest model at its minimum GPU count.  A model's minimum GPU count is the smallest stage count S
  (one GPU per stage) whose fullest stage fits the reference GPU's memory (profiles.stage_options, 95 %).
- A given (model, gpus) that cannot fit memory is adjusted (``adjust``): "gpus" raises the GPU count to the
  model's minimum (default); "model" keeps the GPUs and takes the largest model that fits them (or, when
  none does, the smallest model at its minimum).  Each adjustment is returned, for ``meta`` and one warning.
- Stages and GPUs per stage for n GPUs and L layers: g = ceil(n / L) GPUs per stage, S = n // g stages (so
  S <= L and S * g <= n, equal when g divides n); when that does not fit memory (whole layers: 64 stages of
  an 80-layer model hold 2 layers each, as 40 do, but keep 64 micro-batches in flight), g + 1, g + 2, ...
- Micro-batches and profile as the paper family (sequence 2048, micro-batch 1, global batch 256, MFU 0.4).
- Iterations N = max(1, round(duration / T_iter)), T_iter = (m + S - 1) * stage_time_s the iteration time on
  the reference GPU in one region (formulas.iteration_s without hops): the job's run time on the reference
  GPU, N * T_iter, matches the trace duration to within half an iteration (a job shorter than one iteration
  runs one).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from ..errors import InputError
from ..formulas import iteration_s
from ..instance import Job
from .paper import JOB_DEFAULTS
from .profiles import GpuSpec, get_gpu, get_model, job_profile, stage_memory_gb, stage_options, stage_time_s

ADJUST = ("gpus", "model")
HEADROOM = 0.95


@dataclass(frozen=True)
class Mapped:
    """A trace job as a pipeline job: the job dict (instance form), the model and GPUs used, the run time on
    the reference GPU, and how the (model, gpus) pair was reached ("given", "chosen", "raised", "swapped")."""
    job: dict
    model: str
    gpus: int
    run_s: float
    how: str


@functools.lru_cache(maxsize=None)
def min_gpus(model: str, gpu: GpuSpec) -> int:
    """The smallest stage count (one GPU per stage) whose fullest stage fits ``gpu``'s memory."""
    kw = {k: v for k, v in JOB_DEFAULTS.items() if k != "mfu"}
    fits = [o.stages for o in stage_options(model, gpu, **kw) if o.fits]
    if not fits:
        raise InputError(f"model {model!r} does not fit {gpu.name} with one GPU per stage at any stage count")
    return fits[0]


def by_size(models, gpu: GpuSpec) -> list[tuple[str, int]]:
    """(model, minimum GPUs), smallest model first."""
    return sorted(((m, min_gpus(m, gpu)) for m in models), key=lambda x: (get_model(x[0]).params_b, x[0]))


def largest_fitting(n: int, ladder: list[tuple[str, int]]) -> tuple[str, int] | None:
    fit = [m for m in ladder if m[1] <= n]
    return fit[-1] if fit else None


@functools.lru_cache(maxsize=None)
def shape(model: str, n: int, gpu: GpuSpec) -> tuple[int, int, float]:
    """(S, g, T_iter) of ``model`` on ``n`` GPUs: g = ceil(n / L), S = n // g, g raised until the fullest stage
    fits memory (memory is not monotone in S: more stages keep more micro-batches in flight); T_iter on one
    region."""
    spec = get_model(model)
    m = JOB_DEFAULTS["global_batch"] // JOB_DEFAULTS["micro_batch"]
    for g in range(max(1, math.ceil(n / spec.layers)), n + 1):
        S = n // g
        mem = stage_memory_gb(spec, S, micro_batch=JOB_DEFAULTS["micro_batch"], seq_len=JOB_DEFAULTS["seq_len"],
                              microbatches=m, gpus_per_stage=g)
        if mem <= HEADROOM * gpu.memory_gb:
            break
    else:
        raise InputError(f"model {model!r} does not fit {n} {gpu.name} GPUs with any number of GPUs per stage")
    t = stage_time_s(spec, gpu, S, micro_batch=JOB_DEFAULTS["micro_batch"], seq_len=JOB_DEFAULTS["seq_len"],
                     mfu=JOB_DEFAULTS["mfu"], gpus_per_stage=g)
    probe = Job(name="probe", arrival_s=0.0, stages=S, microbatches=m, iterations=1, stage_time_s=t,
                activation_mb=1.0, gpus_per_stage=g)
    return S, g, iteration_s(probe, t, [], [])


def choose(n: int, model: str | None, ladder: list[tuple[str, int]], adjust: str = "gpus") -> tuple[str, int, str]:
    """(model, GPUs, how) for a trace job of ``n`` GPUs and an optional model (module docstring)."""
    if model is None:
        pick = largest_fitting(n, ladder)
        if pick is None:
            return ladder[0][0], ladder[0][1], "raised"
        return pick[0], n, "chosen"
    need = dict(ladder)[model]
    if n >= need:
        return model, n, "given"
    if adjust == "gpus":
        return model, need, "raised"
    pick = largest_fitting(n, ladder)
    if pick is None:
        return ladder[0][0], ladder[0][1], "raised"
    return pick[0], n, "swapped"


def map_job(name: str, arrival_s: float, n: int, duration_s: float, model: str | None,
            ladder: list[tuple[str, int]], gpu: GpuSpec, adjust: str = "gpus") -> Mapped:
    """The pipeline job for one trace job (module docstring)."""
    gpu = get_gpu(gpu)
    mname, used, how = choose(n, model, ladder, adjust)
    S, g, t_iter = shape(mname, used, gpu)
    iters = max(1, round(duration_s / t_iter))
    seq, B = JOB_DEFAULTS["seq_len"], JOB_DEFAULTS["global_batch"]
    j = job_profile(mname, gpu, stages=S, gpus_per_stage=g, dataset_tokens=float(iters * B * seq), epochs=1.0,
                    name=name, arrival_s=arrival_s, **JOB_DEFAULTS)
    d = {"name": j.name, "arrival_s": j.arrival_s, "stages": j.stages, "gpus_per_stage": j.gpus_per_stage,
         "microbatches": j.microbatches, "iterations": j.iterations, "stage_time_s": j.stage_time_s,
         "activation_mb": j.activation_mb, "model": j.model, "memory_gb": j.memory_gb}
    return Mapped(d, mname, S * g, j.iterations * t_iter, how)
