"""Pictures of the optical layer (matplotlib imported lazily): spectrum occupancy and blocking versus load.
The iteration-time Gantt charts come from bace_opt.pipeline.gantt.draw_gantt."""
from __future__ import annotations


def plot_spectrum(grid, ax, title: str | None = None):
    """Occupancy picture: one row per link (fibre order), one column per slot, dark = occupied."""
    m = grid.matrix()
    ax.imshow(m, aspect="auto", cmap="Greys", interpolation="nearest", vmin=0, vmax=1)
    names = []
    for f in grid.network.fibres:
        names += [f"{f.a}->{f.b}", f"{f.b}->{f.a}"] if grid.directed else [f"{f.a}-{f.b}"]
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=6)
    ax.set_xlabel("frequency slot")
    ax.set_title(title or f"spectrum occupancy ({grid.used_slots()} of {grid.n_links * grid.slots} slots used)",
                 fontsize=9)
    return ax


def plot_blocking(df, ax, title: str | None = None):
    """Blocking probability versus load, one line per policy, with the 95 % interval as error bars."""
    for pol, g in df.groupby("policy", sort=False):
        g = g.sort_values("load_erlang")
        err = [g["blocking"] - g["ci95_low"], g["ci95_high"] - g["blocking"]]
        ax.errorbar(g["load_erlang"], g["blocking"], yerr=err, marker="o", markersize=3, capsize=2, label=pol)
    ax.set_xlabel("offered load (Erlang)")
    ax.set_ylabel("blocking probability")
    ax.set_yscale("log")
    ax.grid(True, which="both", linestyle=":", linewidth=0.5)
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    return ax
