"""Gantt chart of a pipeline schedule: one row per stage (top: stage 1), and below each cross-region stage
boundary a row for its hop, with activation transfers (fwd) in the upper half and gradient transfers (bwd)
in the lower half; a thin tail after each transfer shows its latency.  Saved as PNG by a matplotlib Figure that
pyplot never sees (imported lazily, so the rest of the package never needs matplotlib; and the backend is left
alone, so a notebook keeps showing its own figures inline after drawing one)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import BaceOptError
from ..files import atomic_savefig
from .model import PipelineModel
from .schedules import Op, makespan

#: above this many blocks (computations + transfers) the chart is aggregated: per row and kind, blocks closer
#: than a fraction of a pixel are merged into one bar and drawn as one collection, without labels or latency
#: tails (a paper job, 40 stages x 256 micro-batches, has ~25,000 blocks: drawn one by one it took minutes)
MAX_DRAWN_BLOCKS = 2000
MAX_FIG_H_IN = 14.0
COLORS = {"F": "#4C72B0", "B": "#55A868", "D": "#55A868", "W": "#DD8452", "XF": "#8172B2", "XB": "#C44E52"}


def draw_gantt(model: PipelineModel, ops: Sequence[Op], path, title: str | None = None, labels: bool | None = None,
               dpi: int = 120) -> Path:
    """Write the chart of ``ops`` (scheduled under ``model``) to ``path`` (PNG) and return the path."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.patches import Patch
    except ImportError as e:
        raise BaceOptError(f"drawing a Gantt chart needs matplotlib (pip install matplotlib): {e}") from e
    S = model.stages
    rows: list[tuple[str, object]] = []          # (label, key): key = stage int or ("hop", boundary stage)
    for k in range(S):
        region = model.stage_region[k] if model.stage_region and model.stage_region[k] else ""
        rows.append((f"stage {k + 1}" + (f"\n{region}" if region else ""), k))
        b = model.boundary(k)
        if b is not None:
            name = model.hop_label[b.hop] if b.hop < len(model.hop_label) else f"hop {b.hop + 1}"
            rows.append((f"{name}\nfwd / bwd", ("hop", k)))
    ypos = {key: len(rows) - 1 - r for r, (_, key) in enumerate(rows)}
    span = makespan(ops) if ops else 1.0
    n_blocks = model.microbatches * S
    aggregate = len(ops) > MAX_DRAWN_BLOCKS
    if labels is None:
        labels = n_blocks <= 256
    if aggregate:
        labels = False
    fig_w = min(18.0, 6.0 + 0.12 * model.microbatches * len(model.kinds))
    fig_h = min(MAX_FIG_H_IN, 1.0 + 0.45 * len(rows))
    fig = Figure(figsize=(fig_w, fig_h))
    ax = fig.subplots()
    if aggregate:
        n_bars = _draw_aggregated(ax, ops, ypos, span)
    for o in (() if aggregate else ops):
        if o.is_transfer:
            k, direction = o.link
            y = ypos[("hop", k)]
            y0, h = (y + 0.02, 0.44) if direction == "fwd" else (y - 0.46, 0.44)
            width = o.end_s - o.start_s
            if width > 0:
                ax.broken_barh([(o.start_s, width)], (y0, h), facecolors=COLORS[o.kind], edgecolor="white",
                               linewidth=0.4)
            if o.arrive_s > o.end_s:   # latency tail
                ax.plot([o.end_s, o.arrive_s], [y0 + h / 2] * 2, color=COLORS[o.kind], linewidth=0.8, alpha=0.5)
            if labels and width > 0.02 * span:
                ax.text(o.start_s + width / 2, y0 + h / 2, str(o.mb + 1), ha="center", va="center", fontsize=6,
                        color="white")
        else:
            y = ypos[o.stage]
            width = o.end_s - o.start_s
            ax.broken_barh([(o.start_s, width)], (y - 0.4, 0.8), facecolors=COLORS[o.kind], edgecolor="white",
                           linewidth=0.5)
            if labels and width > 0.012 * span:
                ax.text(o.start_s + width / 2, y, f"{o.kind}{o.mb + 1}", ha="center", va="center", fontsize=6,
                        color="white")
    ax.set_yticks([ypos[key] for _, key in rows])
    tick_fs = 7 if len(rows) <= 30 else max(3.0, 7 * 30 / len(rows))
    ax.set_yticklabels([lab if len(rows) <= 30 else lab.replace("\n", " ") for lab, _ in rows], fontsize=tick_fs)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(0, span * 1.01)
    ax.set_xlabel("time (s)")
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    kinds = list(model.kinds) + (["XF", "XB"] if model.boundaries else [])
    names = {"F": "forward", "B": "backward", "D": "input grad (D)", "W": "weight grad (W)",
             "XF": "activation transfer", "XB": "gradient transfer"}
    ax.legend(handles=[Patch(color=COLORS[q], label=names[q]) for q in kinds], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=len(kinds), fontsize=7, frameon=False)
    title = title or f"pipeline schedule: {S} stages x {model.microbatches} micro-batches, iteration {span:.4g} s"
    if aggregate:
        title += f"\n({len(ops)} blocks drawn as {n_bars} bars: blocks closer than 1/{_PIXELS} of the span merged)"
    ax.set_title(title, fontsize=9, pad=20)
    fig.tight_layout()
    path = Path(path)
    atomic_savefig(fig, path, dpi=dpi)
    return path


_PIXELS = 4000   # merge resolution: a gap below span / _PIXELS is invisible at the chart's width and dpi


def _draw_aggregated(ax, ops: Sequence[Op], ypos: dict, span: float) -> int:
    """Draw ``ops`` as one bar collection per (row, kind), merging blocks closer than span / _PIXELS; returns
    the number of bars drawn."""
    groups: dict[tuple, list[tuple[float, float]]] = {}
    for o in ops:
        if o.is_transfer:
            k, direction = o.link
            y = ypos[("hop", k)]
            y0, h = (y + 0.02, 0.44) if direction == "fwd" else (y - 0.46, 0.44)
        else:
            y0, h = ypos[o.stage] - 0.4, 0.8
        if o.end_s > o.start_s:
            groups.setdefault((y0, h, o.kind), []).append((o.start_s, o.end_s))
    eps = span / _PIXELS
    n = 0
    for (y0, h, kind), iv in groups.items():
        iv.sort()
        merged = [list(iv[0])]
        for a, b in iv[1:]:
            if a - merged[-1][1] <= eps:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        ax.broken_barh([(a, b - a) for a, b in merged], (y0, h), facecolors=COLORS[kind], edgecolor="none")
        n += len(merged)
    return n
