"""Markdown tables of DataFrames, for the bench reports (``report``, ``optical``) and the benchmarks' write-ups."""
from __future__ import annotations

import math


def md(df, floatfmt: str = ".3g") -> str:
    """A markdown table of a DataFrame (named index levels become the first columns)."""
    if any(n is not None for n in df.index.names):
        df = df.reset_index()

    def f(v):
        if isinstance(v, float):
            return "-" if math.isnan(v) else format(v, floatfmt)
        return str(v)
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(f(v) for v in row) + " |")
    return "\n".join(lines)
