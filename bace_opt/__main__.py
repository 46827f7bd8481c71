"""``python -m bace_opt ...``: the ``bace-opt`` command line."""
from bace_opt.cli.main import console

if __name__ == "__main__":
    console()
