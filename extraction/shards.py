"""Checksummed, atomically written shards of a running extraction (resume support).

Shards live in a hidden sibling of the output directory, ``.<name>.partial/``, so the output
path itself only ever holds a complete :class:`~extraction.contributions.Contributions` run
(written by ``Contributions.save``). Each shard ``shard-00003.npz`` has a sidecar
``shard-00003.json`` holding its sha256; both are written to a temporary file and renamed. A
``manifest.json`` records a fingerprint of everything that determines the results (weights,
inputs, option ids, granularity, dtype, device type) and the batch plan of the first attempt:
shards from a different configuration are never reused, and a resumed run uses the stored plan
(the same batches, hence bit-identical results, even when ``batch_size="auto"`` would now choose
differently). A missing, truncated or corrupt shard is reported as absent and recomputed. The
shards of an interrupted extraction of *another* configuration are never deleted by this one
unless it was told to replace (``discard``, ``--overwrite``): it refuses in one line instead
(another configuration: the manifest's ``run`` key — model, inputs, options, granularity —
differs; shards of the same run under another fingerprint, e.g. other weights at the same
path or another torch, are discarded with a warning).
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from pathlib import Path

import numpy as np

from .contributions import sha256_file

__all__ = ["ShardStore", "partial_dir"]


def partial_dir(out) -> Path:
    out = Path(out)
    return out.parent / f".{out.name}.partial"


def _atomic_write(path: Path, write) -> None:
    """Call ``write(fh)`` on a temporary sibling, fsync it and rename it to ``path``."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        write(fh)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _atomic_write_json(path: Path, doc) -> None:
    _atomic_write(path, lambda fh: fh.write(json.dumps(doc).encode()))


class ShardStore:
    """Shard directory for one extraction identified by ``fingerprint``.

    Parameters
    ----------
    out : path
        Final output directory; shards go to :func:`partial_dir` ``(out)``.
    fingerprint : str
        Hash of the configuration. An existing partial directory with another fingerprint is
        discarded with a warning, unless it holds shards of another extraction (its ``run``
        differs from ``run``): that is refused (:class:`extraction.outdir.OutputRefused`)
        unless ``discard``. One with this fingerprint is reused, or discarded when ``resume``
        is False.
    run : str, optional
        Key of the extraction itself (model, inputs, options, granularity), stored beside the
        fingerprint.
    plan : JSON-serialisable, optional
        The shard/batch plan; :attr:`plan` is the stored one when resuming.
    """

    def __init__(self, out, fingerprint: str, *, resume: bool = True, plan=None,
                 discard: bool = False, run: str | None = None):
        self.dir = partial_dir(out)
        self.fingerprint = fingerprint
        self.plan = plan
        manifest = self.dir / "manifest.json"
        if self.dir.exists():
            old = {}
            try:
                old = json.loads(manifest.read_text())
            except (OSError, ValueError):
                pass
            same = old.get("fingerprint") == fingerprint
            if resume and same:
                self.plan = old.get("plan", plan)
            else:
                other = run is not None and old.get("run") not in (None, run)
                if other and not discard and any(self.dir.glob("shard-*.npz")):
                    from .outdir import OutputRefused

                    raise OutputRefused(
                        f"{self.dir} holds the resume shards of an interrupted extraction with "
                        "a different model, task or settings; rerun that extraction to finish "
                        "it, or pass --overwrite to discard them (nothing was deleted)")
                if not same:
                    warnings.warn(f"discarding shards in {self.dir}: they were made with a "
                                  "different model, task or settings", stacklevel=3)
                shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        if not manifest.is_file():
            _atomic_write_json(manifest, {"fingerprint": fingerprint, "run": run,
                                          "plan": self.plan})

    def _paths(self, i: int) -> tuple[Path, Path]:
        return self.dir / f"shard-{i:05d}.npz", self.dir / f"shard-{i:05d}.json"

    def has(self, i: int) -> bool:
        """Whether shard ``i`` and its checksum are on disk (not verified: see :meth:`load`)."""
        return all(p.is_file() for p in self._paths(i))

    def load(self, i: int) -> dict[str, np.ndarray] | None:
        """Arrays of shard ``i``, or None when it is absent, truncated or corrupt."""
        npz, side = self._paths(i)
        if not npz.is_file() or not side.is_file():
            return None
        try:
            recorded = json.loads(side.read_text())
            if recorded.get("sha256") != sha256_file(npz):
                raise ValueError("checksum mismatch")
            with np.load(npz) as z:
                return {k: z[k] for k in z.files}
        except (OSError, ValueError, KeyError, EOFError) as exc:
            warnings.warn(f"shard {npz.name} is corrupt ({exc}); recomputing it", stacklevel=2)
            npz.unlink(missing_ok=True)
            side.unlink(missing_ok=True)
            return None

    def save(self, i: int, arrays: dict[str, np.ndarray]) -> None:
        """Write shard ``i`` atomically: npz first, then its checksum sidecar."""
        npz, side = self._paths(i)
        _atomic_write(npz, lambda fh: np.savez(fh, **arrays))
        _atomic_write_json(side, {"sha256": sha256_file(npz)})

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
