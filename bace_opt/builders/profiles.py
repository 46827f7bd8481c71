"""Job profiles from an LLM and a GPU (system-model.md, "Job profiles from an LLM and a GPU").

Symbols: P parameters, L layers, d hidden size, s sequence length, b micro-batch size, B global batch
(sequences), m = B / b micro-batches per iteration, D dataset tokens, E epochs, S stages, g GPUs per stage,
F = tflops * 1e12 * MFU the sustained FLOP/s of one GPU.

    N             = ceil(E * D / (B * s))                                   iterations
    stage_time_s  = 6 * P * b * s * (k / L) / (F * g)    k = ceil(L / S)     the fullest stage (see below)
    activation_mb = b * s * d * 2 / 1e6                                      bf16 boundary activation
    memory (bytes, per GPU of the fullest stage)
                  = 16 * P * k / L / g                                      bf16 weights+grads, fp32 Adam
                  + min(S, m) * k * 2 * b * s * d / g                       checkpointed layer inputs
                  + 34 * b * s * d / g                                      one layer re-materialised
    feasible      : memory <= memory_headroom * GPU memory (default 0.95)
    S = K*        = argmin over feasible S in [1, S_cap] of T_iter(S) = (m + S - 1) * stage_time_s(S)
                    (formulas.iteration_s of a single-region placement: no hops, no latency); ties go to the
                    smaller S;  S_cap = min(L, max_stages, max_gpus // g).

Our reading, to be stated in the docs:
- Layers are whole: a stage holds k = ceil(L / S) or fewer of the L layers, and the pipeline runs at its
  fullest stage, so stage_time_s uses k / L instead of the spec's 1 / S.  The two agree whenever S divides L.
  ``layer_split="even"`` gives the spec's literal 6 P b s / S (fractional layers).  Parameters (embeddings
  included) are spread evenly over the layers.
- With whole layers T_iter(S) is not monotone (S = 41..79 of an 80-layer model all keep k = 2 layers on the
  fullest stage while the fill (S - 1) grows), so K* is a real argmin: the smallest S for each k, chosen by
  (m + S - 1) * k.  With ``layer_split="even"`` T_iter(S) = (m + S - 1) / S * T_1 decreases in S and K* is
  simply the cap S_cap.
- Memory: mixed-precision Adam (16 bytes per parameter) and full activation recomputation (each layer keeps
  only its bf16 input for the backward pass, 2 b s d bytes; during a layer's backward its activations are
  re-materialised: 34 b s d bytes, Korthikanti et al. 2022 without the attention-score term, i.e.
  FlashAttention).  1F1B keeps min(S, m) micro-batches in flight on the first stage.  With
  ``recompute=False`` every in-flight micro-batch keeps 34 b s d bytes per layer.  Activations split over
  the g GPUs of a stage (tensor + sequence parallelism).  ``memory_headroom`` (0.95) leaves room for the CUDA
  context and fragmentation.
- FLOPs: 6 P b s per micro-batch (the spec); the extra forward of recomputation is not counted as useful
  work, it is what keeps MFU at 0.4 rather than higher.

Architecture and GPU figures the builders need are embedded below (MODELS, GPUS) with their sources, so the
package needs no data folder; ``load_model_specs`` / ``load_gpu_specs`` read the llm_hw files of a raw data folder,
or the same figures shipped with the package (bace_opt/data/tables).
"""
from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path

from ..data import raw, tables
from ..errors import InputError
from ..formulas import iteration_s
from ..instance import Job

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ModelSpec:
    """An LLM's architecture: parameters (billions), transformer layers, hidden size."""
    name: str
    params_b: float
    layers: int
    hidden: int
    source: str = ""


@dataclass(frozen=True)
class GpuSpec:
    """A GPU: dense bf16 TFLOPS, memory (GB), board power (W; None when the source does not give it)."""
    name: str
    tflops: float
    memory_gb: float
    power_w: float | None
    source: str = ""


