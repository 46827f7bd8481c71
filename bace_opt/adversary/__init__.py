"""Where heuristics fail: proven P1 gaps split into selection and placement (``gap``) and an adversarial
search over instance parameters for the largest proven gap (``search``)."""
from .gap import GapDecomposition, Solve, decompose, heuristic_epoch, own_set_optimum, solve_p1, split_gap

__all__ = ["GapDecomposition", "Solve", "decompose", "heuristic_epoch", "own_set_optimum", "solve_p1", "split_gap"]
