"""One output policy for every command that writes: nothing the toolkit did not write is ever
replaced or deleted, and every file it wrote is checked when it is read back.

An output folder carries a manifest, ``.infodiv-manifest.json``: which command or stage wrote
it and the sha256 of every file it wrote there. :func:`staged_output` makes a stage write into a
private hidden folder inside ``out``; only when the stage has finished are its files moved into
``out``, and then only over files the manifest lists (the toolkit's own, from an earlier run of
the same kind: replaced, and the caller is told which) — a file of anyone else in the way is
refused in one line that names it, before anything is replaced, and the stage's files are
discarded (before the stage runs, for the names the caller says it will write: ``expect``).
A file the manifest lists but that changed since (edited, truncated) counts as someone
else's, except where the caller recomputes its own damaged stage (``replace_changed``:
``infodiv run`` and ``infodiv decompose|curves`` into a run's own stage folder), which replaces
it and says so. Files the manifest lists that this run did not write again (a figure of an
objective no longer computed) are removed; nothing else in the folder is touched. A writer may
add its files to a folder another writer owns where the caller allows it (``host``: the page
of ``infodiv report`` beside an extraction); the manifest then records who wrote which file
(``by``), and each writer replaces and removes only its own. A cache written file by file keeps
its other files (``keep``). :func:`check_conflicts` is the check of ``expect`` for a caller
that knows the names long before it writes them; :func:`adopt` lists files written before
manifests existed as a writer's (the caller decides which may be, and checks them first).

:func:`read_verified` reads a file of such a folder only when its sha256 matches the manifest:
a file edited, truncated or swapped after the toolkit wrote it, or a folder without a manifest,
is refused (:class:`~infodiv.runfiles.UserError`, one line) with the command that recomputes it.
The check needs no key inside the file it checks, and no ``run.json``. :func:`read_verified_json`
also refuses a verified file that is not a JSON object.

:func:`stage_document` and :func:`contributions_meta` are the reads of a run folder's stage
documents and extraction record that every page reader goes through.

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
from extraction.contributions import write_manifest
from extraction.outdir import MANIFEST
from infodiv.runfiles import UserError

__all__ = ["MANIFEST", "read_manifest", "staged_output", "check_conflicts", "adopt",
           "unverified", "read_verified", "read_verified_json", "verify_folder",
           "check_single_file", "prune",
           "stage_document", "contributions_meta", "STAGE_DOCS"]

#: the stage documents a run's page reads: stage -> (its folder in the run folder, the file)
STAGE_DOCS = {"decompose": ("decompositions", "decompositions.json"),
              "curves": ("curves", "report.json")}


def read_manifest(folder) -> dict | None:
    """``{"writer": str, "files": {relative path: sha256}}`` of ``folder``; None without a
    readable manifest."""
    path = Path(folder) / MANIFEST
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("files"), dict) or \
            not isinstance(doc.get("writer"), str):
        return None
    return doc


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if p.is_file() and p.name != MANIFEST)


def _conflicts(out: Path, names, listed: dict, replace_changed: bool) -> list[str]:
    """The names among ``names`` that exist in ``out`` but are not this writer's (not listed
    in ``listed``, or listed but changed since: an edit of the user's is theirs, unless
    ``replace_changed``)."""
    bad = []
    for name in names:
        target = out / name
        if target.exists() and (name not in listed or not target.is_file()
                                or (not replace_changed and sha256_of(target) != listed[name])):
            bad.append(name)
    return bad


def prune(folder, names) -> None:
    """Remove the folders of ``names`` (paths relative to ``folder``) left empty."""
    for parent in sorted({p for n in names for p in Path(n).parents if str(p) != "."},
                         key=lambda p: -len(p.parts)):
        try:
            (Path(folder) / parent).rmdir()
        except OSError:
            pass


def _ownership(out: Path, writer: str, host=(), flag: str = "--out"):
    """``(manifest or a fresh one, owner, this writer's listed files, the others', by)`` of
    ``out``; UserError when its manifest names a writer other than ``writer`` and ``host``."""
    old = read_manifest(out) or {"writer": writer, "files": {}}
    owner = old["writer"]
    if owner != writer and owner not in host:
        raise UserError(f"{flag} {out} holds the output of {owner}; give another "
                        f"folder for {writer}")
    by = {n: w for n, w in (old.get("by") or {}).items() if n in old["files"]}
    mine = {n: d for n, d in old["files"].items() if by.get(n, owner) == writer}
    others = {n: d for n, d in old["files"].items() if n not in mine}
    return owner, mine, others, by


def check_conflicts(out, writer: str, names, *, flag: str = "--out",
                    replace_changed: bool = False, host=()) -> None:
    """UserError (one line, the count and the first name) when a file of ``names`` exists in
    ``out`` and is not ``writer``'s own (:func:`staged_output`); nothing when ``out`` is
    absent. The check :func:`staged_output` makes of ``expect``, for a caller that knows the
    names long before it writes them (before hours of work)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise UserError(f"{flag} {out} is a file, not a folder")
    if not out.is_dir():
        return
    _, mine, others, _ = _ownership(out, writer, host, flag)
    bad = [n for n in names if n in others] + _conflicts(
        out, [n for n in names if n not in others], mine, replace_changed)
    if bad:
        raise UserError(f"{flag} {out} holds {len(bad)} file(s) that {writer} did not "
                        f"write and would replace (e.g. {bad[0]}); move them away or give "
                        "another folder (nothing was replaced)")


