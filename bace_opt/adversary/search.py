"""Adversarial gap search: the instance parameters (within the family's bounds, ``space``) that maximise a
heuristic's *proven* P1 cost gap.

The optimiser is Optuna (``sampler="tpe"``, multivariate TPE, the default, chosen by measurement against
``"random"`` sampling: benchmarks/README.md "Where BACE-Pipe fails"); each candidate is built, the policy's
decision epoch is priced by the evaluator, and P1 is solved exactly with a time limit, free and over the
policy's own started jobs (``gap.decompose``).  Only proven gaps are told to Optuna as values; a candidate
whose solve is not proven within the limit, or where the policy starts fewer jobs than the optimum (lost
admissions: a worse failure, ranked first by P1's lexicographic objective, recorded and saved separately), or
that fails, is told as a failed trial and recorded as such.

Files in the output directory (every write atomic or a whole appended line; nothing existing overwritten
except this run's own summaries):

    config.json     the search's settings; a resumed run must match them (budget and workers may change)
    trials.jsonl    one line per finished candidate: params, status, gaps, solves, features (append-only;
                    a line cut short by a kill is dropped on resume)
    trials.csv      the same, flattened (rewritten at the end of a run)
    worst/         the ``keep`` largest proven gaps as instance files (``meta.adversary`` holds the gaps), and
                    lost-admission instances as ``lost-*.json``
    report.md       best gaps, status counts, and the Spearman correlation of each feature with the gap
    .lock           held (flock) while a search runs: a second search on the same directory is refused

Resume: running again with the same directory re-tells Optuna every finished trial (values and failures)
and continues until ``budget`` candidates are finished; no solved candidate is solved again.

Stop: Ctrl-C or SIGTERM stops the search within seconds: every candidate finished so far is in trials.jsonl
(each is appended as it finishes), the worker processes (``procs.WorkerPool``, each in a session of its own)
or the local Dask cluster are killed with everything they started, and the summaries are not rewritten.
"""
from __future__ import annotations

import functools
import json
import logging
import math
import os
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from ..errors import InputError
from ..options import SOLVE_OPTIONS
from .space import Space, SpaceConfig, features, make_space


def _import_optuna():
    """Optuna, imported without the warning tqdm.auto gives inside Jupyter when ipywidgets is absent (Optuna
    imports tqdm.auto for a progress bar we never show)."""
    import warnings
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        import optuna
    return optuna

log = logging.getLogger(__name__)

SAMPLERS = ("tpe", "random")
STATUSES = ("proven", "unproven", "admissions-lost", "error")


@dataclass(frozen=True)
class AdversaryConfig:
    """Settings of one search (saved as config.json)."""
    policy: str = "bace-pipe"
    space: SpaceConfig = field(default_factory=SpaceConfig)
    seed: int = 0
    sampler: str = "tpe"
    time_limit_s: float = 20.0
    solver: str = "highs"
    policy_options: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["policy_options"] = dict(self.policy_options)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "AdversaryConfig":
        d = dict(d)
        d["space"] = SpaceConfig(**d.get("space", {}))
        return cls(**d)

    @property
    def label(self) -> str:
        """The policy's own ``name`` (for titles and instance names: never a file path); the spec itself when the
        policy cannot be built."""
        return _policy_name(self.policy, json.dumps(dict(self.policy_options), sort_keys=True, default=str))

    def check(self) -> None:
        from ..policies import make_policy
        from ..solvers import registry
        probs = []
        try:        # a registered name or package.module:Class / file.py:Class, with its options: built once here
            make_policy(self.policy, **dict(self.policy_options))
        except InputError as e:
            probs.append(f"policy: {e}")
        if self.sampler not in SAMPLERS:
            probs.append(f"sampler: must be one of {', '.join(SAMPLERS)}, got {self.sampler!r}")
        try:        # the exact solve's declared limit (bace_opt.options.SOLVE_OPTIONS)
            SOLVE_OPTIONS["time_limit"].check(self.time_limit_s, "time_limit_s")
        except InputError as e:
            probs.append(str(e))
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            probs.append(f"seed: must be an integer >= 0, got {self.seed!r}")
        if probs:
            raise InputError(probs)
        self.space.check()
        registry.require(self.solver)


