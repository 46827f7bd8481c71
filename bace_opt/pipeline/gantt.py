"""Gantt chart of a pipeline schedule: one row per stage (top: stage 1), and below each cross-region stage
boundary a row for its hop, with activation transfers (fwd) in the upper half and gradient transfers (bwd)
in the lower half; a thin tail after each transfer shows its latency.  Saved as PNG by a matplotlib Figure that
pyplot never sees (imported lazily, so the rest of the package never needs matplotlib; and the backend is left
alone, so a notebook keeps showing its own figures inline after drawing one)."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import BaceOptError
from .model import PipelineModel
from .schedules import Op, makespan

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
    if labels is None:
        labels = n_blocks <= 256
    fig_w = min(18.0, 6.0 + 0.12 * model.microbatches * len(model.kinds))
    fig_h = 1.0 + 0.45 * len(rows)
    fig = Figure(figsize=(fig_w, fig_h))
    ax = fig.subplots()
    for o in ops:
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
    ax.set_yticklabels([lab for lab, _ in rows], fontsize=7)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlim(0, span * 1.01)
    ax.set_xlabel("time (s)")
    ax.grid(axis="x", linestyle=":", linewidth=0.5)
    kinds = list(model.kinds) + (["XF", "XB"] if model.boundaries else [])
    names = {"F": "forward", "B": "backward", "D": "input grad (D)", "W": "weight grad (W)",
             "XF": "activation transfer", "XB": "gradient transfer"}
    ax.legend(handles=[Patch(color=COLORS[q], label=names[q]) for q in kinds], loc="lower center",
              bbox_to_anchor=(0.5, 1.0), ncol=len(kinds), fontsize=7, frameon=False)
    ax.set_title(title or f"pipeline schedule: {S} stages x {model.microbatches} micro-batches, "
                          f"iteration {span:.4g} s", fontsize=9, pad=20)
    fig.tight_layout()
    path = Path(path)
    try:
        fig.savefig(path, dpi=dpi)
    except OSError as e:
        raise BaceOptError(f"cannot write the Gantt chart to {str(path)!r}: {e}") from e
    return path
