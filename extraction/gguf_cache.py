"""A converted copy of a GGUF model, so that it is dequantised once per machine.

transformers' GGUF loader parses the file and dequantises every tensor, and builds the
tokenizer from the GGUF vocabulary, on every load (about 25 s for SmolLM2-135M on one CPU
core). The first load of a GGUF file writes what it produced — the float model as safetensors,
its config without the quantisation entry, the tokenizer — to
``$INFODIV_CACHE/gguf/<sha256 of the file>-<transformers version>/`` (default
``~/.cache/infodiv``); later loads read that folder (about 2 s). The key holds the file's
content hash and the converter's version, so another file or another transformers gets its
own copy; the folder is written to a temporary sibling and renamed when complete, so a
half-written copy is never read. The run still records the GGUF file and its hash as the
weights' identity (:func:`extraction.models.load_model`). ``INFODIV_CACHE=off`` disables it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

__all__ = ["cache_root", "cached_copy", "write_copy"]


def cache_root() -> Path | None:
    """The cache folder, or None when ``INFODIV_CACHE`` is ``off``."""
    value = os.environ.get("INFODIV_CACHE", "")
    if value.lower() == "off":
        return None
    return Path(value).expanduser() if value else Path.home() / ".cache" / "infodiv"


def _folder(sha256: str) -> Path | None:
    import transformers

    root = cache_root()
    return None if root is None else root / "gguf" / f"{sha256}-{transformers.__version__}"


def cached_copy(sha256: str | None) -> Path | None:
    """The complete converted copy of the GGUF file with content hash ``sha256``, if any."""
    folder = _folder(sha256) if sha256 else None
    if folder is None or not (folder / "complete.json").is_file():
        return None
    try:
        done = json.loads((folder / "complete.json").read_text())
    except (OSError, ValueError):
        return None
    return folder if done.get("gguf_sha256") == sha256 else None


def write_copy(model, tokenizer, sha256: str | None, gguf_file: str) -> Path | None:
    """Write the converted copy (best effort: an unwritable cache is skipped); its folder."""
    from safetensors.torch import save_model

    folder = _folder(sha256) if sha256 else None
    if folder is None:
        return None
    tmp = folder.with_name(f".{folder.name}.tmp-{os.getpid()}")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        (tmp / "config.json").write_text(json.dumps(config, indent=1))
        save_model(model, str(tmp / "model.safetensors"))
        tokenizer.save_pretrained(tmp)
        (tmp / "complete.json").write_text(json.dumps({"gguf_sha256": sha256,
                                                       "gguf_file": gguf_file}))
        if folder.exists():          # another process finished first: keep its copy
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            os.replace(tmp, folder)
        return folder
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        return None
