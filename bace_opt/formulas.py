"""The system model's formulas, written once (docs/system-model.md, "Placement of one job").

Every part of bace_opt that needs a number of the model (the evaluator that prices schedules, the
heuristics that rank placements, the exact models that build coefficients) calls these functions, so a
number from one part can be compared with a number from another.  Only the evaluator *reports* figures.

Notation (spec symbols):
    t_j   stage_time_s        reference-GPU compute of one stage for one micro-batch
    f_r   speed factor        tflops_r / tflops_ref
    tau_j                      max over used regions t_j / f_r   (the slowest stage)
    b_j   demand_gbps          8 * A_j / 1000 / tau_j             (no-stall bandwidth)
    c_i                        8 * A_j / 1000 / w_i                (transfer of one micro-batch over hop i)
    T_iter                     (m_j + S_j - 1) * max(tau_j, max_i c_i) + 2 * sum_i L_i / 1000
    R_j                        N_j * T_iter
"""
from __future__ import annotations

import math
from bisect import bisect_right
from typing import Iterable, Sequence

import numpy as np

from .instance import Instance, Job, PriceSeries, Region


def tau_s(inst: Instance, job: Job, regions: Iterable[str]) -> float:
    """tau_j: per-micro-batch stage compute time of the slowest region used (s)."""
    return max(job.stage_time_s / inst.speed[r] for r in regions)


def demand_gbps(job: Job, tau: float) -> float:
    """b_j = 8 * A_j / 1000 / tau_j: the bandwidth at which one micro-batch's activation crosses a hop in
    exactly one stage time (Gbit/s)."""
    return 8.0 * job.activation_mb / 1000.0 / tau


def transfer_s(job: Job, reserved_gbps: float) -> float:
    """c_i = 8 * A_j / 1000 / w_i: time to send one micro-batch's activation over a hop (s)."""
    return 8.0 * job.activation_mb / 1000.0 / reserved_gbps


def iteration_s(job: Job, tau: float, reserved_gbps: Sequence[float], latencies_ms: Sequence[float]) -> float:
    """T_iter = (m + S - 1) * max(tau, max_i c_i) + 2 * sum_i L_i / 1000  (analytic GPipe/1F1B model)."""
    slot = tau
    for w in reserved_gbps:
        slot = max(slot, transfer_s(job, w))
    return (job.microbatches + job.stages - 1) * slot + 2.0 * sum(latencies_ms) / 1000.0


def compute_s(job: Job) -> float:
    """BACE-Pipe's computation intensity: N * (m + S - 1) * t_j on the reference GPU (s)."""
    return job.iterations * (job.microbatches + job.stages - 1) * job.stage_time_s


def power_kw(inst: Instance, job: Job, blocks: Sequence[tuple[str, int]]) -> float:
    """sum_i g_j * n_i * P_{r_i} * PUE_{r_i} / 1000 (kW)."""
    tot = 0.0
    for r, n in blocks:
        reg = inst.region(r)
        tot += job.gpus_per_stage * n * inst.gpu_types[reg.gpu_type].power_w * reg.pue
    return tot / 1000.0


def idle_kw_per_gpu(inst: Instance, region: str) -> float:
    """Idle draw of one GPU of ``region`` at the meter: idle_power_w * PUE / 1000 (kW).  ``idle_power_w`` absent:
    the stated default fraction of power_w (``instance.DEFAULT_IDLE_POWER_FRACTION``)."""
    reg = inst.region(region)
    return inst.gpu_types[reg.gpu_type].idle_w * reg.pue / 1000.0


def no_stall_iteration_s(job: Job, tau: float, reserved_gbps: Sequence[float], latencies_ms: Sequence[float]) -> float:
    """T_iter with every hop reserving at least b_j (w_i -> max(w_i, b_j)): the iteration time the same
    placement would have if no hop were communication-bound."""
    b = demand_gbps(job, tau)
    return iteration_s(job, tau, [max(w, b) for w in reserved_gbps], latencies_ms)


