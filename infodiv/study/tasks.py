"""The tasks a study extracts, from its :class:`~infodiv.study.settings.ExtractionSettings`:
named tasks (first N rows or stratified) or one task file."""

from __future__ import annotations

__all__ = ["study_tasks", "task_from_file"]


def task_from_file(s, n: int):
    """The ``s.task_file`` task (``s``: an :class:`ExtractionSettings` or anything with its
    task-file fields): ``template`` and ``options`` required, ``label_field`` required unless
    ``unlabelled``."""
    from extraction.taskfiles import load_task_file, parse_options

    if not s.template or not s.options:
        raise ValueError("--task-file needs --template and --options")
    if s.label_field is None and not s.unlabelled:
        raise ValueError(f"--task-file {s.task_file} needs --label-field COLUMN (the gold "
                         "option of every record), or --unlabelled to extract without labels")
    return load_task_file(s.task_file, template=s.template, options=parse_options(s.options),
                          label_field=s.label_field,
                          truncatable=[f for f in s.truncatable.split(",") if f], n=n,
                          allow_unlabelled=s.unlabelled)


def study_tasks(s, seed: int) -> list:
    """The tasks of a study: the named ones or the one task file (``seed`` draws the
    demonstrations)."""
    from pathlib import Path

    from .data import load_task

    if s.task_file is None:
        stray = [f for f in ("template", "options", "label_field") if getattr(s, f)]
        if stray:
            raise ValueError(f"--{stray[0].replace('_', '-')} needs --task-file (the named "
                             "tasks have their own template and options)")
        return [load_task(t, data_dir=s.data_dir, n=s.n, shots=s.shots, seed=seed,
                          stratify=s.stratify) for t in dict.fromkeys(s.tasks)]
    if s.stratify:
        raise ValueError("--stratify needs --task (a task file is read in file order)")
    task = task_from_file(s, s.n)
    task.meta.update(data_source=task.meta.get("sha256"),
                     source_files=[Path(s.task_file).name])
    if s.shots:
        if task.n_unlabelled:
            raise ValueError(f"--shots needs labelled demonstrations; {task.n_unlabelled} of "
                             f"{len(task)} records in {s.task_file} have no label")
        task = task.with_demonstrations(s.shots, seed=seed)
    return [task]
