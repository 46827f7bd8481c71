"""Pictures of a schedule: where each job runs (a map of the regions) and when (a timeline of GPU use).

    fig = plot_placement(inst, sched)          # regions on a map, each job's chain and routes, GPUs, prices
    fig = plot_timeline(inst, sched)           # per region, the GPUs each job holds over time
    fig = plot_schedule(inst, sched)           # both, side by side (what ``Schedule.plot`` and
    save_figure(fig, "placement.png")          #  ``bace-opt plot INSTANCE SCHEDULE -o F.png|svg`` draw)
    fig = plot_workload({name: workload_report(inst, sched)})   # JCT CDF, cost per day, GPU utilisation

This module is the default plotting back end of ``Schedule.plot`` (``bace_opt.schedule.PLOT_BACKEND`` names it;
the schedule model does not import it, since drawing sits on top of the package, beside the command line).

**Where the regions go.**  From coordinates when there are any: ``meta.coordinates`` of the instance
(``{"region": [latitude, longitude]}``, degrees; the WAN builder writes it from the GML) or, for region names
the builders use (the paper family's six regions, AWS regions in Skyplane naming), the cities of
``bace_opt.builders.geo``; drawn as longitude against latitude
(equirectangular, no coastlines).  Otherwise a topology layout: Kamada-Kawai on the link graph with link
latency as length, so regions far apart in time are far apart on the page (its axes carry no meaning).

**What it shows.**  A circle per region with GPUs (area ~ GPUs, colour = electricity price at the time shown,
label ``used/total GPUs`` and the price), a small grey square per transit region, every link in light grey
(width ~ bandwidth), and per job one colour: its blocks (stages per region) and the routes of its hops as a
line through the regions they cross, offset a little per job so that shared routes stay apart.  ``at=t`` shows
the jobs running at time t (GPUs used then, prices then); by default every job that ran is drawn and a
region's label gives the peak of GPUs in use at once.

The timeline has one lane per region with GPUs, as tall as its GPUs; each job's block is a bar from start
to finish, as tall as the GPUs it holds there, stacked first-fit so that concurrent bars never overlap; where
first-fit would need more height than the region has GPUs (GPUs are not contiguous), the lane is stacked per
interval instead, so bars drop down when one below them ends and the lane never overflows.

matplotlib is imported here only, lazily (the core never needs it): figures are ``matplotlib.figure.Figure``
objects that are not registered with pyplot, so a script can draw thousands without leaking, and Jupyter
shows them inline when one is the value of a cell (under ``%matplotlib widget``, with ipympl installed, they
are interactive: zoom and pan).  Our reading of colours, layout and offsets is in docs/decisions.md.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

from .errors import BaceOptError, InputError

def _known_coords() -> dict[str, tuple[float, float]]:
    from .builders import geo
    from .builders.paper import PAPER_REGIONS
    out = {r.name: geo.CITY_COORDS[r.city] for r in PAPER_REGIONS if r.city in geo.CITY_COORDS}
    out.update(getattr(geo, "CLOUD_REGION_COORDS", {}))
    return out


def region_positions(inst) -> tuple[dict[str, tuple[float, float]], bool]:
    """(x, y) of every region and whether they are geographic (x = longitude, y = latitude, degrees)."""
    names = [r.name for r in inst.regions]
    meta = inst.meta.get("coordinates") if isinstance(inst.meta, dict) else None
    coords: dict[str, tuple[float, float]] = {}
    if isinstance(meta, dict):
        for n, ll in meta.items():
            try:
                lat, lon = float(ll[0]), float(ll[1])
            except (TypeError, ValueError, IndexError):
                raise InputError(f"meta.coordinates[{n!r}]: expected [latitude, longitude], got {ll!r}") from None
            coords[n] = (lat, lon)
    else:
        known = _known_coords()
        coords = {n: known[n] for n in names if n in known}
    if names and all(n in coords for n in names):
        return _spread({n: (coords[n][1], coords[n][0]) for n in names}), True
    return _spread(_layout(inst)), False


def _spread(pos: dict[str, tuple[float, float]], min_frac: float = 0.15, rounds: int = 60):
    """Push apart regions closer than ``min_frac`` of the drawing's extent (neighbouring cities would hide
    each other's labels); positions farther apart do not move."""
    names = list(pos)
    if len(names) < 2:
        return dict(pos)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    dmin = min_frac * max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    p = {n: list(v) for n, v in pos.items()}
    for _ in range(rounds):
        moved = False
        for i, a in enumerate(names):
            for b in names[i + 1:]:
                dx, dy = p[b][0] - p[a][0], p[b][1] - p[a][1]
                d = math.hypot(dx, dy)
                if d >= dmin:
                    continue
                if d < 1e-12:
                    dx, dy, d = 1.0, 0.0, 1.0
                push = (dmin - d) / 2.0 + 1e-9
                p[a][0] -= dx / d * push
                p[a][1] -= dy / d * push
                p[b][0] += dx / d * push
                p[b][1] += dy / d * push
                moved = True
        if not moved:
            break
    return {n: (v[0], v[1]) for n, v in p.items()}


