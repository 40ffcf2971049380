"""extraction: (model, task) -> Contributions (DESIGN.md sections 1, 2.1, 2.4).

``Contributions`` is numpy-only and imported eagerly; the torch/transformers parts are imported
lazily on first use so that loading a run directory does not pull in torch.
"""

from .contributions import Contributions, Member
from .tasks import SUPPORTED_TASKS, Task, get_task

__all__ = ["Contributions", "Member", "Task", "get_task", "SUPPORTED_TASKS"]
