"""The output policy of :mod:`infodiv.outputs` for the folders ``infodiv zoo train|finetune``
write: a zoo or depth root (its settings, tokenizer and held-out files) and one run folder per
model (``<root>/models/<name>/``, ``<root>/finetune/<name>/``).

Each of these folders carries the manifest (``.infodiv-manifest.json``, writer
:data:`TRAIN` or :data:`FINETUNE`) of the files training wrote there, with their sha256; every
write updates it (:func:`own`: a checkpoint, a prefix-cache chunk, the finished model).

- Before any training work (:func:`check_folder`, for the root and every model of the call):
  a file among the names training writes (:data:`RUN_NAMES` in a run folder; the root's
  settings, ``tokenizer/`` and held-out files) that the manifest does not list is someone
  else's and is refused in one line that counts and names it; nothing is replaced.
  ``adopt`` first takes such files as the toolkit's (runs trained before manifests; a file git
  tracks only when unchanged: :func:`infodiv.experiments.owned.adopt_files`).
- A run folder is reused only as far as its manifest confirms it (:func:`open_run`): a finished
  model whose ``model/`` files all match is skipped; a checkpoint ``state.pt`` that matches is
  resumed from; a prefix-cache chunk that matches is reused. A listed file that is missing or
  changed (edited, truncated) is not used: it and what depends on it are removed (they are the
  toolkit's own) and trained or computed again, and the log says so in one line.
- ``overwrite`` trains a model again from step 0: the files its manifest lists are removed first
  and the log names them; nothing else in the folder is touched.

A root whose settings or tokenizer changed since training wrote them is refused, with
``--overwrite`` as the command that writes them again (the code of the root's writers:
:mod:`infodiv.experiments.runner`, :mod:`infodiv.experiments.depth`).
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path

from extraction.contributions import sha256_file, write_manifest
from infodiv.outputs import MANIFEST, prune, read_manifest
from infodiv.runfiles import UserError

__all__ = ["TRAIN", "FINETUNE", "RUN_NAMES", "present", "check_folder", "changed", "own",
           "drop", "open_run", "save_finished", "root_lock", "preflight"]

#: the writers named in the manifests
TRAIN = "infodiv zoo train"
FINETUNE = "infodiv zoo finetune"
#: what training writes into a model's run folder: files, and folders whose every file it writes
RUN_NAMES = ("state.pt", "attempts.json", "attempts", "model", "prefix_cache")
_RECORD = "model/zoo.json"


def _few(names) -> str:
    names = list(names)
    return ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")


def present(folder, names) -> list[str]:
    """The files of ``folder`` among ``names`` (a name that is a folder: every file under it),
    as paths relative to ``folder``; scratch files (``*.tmp``) and manifests left out."""
    folder, out = Path(folder), []
    for name in names:
        path = folder / name
        if path.is_file():
            out.append(name)
        elif path.is_dir():
            out += sorted(p.relative_to(folder).as_posix() for p in path.rglob("*")
                          if p.is_file() and p.name != MANIFEST and not p.name.endswith(".tmp"))
    return out


def _listed(folder: Path, writer: str, flag: str = "--root") -> dict:
    """``{relative path: sha256}`` of the manifest of ``folder`` (empty without one);
    UserError when another writer owns the folder."""
    doc = read_manifest(folder)
    if doc is None:
        return {}
    if doc["writer"] != writer:
        raise UserError(f"{folder} holds the output of {doc['writer']}; give another {flag} "
                        f"for {writer}")
    return dict(doc["files"])


def check_folder(folder, writer: str, names=RUN_NAMES, *, adopt: bool = False, log=None,
                 flag: str = "--root") -> None:
    """UserError (one line: the count, the first name) when ``folder`` holds a file among
    ``names`` that its manifest does not list as ``writer``'s; ``adopt``: such files are first
    taken as the toolkit's (module docstring). Reads only, unless ``adopt``."""
    folder = Path(folder)
    if not folder.is_dir():
        return
    files = present(folder, names)
    if adopt and files:
        from .owned import adopt_files

        adopt_files(folder, files, writer, log=log)
    listed = _listed(folder, writer, flag)
    bad = [n for n in files if n not in listed]
    if bad:
        raise UserError(f"{folder} holds {len(bad)} file(s) that {writer} did not write and "
                        f"would replace (e.g. {bad[0]}); move them away, give another {flag}, "
                        "or add --adopt where an earlier infodiv trained them before manifests "
                        "(nothing was replaced)")


def changed(folder, writer: str, names=None) -> list[str]:
    """The files the manifest of ``folder`` lists (under ``names``; None: all) that are missing
    or whose sha256 is not the listed one."""
    folder = Path(folder)
    top = None if names is None else set(names)
    return [n for n, digest in _listed(folder, writer).items()
            if (top is None or n.split("/")[0] in top)
            and (not (folder / n).is_file() or sha256_file(folder / n) != digest)]


