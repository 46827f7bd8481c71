"""Where heuristics fail: an adversarial search over instance parameters for the largest proven P1 gap
(``search``, over the instance space of ``space``).  The gap itself and its split into selection and placement
live in ``bace_opt.gaps``; their names are re-exported here for the scripts that imported them from here."""
from ..gaps.decompose import GapDecomposition, Solve, decompose, heuristic_epoch, own_set_optimum, solve_p1, split_gap

__all__ = ["GapDecomposition", "Solve", "decompose", "heuristic_epoch", "own_set_optimum", "solve_p1", "split_gap"]
