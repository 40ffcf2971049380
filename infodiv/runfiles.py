"""Run folders on disk: their names, the errors a user's input can raise, and reading one.

- :func:`model_slug` / :func:`run_name`: the folder name ``<model>-<task>-n<N>-<shots>shot-
  <granularity>`` of a run;
- :func:`display_path`: a path as a report shows it (relative to the working directory);
- :func:`read_json`: a stage's JSON document, or None when it is missing or unreadable;
- :func:`find_run` / :func:`load_run`: a run folder made by ``infodiv run`` or a Contributions
  directory made by ``infodiv extract``; a ``run.json`` that holds no JSON object
  (:func:`check_run_file`), a truncated ``meta.json``, a checksum mismatch or
  another format version says how to re-extract (:func:`reextract`);
- :class:`UserError` (one line, exit 2) and :class:`StageFailed` (one line, exit 1), raised
  here and by every layer above and printed by :func:`infodiv.cli.main`.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shlex
import zipfile
from pathlib import Path

__all__ = ["RUN_FILE", "UserError", "StageFailed", "model_slug", "run_name", "display_path",
           "find_run", "load_run", "reextract", "nearest_hint", "read_json", "check_run_file"]


RUN_FILE = "run.json"   # written by `infodiv run` in its run folder


class UserError(Exception):
    """A mistake in the user's input; the CLI prints the message on one line and exits 2."""


class StageFailed(Exception):
    """A stage (extract, decompose, curves, report) could not finish; the CLI prints the message
    on one line and exits 1. ``infodiv run`` records nothing for it, so the next run redoes it."""


def nearest_hint(path: Path) -> str:
    """' (did you mean X?)' from the siblings of the deepest existing ancestor."""
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir() or path == parent:
        return ""
    try:
        names = [p.name for p in parent.iterdir()]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.relative_to(parent).parts[0], names, n=1, cutoff=0.6)
    return f" (did you mean {parent / close[0]}?)" if close else ""


def find_run(path) -> tuple[Path, Path]:
    """``(contributions_dir, run_root)`` for a run folder or a Contributions directory.

    A folder made by ``infodiv run`` holds ``contributions/``; its root is the folder itself.
    A Contributions directory (``meta.json`` + ``arrays.npz``) is its own root unless its parent
    is a run folder.
    """
    path = Path(path)
    if (path / "contributions" / "meta.json").is_file() or (path / RUN_FILE).is_file():
        check_run_file(path)
        return path / "contributions", path
    if (path / "meta.json").is_file():
        root = path.parent if (path.parent / RUN_FILE).is_file() else path
        if root != path:
            check_run_file(root)
        return path, root
    if not path.exists():
        raise UserError(f"run folder {path} does not exist{nearest_hint(path)}")
    raise UserError(f"{path} is not a run folder (no meta.json or contributions/meta.json); "
                    "make one with `infodiv run` or `infodiv extract`")


def check_run_file(root: Path) -> None:
    """Refuse (one line) a run folder whose ``run.json`` is there but holds no JSON object
    (truncated, not JSON, or e.g. a list), before anything reads it."""
    from extraction.jsonfile import NotAJSONObject, read_json_object

    file = Path(root) / RUN_FILE
    if not file.exists():
        return
    try:
        read_json_object(file)
    except NotAJSONObject as exc:
        raise UserError(f"{file} is corrupt (it {exc}); rerun the `infodiv run` command that "
                        f"made {display_path(root)} with --overwrite, or restore the file"
                        ) from None


