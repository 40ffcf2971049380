"""The zoo's data: AG News with the paper's Table 3 template, split by row, and option checks.

Rows 2000-7599 of the AG News test csv train the zoo; rows 0-1999 (the paper's "first 2000
instances") are held out for every measurement (DESIGN.md 2.9). The template and options are
those of :func:`extraction.get_task` (paper Table 3): ``"What label best describes this news
article?\\n {text} {answer}"`` with options World / Sports / Business / Science.
"""

from __future__ import annotations

__all__ = ["N_HELDOUT", "zoo_tasks", "option_tokens", "subset"]

N_HELDOUT = 2000  # rows 0..1999: the paper's first 2000 instances


def zoo_tasks(data_dir=None, *, n_heldout: int = N_HELDOUT):
    """``(train, heldout)`` tasks: rows ``n_heldout..`` and rows ``0..n_heldout-1`` of AG News.

    Parameters
    ----------
    data_dir : path, optional
        Folder laid out like ``../shared/data`` (default: the one next to the repository).
    n_heldout : int
        Number of leading rows held out (2000 as in the paper).

    Raises
    ------
    ValueError
        ``n_heldout`` not in ``[1, rows)``.
    FileNotFoundError
        No AG News csv.
    """
    from extraction import get_task

    full = get_task("ag_news", data_dir=data_dir, n=None)
    return _split(full, n_heldout)


def _split(full, n_heldout: int):
    if not 1 <= int(n_heldout) < len(full):
        raise ValueError(f"n_heldout must be in [1, {len(full)}), got {n_heldout}")
    k = int(n_heldout)
    held = subset(full, range(0, k), split=f"rows 0-{k - 1} (held out)")
    train = subset(full, range(k, len(full)), split=f"rows {k}-{len(full) - 1} (train)")
    return train, held


def subset(task, rows, *, split: str | None = None):
    """A task on ``rows`` of ``task`` (same template and options); ``meta["rows"]`` records
    the first and last row and the count."""
    from extraction import Task

    rows = [int(r) for r in rows]
    if not rows:
        raise ValueError("rows must select at least 1 example, got 0")
    meta = dict(task.meta, n=len(rows), rows=[rows[0], rows[-1], len(rows)])
    if split is not None:
        meta["zoo_split"] = split
    return Task(task.name, task.template, task.options, [task.records[r] for r in rows],
                task.labels[rows], meta, task.truncatable)


def option_tokens(tokenizer, task) -> dict:
    """The option tokens of ``tokenizer`` on ``task``: ``{option: (token id, token string)}``.

    Uses :func:`extraction.prompts.option_token_ids` (in-context tokenisation on the first
    prompts), which raises ValueError when an option does not start with one stable token or two
    options share it; here every option must also be exactly ONE token (the answer token the zoo
    trains on), else ValueError names the option and its tokens.
    """
    from extraction.prompts import option_token_ids

    ids = option_token_ids(tokenizer, task)
    prefix = task.answer_prefix()
    probe = task.prompt(0)
    base = tokenizer(probe, add_special_tokens=False)["input_ids"]
    out = {}
    for option, tid in zip(task.options, ids):
        full = tokenizer(probe + prefix + option, add_special_tokens=False)["input_ids"]
        extra = list(full[len(base):])
        if len(extra) != 1:
            raise ValueError(f"option {option!r} is {len(extra)} tokens "
                             f"{tokenizer.convert_ids_to_tokens(extra)} in context, not 1")
        out[option] = (int(tid), tokenizer.convert_ids_to_tokens(int(tid)))
    return out
