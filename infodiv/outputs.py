"""One output policy for every command that writes: nothing the toolkit did not write is ever
replaced or deleted, and every file it wrote is checked when it is read back.

An output folder carries a manifest, ``.infodiv-manifest.json``: which command or stage wrote
it and the sha256 of every file it wrote there. :func:`staged_output` makes a stage write into a
private folder beside ``out``; only when the stage has finished are its files moved into
``out``, and then only over files the manifest lists (the toolkit's own, from an earlier run of
the same kind: replaced, and the caller is told which) — a file of anyone else in the way is
refused in one line that names it, before anything is replaced, and the stage's files are
discarded. Files the manifest lists that this run did not write again (a figure of an
objective no longer computed) are removed; nothing else in the folder is touched.

:func:`read_verified` reads a file of such a folder only when its sha256 matches the manifest:
a file edited, truncated or swapped after the toolkit wrote it, or a folder without a manifest,
is refused (:class:`~infodiv.runfiles.UserError`, one line) with the command that recomputes it.
The check needs no key inside the file it checks, and no ``run.json``.

:func:`check_single_file`: a single output file (``--out page.html``, ``--out table.json``)
that exists is replaced only with ``--overwrite``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from extraction.contributions import sha256_file as sha256_of
from infodiv.runfiles import UserError

__all__ = ["MANIFEST", "read_manifest", "staged_output", "read_verified", "verify_folder",
           "check_single_file"]

MANIFEST = ".infodiv-manifest.json"


def read_manifest(folder) -> dict | None:
    """``{"writer": str, "files": {relative path: sha256}}`` of ``folder``; None without a
    readable manifest."""
    path = Path(folder) / MANIFEST
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict):
        return None
    return doc


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.name != MANIFEST)


def _write_manifest(folder: Path, writer: str, files: dict) -> None:
    tmp = folder / f".{MANIFEST}.{os.getpid()}"
    tmp.write_text(json.dumps({"writer": writer, "files": files}, indent=1))
    os.replace(tmp, folder / MANIFEST)


def _conflicts(out: Path, names, listed: dict) -> list[str]:
    """The names among ``names`` that exist in ``out`` but are not the toolkit's (not listed
    in its manifest, or listed but changed since: an edit of the user's is theirs)."""
    bad = []
    for name in names:
        target = out / name
        if target.exists() and (name not in listed or not target.is_file()
                                or sha256_of(target) != listed[name]):
            bad.append(name)
    return bad


@contextmanager
def staged_output(out, writer: str, *, flag: str = "--out", log=None):
    """Yield a private folder for a stage to write into; on success move its files into
    ``out`` under the policy of the module docstring and write the manifest.

    Parameters
    ----------
    out : path
        The output folder (created when missing).
    writer : str
        Who writes it (``"infodiv curves"``); a folder whose manifest names another writer is
        refused: the toolkit never mixes two kinds of output in one folder.
    flag : str
        The option the folder came from, for messages.
    log : callable, optional
        Told which of the toolkit's files were replaced.

    Raises
    ------
    UserError
        ``out`` is a file; its manifest names another writer; a file the stage wrote is in the
        way and is not the toolkit's (every such name counted, the first named).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{flag} {out} is a file, not a folder")
    out.mkdir(parents=True, exist_ok=True)
    old = read_manifest(out) or {"writer": writer, "files": {}}
    if old["writer"] != writer:
        raise UserError(f"{flag} {out} holds the output of {old['writer']}; give another "
                        f"folder for {writer}")
    tmp = Path(tempfile.mkdtemp(prefix=".infodiv-staging-", dir=out))
    try:
        yield tmp
        made = _files(tmp)
        bad = _conflicts(out, made, old["files"])
        if bad:
            raise UserError(f"{flag} {out} holds {len(bad)} file(s) that {writer} did not "
                            f"write and would replace (e.g. {bad[0]}); move them away or give "
                            "another folder (nothing was replaced)")
        replaced = [n for n in made if (out / n).exists()]
        for name in made:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / name, out / name)
        for name in set(old["files"]) - set(made):      # the toolkit's own, no longer written
            target = out / name
            if target.is_file() and sha256_of(target) == old["files"][name]:
                target.unlink()
        _write_manifest(out, writer, {n: sha256_of(out / n) for n in made})
        if replaced and log is not None:
            log(f"{out}: replaced {len(replaced)} file(s) {writer} wrote before "
                f"({', '.join(replaced[:4])}{', ...' if len(replaced) > 4 else ''})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def verify_folder(folder, redo: str) -> dict:
    """The manifest of ``folder`` after checking every listed file's sha256; UserError (one
    line, ending in ``redo``, the command that recomputes it) for a missing manifest or a file
    missing or changed."""
    folder = Path(folder)
    doc = read_manifest(folder)
    if doc is None:
        raise UserError(f"{folder} has no readable {MANIFEST} (its files cannot be checked "
                        f"against what the toolkit wrote); {redo}")
    bad = [n for n, digest in doc["files"].items()
           if not (folder / n).is_file() or sha256_of(folder / n) != digest]
    if bad:
        raise UserError(f"{folder}: {len(bad)} file(s) missing or changed since "
                        f"{doc['writer']} wrote them (e.g. {bad[0]}); {redo}")
    return doc


def read_verified(path, redo: str) -> bytes:
    """The bytes of ``path`` when its folder's manifest lists it with this sha256 (module
    docstring); UserError otherwise."""
    path = Path(path)
    doc = read_manifest(path.parent)
    if doc is None:
        raise UserError(f"{path.parent} has no readable {MANIFEST}, so {path.name} cannot be "
                        f"checked against what the toolkit wrote; {redo}")
    data = path.read_bytes() if path.is_file() else None
    want = doc["files"].get(path.name)
    if data is None or want is None or hashlib.sha256(data).hexdigest() != want:
        what = ("is missing" if data is None else "was not written by the toolkit"
                if want is None else f"changed since {doc['writer']} wrote it")
        raise UserError(f"{path} {what}; {redo}")
    return data


def check_single_file(path, overwrite: bool, flag: str = "--out") -> Path:
    """``path`` as a single output file: refused (one line) when it is a folder, or exists and
    ``overwrite`` is not set."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{flag} {path} is a folder, not a file")
    if path.exists() and not overwrite:
        raise UserError(f"{flag} {path} exists; add --overwrite to replace it or give another "
                        "name")
    return path