def _moved_command(command: str, root: Path) -> str:
    """``command`` (from run.json) with its ``--out`` naming the folder that now holds ``root``
    (the run may have been moved since), every word quoted."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    parent = os.path.abspath(Path(root).parent)
    if "--out" in words and words.index("--out") + 1 < len(words):
        words[words.index("--out") + 1] = parent
    else:
        words += ["--out", parent]
    return shlex.join(words)


def reextract(contrib_dir: Path, root: Path, meta: dict | None) -> str:
    run_doc = {}
    try:
        run_doc = json.loads((root / RUN_FILE).read_text())
    except (OSError, ValueError):
        pass
    if isinstance(run_doc, dict) and isinstance(run_doc.get("command"), str) \
            and run_doc["command"]:
        return f"re-extract with `{_moved_command(run_doc['command'], root)} --overwrite`"
    m = meta or {}
    model = (m.get("model") or {}).get("model_id") if isinstance(m.get("model"), dict) else None
    if model and m.get("task"):
        return "re-extract with `" + shlex.join(
            ["infodiv", "extract", "--model", str(model), "--task", str(m["task"]), "--n",
             str(m.get("n_examples", "<N>")), "--out", os.path.abspath(contrib_dir),
             "--overwrite"]) + "`"
    return ("re-extract with `infodiv extract --model <model> --task <task> --out "
            f"{shlex.quote(os.path.abspath(contrib_dir))} --overwrite`")


def load_run(path):
    """Load the Contributions of a run folder; return ``(contrib, contributions_dir, root)``.

    Raises
    ------
    UserError
        Not a run folder, a meta.json that is not valid JSON (e.g. truncated), a run-directory
        format version other than this one, files that fail their checksums (the folder's
        manifest, meta.json's own), or a meta.json with no checksum at all (no manifest, no
        ``doc_sha256``); each message ends with the command that re-extracts the run.
    """
    from extraction.contributions import FORMAT_VERSION, Contributions
    from extraction.jsonfile import NotAJSONObject, read_json_object
    from extraction.outdir import MANIFEST

    contrib_dir, root = find_run(path)
    meta_path = contrib_dir / "meta.json"
    try:
        doc = read_json_object(meta_path)
    except FileNotFoundError:
        raise UserError(f"{contrib_dir} has no meta.json (the extraction did not finish); "
                        f"{reextract(contrib_dir, root, None)}") from None
    except NotAJSONObject as exc:
        raise UserError(f"{meta_path} is corrupt (it {exc}); "
                        f"{reextract(contrib_dir, root, None)}") from None
    version = doc.get("format_version")
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else None
    if version != FORMAT_VERSION:
        raise UserError(f"{contrib_dir} has run-directory format version {version}, this "
                        f"infodiv reads version {FORMAT_VERSION}; "
                        f"{reextract(contrib_dir, root, meta)}")
    try:
        contrib = Contributions.load(contrib_dir)
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise UserError(f"{contrib_dir} is corrupt ({' '.join(str(exc).split())}); "
                        f"{reextract(contrib_dir, root, meta)}") from None
    if not (contrib_dir / MANIFEST).is_file() and "doc_sha256" not in doc:
        raise UserError(f"{meta_path} carries no checksum (no {MANIFEST} beside it and no "
                        f"doc_sha256), so it cannot be checked against what the toolkit wrote; "
                        f"{reextract(contrib_dir, root, meta)}")
    return contrib, contrib_dir, root


_GENERIC = {"hf", "model", "models", "weights", "checkpoint", "final", "snapshot", "main"}


def model_slug(model: str) -> str:
    """A short file-name-safe label for a model id, folder or GGUF path.

    ``HuggingFaceTB/SmolLM2-135M-Instruct`` -> ``SmolLM2-135M-Instruct``;
    ``../shared/models/stories260K/hf`` -> ``stories260K``; ``smollm2-135m`` stays.
    """
    text = str(model).rstrip("/\\")
    parts = [p for p in re.split(r"[/\\]", text) if p not in ("", ".", "..")]
    if not parts:
        return "model"
    name = Path(parts[-1]).stem if parts[-1].endswith(".gguf") else parts[-1]
    if len(parts) > 1 and (name.lower() in _GENERIC or re.fullmatch(r"[0-9a-f]{40}", name)):
        name = parts[-2]
        if name == "snapshots" and len(parts) > 2:        # HF cache: models--org--name/...
            name = parts[-3].split("--")[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "model"


def run_name(model: str, task: str, n: int, shots: int, granularity: str,
             stratify: bool = False) -> str:
    """``<model>-<task>-n<N>-<shots>shot-<granularity>`` (+ ``-strat`` when stratified)."""
    return (f"{model_slug(model)}-{task}-n{n}-{shots}shot-{granularity}"
            + ("-strat" if stratify else ""))


def display_path(path) -> str:
    """``path`` relative to the working directory, or its last two parts when that is far."""
    path = Path(path)
    try:
        rel = os.path.relpath(path)
    except ValueError:   # another drive (Windows)
        rel = str(path)
    if not rel.startswith(os.pardir + os.sep + os.pardir) and not os.path.isabs(rel):
        return rel
    return str(Path(*path.parts[-2:])) if len(path.parts) >= 2 else path.name


def read_json(path):
    """The JSON document at ``path``, or None when it is missing or not valid JSON (a stage
    that was not run, or left a partial file)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