@functools.lru_cache(maxsize=32)
def _policy_name(spec: str, options_json: str) -> str:
    from ..errors import BaceOptError
    from ..policies import make_policy
    try:
        name = make_policy(spec, **json.loads(options_json)).name
    except BaceOptError:
        return spec
    return name if isinstance(name, str) and name else spec


# ---------------------------------------------------------------------- one candidate

def evaluate_candidate(config: AdversaryConfig, trial: int, params: Mapping[str, Any]) -> dict:
    """Build, run the policy, solve P1 exactly; one record (never raises)."""
    from ..gaps.decompose import decompose
    t = time.perf_counter()
    rec: dict[str, Any] = {"trial": trial, "params": dict(params)}
    try:
        space = make_space(config.space)
        inst = space.build(params, name=f"adversary-{config.space.family}-{config.label}-t{trial}")
        rec["features"] = features(inst)
        d = decompose(inst, config.policy, time_limit_s=config.time_limit_s, solver=config.solver,
                      policy_options=config.policy_options)
        rec.update(d.to_row())
        if not d.optimum.proven or d.same_admissions is None:
            rec["status"] = "unproven"
        elif not d.same_admissions:
            rec["status"] = "admissions-lost"
        elif d.cost_gap is None:
            rec["status"] = "unproven"
        else:
            rec["status"] = "proven"
        rec["score"] = d.cost_gap if rec["status"] == "proven" else None
    except Exception as e:  # one bad candidate must not stop the search: record it
        rec["status"] = "error"
        rec["score"] = None
        rec["error"] = f"{type(e).__name__}: {e}"[:500]
    rec["wall_s"] = time.perf_counter() - t
    return rec


# ---------------------------------------------------------------------- files

def _atomic_write(path: Path, text: str) -> None:
    from ..files import atomic_write
    atomic_write(path, text)


def read_trials(path: Path) -> list[dict]:
    """The finished candidates of ``trials.jsonl``.  A line cut short (killed mid-write) is dropped; a complete
    line that is not a record (not UTF-8, not JSON, no ``trial``) is set aside in ``trials.jsonl.damaged``, as a
    bench results file's; one warning names them (the first few and a count); the file is repaired atomically."""
    if not path.exists():
        return []
    from ..bench.runner import damaged_path
    from ..files import issue_summary
    raw = path.read_bytes()
    good, out, bad, issues = [], [], [], []
    for no, b in enumerate(raw.splitlines(keepends=True), 1):
        if not b.endswith(b"\n"):
            issues.append(f"line {no}: cut short (an interrupted write), dropped")
            continue
        try:
            rec = json.loads(b.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            rec = None
        if not isinstance(rec, dict) or "trial" not in rec:
            issues.append(f"line {no}: not a trial record")
            bad.append(b)
            continue
        good.append(b)
        out.append(rec)
    if issues:
        if bad:
            with open(damaged_path(path), "ab") as f:
                f.writelines(bad)
        log.warning("%s: %s; %s", path, issue_summary(issues),
                    f"{len(bad)} line(s) set aside in {damaged_path(path)}" if bad else "the file is repaired")
        _atomic_write(path, b"".join(good))
    return out


def _append(path: Path, rec: Mapping[str, Any]) -> None:
    from ..bench.runner import append_line
    line = json.dumps(rec, sort_keys=True, default=_json_default) + "\n"
    try:
        append_line(path, line.encode("utf-8"))
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror or e}") from None


def _json_default(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return str(v)


# ---------------------------------------------------------------------- the search

def _sampler(name: str, seed: int):
    optuna = _import_optuna()
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, n_startup_trials=10)


def _retell(study, space: Space, recs: list[dict]) -> None:
    optuna = _import_optuna()
    from optuna.trial import TrialState, create_trial
    for r in sorted(recs, key=lambda r: r["trial"]):
        try:
            params = {k: r["params"][k] for k in space.distributions}
        except KeyError:
            continue
        if r.get("score") is not None:
            study.add_trial(create_trial(params=params, distributions=space.distributions, value=r["score"]))
        else:
            study.add_trial(create_trial(params=params, distributions=space.distributions, state=TrialState.FAIL))
    optuna.logging.set_verbosity(optuna.logging.WARNING)


