import heapq, math, sys, time
import bace_opt as bo
from bace_opt.gaps.online import shortest_runs
from bace_opt.sim import run_simulation

def mbt_bound(inst, R):
    """sum_j M_j (preemptive WSPT on one machine of speed G, q_j = W_j R_j / G) + sum R_j / 2."""
    G = sum(r.gpus for r in inst.regions)
    jobs = sorted(((j.arrival_s, (j.stages * j.gpus_per_stage) * R[i] / G, i) for i, j in enumerate(inst.jobs)))
    t = jobs[0][0]
    k = 0; heap = []; M = [0.0] * len(jobs); rem = {}
    n = len(jobs)
    while k < n or heap:
        if not heap:
            t = max(t, jobs[k][0])
        while k < n and jobs[k][0] <= t:
            r, q, i = jobs[k]; heapq.heappush(heap, (q, i)); rem[i] = q; k += 1
        q, i = heap[0]
        nxt = jobs[k][0] if k < n else math.inf
        run = min(rem[i], nxt - t)
        M[i] += (t + run / 2) * run / q
        rem[i] -= run; t += run
        if rem[i] <= 1e-12 * max(1, q):
            heapq.heappop(heap)
    return sum(M) + sum(R) / 2 - sum(j.arrival_s for j in inst.jobs)

for path in sys.argv[1:]:
    inst = bo.load_instance(path)
    R, _ = shortest_runs(inst)
    n = len(R)
    t = time.time(); lb = mbt_bound(inst, R) / n; dt = time.time() - t
    floor = sum(R) / n
    print(path, n, "floor", round(floor), "mbt", round(lb), f"{dt:.3f}s")
    for pol in ("bace-pipe", "select-pack", "lcf"):
        s, _ = run_simulation(inst, pol)
        rep = bo.evaluate(inst, s)
        J = rep.metrics["avg_jct_s"] or float("nan")
        print("  ", pol, round(J), rep.metrics["jobs_done"], "J/mbt-1 %.1f%%" % (100 * (J / max(lb, floor) - 1)), "J/floor-1 %.1f%%" % (100 * (J / floor - 1)))
