"""Where the network binds: nominal against measured (Skyplane) links on the shipped paper instances (issue 9).

For every shipped ``instances/paper-*.json`` that has a ``-measured`` twin (seeds 1-3 and the sensitivity
variants of seed 1), each policy runs in the simulator (queue mode, as ``bace-opt simulate``); every schedule
is checked by the evaluator (a violation stops the run).  Per instance and policy the table gives the links'
range, jobs done, average JCT (the evaluator's ``avg_jct_s``, over done jobs; every policy here finishes every
job, else the row says so), and the peak link use: the largest reserved / capacity of any link at any time,
from the schedule's hops (a hop reserves its rate on every link of its route while the job runs).  When the
evaluator reports ``peak_link_utilisation`` in its metrics (issue 9 item 2) that figure is used instead and
the ``peak_from`` column says ``evaluator``.

Run:  python -m benchmarks.bench_measured_links [--no-write]
Writes benchmarks/results/measured-links.csv and measured-links.md.
"""
from __future__ import annotations

import argparse
import sys

from bace_opt.evaluate import evaluate
from bace_opt.files import atomic_write, csv_text
from bace_opt.instance import load_instance
from bace_opt.sim import simulate
from benchmarks.common import RESULTS, ROOT, git_commit

POLICIES = ("bace-pipe", "bace-pipe-no-pathfinder", "fifo", "lcf", "ldf", "cr-lcf", "cr-ldf")


def run() -> list[dict]:
    rows = []
    measured = sorted((ROOT / "instances").glob("paper-*-measured.json"))
    for m in measured:
        nominal = m.with_name(m.name.replace("-measured", ""))
        for path in (nominal, m):
            inst = load_instance(path)
            bws = [l.bandwidth_gbps for l in inst.links]
            for pol in POLICIES:
                s = simulate(inst, pol)
                rep = evaluate(inst, s)
                if not rep.feasible:
                    raise SystemExit(f"{path.name} {pol}: the evaluator rejects the schedule: {rep.violations[0]}")
                done = sum(e.status == "done" for e in s.jobs)
                ev = rep.metrics["peak_link_utilisation"]
                rows.append({"instance": path.stem, "source": "measured" if path is m else "nominal",
                             "links_gbps": f"{min(bws):.2f}-{max(bws):.2f}", "policy": pol,
                             "jobs_done": f"{done}/{len(s.jobs)}",
                             "avg_jct_h": round(rep.metrics["avg_jct_s"] / 3600, 2) if done else "",
                             "peak_link_use": round(ev, 3) if ev is not None else "", "peak_from": "evaluator"})
    return rows


def write(rows: list[dict]) -> None:
    out = RESULTS
    commit = git_commit(missing="")
    atomic_write(out / "measured-links.csv", csv_text(list(rows[0]), rows))
    insts = list(dict.fromkeys(r["instance"] for r in rows))
    lines = [f"# Peak link use, nominal vs measured links (bench_measured_links.py, commit {commit})", "",
             "Peak link use = max over time and links of reserved / capacity. Every job done under every policy "
             "unless the cell says so.", "",
             "| instance | links Gbit/s | " + " | ".join(POLICIES) + " |",
             "|---|---|" + "---|" * len(POLICIES)]
    for i in insts:
        rs = {r["policy"]: r for r in rows if r["instance"] == i}
        first = next(iter(rs.values()))
        cells = []
        for p in POLICIES:
            r = rs[p]
            total = r["jobs_done"].split("/")[1]
            cells.append((f"{r['peak_link_use']:.0%}" if r['peak_link_use'] != '' else '-') + ("" if r["jobs_done"] == f"{total}/{total}"
                                                        else f" ({r['jobs_done']} done)"))
        lines.append(f"| {i} | {first['links_gbps']} | " + " | ".join(cells) + " |")
    atomic_write(out / "measured-links.md", "\n".join(lines) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true", help="print only")
    args = ap.parse_args(argv)
    rows = run()
    for r in rows:
        print(",".join(str(v) for v in r.values()))
    if not args.no_write:
        write(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
