"""Instance builders: job profiles, the paper family, random instances, realistic instances.

    from bace_opt.builders import paper_instance, random_instance, realistic_instance, job_profile
"""
from __future__ import annotations

from .paper import PAPER_MODELS, PAPER_REGIONS, paper_instance
from .profiles import (GPUS, MODELS, GpuSpec, ModelSpec, choose_stages, job_profile, load_gpu_specs,
                       load_model_specs, stage_options)

__all__ = ["paper_instance", "PAPER_MODELS", "PAPER_REGIONS", "job_profile", "choose_stages", "stage_options",
           "ModelSpec", "GpuSpec", "MODELS", "GPUS", "load_model_specs", "load_gpu_specs"]