def _layout(inst) -> dict[str, tuple[float, float]]:
    import networkx as nx
    g = nx.Graph()
    g.add_nodes_from(r.name for r in inst.regions)
    for l in inst.links:
        g.add_edge(l.a, l.b, weight=max(float(l.latency_ms), 0.1))
    if len(g) == 1:
        return {next(iter(g)): (0.0, 0.0)}
    try:
        pos = nx.kamada_kawai_layout(g, weight="weight")
    except Exception:  # disconnected or degenerate: a circle still shows every region
        pos = nx.circular_layout(g)
    return {n: (float(p[0]), float(p[1])) for n, p in pos.items()}


# ---------------------------------------------------------------------- figure helpers

def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        raise BaceOptError(f"plotting needs matplotlib (pip install matplotlib, or the extra "
                           f"bace-opt[notebooks]): {e}") from e


def _new_figure(figsize, ncols=1, width_ratios=None):
    _require_matplotlib()
    from matplotlib.figure import Figure
    if "IPython" in sys.modules:
        fig = _jupyter_figure(figsize, Figure)
        if fig is not None:
            return fig, fig.subplots(1, ncols, width_ratios=width_ratios, squeeze=False)[0]
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(1, ncols, width_ratios=width_ratios, squeeze=False)[0]


def _jupyter_figure(figsize, Figure):
    """In a Jupyter kernel: a pyplot figure under the ipympl widget backend (interactive: zoom, pan); else
    make sure Figure objects display inline as PNG (what pyplot's inline backend registers on its first
    figure; done here so that a figure is shown even where pyplot was never used).  None outside Jupyter."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    ip = get_ipython()
    if ip is None or not hasattr(ip, "display_formatter"):
        return None
    import matplotlib
    backend = str(matplotlib.get_backend()).lower()
    if "ipympl" in backend or "widget" in backend:
        import matplotlib.pyplot as plt
        return plt.figure(figsize=figsize, layout="constrained")
    formatters = ip.display_formatter.formatters
    if not any(Figure in formatters[m].type_printers for m in ("image/png", "image/svg+xml") if m in formatters):
        from IPython.core.pylabtools import print_figure
        formatters["image/png"].for_type(Figure, lambda fig: print_figure(fig, "png", bbox_inches="tight"))
    return None


def _job_colors(names):
    """One colour per job: tab10 up to 10 jobs, else tab20, tab20b and tab20c (60 colours) before repeating."""
    from matplotlib import colormaps
    if len(names) <= 10:
        pal = list(colormaps["tab10"].colors)
    else:
        pal = [c for m in ("tab20", "tab20b", "tab20c") for c in colormaps[m].colors]
    return {name: pal[i % len(pal)] for i, name in enumerate(names)}


def _done_jobs(sched, at):
    jobs = [j for j in sched.jobs if j.status == "done" and j.blocks]
    if at is not None:
        jobs = [j for j in jobs if j.start_s is not None and j.finish_s is not None and j.start_s <= at < j.finish_s]
    return jobs


def _gpus_per_stage(inst, name) -> int:
    return inst.job(name).gpus_per_stage if name in inst.job_index else 1


def gpus_in_use(inst, sched, at=None) -> dict[str, int]:
    """GPUs in use per region: at time ``at``, else the peak over the schedule (jobs' blocks at once)."""
    events: dict[str, list[tuple[float, int]]] = {}
    for j in _done_jobs(sched, at):
        g = _gpus_per_stage(inst, j.name)
        for b in j.blocks:
            events.setdefault(b.region, []).append((j.start_s or 0.0, b.stages * g))
            events[b.region].append((j.finish_s if j.finish_s is not None else math.inf, -b.stages * g))
    out = {}
    for region, ev in events.items():
        ev.sort(key=lambda e: (e[0], e[1]))  # a release before an acquisition at the same instant
        cur = peak = 0
        for _, d in ev:
            cur += d
            peak = max(peak, cur)
        out[region] = peak
    return out


def _price(inst, region, t) -> float:
    from .formulas import price_at
    return float(price_at(inst, region, t))


# ---------------------------------------------------------------------- placement map

def plot_placement(inst, sched, at: float | None = None, ax=None, title: str | None = None, legend: bool = True):
    """Regions on a map (or a topology layout), each job's blocks and routes, GPUs used, prices.

    ``at``: show only the jobs running at that time (s), with the GPUs used and prices then; default every job
    that ran, with each region's peak GPUs in use.  ``ax``: draw into this matplotlib Axes; returns the Figure.
    """
    _require_matplotlib()
    from matplotlib import colormaps
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    if ax is None:
        fig, (ax,) = _new_figure((10.5, 7.5))
    else:
        fig = ax.figure
    pos, geographic = region_positions(inst)
    xs = [p[0] for p in pos.values()]
    ys = [p[1] for p in pos.values()]
    span = max(max(xs) - min(xs), max(ys) - min(ys), 1e-9)
    jobs = _done_jobs(sched, at)
    colors = _job_colors([j.name for j in sched.jobs if j.status == "done"])
    used = gpus_in_use(inst, sched, at)
    t_price = at if at is not None else 0.0
    compute = [r for r in inst.regions if r.gpus > 0]
    prices = {r.name: _price(inst, r.name, t_price) for r in compute}
    pmin, pmax = (min(prices.values()), max(prices.values())) if prices else (0.0, 1.0)
    norm = Normalize(vmin=pmin, vmax=pmax if pmax > pmin else pmin + 1e-6)
    cmap = colormaps["YlOrRd"]

    # links: width ~ bandwidth
    bw_max = max((l.bandwidth_gbps for l in inst.links), default=1.0)
    for l in inst.links:
        (x1, y1), (x2, y2) = pos[l.a], pos[l.b]
        ax.plot([x1, x2], [y1, y2], color="0.85", lw=0.5 + 2.0 * l.bandwidth_gbps / bw_max, zorder=1,
                solid_capstyle="round")

    # jobs: routes of their hops, offset per job perpendicular to each segment
    n = max(len(jobs), 1)                       # offsets among the jobs drawn
    order = {j.name: i for i, j in enumerate(jobs)}
    off_unit = 0.008 * span
    for j in jobs:
        c = colors[j.name]
        k = order[j.name] - (n - 1) / 2.0
        for h in j.hops:
            pts = [pos[r] for r in h.route]
            for (x1, y1), (x2, y2) in zip(pts, pts[1:]):
                dx, dy = x2 - x1, y2 - y1
                d = math.hypot(dx, dy) or 1.0
                ox, oy = -dy / d * off_unit * k, dx / d * off_unit * k
                ax.annotate("", xy=(x2 + ox, y2 + oy), xytext=(x1 + ox, y1 + oy), zorder=6.5,
                            arrowprops=dict(arrowstyle="-|>", color=c, lw=1.8, shrinkA=6, shrinkB=6,
                                            mutation_scale=9))

    # regions
    gmax = max((r.gpus for r in compute), default=1)
    for r in inst.regions:
        x, y = pos[r.name]
        if r.gpus <= 0:
            ax.scatter([x], [y], marker="s", s=22, color="0.55", zorder=4)
            ax.annotate(r.name, (x, y), xytext=(0, -9), textcoords="offset points", ha="center", va="top",
                        fontsize=7, color="0.4", zorder=6)
            continue
        size = 180 + 900 * r.gpus / gmax
        ax.scatter([x], [y], s=size, color=cmap(norm(prices[r.name])), edgecolor="0.25", lw=0.8, zorder=4)
        u = used.get(r.name, 0)
        ax.annotate(f"{r.name}\n{u}/{r.gpus} GPUs · {prices[r.name]:.3g} $/kWh", (x, y),
                    xytext=(0, -math.sqrt(size) / 2 - 3), textcoords="offset points", ha="center", va="top",
                    fontsize=7.5, zorder=6,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.75))

    # blocks: stages per region, one tag per job in a row above the region's circle
    per_region: dict[str, list] = {}
    for j in jobs:
        for b in j.blocks:
            per_region.setdefault(b.region, []).append((j.name, b.stages))
    for region, tags in per_region.items():
        x, y = pos[region]
        r_pts = math.sqrt(180 + 900 * inst.region(region).gpus / gmax) / 2
        per_row = 6
        for i, (name, stages) in enumerate(tags):
            row, col = divmod(i, per_row)
            n_row = min(per_row, len(tags) - row * per_row)
            ax.annotate(f"{stages}", (x, y), xytext=((col - (n_row - 1) / 2) * 17, r_pts + 8 + 13 * row),
                        textcoords="offset points", fontsize=7, color="white", ha="center", va="center",
                        fontweight="bold", zorder=7, bbox=dict(boxstyle="round,pad=0.2", fc=colors[name], ec="none"))

    if legend and jobs:
        from matplotlib.lines import Line2D
        handles = []
        for j in jobs:
            chain = " → ".join(f"{b.region}:{b.stages}" for b in j.blocks)
            gbps = max((h.reserved_gbps for h in j.hops), default=0.0)
            lab = f"{j.name}  [{chain}]" + (f"  {gbps:.3g} Gbit/s" if j.hops else "")
            handles.append(Line2D([], [], color=colors[j.name], lw=3, label=lab))
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.09), fontsize=7, frameon=False,
                  ncol=2 if len(handles) > 4 else 1, title="job [region:stages → ...] (tags: stages per region),"
                  " reserved Gbit/s per hop", title_fontsize=7)
    sm = ScalarMappable(norm=norm, cmap=cmap)
    cb = fig.colorbar(sm, ax=ax, shrink=0.5, pad=0.01, location="right")
    cb.set_label("electricity price (USD/kWh)" + (f" at t = {at / 3600:.3g} h" if at is not None else " at t = 0"),
                 fontsize=7)
    cb.ax.tick_params(labelsize=7)
    pad = 0.12 * span
    ax.set_xlim(min(xs) - pad, max(xs) + pad)
    ax.set_ylim(min(ys) - pad * 1.3, max(ys) + pad * 1.2)
    if geographic:
        ax.set_xlabel("longitude (°)  (regions closer than the drawing allows are nudged apart)", fontsize=8)
        ax.set_ylabel("latitude (°)", fontsize=8)
        ax.set_aspect("equal", adjustable="box")
        ax.grid(alpha=0.25)
        ax.tick_params(labelsize=7)
    else:
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_xlabel("topology layout (link latency as length)", fontsize=8)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    if title is None:
        what = f"jobs running at t = {at / 3600:.3g} h" if at is not None else \
            f"{len(jobs)} job(s) placed; GPUs: peak in use / total"
        title = f"{sched.instance}: {sched.method} — {what}"
    ax.set_title(title, fontsize=9)
    return fig