def egress_usd(job: Job, route_egress_usd_per_gb: Iterable[float]) -> float:
    """N * m * 2 * A / 1000 * sum over hops of the route's egress price (USD): forward activations and
    backward gradients of every micro-batch of every iteration cross every hop."""
    return job.iterations * job.microbatches * 2.0 * job.activation_mb / 1000.0 * sum(route_egress_usd_per_gb)


# ---------------------------------------------------------------------- electricity prices

class PriceCurve:
    """Piecewise-constant price of one region, with an exact integral.

    ``integral(t0, t1)`` returns the integral of p(t) dt in USD*s/kWh, exact across step boundaries
    (value k holds on [start + k*step, start + (k+1)*step); before start the first value, after the end the
    last value).
    """

    __slots__ = ("constant", "start", "step", "values", "cum")

    def __init__(self, region: Region):
        s: PriceSeries | None = region.price_series
        if s is None:
            self.constant = region.price_usd_per_kwh
            self.values = None
        else:
            self.constant = None
            self.start = s.start_s
            self.step = s.step_s
            self.values = np.asarray(s.usd_per_kwh, dtype=float)
            # cum[k] = integral from start to start + k*step
            self.cum = np.concatenate(([0.0], np.cumsum(self.values) * self.step))

    def at(self, t: float) -> float:
        if self.values is None:
            return self.constant
        k = math.floor((t - self.start) / self.step)
        k = min(max(k, 0), len(self.values) - 1)
        return float(self.values[k])

    def _F(self, t: float) -> float:
        """Integral from ``start`` to t (negative for t < start)."""
        v, step, n = self.values, self.step, len(self.values)
        x = t - self.start
        if x <= 0:
            return x * float(v[0])
        k = int(x // step)
        if k >= n:
            return float(self.cum[n]) + (x - n * step) * float(v[-1])
        return float(self.cum[k]) + (x - k * step) * float(v[k])

    def integral(self, t0: float, t1: float) -> float:
        if self.values is None:
            return self.constant * (t1 - t0)
        return self._F(t1) - self._F(t0)

    def integral_many(self, t0: float, t1: np.ndarray) -> np.ndarray:
        """``integral(t0, t)`` for every t of the array ``t1`` at once (the same arithmetic, element-wise)."""
        t1 = np.asarray(t1, dtype=float)
        if self.values is None:
            return self.constant * (t1 - t0)
        v, step, n = self.values, self.step, len(self.values)
        x = t1 - self.start
        k = np.floor_divide(x, step)
        inside = (x > 0) & (k < n)
        ki = np.where(inside, k, 0).astype(np.int64)
        f = np.where(x <= 0, x * float(v[0]),
                     np.where(k >= n, float(self.cum[n]) + (x - n * step) * float(v[-1]),
                              self.cum[ki] + (x - ki * step) * v[ki]))
        return f - self._F(t0)

    def change_times(self, t0: float, t1: float) -> list[float]:
        """Times in (t0, t1) where the price steps."""
        if self.values is None:
            return []
        n = len(self.values)
        out = []
        k0 = max(1, math.floor((t0 - self.start) / self.step) + 1)
        for k in range(k0, n):
            t = self.start + k * self.step
            if t >= t1:
                break
            if t > t0:
                out.append(t)
        return out


def price_curves(inst: Instance) -> dict[str, PriceCurve]:
    cache = inst.__dict__.setdefault("_price_curves", None)
    if cache is None:
        cache = {r.name: PriceCurve(r) for r in inst.regions}
        inst.__dict__["_price_curves"] = cache
    return cache


def electricity_usd(inst: Instance, job: Job, blocks: Sequence[tuple[str, int]], start_s: float, run_s: float) -> float:
    """sum_i g_j n_i P_{r_i} PUE_{r_i} / 1000 * integral_{s}^{s+R} p_{r_i}(t) dt / 3600 (USD), exact."""
    curves = price_curves(inst)
    tot = 0.0
    for r, n in blocks:
        reg = inst.region(r)
        kw = job.gpus_per_stage * n * inst.gpu_types[reg.gpu_type].power_w * reg.pue / 1000.0
        tot += kw * curves[r].integral(start_s, start_s + run_s) / 3600.0
    return tot


def price_at(inst: Instance, region: str, t: float) -> float:
    return price_curves(inst)[region].at(t)