def run_adversary(config: AdversaryConfig, out_dir, budget: int, *, workers: int = 1, dask_address: str | None = None,
                  keep: int = 5, on_record: Callable[[dict], None] | None = None) -> "AdversaryResult":
    """Search until ``budget`` candidates are finished in ``out_dir`` (resuming what is there); write the
    worst instances and the report; return the records.  ``workers`` candidates are evaluated at once (local
    processes, or ``dask_address``: a Dask scheduler, ``"local"`` for a LocalCluster)."""
    optuna = _import_optuna()
    config.check()
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise InputError(f"budget: must be an integer >= 1, got {budget!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: must be an integer >= 1, got {workers!r}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(f"output: {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"output: cannot create {out}: {e.strerror or e}") from None
    lock = _lock(out)
    try:
        return _run_locked(config, out, budget, workers, dask_address, keep, on_record)
    finally:
        lock.close()


def _lock(out: Path):
    """An exclusive lock on ``out/.lock`` (released when the process ends, even if killed): two searches never
    append to one directory."""
    import fcntl
    try:
        f = open(out / ".lock", "a")
    except OSError as e:
        raise InputError(f"output: cannot write {out / '.lock'}: {e.strerror or e}") from None
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise InputError(f"output: another search is running in {out}") from None
    return f


def _run_locked(config, out: Path, budget, workers, dask_address, keep, on_record) -> "AdversaryResult":
    optuna = _import_optuna()
    cfg_path = out / "config.json"
    if cfg_path.exists():
        try:
            old = json.loads(cfg_path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise InputError(f"output: {cfg_path} is not valid JSON ({e}); use another directory") from None
        if old != json.loads(json.dumps(config.to_dict())):
            diff = [k for k in config.to_dict() if old.get(k) != json.loads(json.dumps(config.to_dict()))[k]]
            raise InputError(f"output: {out} holds a search with other settings ({', '.join(diff)}); resume it "
                             "with the same settings or use another directory")
    else:
        _atomic_write(cfg_path, json.dumps(config.to_dict(), indent=1, sort_keys=True) + "\n")
    space = make_space(config.space)
    tpath = out / "trials.jsonl"
    recs = read_trials(tpath)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # a resumed search gets a sampler seeded by (seed, finished trials): it does not replay the first
    # run's random draws, and it is deterministic for the same interruption point
    study = optuna.create_study(direction="maximize", sampler=_sampler(config.sampler, config.seed + 7919 * len(recs)))
    _retell(study, space, recs)
    done = {r["trial"] for r in recs}
    next_id = max(done, default=-1) + 1
    with _Runner(workers, dask_address) as runner:
        while len(recs) < budget:
            k = min(workers, budget - len(recs))
            trials = [study.ask(space.distributions) for _ in range(k)]
            ids = list(range(next_id, next_id + k))
            next_id += k
            # each record is kept as soon as its candidate finishes: an interrupt loses only those running
            for j, rec in runner.run(config, ids, [t.params for t in trials]):
                _append(tpath, rec)
                recs.append(rec)
                if rec.get("score") is not None:
                    study.tell(trials[j], rec["score"])
                else:
                    study.tell(trials[j], state=optuna.trial.TrialState.FAIL)
                if on_record:
                    on_record(rec)
                log.info("trial %d: %s gap=%s (%.1f s)", rec["trial"], rec["status"], rec.get("cost_gap"),
                         rec["wall_s"])
    res = AdversaryResult(config, recs)
    res.write(out, keep=keep)
    return res


class _Runner:
    """Evaluates candidates in this process, in worker processes of their own sessions (``procs.WorkerPool``:
    Ctrl-C reaches only us, leaving kills them all), or on Dask (``bench.cluster.dask_client``)."""

    def __init__(self, workers: int, dask_address: str | None):
        from contextlib import ExitStack
        self.workers, self.client, self.pool = workers, None, None
        self.stack = ExitStack()
        if dask_address:
            from ..bench.cluster import dask_client
            self.client = self.stack.enter_context(dask_client(dask_address, workers))
        elif workers > 1:
            from ..procs import WorkerPool
            self.pool = self.stack.enter_context(WorkerPool(workers))

    def run(self, config, ids, params) -> Iterator[tuple[int, dict]]:
        """Yield (position, record) of each candidate as it finishes."""
        if self.client is not None:
            yield from self._run_dask(config, ids, params)
        elif self.pool is not None:
            for j, ok, value in self.pool.run(evaluate_candidate, [(config, i, p) for i, p in zip(ids, params)]):
                yield j, value if ok else _failed(ids[j], params[j], value)
        else:
            for j, (i, p) in enumerate(zip(ids, params)):
                yield j, evaluate_candidate(config, i, p)

    def _run_dask(self, config, ids, params):
        from dask.distributed import as_completed
        futs = {self.client.submit(evaluate_candidate, config, i, p, pure=False): j
                for j, (i, p) in enumerate(zip(ids, params))}
        try:
            for f in as_completed(list(futs)):
                j = futs[f]
                try:
                    yield j, f.result()
                except Exception as e:   # the worker died or could not run it
                    yield j, _failed(ids[j], params[j], f"{type(e).__name__}: {e}")
        except BaseException:
            try:
                self.client.cancel(list(futs), force=True)
            except Exception:
                pass
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stack.close()


def _failed(trial: int, params, message: str) -> dict:
    """The record of a candidate whose worker process died before returning one."""
    return {"trial": trial, "params": dict(params), "status": "error", "score": None, "error": message[:500],
            "wall_s": 0.0}


# ---------------------------------------------------------------------- results

@dataclass
class AdversaryResult:
    config: AdversaryConfig
    records: list[dict]

    def frame(self):
        """One row per candidate: status, gaps, solve figures, features (flattened), params as JSON."""
        import pandas as pd
        rows = []
        for r in self.records:
            row = {k: v for k, v in r.items() if k not in ("params", "features")}
            row.update({f"f_{k}": v for k, v in (r.get("features") or {}).items()})
            row["params"] = json.dumps(r.get("params", {}), sort_keys=True)
            rows.append(row)
        return pd.DataFrame(rows).sort_values("trial").reset_index(drop=True) if rows else pd.DataFrame()

    def judged(self) -> int:
        """Candidates that got a verdict (every status but ``error``)."""
        return sum(1 for r in self.records if r.get("status") != "error")

    def first_error(self) -> dict | None:
        """The failed candidate of the lowest trial number, or None."""
        bad = [r for r in self.records if r.get("status") == "error"]
        return min(bad, key=lambda r: r["trial"]) if bad else None

    def proven(self):
        df = self.frame()
        return df[df["status"] == "proven"] if not df.empty else df

    def worst(self, n: int = 5) -> list[dict]:
        ok = [r for r in self.records if r.get("status") == "proven" and r.get("cost_gap") is not None]
        return sorted(ok, key=lambda r: (-r["cost_gap"], r["trial"]))[:n]

    def correlations(self):
        """Spearman correlation of each feature with the proven cost gap (and its split)."""
        import pandas as pd
        df = self.proven()
        fcols = [c for c in df.columns if c.startswith("f_")]
        if len(df) < 3 or not fcols:
            return pd.DataFrame()
        out = {}
        for target in ("cost_gap", "selection_gap", "placement_gap"):
            if target in df:
                y = pd.to_numeric(df[target], errors="coerce")
                # Spearman = Pearson of the ranks (average ranks for ties)
                out[target] = {c[2:]: df[c].astype(float).rank().corr(y.rank()) for c in fcols}
        return pd.DataFrame(out).sort_values("cost_gap", key=lambda s: -s.abs())

    def write(self, out: Path, keep: int = 5) -> None:
        out = Path(out)
        df = self.frame()
        if not df.empty:
            _atomic_write(out / "trials.csv", df.to_csv(index=False))
        wdir = out / "worst"
        wdir.mkdir(exist_ok=True)
        space = make_space(self.config.space)
        keepers = [("worst", i, r) for i, r in enumerate(self.worst(keep), 1)]
        keepers += [("lost", i, r) for i, r in enumerate(
            sorted([r for r in self.records if r.get("status") == "admissions-lost"],
                   key=lambda r: (-(r.get("admissions_lost") or 0), r["trial"]))[:keep], 1)]
        for kind, i, r in keepers:
            name = f"adversary-{self.config.space.family}-{self.config.label}-{kind}{i}-t{r['trial']}"
            inst = space.build(r["params"], name=name)
            d = inst.to_dict()
            d["meta"] = dict(d.get("meta", {}))
            d["meta"]["adversary"] = {
                "policy": self.config.policy, "trial": r["trial"], "status": r["status"],
                "cost_gap": r.get("cost_gap"), "selection_gap": r.get("selection_gap"),
                "placement_gap": r.get("placement_gap"), "heuristic_jobs": r.get("heuristic_jobs"),
                "optimum_jobs": r.get("opt_jobs"), "heuristic_cost_usd": r.get("heuristic_cost_usd"),
                "optimum_cost_usd": r.get("opt_cost_usd"), "own_set_cost_usd": r.get("own_cost_usd"),
                "optimum_status": r.get("opt_status"), "own_set_status": r.get("own_status"),
                "time_limit_s": self.config.time_limit_s, "solver": self.config.solver,
                "command": (f"bace-opt adversary --policy {self.config.policy} --family "
                            f"{self.config.space.family} --seed {self.config.seed}")}
            _atomic_write(wdir / f"{kind}{i}.json", json.dumps(d, indent=1) + "\n")
        _atomic_write(out / "report.md", self.report())

    def report(self) -> str:
        df = self.frame()
        c = self.config
        lines = [f"# Adversarial gap search: {c.label} on the {c.space.family} family",
                 "",
                 f"Size: {c.space.n_regions} regions, {c.space.n_jobs} jobs (random: <= {c.space.max_gpus_per_region} "
                 f"GPUs per region, <= {c.space.max_stages} stages); sampler {c.sampler}, seed {c.seed}; each "
                 f"candidate's P1 (levels 1-2) solved by {c.solver} with a {c.time_limit_s:g} s limit, free and over "
                 "the policy's own started jobs. Gaps are P1 cost gaps (electricity at t0 prices), proven only.",
                 ""]
        if df.empty:
            return "\n".join(lines + ["(no candidates)"]) + "\n"
        counts = df["status"].value_counts().to_dict()
        lines.append("Candidates: " + ", ".join(f"{counts.get(s, 0)} {s}" for s in STATUSES) + ".")
        first = self.first_error()
        if first is not None:
            lines += ["", f"{counts.get('error', 0)} candidate(s) failed and count as no gap; the first (trial "
                          f"{first['trial']}): {first.get('error')}"]
        pv = self.proven()
        if not pv.empty:
            g = pd_num(pv["cost_gap"]) * 100
            lines += ["", f"Proven cost gap: mean {g.mean():.1f} %, median {g.median():.1f} %, worst {g.max():.1f} % "
                      f"(trial {int(pv.loc[g.idxmax(), 'trial'])}).", "",
                      "| rank | trial | cost gap % | selection gap % | placement gap % | jobs started | file |",
                      "|---|---|---|---|---|---|---|"]
            for i, r in enumerate(self.worst(10), 1):
                f = f"worst/worst{i}.json" if i <= 5 else ""
                lines.append(f"| {i} | {r['trial']} | {100 * r['cost_gap']:.1f} | {_pct(r.get('selection_gap'))} | "
                             f"{_pct(r.get('placement_gap'))} | {r.get('heuristic_jobs')} | {f} |")
            # running best: how the search progressed
            best, marks = -1.0, []
            for _, r in pv.sort_values("trial").iterrows():
                if r["cost_gap"] > best:
                    best = r["cost_gap"]
                    marks.append(f"{int(r['trial'])}: {100 * best:.1f} %")
            lines += ["", "Best so far (trial: gap): " + ", ".join(marks)]
        cor = self.correlations()
        if not cor.empty:
            lines += ["", "Spearman correlation of instance features with the proven gaps (|rho| large = the "
                          "feature goes with large gaps; over the proven candidates, which the search chose, so "
                          "not an unbiased sample):", "",
                      "| feature | cost gap | selection gap | placement gap |", "|---|---|---|---|"]
            for name, r in cor.iterrows():
                lines.append(f"| {name} | " + " | ".join("-" if not math.isfinite(v) else f"{v:+.2f}"
                                                         for v in r.values) + " |")
        lost = df[df["status"] == "admissions-lost"]
        if not lost.empty:
            lines += ["", f"{len(lost)} candidate(s) where {c.label} starts fewer jobs than the proven optimum "
                          f"(saved as worst/lost*.json)."]
        return "\n".join(lines) + "\n"


def pd_num(s):
    import pandas as pd
    return pd.to_numeric(s, errors="coerce")


def _pct(v) -> str:
    return "-" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{100 * v:.1f}"
