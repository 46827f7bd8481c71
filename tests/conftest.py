import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def run_cli(*args, cwd=None):
    """Run the installed console entry point in a subprocess (as a user would); returns CompletedProcess."""
    import subprocess
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-m", "bace_opt.cli.main", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd or ROOT, env=env, timeout=600)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="module")
def paper():
    """The shipped 8-job paper instance (instances/paper-6r-8j-seed1.json); a test file may define its own."""
    import bace_opt as bo
    return bo.load_instance(ROOT / "instances" / "paper-6r-8j-seed1.json")