# ---------------------------------------------------------------------- timeline

def _stack(bars):
    """First-fit vertical offsets so that bars overlapping in time never overlap in height."""
    placed = []  # (start, end, y0, y1)
    out = []
    for s, e, h in bars:
        y = 0.0
        busy = sorted((p[2], p[3]) for p in placed if p[0] < e and s < p[1])
        for y0, y1 in busy:
            if y + h <= y0:
                break
            y = max(y, y1)
        placed.append((s, e, y, y + h))
        out.append(y)
    return out


def _stack_segments(bars):
    """Pieces (i, t0, t1, y) of ``bars`` [(start, end, height), lowest first]: between consecutive starts and
    ends, the bars then active stacked in list order, so the stack is exactly as tall as the GPUs in use (a
    bar drops down when one below it ends); consecutive pieces of a bar at the same height are merged."""
    times = sorted({t for s, e, _ in bars for t in (s, e)})
    pieces, open_ = [], {}
    for t0, t1 in zip(times, times[1:]):
        y, cur = 0.0, {}
        for i, (s, e, h) in enumerate(bars):
            if s <= t0 and e >= t1 and e > s:
                cur[i] = y
                y += h
        for i, (ts, yy) in list(open_.items()):
            if cur.get(i) != yy:
                pieces.append((i, ts, t0, yy))
                del open_[i]
        for i, yy in cur.items():
            open_.setdefault(i, (t0, yy))
    for i, (ts, yy) in open_.items():
        pieces.append((i, ts, times[-1], yy))
    return pieces


