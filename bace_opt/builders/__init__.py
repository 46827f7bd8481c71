"""Instance builders: job profiles, the paper family, random instances, realistic instances.

    from bace_opt.builders import paper_instance, random_instance, realistic_instance, job_profile

- ``profiles``: a Job from an LLM and a GPU (K* stage choice with the memory check); readers for the
  llm_hw figures (shipped tables, or a raw data folder).
- ``paper``: the BACE-Pipe setup (six regions, A6000, LLM jobs), seeded, with bandwidth/GPU scales.
- ``synthetic``: small random valid instances of any size (property tests, exact models).
- ``realistic``: Skyplane throughput/latency/egress and green-dcc hourly prices for cloud regions, or a WAN
  topology from a GML file with GPU sites and transit nodes; reads a raw data folder or the shipped tables.
- ``geo``: region coordinates and the great-circle latency rule.
"""
from __future__ import annotations

from .paper import DATASETS, PAPER_MODELS, PAPER_REGIONS, paper_instance, paper_jobs
from .profiles import (GPUS, MODELS, GpuSpec, ModelSpec, choose_stages, job_profile, load_gpu_specs,
                       load_model_specs, stage_memory_gb, stage_options, stage_time_s)
from .realistic import realistic_instance
from .synthetic import random_instance

__all__ = ["paper_instance", "paper_jobs", "PAPER_MODELS", "PAPER_REGIONS", "DATASETS", "random_instance",
           "realistic_instance", "job_profile", "choose_stages", "stage_options", "stage_time_s", "stage_memory_gb",
           "ModelSpec", "GpuSpec", "MODELS", "GPUS", "load_model_specs", "load_gpu_specs"]
