"""The tasks a study extracts, from its :class:`~infodiv.study.settings.ExtractionSettings`:
named tasks (N rows from a start row, or stratified) or one task file, with the prompt
setting's demonstrations."""

from __future__ import annotations

__all__ = ["study_tasks", "task_from_file", "file_demo_pool"]


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


def file_demo_pool(full, first: int, shots: int, name: str = "the task file"):
    """The labelled records of ``full`` (a whole task file) from record ``first`` on: where
    fixed demonstrations are drawn, so that no example (the records before ``first``) sees
    its own answer."""
    from extraction.tasks import Task

    keep = [i for i in range(int(first), len(full)) if full.labels[i] >= 0]
    if len(keep) < shots:
        raise ValueError(f"--fixed-demos --shots {shots} needs {shots} labelled records from "
                         f"record {first} of {name} on; it has {len(keep)}")
    return Task(full.name, full.template, full.options, [full.records[i] for i in keep],
                full.labels[keep], dict(full.meta), full.truncatable)


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
                          stratify=s.stratify, start=s.start, fixed_demos=s.fixed_demos,
                          demo_start=s.demo_start) for t in dict.fromkeys(s.tasks)]
    if s.stratify:
        raise ValueError("--stratify needs --task (a task file is read in file order)")
    if s.start:
        raise ValueError(f"--start {s.start} needs --task (a task file's rows are chosen in "
                         "the file)")
    task = task_from_file(s, s.n)
    task.meta.update(data_source=task.meta.get("sha256"),
                     source_files=[Path(s.task_file).name])
    if s.shots:
        if task.n_unlabelled and not s.fixed_demos:
            raise ValueError(f"--shots needs labelled demonstrations; {task.n_unlabelled} of "
                             f"{len(task)} records in {s.task_file} have no label")
        pool = None
        if s.fixed_demos:   # records after the examples (or from demo_start): no example
            first = len(task) if s.demo_start is None else s.demo_start
            if first < len(task):
                raise ValueError(f"--demo-start {first} is below the end of the examples "
                                 f"(records 0..{len(task) - 1}): demonstrations would be "
                                 "examples")
            pool = file_demo_pool(task_from_file(s, None), first, s.shots, str(s.task_file))
        task = task.with_demonstrations(s.shots, seed=seed, pool=pool, fixed=s.fixed_demos)
    return [task]