def own(folder, writer: str, names) -> None:
    """Record ``names`` (files of ``folder`` training just wrote) in its manifest with their
    sha256 now; a name no longer present is unlisted. ``names`` may map each name to the file
    that is about to be moved there (listed first, moved then: a process killed in between
    leaves a listed file missing or changed, which is computed again, never a file of its own
    that the manifest does not list)."""
    folder = Path(folder)
    doc = read_manifest(folder)
    files = _listed(folder, writer)
    sources = names if isinstance(names, dict) else {n: folder / n for n in names}
    for name, source in sources.items():
        if Path(source).is_file():
            files[name] = sha256_file(source)
        else:
            files.pop(name, None)
    write_manifest(folder, writer, files, (doc or {}).get("by"))


def drop(folder, writer: str, names) -> None:
    """Remove the files of ``names`` that the manifest of ``folder`` lists (the toolkit's own;
    any other file is left alone) and unlist them."""
    folder = Path(folder)
    listed = _listed(folder, writer)
    names = [n for n in names if n in listed]
    for name in names:
        (folder / name).unlink(missing_ok=True)
    prune(folder, names)
    if names:
        own(folder, writer, names)


def open_run(folder, writer: str, *, overwrite: bool = False, log=print) -> bool:
    """Make the run folder ``folder`` fit to be resumed (module docstring); True when it holds
    a finished model its manifest confirms (skip it). UserError for a file of someone else's
    among :data:`RUN_NAMES` (:func:`check_folder`)."""
    folder = Path(folder)
    if not folder.is_dir():
        return False
    check_folder(folder, writer)
    listed = _listed(folder, writer)
    if overwrite:
        gone = sorted(n for n in listed if n.split("/")[0] in RUN_NAMES)
        if gone:
            log(f"{folder}: --overwrite: training it again from step 0; replacing {len(gone)} "
                f"file(s) {writer} wrote before ({_few(gone)})")
            drop(folder, writer, gone)
        return False
    model = [n for n in listed if n.startswith("model/")]
    bad = changed(folder, writer, RUN_NAMES)
    if _RECORD in listed and not any(n.startswith("model/") for n in bad):
        return True              # finished and confirmed: nothing else is read again
    if not bad:
        return False
    gone = set()
    for name in bad:
        top = name.split("/")[0]
        if top == "model":
            gone.update(model)
        elif top == "state.pt":
            gone.add(name)
        elif top in ("attempts.json", "attempts"):   # the restart history: start it over
            gone.update(n for n in listed if n.split("/")[0] in ("state.pt", "attempts.json",
                                                                 "attempts"))
        elif name == "prefix_cache/cache.json":
            gone.update(n for n in listed if n.startswith("prefix_cache/"))
        else:
            gone.add(name)
    drop(folder, writer, sorted(gone))
    left = _listed(folder, writer)
    what = ("recomputing them" if all(n.startswith("prefix_cache/") for n in gone) else
            "training it again from its checkpoint" if "state.pt" in left else
            "training it again from step 0")
    log(f"{folder}: {len(bad)} file(s) missing or changed since {writer} wrote them (e.g. "
        f"{bad[0]}); not reused: {what}")
    return False


def save_finished(folder, writer: str, save) -> None:
    """Write the finished model of the run folder ``folder``: ``save(path)`` writes its
    ``model/`` folder into a private staging folder; its files are listed in the manifest
    (:func:`own`), then moved in, the record (``model/zoo.json``, the mark of a finished
    model) last. UserError, before anything is moved, for a file of someone else's in the
    way (:func:`check_folder`)."""
    import shutil
    import tempfile

    folder = Path(folder)
    tmp = Path(tempfile.mkdtemp(prefix=".infodiv-staging-", dir=folder))
    try:
        save(tmp / "model")
        made = sorted(present(tmp, ["model"]), key=lambda n: n == _RECORD)
        check_folder(folder, writer)
        own(folder, writer, {n: tmp / n for n in made})
        for name in made:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / name, folder / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def root_lock(root):
    """Hold an exclusive lock on the folder ``root`` (processes of one grid, ``--shard``,
    prepare its root one at a time); the kernel releases it when the process ends."""
    fd = os.open(root, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def preflight(root, root_names, folders, writer: str = TRAIN, *, adopt: bool = False,
              log=None) -> None:
    """Before any training work: :func:`check_folder` of ``root`` (its ``root_names``) and of
    every run folder of ``folders`` (UserError, one line, naming the first file in the way)."""
    check_folder(root, writer, root_names, adopt=adopt, log=log)
    for folder in folders:
        check_folder(folder, writer, adopt=adopt, log=log)
