"""Where ``infodiv zoo report`` finds its models (:class:`ModelSource`).

- :func:`from_checkpoints`: every finished checkpoint under ``root`` (``models/*/model`` and
  ``finetune/*/model``, each with its ``zoo.json`` training record), extracted on the held-out
  rows into ``<out>/contributions/<model>`` (resumable,
  :func:`extract_heldout`).
- :func:`from_contributions`: the committed results alone, without the checkpoints: the model
  records of ``<out>/summary.json`` (their training fields, :data:`TRAINING_FIELDS`) and each
  model's extracted contributions ``<out>/contributions/<model>`` (``arrays.npz`` +
  ``meta.json``). Everything is validated before any analysis starts (a missing or malformed
  summary, a duplicate model, a model without its contributions folder, a member or example
  count that disagrees with its record): ``ValueError`` / ``FileNotFoundError`` naming the model,
  the file and the numbers, which the CLI prints as one line with exit 2. Every contributions
  folder is first checked against its output manifest (:func:`infodiv.outputs.verify_folder`):
  a file missing, edited or truncated since the extraction wrote it is refused
  (:class:`~infodiv.runfiles.UserError`, one line, with the command that re-extracts it); a
  folder extracted before manifests is read only with ``adopt``, which lists its files as the
  extraction's when git holds them unchanged (:func:`infodiv.experiments.owned.adopt_files`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from infodiv.runfiles import UserError

__all__ = ["TRAINING_FIELDS", "ModelSource", "checkpoints", "extract_heldout",
           "training_fields", "from_checkpoints", "from_contributions"]

#: the fields of a summary row that describe the model and its training (not measured here)
TRAINING_FIELDS = ("model", "depth", "repeats", "shared", "seed", "width", "params",
                   "executions", "n_members", "wall_time_s", "s_per_step", "train_top",
                   "trainable_params", "prefix_cache", "steps", "train_accuracy_check")
#: the files of an extracted Contributions folder
_RUN_FILES = ("arrays.npz", "meta.json")


@dataclass(frozen=True)
class ModelSource:
    """One model of the report: its ``name``, its training ``fields`` (:data:`TRAINING_FIELDS`)
    and ``load()``, which returns its held-out :class:`extraction.Contributions`."""

    name: str
    fields: dict
    load: Callable


def training_fields(record: dict) -> dict:
    """:data:`TRAINING_FIELDS` of a checkpoint's ``zoo.json`` record (``step`` and
    ``heldout.accuracy`` renamed ``steps`` and ``train_accuracy_check``) or of a summary row
    (taken as they are)."""
    row = {k: record.get(k) for k in TRAINING_FIELDS}
    if "step" in record:
        row["steps"] = record.get("step")
    if "heldout" in record:
        row["train_accuracy_check"] = (record.get("heldout") or {}).get("accuracy")
    return row


def checkpoints(root) -> list[Path]:
    """Finished model folders under ``root`` (zoo models, then fine-tuned models)."""
    root = Path(root)
    found = sorted(root.glob("models/*/model/zoo.json")) + sorted(
        root.glob("finetune/*/model/zoo.json"))
    return [p.parent for p in found]


def extract_heldout(folder, heldout_task, run_dir, *, progress: bool = True):
    """Contributions of the checkpoint ``folder`` on ``heldout_task`` (resumes / reuses
    ``run_dir``), prompts truncated to the length the model was trained with."""
    from extraction import extract, load_model

    from .train import torch_threads

    rec = json.loads((Path(folder) / "zoo.json").read_text())
    with torch_threads(int(rec.get("torch_threads", 1))):
        model, tok = load_model(folder, device="cpu", dtype="float32")
        return extract(model, tok, heldout_task, out=run_dir, progress=progress,
                       max_length=int(rec["max_len"]))


def from_checkpoints(root, out, heldout, *, progress: bool = True) -> list[ModelSource]:
    """The finished checkpoints of ``root`` (zoo models, then fine-tuned models), each
    extracted on ``heldout`` into ``<out>/contributions/<model>`` when loaded."""
    folders = checkpoints(root)
    if not folders:
        raise FileNotFoundError(f"no finished checkpoint under {root} (models/*/model/zoo.json)")
    sources = []
    for folder in folders:
        rec = json.loads((folder / "zoo.json").read_text())
        run_dir = Path(out) / "contributions" / rec["model"]
        sources.append(ModelSource(rec["model"], training_fields(rec), (
            lambda f=folder, d=run_dir: extract_heldout(f, heldout, d, progress=progress))))
    return sources


def _summary_rows(path: Path) -> list[dict]:
    if not path.is_file():
        raise FileNotFoundError(f"--from-contributions: no model records: {path} does not exist "
                                "(written by an earlier 'infodiv zoo report')")
    try:
        rows = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"--from-contributions: {path} is not JSON ({exc})") from None
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"--from-contributions: {path} must hold a non-empty list of model "
                         f"records, got {type(rows).__name__} of length "
                         f"{len(rows) if hasattr(rows, '__len__') else 0}")
    return rows


def _check_row(i: int, row, path: Path, seen: set) -> str:
    if not isinstance(row, dict) or not isinstance(row.get("model"), str) or not row["model"]:
        raise ValueError(f"--from-contributions: record {i} of {path} has no model name")
    name = row["model"]
    if name in seen:
        raise ValueError(f"--from-contributions: model {name} appears twice in {path}")
    seen.add(name)
    for key in ("n_members", "depth", "seed"):
        if key == "n_members" or row.get("width") is not None:   # fine-tuned: no depth grid
            if not isinstance(row.get(key), int) or isinstance(row.get(key), bool):
                raise ValueError(f"--from-contributions: {name} in {path}: {key} must be an "
                                 f"integer, got {row.get(key)!r}")
    return name


def _check_run(name: str, row: dict, run_dir: Path) -> None:
    try:
        shape = json.loads((run_dir / "meta.json").read_text())["shape"]
        m, n = int(shape["M"]), int(shape["N"])
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"--from-contributions: {name}: {run_dir / 'meta.json'} has no "
                         f"shape N, M ({type(exc).__name__}: {exc})") from None
    if m != row["n_members"]:
        raise ValueError(f"--from-contributions: {name}: the contributions hold M = {m} "
                         f"members, the record says n_members = {row['n_members']}")
    if row.get("n_examples") is not None and n != row["n_examples"]:
        raise ValueError(f"--from-contributions: {name}: the contributions hold N = {n} "
                         f"examples, the record says n_examples = {row['n_examples']}")


def _verify_runs(runs: dict, root, out: Path, adopt: bool, log) -> None:
    """Check every contributions folder of ``runs`` (model name -> folder) against its
    manifest before any is read (module docstring); ``adopt``: folders without one are first
    adopted, and only after every folder with one has passed."""
    import shlex

    from extraction.contributions import EXTRACT_WRITER
    from infodiv.outputs import MANIFEST, verify_folder

    from .owned import adopt_files

    def redo(name, run_dir):
        return ("re-extract it from its checkpoint with `" + shlex.join(
            ["infodiv", "zoo", "report", "--root", str(root), "--out", str(out), "--only",
             name]) + f"`, or restore the committed folder (git checkout -- {run_dir})")

    bare = [n for n, d in runs.items() if not (d / MANIFEST).is_file()]
    if bare and not adopt:
        run_dir = runs[bare[0]]
        raise UserError(f"--from-contributions: {len(bare)} contributions folder(s) have no "
                        f"{MANIFEST} (e.g. {run_dir}), so they cannot be checked against what "
                        f"the extraction wrote; add --adopt where git holds them unchanged, or "
                        f"{redo(bare[0], run_dir)}")
    for name, run_dir in runs.items():
        if name not in bare:
            verify_folder(run_dir, redo(name, run_dir))
    for name in bare:
        adopt_files(runs[name], _RUN_FILES, EXTRACT_WRITER, log=log)
        verify_folder(runs[name], redo(name, runs[name]))


def from_contributions(out, *, root="runs/zoo", adopt: bool = False,
                       log=print) -> list[ModelSource]:
    """The models of ``<out>/summary.json`` in its order, each loading its committed
    contributions ``<out>/contributions/<model>`` (module docstring: validated first, every
    folder checked against its manifest; ``root``: the zoo the command that re-extracts one
    names; ``adopt``: folders extracted before manifests are adopted)."""
    from extraction import Contributions

    out = Path(out)
    path = out / "summary.json"
    rows, seen, runs = _summary_rows(path), set(), {}
    for i, row in enumerate(rows):
        name = _check_row(i, row, path, seen)
        runs[name] = out / "contributions" / name
        missing = [f for f in _RUN_FILES if not (runs[name] / f).is_file()]
        if missing:
            raise FileNotFoundError(f"--from-contributions: {name}: no contributions: "
                                    f"{runs[name]} lacks {', '.join(missing)}")
    _verify_runs(runs, root, out, adopt, log)
    sources = []
    for row in rows:
        run_dir = runs[row["model"]]
        _check_run(row["model"], row, run_dir)
        sources.append(ModelSource(row["model"], training_fields(row),
                                   lambda d=run_dir: Contributions.load(d)))
    return sources
