"""bace-opt solve passes P2's time unit and candidate limits through, and refuses them for P1."""
import json

import bace_opt as bo


def test_p2_options_from_the_command_line(cli, tmp_path):
    out = tmp_path / "p2.json"
    r = cli("solve", "instances/tiny-2r-2j.json", "--problem", "schedule", "--solver", "cpsat",
            "--time-unit", "0.5", "--max-blocks", "1", "--time-limit", "60", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "status: optimal" in r.stdout
    sched = bo.load_schedule(out)
    inst = bo.load_instance("instances/tiny-2r-2j.json")
    assert bo.evaluate(inst, sched).feasible
    assert all(len(j.blocks) <= 1 for j in sched.jobs if j.status == "done")
    extra = json.loads(out.read_text())["solver"]["extra"]
    assert extra["time_resolution_s"] == 0.5


def test_p2_options_refused_for_placement(cli, tmp_path):
    r = cli("solve", "instances/tiny-2r-2j.json", "--max-blocks", "2", "-o", tmp_path / "x.json")
    assert r.returncode == 2 and "--max-blocks applies to --problem schedule only" in r.stderr
    assert "Traceback" not in r.stderr


def test_p2_text_says_what_its_status_and_bound_are_for(cli, tmp_path):
    out = tmp_path / "p2.json"
    r = cli("solve", "instances/tiny-2r-2j.json", "--problem", "schedule", "--time-limit", "30", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "status: optimal for the slotted model" in r.stdout
    assert "bound: - (no lower bound of the continuous-time problem computed" in r.stdout
    assert "slotted model: bound" in r.stdout and "candidates: all placements" in r.stdout
    r = cli("solve", "instances/tiny-2r-2j.json", "--problem", "schedule", "--time-limit", "30", "--bracket", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "the bound is for the continuous-time P2" in r.stdout and "bracket: lower" in r.stdout
    meta = json.loads(out.read_text())["meta"]
    assert meta["candidates_used"] == "all placements" and meta["lower_bound"] is not None
