"""Output folders of an extraction: what may be replaced, and one writer at a time.

- :func:`check_target`: an output path may be written when it does not exist, is an empty
  folder, or holds a Contributions run (``meta.json`` + ``arrays.npz``, with or without its
  manifest, and nothing else) of the
  same run (:func:`run_identity`); a Contributions run of another run only with ``overwrite``.
  A file, or a folder holding anything else (notes, a finished ``infodiv run`` folder), is
  always refused: nothing the user made is ever removed.
- :func:`output_lock`: an exclusive ``flock`` on ``.<name>.lock`` beside the output, holding the
  writer's pid; a second writer (another process) is refused at once with the holder's pid. The
  kernel drops the lock when its process dies, so a killed writer leaves no stale lock; a lock
  file left behind is taken over (its inode is checked after locking, so two writers never both
  hold one). Re-entrant within a process.

Numpy-free and torch-free; :class:`OutputRefused` is a ``ValueError`` so the command line prints
it on one line and exits 2.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

__all__ = ["OutputRefused", "OutputLocked", "check_target", "run_identity", "output_lock",
           "CONTRIBUTION_FILES", "MANIFEST"]

#: the manifest of an output folder: its writer and the sha256 of every file it wrote there
#: (the one format of :mod:`infodiv.outputs`; defined here so extraction needs no infodiv)
MANIFEST = ".infodiv-manifest.json"
CONTRIBUTION_FILES = frozenset({"meta.json", "arrays.npz"})
# what ``infodiv decompose|curves|report`` write beside an extraction made by ``infodiv extract``
DERIVED = frozenset({"decompositions", "curves", "report.html", "report.json", "report.csv"})
# the settings that make two extractions different runs (dtype and device only change rounding;
# max_length is recorded resolved, so a changed limit is told apart by the fingerprint)
IDENTITY = ("model", "task", "n_examples", "granularity", "shots", "seed", "template", "options",
            "position", "vocab", "chat_template", "neuron_top_k")


class OutputRefused(ValueError):
    """Writing the output would lose or silently replace something."""


class OutputLocked(OutputRefused):
    """Another process is writing the same output."""


def _model_id(model) -> str | None:
    if isinstance(model, dict):
        model = model.get("model_id")
    if model is None:
        return None
    path = Path(str(model)).expanduser()
    return os.path.realpath(path) if path.exists() else str(model)


def run_identity(meta: dict) -> dict:
    """The settings of :data:`IDENTITY` from a Contributions ``meta`` (None when absent)."""
    meta = meta if isinstance(meta, dict) else {}
    task_meta = meta.get("task_meta") if isinstance(meta.get("task_meta"), dict) else {}
    top_k = meta.get("neuron_top_k")
    ident = {k: meta.get(k) for k in IDENTITY}
    ident.update(model=_model_id(meta.get("model")),
                 shots=meta.get("shots", task_meta.get("shots")),
                 neuron_top_k=top_k.get("k") if isinstance(top_k, dict) else top_k)
    if isinstance(ident["options"], tuple):
        ident["options"] = list(ident["options"])
    return ident


def _listing(entries: list[str]) -> str:
    shown = ", ".join(sorted(entries)[:3])
    return shown + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")


def check_target(directory, identity: dict | None, overwrite: bool = False,
                 flag: str = "--out", *, analyses: bool = False) -> str:
    """May ``directory`` receive the run described by ``identity``?

    Returns ``"new"`` (absent or an empty folder), ``"same"`` (a Contributions run of the same
    run) or ``"replace"`` (another run, and ``overwrite``); raises :class:`OutputRefused` with
    one sentence saying what is there otherwise. With ``analyses`` an extraction that also
    holds its own analyses (:data:`DERIVED`) passes (a finished run can then be reused; writing
    over it is still refused by ``Contributions.save``). Reads only; writes nothing.
    """
    path = Path(directory)
    if path.is_file() or (path.exists() and not path.is_dir()):
        raise OutputRefused(f"{flag} {path} is a file, not a run folder; choose another {flag} "
                            "(nothing was written)")
    if not path.exists():
        return "new"
    entries = [p.name for p in path.iterdir()]
    if not entries:
        return "new"
    if "run.json" in entries:
        raise OutputRefused(f"{flag} {path} holds an infodiv run folder ({_listing(entries)}); "
                            f"choose another {flag} (it is never replaced by an extraction)")
    foreign = [e for e in entries if e not in CONTRIBUTION_FILES and e != MANIFEST]
    if not CONTRIBUTION_FILES <= set(entries) or (foreign and not (analyses and
                                                                   set(foreign) <= DERIVED)):
        raise OutputRefused(f"{flag} {path} is a folder holding {_listing(entries)}, not an "
                            f"extraction alone; choose another {flag} (nothing was written)")
    try:
        old = json.loads((path / "meta.json").read_text(encoding="utf-8"))
        old_meta = old.get("meta", {}) if isinstance(old, dict) else {}
    except (OSError, ValueError):
        old_meta = None
    if old_meta is None:
        if overwrite:
            return "replace"
        raise OutputRefused(f"{flag} {path} holds an extraction whose meta.json cannot be read; "
                            "pass --overwrite to replace it or choose another " + flag)
    have, want = run_identity(old_meta), dict(identity or {})
    diffs = [f"{k} {have.get(k)!r} -> {want.get(k)!r}" for k in IDENTITY
             if k in want and have.get(k) != want.get(k)]
    if not diffs:
        return "same"
    if overwrite:
        return "replace"
    shown = "; ".join(d if len(d) < 120 else d[:117] + "..." for d in diffs[:3])
    raise OutputRefused(f"{flag} {path} holds another extraction ({shown}); pass --overwrite "
                        f"to replace it or choose another {flag}")


# ------------------------------------------------------------------ lock
_HELD: dict[str, list] = {}   # lock path -> [fd, depth] of this process


def lock_path(directory) -> Path:
    path = Path(directory)
    return path.parent / f".{path.name}.lock"


def _holder(path: Path) -> str:
    try:
        text = path.read_text().split()
    except OSError:
        return "another process"
    return f"process {text[0]}" if text else "another process"


def _acquire(path: Path, flag: str, target: Path) -> int:
    import fcntl

    for _ in range(20):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputLocked(f"{flag} {target} is being written by {_holder(path)} (lock "
                               f"{path}); wait for it to finish or choose another {flag}"
                               ) from None
        try:   # the file we locked must still be the one at ``path``
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            return fd
        os.close(fd)
    raise OutputLocked(f"{flag} {target}: could not take the lock {path}")


@contextlib.contextmanager
def output_lock(directory, flag: str = "--out"):
    """Hold the exclusive writer lock of ``directory`` (module docstring) while in the block."""
    try:
        import fcntl  # noqa: F401 - POSIX only
    except ImportError:   # pragma: no cover - Windows: no advisory locks here
        yield
        return
    path = lock_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = str(path.resolve())
    if key in _HELD:
        _HELD[key][1] += 1
        try:
            yield
        finally:
            _HELD[key][1] -= 1
        return
    fd = _acquire(path, flag, Path(directory))
    _HELD[key] = [fd, 1]
    try:
        yield
    finally:
        del _HELD[key]
        with contextlib.suppress(OSError):
            os.unlink(path)   # unlinked while still locked: a waiter re-checks the inode
        os.close(fd)