# Architecture numbers (params, layers, hidden) with their sources.
MODELS: dict[str, ModelSpec] = {m.name: m for m in [
    ModelSpec("Llama-3.1-70B", 70.6, 80, 8192, "Dubey et al. 2024 (Llama 3 herd), Table 3"),
    ModelSpec("Qwen2.5-14B", 14.7, 48, 5120, "Qwen2.5 model card / config.json (hidden_size 5120, 48 layers)"),
    ModelSpec("Qwen2.5-32B", 32.5, 64, 5120, "Qwen2.5 model card / config.json (hidden_size 5120, 64 layers)"),
    ModelSpec("Qwen2.5-72B", 72.7, 80, 8192, "Qwen2.5 model card / config.json (hidden_size 8192, 80 layers)"),
    ModelSpec("Falcon-40B", 40.0, 60, 8192, "tiiuae/falcon-40b config (n_embd 8192, n_layer 60)"),
    ModelSpec("Gemma-3-27B", 27.0, 62, 5376, "Gemma 3 technical report 2025 / config.json (hidden 5376, 62 layers)"),
    ModelSpec("FLM-101B", 101.0, 80, 10240, "Li et al. 2023 (FLM-101B) model card: 80 layers, d_model 10240"),
    ModelSpec("LLaMA-1-33B", 32.5, 60, 6656, "Touvron et al. 2023a (LLaMA), Table 2"),
]}

# GPU figures: dense bf16 tensor TFLOPS, memory, board power.
GPUS: dict[str, GpuSpec] = {g.name: g for g in [
    GpuSpec("A6000", 154.8, 48.0, 300.0,
            "NVIDIA RTX A6000 datasheet: 154.8 dense FP16/BF16 tensor TFLOPS (309.7 with sparsity), 48 GB, "
            "300 W; llm-analysis a6000-48gb.json peak_fp16_TFLOPS 154.8"),
    GpuSpec("A100-80GB", 312.0, 80.0, 400.0, "NVIDIA A100 datasheet (SXM4, dense bf16 312 TFLOPS, 400 W)"),
    GpuSpec("H100-80GB", 989.0, 80.0, 700.0, "NVIDIA H100 datasheet (SXM5, dense bf16 989 TFLOPS, 700 W)"),
    GpuSpec("V100-32GB", 125.0, 32.0, 300.0, "NVIDIA V100 datasheet (SXM2, fp16 tensor 125 TFLOPS, 300 W)"),
    GpuSpec("L40S-48GB", 362.0, 48.0, 350.0, "NVIDIA L40S datasheet (dense bf16 362 TFLOPS, 350 W)"),
]}

BYTES_PER_PARAM = 16          # bf16 weights (2) + bf16 grads (2) + fp32 master, Adam m and v (12)
RECOMPUTE_WORKING_FACTOR = 34  # bytes per (b s d) of one layer's activations (Korthikanti et al. 2022, no a*s/d term)
CHECKPOINT_FACTOR = 2          # bytes per (b s d) kept per layer with full recomputation (its bf16 input)


def get_model(model: str | ModelSpec) -> ModelSpec:
    if isinstance(model, ModelSpec):
        return model
    if model not in MODELS:
        raise InputError(f"unknown model {model!r} (built in: {', '.join(MODELS)}; or pass a ModelSpec)")
    return MODELS[model]


def get_gpu(gpu: str | GpuSpec) -> GpuSpec:
    if isinstance(gpu, GpuSpec):
        return gpu
    if gpu not in GPUS:
        raise InputError(f"unknown GPU {gpu!r} (built in: {', '.join(GPUS)}; or pass a GpuSpec)")
    return GPUS[gpu]


# ---------------------------------------------------------------------- the formulas

def layers_on_fullest_stage(layers: int, stages: int, layer_split: str = "ceil") -> float:
    """k: layers held by the fullest stage (ceil(L / S)); L / S with layer_split="even"."""
    if layer_split == "ceil":
        return float(math.ceil(layers / stages))
    if layer_split == "even":
        return layers / stages
    raise InputError(f"layer_split must be 'ceil' or 'even', got {layer_split!r}")


def stage_time_s(model: ModelSpec, gpu: GpuSpec, stages: int, *, micro_batch: int = 1, seq_len: int = 2048,
                 mfu: float = 0.4, gpus_per_stage: int = 1, layer_split: str = "ceil") -> float:
    """Forward+backward time of the fullest stage for one micro-batch: 6 P b s (k / L) / (F g)."""
    k = layers_on_fullest_stage(model.layers, stages, layer_split)
    flops = 6.0 * model.params_b * 1e9 * micro_batch * seq_len * k / model.layers
    return flops / (gpu.tflops * 1e12 * mfu * gpus_per_stage)


def activation_mb(model: ModelSpec, *, micro_batch: int = 1, seq_len: int = 2048) -> float:
    """A_j = b s d 2 / 1e6: one micro-batch's bf16 activation crossing a stage boundary (MB)."""
    return micro_batch * seq_len * model.hidden * 2 / 1e6


