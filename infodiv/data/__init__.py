"""Task data bundled with the package (see ``README.md`` here for source, citation, licence).

``bundled_data_dir()`` is a folder laid out like ``../shared/data``; it holds the 872-row SST-2
validation set and the first 2000 rows of the AG News test split (the task of ``infodiv demo``).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["bundled_data_dir", "BUNDLED_TASKS"]

BUNDLED_TASKS = ("sst2", "ag_news")


def bundled_data_dir() -> Path:
    """The folder holding the bundled task files (``glue/sst2/dev.tsv``,
    ``ag_news/test.csv``)."""
    return Path(__file__).resolve().parent
