"""The controlled zoo (DESIGN.md 2.9): models identical except depth and layer sharing.

Modules: :mod:`.data` (AG News split, template, option-token check), :mod:`.tokenizer` (the
shared word-level tokenizer), :mod:`.configs` (model specs, building, saving), :mod:`.train`
(seeded resumable training of one model), :mod:`.runner` (a whole zoo under one root).
Everything torch-dependent is imported inside functions.
"""

from .configs import ModelSpec, zoo_grid
from .train import TrainConfig

__all__ = ["ModelSpec", "zoo_grid", "TrainConfig"]
