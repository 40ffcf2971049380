"""The ``Contributions`` hand-off format (DESIGN.md section 1).

This module is numpy-only on purpose: analyses load a run directory without importing torch.

A run directory holds
- ``arrays.npz``: ``u`` [N, M, C] float32, ``bias`` [C] or [N, C] float32, ``labels`` [N] int64
  (``-1`` for unlabelled examples: reading ``Contributions.labels`` then raises),
  ``logits`` [N, C] float32, ``scale`` [N, M] float32, ``option_ids`` [C] int64;
- ``meta.json``: ``members`` (list of member records), ``options`` (C strings), ``meta`` (model,
  task, template, dtype, device, versions, exactness error, seed, ...), the sha256 of
  ``arrays.npz`` and the sha256 of its own content (``doc_sha256``), so a corrupt, edited or
  half-written directory is detected on load;
- ``.infodiv-manifest.json`` (:data:`MANIFEST`): the writer (``infodiv extract``) and the
  sha256 of ``meta.json`` and ``arrays.npz``, kept outside the files it checks, so a
  ``meta.json`` edited and stripped of its own ``doc_sha256`` is still detected; a directory
  without a manifest (copied or committed before manifests) is read on its own checksums.
It is written to a temporary sibling directory and renamed into place, so a reader never sees a
half-written run; an existing folder is replaced only under the rules of
:mod:`extraction.outdir` (never a file or a folder holding anything else).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .outdir import MANIFEST

__all__ = ["Contributions", "Member", "FORMAT_VERSION", "doc_digest", "MANIFEST",
           "write_manifest"]

FORMAT_VERSION = 1
EXTRACT_WRITER = "infodiv extract"
MEMBER_KINDS = ("embed", "attn", "mlp")


@dataclass(frozen=True)
class Member:
    """One residual-stream write (or one head of an attention write).

    Attributes
    ----------
    name : str
        Human-readable id, e.g. ``"embed"``, ``"L3.attn#1"``, ``"L3.attn#0.h5"``,
        ``"L3.attn#0.bias"``.
    kind : {"embed", "attn", "mlp"}
        Module family; the bias-diversity group of Eq. 9-10.
    block : int
        Transformer block index (-1 for the embedding).
    execution : int
        Execution index of the block (0 unless the block is run more than once, as with
        MobileLLM layer sharing).
    head : int or None
        Head index for head granularity; None for a whole write or an output-projection bias.
    junction : bool
        True when the residual stream is complete after this member (a residual-write
        boundary): logit-lens readouts are defined only there.
    neuron : int or None
        MLP neuron index for neuron granularity (``"L3.mlp#0.n17"``); None otherwise.
    """

    name: str
    kind: str
    block: int = -1
    execution: int = 0
    head: int | None = None
    junction: bool = True
    neuron: int | None = None

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "block": self.block,
                "execution": self.execution, "head": self.head, "junction": self.junction,
                "neuron": self.neuron}


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def write_manifest(folder, writer: str, files: dict, by: dict | None = None) -> None:
    """Write ``folder``'s manifest atomically: ``{"writer", "files": {name: sha256}}`` (and
    ``"by": {name: writer}`` for files another writer added beside the owner's)."""
    folder = Path(folder)
    doc = {"writer": writer, "files": dict(sorted(files.items()))}
    if by:
        doc["by"] = dict(sorted(by.items()))
    tmp = folder / f".{MANIFEST}.{os.getpid()}"
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, folder / MANIFEST)


def _check_manifest(directory: Path) -> None:
    """ValueError when ``directory`` has a manifest that does not list ``meta.json`` and
    ``arrays.npz`` with their current sha256."""
    path = directory / MANIFEST
    if not path.exists():
        return
    try:
        files = json.loads(path.read_text())["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(f"{path} is unreadable, so the run cannot be checked against what "
                         "the toolkit wrote") from None
    for name in ("meta.json", "arrays.npz"):
        digest = sha256_file(directory / name)
        if not isinstance(files, dict) or files.get(name) != digest:
            raise ValueError(f"{directory / name} was edited or damaged after it was written "
                             f"(sha256 {digest[:12]}… is not the one in {MANIFEST})")


