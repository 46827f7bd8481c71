"""The validate and evaluate commands as a user runs them: clear messages, exit codes, no tracebacks."""
import json

import bace_opt as bo
from test_instance_validation import base


def test_validate_five_faults_all_reported(cli, tmp_path):
    d = base()
    d["links"][0]["bandwidth_gbps"] = -5
    d["jobs"][0]["stage_time_s"] = 0
    d["regions"][0]["colour"] = "red"
    d["links"][1]["b"] = "nowhere"
    d["jobs"][0]["iterations"] = "many"
    p = tmp_path / "five.json"
    p.write_text(json.dumps(d))
    r = cli("validate", p)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr + r.stdout
    assert "5 problems" in r.stderr
    for frag in ("links[0].bandwidth_gbps", "jobs[0].stage_time_s", "regions[0].colour", "links[1].b",
                 "jobs[0].iterations"):
        assert frag in r.stderr


def test_validate_truncated_json_one_line(cli, tmp_path):
    p = tmp_path / "trunc.json"
    p.write_text(json.dumps(base())[:200])
    r = cli("validate", p)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "not valid JSON" in r.stderr


def test_validate_ok_and_missing_file(cli, tmp_path):
    p = tmp_path / "ok.json"
    bo.Instance.from_dict(base()).save(p)
    r = cli("validate", p)
    assert r.returncode == 0 and "valid" in r.stdout
    r = cli("validate", tmp_path / "nope.json")
    assert r.returncode == 2 and "not found" in r.stderr and "Traceback" not in r.stderr


def test_evaluate_exit_codes(cli, tmp_path):
    inst = bo.Instance.from_dict(base())
    ip = tmp_path / "i.json"
    inst.save(ip)
    good = bo.make_schedule(inst, [bo.JobPlan("j1", "done", 0.0, [("a", 2), ("b", 2)], [(("a", "b"), 0.6)])], "t")
    sp = tmp_path / "s.json"
    good.save(sp)
    r = cli("evaluate", ip, sp, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["feasible"] and out["metrics"]["jobs_done"] == 1
    d = good.to_dict()
    d["jobs"][0]["start_s"] = -1.0
    sp.write_text(json.dumps(d))
    r = cli("evaluate", ip, sp)
    assert r.returncode == 1 and "before its arrival" in r.stdout
    d["jobs"][0]["surprise"] = 1
    sp.write_text(json.dumps(d))
    r = cli("evaluate", ip, sp)
    assert r.returncode == 2 and "jobs[0].surprise: unknown field" in r.stderr and "Traceback" not in r.stderr


def test_help_for_every_command(cli):
    r = cli("--help")
    assert r.returncode == 0
    for cmd in ("validate", "evaluate"):
        r = cli(cmd, "--help")
        assert r.returncode == 0 and "usage:" in r.stdout
