"""Task data bundled with the package (see ``README.md`` here for source, citation, licence).

``bundled_data_dir()`` is a folder laid out like ``../shared/data``; it holds the 872-row SST-2
validation set, the task of ``infodiv demo``.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["bundled_data_dir", "BUNDLED_TASKS"]

BUNDLED_TASKS = ("sst2",)


def bundled_data_dir() -> Path:
    """The folder holding the bundled task files (``glue/sst2/dev.tsv``)."""
    return Path(__file__).resolve().parent