@dataclass
class Contributions:
    """Per-example, per-member logit contributions restricted to the C option tokens.

    ``logits ≈ u.sum(axis=1) + bias`` to rounding (DESIGN.md 2.1); ``scale[:, m]`` is the final-norm
    statistic (rms or std) of the residual after member ``m`` so a logit-lens readout of any
    junction is exact (DESIGN.md 2.4).
    """

    u: np.ndarray
    bias: np.ndarray
    labels: np.ndarray
    logits: np.ndarray
    scale: np.ndarray
    members: list[Member]
    options: list[str]
    option_ids: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.u = np.asarray(self.u, dtype=np.float32)
        if self.u.ndim != 3:
            raise ValueError(f"u must be [N, M, C], got shape {self.u.shape}")
        n, m, c = self.u.shape
        self.bias = np.asarray(self.bias, dtype=np.float32)
        if self.bias.shape not in ((c,), (n, c)):
            raise ValueError(f"bias must be [C]={c} or [N, C]=({n}, {c}), got {self.bias.shape}")
        labels = np.asarray(self._labels)
        if labels.shape != (n,) or not np.issubdtype(labels.dtype, np.integer):
            raise ValueError(f"labels must be {n} integers, got shape {labels.shape} "
                             f"dtype {labels.dtype}")
        labels = labels.astype(np.int64)
        if n and (labels.min() < -1 or labels.max() >= c):
            raise ValueError(f"labels must lie in [0, {c}) (or be -1: unlabelled), got range "
                             f"[{labels.min()}, {labels.max()}]")
        self._labels = labels
        self.logits = np.asarray(self.logits, dtype=np.float32)
        if self.logits.shape != (n, c):
            raise ValueError(f"logits must be [N, C]=({n}, {c}), got {self.logits.shape}")
        self.scale = np.asarray(self.scale, dtype=np.float32)
        if self.scale.shape != (n, m):
            raise ValueError(f"scale must be [N, M]=({n}, {m}), got {self.scale.shape}")
        self.members = [x if isinstance(x, Member) else Member(**x) for x in self.members]
        if len(self.members) != m:
            raise ValueError(f"members table has {len(self.members)} rows but u has M={m}")
        bad = [x.kind for x in self.members if x.kind not in MEMBER_KINDS]
        if bad:
            raise ValueError(f"member kinds must be in {MEMBER_KINDS}, got {sorted(set(bad))}")
        self.options = [str(o) for o in self.options]
        if len(self.options) != c:
            raise ValueError(f"{len(self.options)} options given but u has C={c}")
        if self.option_ids is not None:
            self.option_ids = np.asarray(self.option_ids, dtype=np.int64)

    # ------------------------------------------------------------------ shape and groups
    @property
    def n_examples(self) -> int:
        return self.u.shape[0]

    @property
    def n_members(self) -> int:
        return self.u.shape[1]

    @property
    def n_options(self) -> int:
        return self.u.shape[2]

    @property
    def names(self) -> list[str]:
        return [m.name for m in self.members]

    @property
    def kinds(self) -> np.ndarray:
        """Array of member kinds (``"embed"``/``"attn"``/``"mlp"``), usable as ``groups``."""
        return np.array([m.kind for m in self.members])

    @property
    def junctions(self) -> np.ndarray:
        """Indices of members after which the residual stream is complete."""
        return np.flatnonzero([m.junction for m in self.members])

    def bias_for_examples(self) -> np.ndarray:
        """The constant member broadcast to ``[N, C]`` (float64)."""
        return np.broadcast_to(self.bias.astype(np.float64), self.logits.shape)

    def readout(self, members=None) -> np.ndarray:
        """Fixed-scale readout ``Σ_{m∈S} u_m + bias`` as float64 ``[N, C]`` (DESIGN.md 2.4).

        ``members`` is an index array, boolean mask or None (all members); an empty
        selection gives the bias alone.
        """
        idx = slice(None) if members is None else np.asarray(members)
        if not isinstance(idx, slice) and idx.size == 0:
            idx = idx.astype(np.intp)   # np.asarray([]) is float: not a valid index
        return self.u[:, idx, :].astype(np.float64).sum(axis=1) + self.bias_for_examples()

    def exactness_error(self) -> np.ndarray:
        """Per-example max |Σ_m u_m + bias − logits| (recomputed from the stored arrays)."""
        return np.abs(self.readout() - self.logits.astype(np.float64)).max(axis=1)

    def accuracy(self) -> float:
        """Accuracy of the model's own option logits."""
        return float((self.logits.argmax(axis=1) == self.labels).mean())

    @property
    def n_unlabelled(self) -> int:
        """Examples extracted from unlabelled records (label ``-1``)."""
        return int((self._labels < 0).sum())

    @property
    def raw_labels(self) -> np.ndarray:
        """Labels with ``-1`` for unlabelled examples (never raises)."""
        return self._labels

    def take(self, examples) -> Contributions:
        """A new Contributions restricted to the given examples (index array or mask)."""
        idx = np.asarray(examples)
        bias = self.bias if self.bias.ndim == 1 else self.bias[idx]
        return Contributions(self.u[idx], bias, self._labels[idx], self.logits[idx],
                             self.scale[idx], list(self.members), list(self.options),
                             self.option_ids, dict(self.meta))

    # ------------------------------------------------------------------ persistence
    def save(self, directory, *, overwrite: bool = False) -> Path:
        """Write the run directory atomically (temp sibling + rename); return its path.

        ``directory`` may be absent, an empty folder, or a run directory of the same run
        (:func:`extraction.outdir.run_identity`); another run is replaced only with
        ``overwrite``, and a file or a folder holding anything else is never replaced
        (:class:`extraction.outdir.OutputRefused`). The writer holds
        :func:`extraction.outdir.output_lock`, so a second concurrent writer is refused.
        ``meta.json`` records the sha256 of ``arrays.npz`` and of its own content, and the
        manifest (:data:`MANIFEST`) the sha256 of both files.
        """
        from .outdir import check_target, output_lock, run_identity

        directory = Path(directory)
        with output_lock(directory):
            check_target(directory, run_identity(self.meta), overwrite)
            self._write(directory)
        return directory

    def _write(self, directory: Path) -> None:
        directory.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.tmp-", dir=directory.parent))
        try:
            arrays = {"u": self.u, "bias": self.bias, "labels": self._labels,
                      "logits": self.logits, "scale": self.scale}
            if self.option_ids is not None:
                arrays["option_ids"] = self.option_ids
            with open(tmp / "arrays.npz", "wb") as fh:
                np.savez(fh, **arrays)
                fh.flush()
                os.fsync(fh.fileno())
            doc = {
                "format_version": FORMAT_VERSION,
                "shape": {"N": self.n_examples, "M": self.n_members, "C": self.n_options},
                "arrays_sha256": sha256_file(tmp / "arrays.npz"),
                "options": self.options,
                "members": [m.to_dict() for m in self.members],
                "meta": self.meta,
            }
            doc = json.loads(json.dumps(doc, default=_json_default))
            doc["doc_sha256"] = doc_digest(doc)
            with open(tmp / "meta.json", "w") as fh:
                json.dump(doc, fh, indent=2)
                fh.flush()
                os.fsync(fh.fileno())
            write_manifest(tmp, EXTRACT_WRITER, {n: sha256_file(tmp / n)
                                                 for n in ("meta.json", "arrays.npz")})
            if directory.is_dir():
                old = directory.with_name(f".{directory.name}.old-{os.getpid()}")
                os.replace(directory, old)
                os.replace(tmp, directory)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, directory)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    @classmethod
    def load(cls, directory) -> Contributions:
        """Load a run directory written by :meth:`save`, verifying its checksums (its own and,
        where it has one, its manifest's); a study's run folder (one holding
        ``contributions/``, as ``infodiv run`` writes) is read from that subfolder."""
        directory = Path(directory)
        if not (directory / "meta.json").is_file() and \
                (directory / "contributions" / "meta.json").is_file():
            directory = directory / "contributions"
        meta_path, arr_path = directory / "meta.json", directory / "arrays.npz"
        if not meta_path.is_file() or not arr_path.is_file():
            raise FileNotFoundError(f"{directory} is not a Contributions run directory "
                                    "(needs meta.json and arrays.npz)")
        with open(meta_path, encoding="utf-8") as fh:
            doc = json.load(fh)
        if not isinstance(doc, dict):
            raise ValueError(f"{meta_path} is not a run description")
        if "doc_sha256" in doc and doc["doc_sha256"] != doc_digest(doc):
            raise ValueError(f"{meta_path} was edited or damaged after it was written (its "
                             f"content no longer matches its recorded sha256 "
                             f"{str(doc['doc_sha256'])[:12]}…)")
        digest = sha256_file(arr_path)
        if digest != doc.get("arrays_sha256"):
            raise ValueError(f"{arr_path} is corrupt: sha256 {digest[:12]}… does not match "
                             f"the recorded {str(doc.get('arrays_sha256'))[:12]}…")
        _check_manifest(directory)
        with np.load(arr_path) as z:
            arrays = {k: z[k] for k in z.files}
        return cls(arrays["u"], arrays["bias"], arrays["labels"], arrays["logits"],
                   arrays["scale"], [Member(**m) for m in doc["members"]], doc["options"],
                   arrays.get("option_ids"), doc.get("meta", {}))


def doc_digest(doc: dict) -> str:
    """sha256 of a ``meta.json`` document without its own ``doc_sha256`` entry (canonical JSON:
    sorted keys, no whitespace), so any edit of the options, members or meta is detected."""
    body = {k: v for k, v in doc.items() if k != "doc_sha256"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _get_labels(self) -> np.ndarray:
    if (self._labels < 0).any():
        raise ValueError(f"this run has {self.n_unlabelled} of {len(self._labels)} examples "
                         "without a label (extracted from unlabelled records); analyses that "
                         "need labels cannot use it (raw_labels gives -1 for them)")
    return self._labels


def _set_labels(self, value) -> None:
    self._labels = value


# ``labels`` is a dataclass field whose reads are checked: an analysis that needs labels gets a
# clear error on a run extracted from unlabelled records instead of silently using -1.
Contributions.labels = property(_get_labels, _set_labels, doc="Gold column index [N] (int64).")


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
