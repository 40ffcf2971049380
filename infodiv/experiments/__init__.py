"""The controlled experiments (DESIGN.md 2.9): the AG News zoo and the pointer-chasing depth
grid, models identical except depth and layer sharing, trained, analysed and written up.

This package sits above the library: it imports ``infodiv``'s library modules, ``extraction``
and ``estimators``; nothing in the library imports it, and ``infodiv zoo``
(:mod:`infodiv.commands.zoo`) is its command line.

Training: :mod:`.data` (AG News split, template, option-token check), :mod:`.hops` (K-hop
pointer chasing), :mod:`.tokenizer`, :mod:`.configs` (model specs, building, saving),
:mod:`.train` (seeded resumable training of one model), :mod:`.runner` and :mod:`.depth` (a
whole zoo or depth grid under one root), :mod:`.finetune` and :mod:`.prefix`. Analysis and
pages: :mod:`.report` (the zoo), :mod:`.depth_report` (the depth grid) and the modules they
call. Everything torch-dependent is imported inside functions.
"""

from .configs import ModelSpec, zoo_grid
from .train import TrainConfig

__all__ = ["ModelSpec", "zoo_grid", "TrainConfig"]