def plot_timeline(inst, sched, ax=None, title: str | None = None, legend: bool = True):
    """Per region with GPUs, a lane as tall as its GPUs; each job's block a bar (start to finish, GPUs held)."""
    _require_matplotlib()
    from matplotlib.patches import Rectangle
    if ax is None:
        fig, (ax,) = _new_figure((10.0, 0.6 + 0.75 * max(1, sum(1 for r in inst.regions if r.gpus > 0))))
    else:
        fig = ax.figure
    compute = [r for r in inst.regions if r.gpus > 0]
    colors = _job_colors([j.name for j in sched.jobs if j.status == "done"])
    jobs = _done_jobs(sched, None)
    finish = max((j.finish_s for j in jobs if j.finish_s is not None), default=1.0)
    scale, unit = (3600.0, "h") if finish >= 3 * 3600 else ((60.0, "min") if finish >= 180 else (1.0, "s"))
    gap = 0.25
    y_base = {}
    y = 0.0
    for r in reversed(compute):
        y_base[r.name] = y
        y += 1.0 + gap
    for r in compute:
        yb = y_base[r.name]
        ax.add_patch(Rectangle((0, yb), finish / scale, 1.0, fc="0.96", ec="0.75", lw=0.6, zorder=0))
        bars = []
        for j in sorted(jobs, key=lambda j: (j.start_s or 0.0, j.name)):
            g = _gpus_per_stage(inst, j.name)
            for b in j.blocks:
                if b.region == r.name:
                    bars.append((j, b, j.start_s or 0.0, j.finish_s if j.finish_s is not None else finish,
                                 b.stages * g))
        spans = [(s, e, h) for _, _, s, e, h in bars]
        offs = _stack(spans)
        if all(o + h <= r.gpus + 1e-9 for o, (_, _, h) in zip(offs, spans)):
            pieces = [(i, s, e, o) for i, ((s, e, _), o) in enumerate(zip(spans, offs))]
        else:  # first-fit would draw above the lane: stack per interval instead (exact, bars may drop)
            pieces = _stack_segments(spans)
        longest = {}
        for i, s, e, o in pieces:
            j, h = bars[i][0], bars[i][4]
            ax.add_patch(Rectangle((s / scale, yb + o / r.gpus), (e - s) / scale, h / r.gpus, fc=colors[j.name],
                                   ec="white", lw=0.5, zorder=2))
            if e - s > longest.get(i, (0.0,))[0]:
                longest[i] = (e - s, s, e, o)
        for i, (_, s, e, o) in longest.items():
            j, h = bars[i][0], bars[i][4]
            label = f"{j.name} ({h})"
            if (e - s) / finish > 0.009 * len(label) and h / r.gpus > 0.18:  # only where the label fits
                ax.text((s + e) / 2 / scale, yb + (o + h / 2) / r.gpus, label, ha="center",
                        va="center", fontsize=6.5, color="white", zorder=3, clip_on=True)
    ax.set_yticks([y_base[r.name] + 0.5 for r in compute])
    ax.set_yticklabels([f"{r.name}\n{r.gpus} GPUs" for r in compute], fontsize=7.5)
    ax.set_xlim(0, finish / scale * 1.01)
    ax.set_ylim(-gap, y)
    ax.set_xlabel(f"time ({unit})", fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    for s in ("top", "right"):
        ax.spines[s].set_visible(False)
    if legend and jobs:
        from matplotlib.patches import Patch
        ax.legend(handles=[Patch(color=colors[j.name], label=j.name) for j in jobs], loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    if title is None:
        title = f"{sched.instance}: {sched.method} — GPUs held per region over time (bar height = GPUs)"
    ax.set_title(title, fontsize=9)
    return fig


def plot_schedule(inst, sched, kind: str = "both", at: float | None = None):
    """``kind``: 'placement', 'timeline' or 'both' (map above, timeline below). Returns a Figure."""
    if kind == "placement":
        return plot_placement(inst, sched, at=at)
    if kind == "timeline":
        return plot_timeline(inst, sched)
    if kind != "both":
        raise InputError(f"plot kind must be placement, timeline or both, got {kind!r}")
    n_lanes = max(1, sum(1 for r in inst.regions if r.gpus > 0))
    n_jobs = sum(1 for j in sched.jobs if j.status == "done" and j.blocks)
    map_h = 6.0 + 0.2 * math.ceil(n_jobs / 2) + 0.5     # the map, and its legend of jobs below it
    lanes_h = 0.8 + 0.75 * n_lanes
    fig, _ = _new_figure((10.5, map_h + lanes_h))
    fig.clear()
    a1, a2 = fig.subplots(2, 1, height_ratios=[map_h, lanes_h])
    plot_placement(inst, sched, at=at, ax=a1)
    plot_timeline(inst, sched, ax=a2, legend=False)
    return fig


def save_figure(fig, path, dpi: int = 150) -> Path:
    """Write ``fig`` as PNG, SVG or PDF (by the suffix) through the one atomic writer (bace_opt.files)."""
    from .files import atomic_savefig, check_output
    path = check_output(path, suffixes=(".png", ".svg", ".pdf"))
    return atomic_savefig(fig, path, dpi=dpi, bbox_inches="tight")


# ---------------------------------------------------------------------- what users read from runs (issue 45)
# The JCT CDF, cost per day and GPU utilisation over time, one line per run, drawn from the evaluator's
# ``workload_report`` dicts (nothing is recomputed here):
#     reps = {name: bo.workload_report(inst, bo.simulate(inst, name)) for name in ("bace-pipe", "select-pack")}
#     fig = plot_workload(reps)      # ``bace-opt simulate --figure F.png`` draws the same for one run


def _axes(ax, figsize=(5.5, 3.6)):
    if ax is not None:
        return ax.figure, ax
    fig, axes = _new_figure(figsize)
    return fig, axes[0]


def _labelled(fig, ax, xlabel: str, ylabel: str, title: str):
    """The workload figures' axis labels, title and legend; returns ``fig``."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    return fig


def plot_jct_cdf(reports: Mapping[str, Mapping[str, Any]], ax=None, log: bool = True):
    """Share of the window's done jobs with JCT at most x (hours), one line per run."""
    fig, ax = _axes(ax)
    for name, w in reports.items():
        cdf = w["jct_cdf"]
        if cdf["jct_s"]:
            ax.step([v / 3600.0 for v in cdf["jct_s"]], cdf["q"], where="post", label=name)
    if log:
        ax.set_xscale("log")
    return _labelled(fig, ax, "JCT, h", "share of done jobs", "JCT CDF")


def plot_cost_per_day(reports: Mapping[str, Mapping[str, Any]], ax=None):
    """Electricity + egress per day of the run (bars side by side per run; egress hatched on top)."""
    fig, ax = _axes(ax)
    n = max(len(reports), 1)
    width = 0.8 / n
    for k, (name, w) in enumerate(reports.items()):
        days = w["cost_per_day"]
        x = [d["day"] + (k - (n - 1) / 2) * width for d in days]
        el = [d["electricity_usd"] for d in days]
        bars = ax.bar(x, el, width=width, label=f"{name}: electricity")
        ax.bar(x, [d["egress_usd"] for d in days], width=width, bottom=el, hatch="//", alpha=0.5,
               color=bars.patches[0].get_facecolor() if bars.patches else None, label=f"{name}: egress")
    return _labelled(fig, ax, "day of the run", "USD per day", "cost per day")


def plot_utilisation(reports: Mapping[str, Mapping[str, Any]], ax=None):
    """GPUs held / fleet GPUs per bin over the run."""
    fig, ax = _axes(ax)
    for name, w in reports.items():
        u = w["gpu_utilisation"]
        if u["series"]:
            b = u["bin_s"] / 3600.0
            ax.step([i * b for i in range(len(u["series"]) + 1)], u["series"] + u["series"][-1:], where="post",
                    label=f"{name} (mean {u['mean']:.2f})")
    ax.set_ylim(0, 1.05)
    return _labelled(fig, ax, "h into the run", "GPU utilisation", "GPUs in use / fleet")


def plot_workload(reports: Mapping[str, Mapping[str, Any]]):
    """The three figures side by side."""
    fig, axes = _new_figure((16, 3.8), ncols=3)
    plot_jct_cdf(reports, ax=axes[0])
    plot_cost_per_day(reports, ax=axes[1])
    plot_utilisation(reports, ax=axes[2])
    return fig
