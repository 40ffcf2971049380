"""The command-line options of a custom task read from a file (``infodiv run`` and
``infodiv extract`` take the same ones; :mod:`infodiv.study.tasks` reads the file)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["add_task_file_options"]


def add_task_file_options(parser) -> None:
    """The options of a custom task read from a file (``infodiv run`` and ``infodiv extract``
    take the same ones)."""
    parser.add_argument("--task-file", type=Path, default=None,
                        help="custom task: a .csv (header row) or .jsonl file of records")
    parser.add_argument("--template", default=None,
                        help="with --task-file: format string over the record fields ending in "
                             "{answer}, e.g. '{text} Sentiment: {answer}'")
    parser.add_argument("--options", default=None,
                        help="with --task-file: answer options, comma-separated or a JSON list")
    parser.add_argument("--label-field", default=None,
                        help="with --task-file: column holding the gold option (string or "
                             "index); required unless --unlabelled")
    parser.add_argument("--unlabelled", action="store_true",
                        help="with --task-file: accept records without a label (all of them "
                             "without --label-field; else the empty cells)")
    parser.add_argument("--truncatable", default="",
                        help="with --task-file: comma-separated fields that may be shortened")