def adopt(folder, writer: str, names) -> list[str]:
    """List the files of ``names`` that exist in ``folder`` and that its manifest does not
    list in the manifest as ``writer``'s, with their sha256 now (results written before
    manifests existed; the caller decides which files may be adopted and checks them first);
    returns the names adopted. UserError when the manifest names another writer."""
    folder = Path(folder)
    owner, mine, others, by = _ownership(folder, writer)
    new = [n for n in names if n not in mine and n not in others and (folder / n).is_file()]
    if new:
        write_manifest(folder, owner, {**others, **mine,
                                       **{n: sha256_of(folder / n) for n in new}}, by)
    return new


@contextmanager
def staged_output(out, writer: str, *, flag: str = "--out", log=None,
                  replace_changed: bool = False, host=(), expect=(), keep: bool = False):
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
    replace_changed : bool
        Replace this writer's listed files even where they changed since it wrote them (a run
        recomputing its own damaged stage); default: they count as someone else's.
    host : tuple of str
        Writers whose folder this writer may add its files to (module docstring).
    expect : names the stage will write, checked before it starts (a file of someone else's
        with one of those names is refused before any work, not after it).
    keep : bool
        Keep the writer's listed files this stage did not write again (a cache written file
        by file); default: they are removed.

    Raises
    ------
    UserError
        ``out`` is a file; its manifest names another writer; a file the stage wrote is in the
        way and is not the toolkit's (every such name counted, the first named).
    """
    out = Path(out)
    check_conflicts(out, writer, expect, flag=flag, replace_changed=replace_changed, host=host)
    out.mkdir(parents=True, exist_ok=True)
    owner, mine, others, by = _ownership(out, writer, host, flag)
    tmp = Path(tempfile.mkdtemp(prefix=".infodiv-staging-", dir=out))
    try:
        yield tmp
        made = _files(tmp)
        check_conflicts(out, writer, made, flag=flag, replace_changed=replace_changed,
                        host=host)
        replaced = [n for n in made if (out / n).exists()]
        for name in made:
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp / name, out / name)
        gone = [] if keep else sorted(set(mine) - set(made))
        for name in gone:      # the writer's own, no longer written
            target = out / name
            if target.is_file() and (replace_changed or sha256_of(target) == mine[name]):
                target.unlink()
        prune(out, gone)
        kept = {n: d for n, d in mine.items() if keep and n not in made}
        files = {**others, **kept, **{n: sha256_of(out / n) for n in made}}
        by = {n: w for n, w in by.items() if n in others}
        if writer != owner:
            by.update({n: writer for n in [*made, *kept]})
        write_manifest(out, owner, files, by)
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


def _why_not(path: Path, data, doc) -> str | None:
    """Why ``data`` (the bytes of ``path``; None: absent) is not what the manifest ``doc`` of
    its folder lists (None: it is)."""
    if doc is None:
        return f"has no readable {MANIFEST} beside it (it cannot be checked)"
    want = doc["files"].get(path.name)
    if data is None or want is None or hashlib.sha256(data).hexdigest() != want:
        return ("is missing" if data is None else "was not written by the toolkit"
                if want is None else f"changed since {doc['writer']} wrote it")
    return None


def unverified(path) -> str | None:
    """Why the file ``path`` is not as the toolkit wrote it (no manifest beside it, not listed,
    changed, missing); None when its folder's manifest lists it with this sha256."""
    path = Path(path)
    return _why_not(path, path.read_bytes() if path.is_file() else None,
                    read_manifest(path.parent))


def read_verified(path, redo: str) -> bytes:
    """The bytes of ``path`` when its folder's manifest lists it with this sha256 (module
    docstring); UserError otherwise."""
    path = Path(path)
    doc = read_manifest(path.parent)
    if doc is None:
        raise UserError(f"{path.parent} has no readable {MANIFEST}, so {path.name} cannot be "
                        f"checked against what the toolkit wrote; {redo}")
    data = path.read_bytes() if path.is_file() else None
    why = _why_not(path, data, doc)
    if why is not None:
        raise UserError(f"{path} {why}; {redo}")
    return data


def read_verified_json(path, redo: str) -> dict:
    """:func:`read_verified`, parsed: a JSON object, or UserError (one line, ``redo``)."""
    data = read_verified(path, redo)
    try:
        doc = json.loads(data)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        raise UserError(f"{path} is not a JSON object; {redo}")
    return doc


def stage_document(root, stage: str) -> dict:
    """The JSON document of ``stage`` (:data:`STAGE_DOCS`) of the run folder ``root``, read
    only when its folder's manifest lists it with this sha256 (:func:`read_verified_json`);
    ``{}`` when the stage folder is absent (the stage was not run). UserError (one line, with
    the command that recomputes it) for a folder without a manifest, a file missing, edited,
    truncated or not a JSON object."""
    import shlex

    root = Path(root)
    sub, name = STAGE_DOCS[stage]
    if not (root / sub).is_dir():
        return {}
    return read_verified_json(root / sub / name, f"recompute it with `infodiv {stage} "
                                                 f"{shlex.quote(str(root))}`")


def contributions_meta(root) -> dict:
    """The ``meta.json`` document of the extraction of ``root`` (a run folder's
    ``contributions/`` or a Contributions directory itself), checked against its manifest (an
    extraction saved before manifests: against its own ``doc_sha256``, which it must carry);
    UserError with the command that re-extracts it otherwise."""
    from extraction.contributions import doc_digest
    from infodiv.runfiles import reextract

    root = Path(root)
    contrib = root / "contributions" if (root / "contributions").is_dir() else root
    redo = reextract(contrib, root, None)
    if (contrib / MANIFEST).exists():
        return read_verified_json(contrib / "meta.json", redo)
    try:
        doc = json.loads((contrib / "meta.json").read_text())
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("doc_sha256") != doc_digest(doc):
        raise UserError(f"{contrib / 'meta.json'} cannot be checked against what the toolkit "
                        f"wrote (no {MANIFEST}, no valid doc_sha256); {redo}")
    return doc


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