def stage_memory_gb(model: ModelSpec, stages: int, *, micro_batch: int = 1, seq_len: int = 2048,
                    microbatches: int = 1, gpus_per_stage: int = 1, recompute: bool = True,
                    layer_split: str = "ceil") -> float:
    """Memory one GPU of the fullest stage needs (GB = 1e9 bytes); see the module docstring."""
    k = layers_on_fullest_stage(model.layers, stages, layer_split)
    g = gpus_per_stage
    bsd = micro_batch * seq_len * model.hidden
    in_flight = min(stages, microbatches)
    weights = BYTES_PER_PARAM * model.params_b * 1e9 * k / model.layers / g
    if recompute:
        acts = in_flight * k * CHECKPOINT_FACTOR * bsd / g + RECOMPUTE_WORKING_FACTOR * bsd / g
    else:
        acts = in_flight * k * RECOMPUTE_WORKING_FACTOR * bsd / g
    return (weights + acts) / 1e9


@dataclass(frozen=True)
class StageOption:
    """One candidate stage count with its figures (for inspection and tests)."""
    stages: int
    stage_time_s: float
    memory_gb: float
    fits: bool
    iteration_s: float


def stage_options(model: str | ModelSpec, gpu: str | GpuSpec, *, micro_batch: int = 1, seq_len: int = 2048,
                  global_batch: int = 256, mfu: float = 0.4, gpus_per_stage: int = 1,
                  max_stages: int | None = None, max_gpus: int | None = None, memory_headroom: float = 0.95,
                  recompute: bool = True, layer_split: str = "ceil") -> list[StageOption]:
    """Every S in [1, S_cap] with its stage time, memory, memory fit and single-region T_iter."""
    model, gpu = get_model(model), get_gpu(gpu)
    m = _microbatches(global_batch, micro_batch)
    cap = model.layers
    if max_stages is not None:
        cap = min(cap, max_stages)
    if max_gpus is not None:
        cap = min(cap, max_gpus // gpus_per_stage)
    a_mb = activation_mb(model, micro_batch=micro_batch, seq_len=seq_len)
    out = []
    for S in range(1, cap + 1):
        t = stage_time_s(model, gpu, S, micro_batch=micro_batch, seq_len=seq_len, mfu=mfu,
                         gpus_per_stage=gpus_per_stage, layer_split=layer_split)
        mem = stage_memory_gb(model, S, micro_batch=micro_batch, seq_len=seq_len, microbatches=m,
                              gpus_per_stage=gpus_per_stage, recompute=recompute, layer_split=layer_split)
        probe = Job(name="probe", arrival_s=0.0, stages=S, microbatches=m, iterations=1, stage_time_s=t,
                    activation_mb=a_mb, gpus_per_stage=gpus_per_stage)
        out.append(StageOption(S, t, mem, mem <= memory_headroom * gpu.memory_gb, iteration_s(probe, t, [], [])))
    return out


def choose_stages(model: str | ModelSpec, gpu: str | GpuSpec, **kw) -> int:
    """K*: the memory-feasible S with the smallest single-region T_iter (ties: the smaller S)."""
    model, gpu = get_model(model), get_gpu(gpu)
    opts = [o for o in stage_options(model, gpu, **kw) if o.fits]
    if not opts:
        raise InputError(_no_fit_message(model, gpu, kw))
    best = min(opts, key=lambda o: (o.iteration_s, o.stages))
    return best.stages


def _no_fit_message(model: ModelSpec, gpu: GpuSpec, kw: dict) -> str:
    caps = [f"{model.layers} layers"]
    if kw.get("max_stages") is not None:
        caps.append(f"max_stages={kw['max_stages']}")
    if kw.get("max_gpus") is not None:
        caps.append(f"max_gpus={kw['max_gpus']}")
    return (f"model {model.name!r} does not fit {gpu.name} ({gpu.memory_gb:g} GB x headroom "
            f"{kw.get('memory_headroom', 0.95):g}) with any stage count allowed ({', '.join(caps)}); "
            f"allow more stages/GPUs, more gpus_per_stage, or a GPU with more memory")


def _microbatches(global_batch: int, micro_batch: int) -> int:
    if micro_batch < 1 or global_batch < 1:
        raise InputError(f"micro_batch and global_batch must be >= 1, got {micro_batch} and {global_batch}")
    if global_batch % micro_batch:
        raise InputError(f"global_batch ({global_batch}) must be a multiple of micro_batch ({micro_batch})")
    return global_batch // micro_batch


def job_profile(model: str | ModelSpec, gpu: str | GpuSpec, *, seq_len: int = 2048, micro_batch: int = 1,
                global_batch: int = 256, dataset_tokens: float, epochs: float = 1.0, mfu: float = 0.4,
                stages: int | None = None, gpus_per_stage: int = 1, max_stages: int | None = None,
                max_gpus: int | None = None, memory_headroom: float = 0.95, recompute: bool = True,
                layer_split: str = "ceil", name: str | None = None, arrival_s: float = 0.0) -> Job:
    """A Job from an LLM and the reference GPU (module docstring has the formulas).

    ``stages=None`` picks K* (``choose_stages``); a given ``stages`` is checked against memory.  Raises
    InputError naming the model when no allowed stage count fits the GPU's memory.
    """
    model, gpu = get_model(model), get_gpu(gpu)
    if not 0 < mfu <= 1:
        raise InputError(f"mfu must be in (0, 1], got {mfu}")
    if not 0 < memory_headroom <= 1:
        raise InputError(f"memory_headroom must be in (0, 1], got {memory_headroom}")
    if dataset_tokens <= 0 or epochs <= 0:
        raise InputError(f"dataset_tokens and epochs must be > 0, got {dataset_tokens} and {epochs}")
    if gpus_per_stage < 1 or seq_len < 1:
        raise InputError(f"gpus_per_stage and seq_len must be >= 1, got {gpus_per_stage} and {seq_len}")
    m = _microbatches(global_batch, micro_batch)
    common = dict(micro_batch=micro_batch, seq_len=seq_len, gpus_per_stage=gpus_per_stage, layer_split=layer_split)
    if stages is None:
        stages = choose_stages(model, gpu, global_batch=global_batch, mfu=mfu, max_stages=max_stages,
                               max_gpus=max_gpus, memory_headroom=memory_headroom, recompute=recompute, **common)
    else:
        if not 1 <= stages <= model.layers:
            raise InputError(f"model {model.name!r}: stages must be in [1, {model.layers}] (its layers), got {stages}")
        mem = stage_memory_gb(model, stages, microbatches=m, recompute=recompute, **common)
        if mem > memory_headroom * gpu.memory_gb:
            raise InputError(f"model {model.name!r} with {stages} stages needs {mem:.1f} GB per GPU, more than "
                             f"{gpu.name}'s {gpu.memory_gb:g} GB x headroom {memory_headroom:g}")
    t = stage_time_s(model, gpu, stages, mfu=mfu, **common)
    mem = stage_memory_gb(model, stages, microbatches=m, recompute=recompute, **common)
    iterations = max(1, math.ceil(epochs * dataset_tokens / (global_batch * seq_len) - 1e-9))
    return Job(
        name=name or model.name.lower(),
        arrival_s=float(arrival_s),
        stages=int(stages),
        microbatches=m,
        iterations=int(iterations),
        stage_time_s=round(t, 6),
        activation_mb=round(activation_mb(model, micro_batch=micro_batch, seq_len=seq_len), 4),
        gpus_per_stage=gpus_per_stage,
        model=model.name,
        memory_gb=round(mem, 3),
    )


# ---------------------------------------------------------------------- the llm_hw figures

def _llm_hw_dir(data_dir) -> Path:
    d = Path(data_dir)
    if (d / "llm_hw").is_dir():
        d = d / "llm_hw"
    if not d.is_dir():
        raise InputError(f"llm_hw data folder not found: {d}")
    return d


def load_model_specs(data_dir=None) -> dict[str, ModelSpec]:
    """Model specs from llm_hw/llm_model_configs_curated.csv (params as given) and
    llm_hw/llm_analysis_model_configs/*.json (params estimated) of a raw data folder (``data_dir``: the folder
    or its llm_hw), or, with ``data_dir=None``, from the table shipped with the package (the same figures,
    bace_opt/data/tables/model_specs.csv)."""
    specs = tables.models() if data_dir is None else raw.llm_models(_llm_hw_dir(data_dir))
    return {n: ModelSpec(n, p, L, h, src) for n, (p, L, h, src) in specs.items()}


def load_gpu_specs(data_dir=None) -> dict[str, GpuSpec]:
    """GPU specs from llm_hw/gpu_specs_curated.csv (dense bf16 TFLOPS, memory, TDP) and
    llm_hw/llm_analysis_gpu_configs/*.json (peak_fp16_TFLOPS, memory; no power figure: power_w None) of a raw
    data folder, or, with ``data_dir=None``, from the shipped table bace_opt/data/tables/gpu_specs.csv."""
    specs = tables.gpus() if data_dir is None else raw.llm_gpus(_llm_hw_dir(data_dir))
    return {n: GpuSpec(n, t, m, w, src) for n, (t, m, w, src) in specs.items()}
