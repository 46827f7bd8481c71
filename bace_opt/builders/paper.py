"""The ``paper`` family: the BACE-Pipe simulation setup (system-model.md, "Paper setup").

What is drawn, and how (all draws come from named, seeded streams, see ``_random.Stream``; the cluster draws
do not depend on the number of jobs or the scales, and job k's draws do not depend on the total number of
jobs, so the 24-job instance starts with the 8 jobs of the 8-job one and the sensitivity variants share the
seed's cluster):

- Six regions (PAPER_REGIONS): eu-west (Ireland), us-east (New York), eu-central (Frankfurt), ap-northeast
  (Tokyo), ap-southeast (Singapore), ap-southeast-2 (Sydney); one GPU type, the NVIDIA RTX A6000
  (154.8 dense bf16 TFLOPS, 48 GB, 300 W; see profiles.GPUS).
- GPUs per region: a uniform draw from {16, 32, 64, 128}, times ``gpu_scale``, rounded half-up, at least 1.
- Links (full mesh), ``bandwidth_source="nominal"`` (default, the paper's setup): per-region network
  bandwidth uniform in [25, 100] Gbit/s (rounded to 0.1; the paper's figure is an EC2 instance's network-card
  rate); a link gets the mean of its two ends' bandwidths, times ``bandwidth_scale``.  Latency: great-circle
  distance between the two cities (geo.CITY_COORDS), one way 1.5 * d / (200 km/ms) + 2 ms (geo.py has the
  rule and its check against Skyplane's RTTs).
- Links, ``bandwidth_source="measured"``: each paper region is matched to the AWS region of its city
  (PaperRegion.aws_region: eu-west -> aws:eu-west-1 Ireland, us-east -> aws:us-east-1 N. Virginia (the
  nominal latency uses New York, as the paper), eu-central -> aws:eu-central-1 Frankfurt, ap-northeast ->
  aws:ap-northeast-1 Tokyo, ap-southeast -> aws:ap-southeast-1 Singapore, ap-southeast-2 ->
  aws:ap-southeast-2 Sydney).  Bandwidth = ``aggregate`` (median by default) of Skyplane's iperf3
  ``throughput_recieved`` over the runs of both directions (skyplane.Measurements: successful PREMIUM-tier
  runs, one VM pair, 64 TCP flows) / 1e9, times ``parallel_connections`` (default 1: a link is one VM pair,
  2.6-4.7 Gbit/s between these regions), times ``bandwidth_scale``.  Latency = the same statistic of ping
  ``avg_rtt`` over both directions / 2.  A pair without a measurement stops the builder with an error naming
  it, unless ``fill_missing="rtt"`` (estimates of skyplane.fill, marked per link in ``meta.link_measurements``).
  The per-region bandwidth draws are still made (so GPUs and prices equal the nominal instance's) but unused.
- Electricity: per region a uniform draw in [0.156, 0.295] USD/kWh (the paper's commercial-price range;
  rounded to 0.001), constant in time, PUE 1.0.  Egress 0.02 USD/GB on every link (AWS inter-region transfer
  price for most pairs), reported separately: ``objective.egress`` is false, as in the paper.
- Jobs: job k's model is taken from a seeded permutation of the 8-model catalogue PAPER_MODELS (jobs 1-8 use
  each model once; jobs 9-16 a new permutation, ...), its dataset is a uniform draw from DATASETS.  Profile
  (profiles.job_profile): sequence 2048, micro-batch 1, global batch 256 sequences (m = 256 micro-batches,
  0.52 M tokens per iteration), MFU 0.4, 95% of GPU memory usable, stages K* = the argmin of the
  single-region iteration time over memory-feasible S <= min(layers, largest region of the seed's unscaled
  cluster).  The cap keeps every job placeable in one region at scale 1 (the paper's single-region
  baselines LCF/LDF place every job), and, being taken before scaling, keeps the jobs identical across the
  bandwidth/GPU sensitivity variants (at gpu_scale < 1 a job may then exceed the largest region and must
  span regions).  If no S within the cap fits memory (a seed whose largest region has 32 GPUs: the 70-101B
  models need 40 A6000s), the cap is the layer count; if K* exceeds all GPUs of the cluster, S <= all GPUs.
  With whole layers per stage K* is the smallest S holding k = ceil(L/S) layers per stage for the best k:
  80-layer models get 40 stages under a 64-GPU cap and 80 under a 128-GPU cap.
  Tokens: dataset bytes / 4 (about 4 bytes of English text per BPE token: OpenWebText's 38 GB gives 9.5 B tokens against nanoGPT's 9.0 B GPT-2 tokens).  Epochs: Alpaca-52k 3 (the Stanford Alpaca
  recipe), WikiText-103 1, OpenWebText 0.1 (a 0.95 B-token slice; a full epoch would take 10-17 days per
  job here).  Single-region run times then range from under an hour to 2-3 days.
- Arrivals: all at 0 by default (the paper's batch of 8 jobs); ``arrivals="poisson"`` draws exponential
  inter-arrival times with mean ``mean_interarrival_s`` (the first job arrives at 0).
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass

from ..data.source import DATA_ENV, DataSource, open_data  # noqa: F401  (DATA_ENV: the earlier name here)
from ..errors import InputError
from ..instance import Instance
from . import geo, skyplane
from ._random import Stream
from .profiles import MODELS, GpuSpec, choose_stages, get_gpu, job_profile

SOURCE = "bace_opt.builders.paper"


@dataclass(frozen=True)
class PaperRegion:
    name: str
    city: str
    aws_region: str       # the matching AWS region (Skyplane naming), for cross-checks


PAPER_REGIONS: tuple[PaperRegion, ...] = (
    PaperRegion("eu-west", "Ireland", "aws:eu-west-1"),
    PaperRegion("us-east", "New York", "aws:us-east-1"),
    PaperRegion("eu-central", "Frankfurt", "aws:eu-central-1"),
    PaperRegion("ap-northeast", "Tokyo", "aws:ap-northeast-1"),
    PaperRegion("ap-southeast", "Singapore", "aws:ap-southeast-1"),
    PaperRegion("ap-southeast-2", "Sydney", "aws:ap-southeast-2"),
)

GPU_COUNTS = (16, 32, 64, 128)
BANDWIDTH_RANGE_GBPS = (25.0, 100.0)
PRICE_RANGE_USD_PER_KWH = (0.156, 0.295)
EGRESS_USD_PER_GB = 0.02
TOKENS_PER_BYTE = 0.25
BANDWIDTH_SOURCES = ("nominal", "measured")
DEFAULT_PARALLEL_CONNECTIONS = 1

PAPER_MODELS = ("Llama-3.1-70B", "Qwen2.5-14B", "Qwen2.5-32B", "Falcon-40B", "Gemma-3-27B", "FLM-101B",
                "Qwen2.5-72B", "LLaMA-1-33B")


@dataclass(frozen=True)
class Dataset:
    name: str
    size_bytes: float
    epochs: float

    @property
    def tokens(self) -> float:
        return self.size_bytes * TOKENS_PER_BYTE


DATASETS: tuple[Dataset, ...] = (
    Dataset("Alpaca-52k", 50e6, 3.0),
    Dataset("WikiText-103", 0.5e9, 1.0),
    Dataset("OpenWebText", 38e9, 0.1),
)

JOB_DEFAULTS = dict(seq_len=2048, micro_batch=1, global_batch=256, mfu=0.4)


def _slug(model: str) -> str:
    return model.lower().replace(" ", "-")


def _round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


def paper_instance(seed: int = 1, jobs: int = 8, bandwidth_scale: float = 1.0, gpu_scale: float = 1.0, *,
                   arrivals: str = "zero", mean_interarrival_s: float = 3600.0, gpu: str | GpuSpec = "A6000",
                   egress_usd_per_gb: float = EGRESS_USD_PER_GB, max_stages: int | None = None,
                   bandwidth_source: str = "nominal", data_dir=None,
                   parallel_connections: int = DEFAULT_PARALLEL_CONNECTIONS, aggregate: str = "median",
                   fill_missing: str = "none", throughput_file: str = skyplane.THROUGHPUT_FILE,
                   name: str | None = None) -> Instance:
    """Build a paper-family instance (see the module docstring for every rule).  Deterministic per seed.

    ``bandwidth_source="measured"`` reads ``<data_dir>/skyplane`` (``data_dir`` default: resolve_data_dir);
    ``parallel_connections``, ``aggregate``, ``fill_missing`` and ``throughput_file`` (a file of Skyplane's
    throughput format in that folder, e.g. an older release's) apply to it only."""
    problems = []
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        problems.append(f"seed must be an integer >= 0, got {seed!r}")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        problems.append(f"jobs must be an integer >= 1, got {jobs!r}")
    if not (isinstance(bandwidth_scale, (int, float)) and math.isfinite(bandwidth_scale) and bandwidth_scale > 0):
        problems.append(f"bandwidth_scale must be > 0, got {bandwidth_scale!r}")
    if not (isinstance(gpu_scale, (int, float)) and math.isfinite(gpu_scale) and gpu_scale > 0):
        problems.append(f"gpu_scale must be > 0, got {gpu_scale!r}")
    if arrivals not in ("zero", "poisson"):
        problems.append(f"arrivals must be 'zero' or 'poisson', got {arrivals!r}")
    if not mean_interarrival_s > 0:
        problems.append(f"mean_interarrival_s must be > 0, got {mean_interarrival_s!r}")
    if not egress_usd_per_gb >= 0:
        problems.append(f"egress_usd_per_gb must be >= 0, got {egress_usd_per_gb!r}")
    if bandwidth_source not in BANDWIDTH_SOURCES:
        problems.append(f"bandwidth_source must be one of {', '.join(BANDWIDTH_SOURCES)}, got {bandwidth_source!r}")
    if isinstance(parallel_connections, bool) or not isinstance(parallel_connections, int) or parallel_connections < 1:
        problems.append(f"parallel_connections must be an integer >= 1, got {parallel_connections!r}")
    if aggregate not in skyplane.AGGREGATES:
        problems.append(f"aggregate must be one of {', '.join(skyplane.AGGREGATES)}, got {aggregate!r}")
    if fill_missing not in skyplane.FILL_MODES:
        problems.append(f"fill_missing must be one of {', '.join(skyplane.FILL_MODES)}, got {fill_missing!r}")
    if bandwidth_source == "nominal" and (parallel_connections != DEFAULT_PARALLEL_CONNECTIONS
                                          or aggregate != "median" or fill_missing != "none"
                                          or throughput_file != skyplane.THROUGHPUT_FILE or data_dir is not None):
        problems.append("parallel_connections, aggregate, fill_missing, throughput_file and data_dir apply only to "
                        "bandwidth_source='measured'")
    if problems:
        raise InputError(problems, "paper_instance")
    gspec = get_gpu(gpu)
    if gspec.power_w is None:
        raise InputError(f"GPU {gspec.name!r} has no power figure; pass a GpuSpec with power_w")

    # ---- cluster (one stream: independent of jobs and scales)
    cl = Stream("bace-opt/paper", seed, "cluster")
    base_gpus, region_bw, prices = [], [], []
    for _ in PAPER_REGIONS:
        base_gpus.append(cl.choice(GPU_COUNTS))
        region_bw.append(round(cl.uniform(*BANDWIDTH_RANGE_GBPS), 1))
        prices.append(round(cl.uniform(*PRICE_RANGE_USD_PER_KWH), 3))
    gpus = [max(1, _round_half_up(g * gpu_scale)) for g in base_gpus]
    total = sum(gpus)

    regions = [{"name": r.name, "gpu_type": gspec.name, "gpus": g, "price_usd_per_kwh": p, "pue": 1.0}
               for r, g, p in zip(PAPER_REGIONS, gpus, prices)]
    if bandwidth_source == "measured":
        links, link_notes, data_name = measured_links(data_dir, bandwidth_scale, parallel_connections, aggregate,
                                                      fill_missing, egress_usd_per_gb, throughput_file)
    else:
        links = []
        for i, a in enumerate(PAPER_REGIONS):
            for j in range(i + 1, len(PAPER_REGIONS)):
                b = PAPER_REGIONS[j]
                links.append({"a": a.name, "b": b.name,
                              "bandwidth_gbps": round((region_bw[i] + region_bw[j]) / 2 * bandwidth_scale, 3),
                              "latency_ms": geo.pair_latency_ms(geo.CITY_COORDS[a.city], geo.CITY_COORDS[b.city]),
                              "egress_usd_per_gb": float(egress_usd_per_gb)})

    # ---- jobs (job k's draws depend only on seed and k)
    stage_cap = max(base_gpus) if max_stages is None else max_stages
    job_dicts, job_notes = paper_jobs(seed, jobs, gspec, total, arrivals=arrivals,
                                      mean_interarrival_s=mean_interarrival_s, max_stages=stage_cap,
                                      scale_note=f"gpu_scale={gpu_scale:g}")

    nm = name or _default_name(seed, jobs, bandwidth_scale, gpu_scale, arrivals, bandwidth_source)
    meta = {
        "source": (f"{SOURCE}.paper_instance: BACE-Pipe setup (Zhang, Liu, Xu, arXiv 2605.25375) rebuilt per "
                   "docs/system-model.md 'Paper setup'; GPU figures: NVIDIA RTX A6000 datasheet; "
                   "model architectures: bace_opt.builders.profiles.MODELS; latency: great-circle rule of "
                   "bace_opt.builders.geo"),
        "family": "paper",
        "seed": seed,
        "jobs": jobs,
        "bandwidth_scale": bandwidth_scale,
        "gpu_scale": gpu_scale,
        "arrivals": arrivals if arrivals == "zero" else f"poisson, mean inter-arrival {mean_interarrival_s:g} s",
        "region_bandwidth_gbps": {r.name: bw for r, bw in zip(PAPER_REGIONS, region_bw)},
        "job_profiles": job_notes,
        "command": _command(seed, jobs, bandwidth_scale, gpu_scale, arrivals, mean_interarrival_s, bandwidth_source,
                            parallel_connections, aggregate, fill_missing, throughput_file),
    }
    if bandwidth_source == "measured":
        del meta["region_bandwidth_gbps"]       # drawn (streams stay aligned with nominal) but not used
        meta["source"] = meta["source"].replace(
            "latency: great-circle rule of bace_opt.builders.geo",
            f"link bandwidth and latency: {skyplane.SOURCE_NOTE}, files {data_name}/{throughput_file} "
            f"and {data_name}/{skyplane.LATENCY_FILE} (see bace_opt.builders.paper.measured_links)")
        meta["bandwidth_source"] = "measured"
        meta.update(measured_meta(parallel_connections, aggregate, fill_missing, bandwidth_scale, link_notes))
    data = {"schema": "bace-opt/instance/v1", "name": nm, "meta": meta,
            "gpu_types": {gspec.name: {"tflops": gspec.tflops, "memory_gb": gspec.memory_gb,
                                       "power_w": gspec.power_w}},
            "reference_gpu": gspec.name, "regions": regions, "links": links, "jobs": job_dicts,
            "objective": {"egress": False}}
    return Instance.from_dict(data, source=nm)


def paper_jobs(seed: int, jobs: int, gpu: str | GpuSpec, total_gpus: int, *, arrivals: str = "zero",
               mean_interarrival_s: float = 3600.0, max_stages: int | None = None, stream: str = "bace-opt/paper",
               scale_note: str = "") -> tuple[list[dict], list[dict]]:
    """The paper family's jobs for a cluster of ``total_gpus`` GPUs of type ``gpu``: job dicts (instance file
    form) and one note per job on how it was profiled.  Job k's draws depend only on (stream, seed, k)."""
    gspec = get_gpu(gpu)
    job_dicts, job_notes = [], []
    t_arr = 0.0
    for k in range(jobs):
        block, pos = divmod(k, len(PAPER_MODELS))
        model = Stream(stream, seed, "models", block).permutation(PAPER_MODELS)[pos]
        ds = Stream(stream, seed, "dataset", k).choice(DATASETS)
        if arrivals == "poisson" and k > 0:
            t_arr += Stream(stream, seed, "arrival", k).exponential(mean_interarrival_s)
        job, note = _paper_job(model, ds, gspec, total_gpus, max_stages, name=f"{_slug(model)}-{k + 1}",
                               arrival_s=round(t_arr, 3), scale_note=scale_note)
        job_dicts.append(job)
        job_notes.append(note)
    return job_dicts, job_notes


def _paper_job(model: str, ds: Dataset, gspec: GpuSpec, total_gpus: int, max_stages: int | None, *, name: str,
               arrival_s: float, scale_note: str) -> tuple[dict, dict]:
    """A job dict (instance file form) and a note on how it was profiled."""
    kw = dict(JOB_DEFAULTS)
    prof = dict(micro_batch=kw["micro_batch"], seq_len=kw["seq_len"], global_batch=kw["global_batch"], mfu=kw["mfu"])
    try:
        try:
            S = choose_stages(model, gspec, max_stages=max_stages, **prof)
            cap_note = "K* = argmin single-region T_iter over memory-feasible S <= min(layers" + (
                f", {max_stages} = largest region)" if max_stages else ")")
        except InputError:
            # no stage count within the largest region fits memory: the job must span regions
            S = choose_stages(model, gspec, **prof)
            cap_note = (f"no S <= {max_stages} (largest region) fits memory; K* = argmin single-region T_iter "
                        "over memory-feasible S <= layers")
        if S > total_gpus:   # the cluster is smaller than K*: re-choose among S <= all GPUs
            S = choose_stages(model, gspec, max_gpus=total_gpus, **prof)
            cap_note += f"; S <= {total_gpus} (all GPUs of the cluster)"
    except InputError as e:
        raise InputError(f"job {name!r}: {e} (the cluster has {total_gpus} GPUs"
                         f"{', ' + scale_note if scale_note else ''})") from None
    job = job_profile(model, gspec, stages=S, dataset_tokens=ds.tokens, epochs=ds.epochs, name=name,
                      arrival_s=arrival_s, **kw)
    d = {"name": job.name, "arrival_s": job.arrival_s, "stages": job.stages, "gpus_per_stage": job.gpus_per_stage,
         "microbatches": job.microbatches, "iterations": job.iterations, "stage_time_s": job.stage_time_s,
         "activation_mb": job.activation_mb, "model": job.model, "memory_gb": job.memory_gb}
    note = {"job": name, "model": model, "params_b": MODELS[model].params_b, "dataset": ds.name,
            "dataset_tokens": ds.tokens, "epochs": ds.epochs, **kw, "stages_rule": cap_note}
    return d, note


def resolve_data_dir(data_dir=None) -> DataSource:
    """Where measured links come from (data.source.open_data): ``data_dir`` (a raw folder), else
    $BACE_OPT_DATA, else the per-pair table shipped with the package (the same numbers)."""
    return open_data(data_dir)


def measured_links(data_dir, bandwidth_scale: float = 1.0, parallel_connections: int = DEFAULT_PARALLEL_CONNECTIONS,
                   aggregate: str = "median", fill_missing: str = "none",
                   egress_usd_per_gb: float = EGRESS_USD_PER_GB,
                   throughput_file: str = skyplane.THROUGHPUT_FILE) -> tuple[list[dict], list[dict], str]:
    """The paper mesh's links from Skyplane measurements (module docstring, 'measured'): link dicts, one note
    per link (its Skyplane pair, the aggregated per-VM-pair throughput and RTT, the number of runs, and
    'measured' or the estimate used), and the Skyplane folder's name relative to the data folder (so ``meta``
    does not depend on where the data folder is).  A missing pair raises an InputError naming every missing
    pair unless ``fill_missing='rtt'``."""
    src = resolve_data_dir(data_dir)
    meas = skyplane.Measurements(throughput_file=throughput_file, aggregate=aggregate, source=src)
    by_aws = {r.aws_region: r for r in PAPER_REGIONS}
    pms = meas.pairs(r.aws_region for r in PAPER_REGIONS)
    missing = [pm for pm in pms if not pm.complete]
    if missing and fill_missing == "none":
        raise InputError(f"{meas.folder}: no measurement for {len(missing)} region pair(s) of the paper mesh: "
                         f"{skyplane.describe_missing(missing)}; pass --fill-missing rtt (fill_missing='rtt') to "
                         "estimate them")
    links, notes = [], []
    for pm in pms:
        if not pm.complete:
            pm, _ = skyplane.fill(meas, pm)
        a, b = by_aws[pm.a], by_aws[pm.b]
        links.append({"a": a.name, "b": b.name,
                      "bandwidth_gbps": round(pm.throughput_gbps * parallel_connections * bandwidth_scale, 3),
                      "latency_ms": round(pm.rtt_ms / 2.0, 3),
                      "egress_usd_per_gb": float(egress_usd_per_gb)})
        notes.append({"link": [a.name, b.name], "skyplane_pair": [pm.a, pm.b],
                      "throughput_gbps_per_vm_pair": round(pm.throughput_gbps, 4), "throughput_runs": pm.throughput_n,
                      "throughput": pm.throughput_source, "rtt_ms": round(pm.rtt_ms, 3), "rtt_runs": pm.rtt_n,
                      "rtt": pm.rtt_source})
    return links, notes, "skyplane"


def measured_meta(parallel_connections, aggregate, fill_missing, bandwidth_scale, link_notes) -> dict:
    """The ``meta`` entries that state a measured instance's aggregation."""
    return {
        "region_match": {r.name: f"{r.aws_region} ({r.city if r.name != 'us-east' else 'N. Virginia'})"
                         for r in PAPER_REGIONS},
        "bandwidth_rule": (f"{aggregate} of Skyplane iperf3 throughput_recieved (bit/s, one VM pair, 64 TCP flows; "
                           f"successful PREMIUM-tier runs) over the runs of both directions / 1e9 x "
                           f"{parallel_connections} parallel VM-pair connection(s) per link x bandwidth_scale "
                           f"{bandwidth_scale:g}"),
        "latency_rule": f"{aggregate} of Skyplane ping avg_rtt over the runs of both directions / 2",
        "parallel_connections": parallel_connections,
        "fill_missing": fill_missing,
        "link_measurements": link_notes,
    }


def _default_name(seed, jobs, bw, gs, arrivals, source="nominal") -> str:
    nm = f"paper-6r-{jobs}j-seed{seed}"
    if bw != 1.0:
        nm += f"-bw{bw:g}"
    if gs != 1.0:
        nm += f"-gpu{gs:g}"
    if arrivals == "poisson":
        nm += "-poisson"
    if source == "measured":
        nm += "-measured"
    return nm


def _command(seed, jobs, bw, gs, arrivals, mean_ia, source="nominal", conns=DEFAULT_PARALLEL_CONNECTIONS,
             aggregate="median", fill_missing="none", throughput_file=skyplane.THROUGHPUT_FILE) -> str:
    cmd = f"bace-opt generate paper --seed {seed}"
    if jobs != 8:
        cmd += f" --jobs {jobs}"
    if bw != 1.0:
        cmd += f" --bandwidth-scale {bw:g}"
    if gs != 1.0:
        cmd += f" --gpu-scale {gs:g}"
    if arrivals == "poisson":
        cmd += f" --arrivals poisson --mean-interarrival {mean_ia:g}"
    if source == "measured":
        cmd += " --bandwidth-source measured"
        if conns != DEFAULT_PARALLEL_CONNECTIONS:
            cmd += f" --parallel-connections {conns}"
        if aggregate != "median":
            cmd += f" --aggregate {aggregate}"
        if fill_missing != "none":
            cmd += f" --fill-missing {fill_missing}"
        if throughput_file != skyplane.THROUGHPUT_FILE:
            cmd += f" --throughput-file {shlex.quote(str(throughput_file))}"
    return cmd
