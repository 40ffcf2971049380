"""The output policy of :mod:`infodiv.outputs` for the experiments' writers (``infodiv zoo
report|depth-report|depth-page|depth-reproduce|depth-bundle``).

Every folder they write carries the manifest: the page folder (``--out``), each model's folder
of the zoo (``<out>/<model>/``, its ``curves/`` and ``decompose/``), a depth root's
``analysis/`` and the bundle. A file is written only over the toolkit's own (:func:`write_owned`;
a file of anyone else in the way: one line naming it, before any work where the names are known:
:func:`check_owned`). A file these commands read back (a cached figure, a per-model report or
analysis) is used only when its folder's manifest lists it with its sha256 now
(:func:`own_json`); otherwise the command that recomputes it recomputes it and says so, and a
command that only reads it refuses it with the command that recomputes it.

Folders written before manifests existed (the committed ``docs/results/zoo`` and
``docs/results/depth``) are taken as the toolkit's only on request (``--adopt``:
:func:`adopt_files`), and then only files git holds unchanged (``git diff`` against ``HEAD``)
or that git does not track.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from infodiv.outputs import adopt, check_conflicts, staged_output, unverified
from infodiv.runfiles import UserError

__all__ = ["ZOO", "DEPTH", "BUNDLE", "write_owned", "check_owned", "own_json", "adopt_files"]

#: the writers named in the manifests
ZOO = "infodiv zoo report"
DEPTH = "infodiv zoo depth-report"      # depth-page and depth-reproduce write the same page
BUNDLE = "infodiv zoo depth-bundle"


def write_owned(folder, files: dict, writer: str = ZOO, *, log=None, keep: bool = True,
                flag: str = "--out") -> None:
    """Write ``files`` (name -> bytes, text, or a callable given the path to write) into
    ``folder`` through :func:`infodiv.outputs.staged_output`: only over ``writer``'s own files
    (an edited one of its own is recomputed: replaced); ``keep``: its other files stay."""
    with staged_output(folder, writer, flag=flag, log=log, replace_changed=True,
                       expect=list(files), keep=keep) as tmp:
        for name, what in files.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if callable(what):
                what(path)
            elif isinstance(what, bytes):
                path.write_bytes(what)
            else:
                path.write_text(what)


def check_owned(folder, names, writer: str = ZOO, flag: str = "--out") -> None:
    """UserError (one line) when a file of ``names`` in ``folder`` is not ``writer``'s: the
    check made before any work (:func:`infodiv.outputs.check_conflicts`)."""
    check_conflicts(folder, writer, names, flag=flag, replace_changed=True)


def own_json(path, log=None, what: str = "recomputing it"):
    """The JSON of ``path`` when its folder's manifest lists it with its sha256 now; None when
    absent, or when it is not as the toolkit wrote it (``log`` told why, and ``what`` follows:
    the caller recomputes it)."""
    path = Path(path)
    if not path.exists():
        return None
    why = unverified(path)
    if why is None:
        try:
            return json.loads(path.read_text())
        except ValueError:
            why = "is not JSON"
    if log is not None:
        log(f"  {path} {why}; {what}")
    return None


def _git_changed(folder: Path, names) -> list[str] | None:
    """The names among ``names`` (files of ``folder``) that differ from git's ``HEAD``; None
    when ``folder`` is in no git work tree (nothing to compare with)."""
    if not names:
        return []
    try:
        done = subprocess.run(["git", "diff", "--name-only", "--relative", "--no-renames",
                               "HEAD", "--", *names], cwd=folder, capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    changed = {line.strip() for line in done.stdout.splitlines()}
    return [n for n in names if n in changed]


def adopt_files(folder, names, writer: str = ZOO, log=None) -> list[str]:
    """List the files of ``names`` present in ``folder`` that no manifest lists as
    ``writer``'s (module docstring: files written before manifests; ``--adopt``); UserError
    (one line, nothing adopted) when git holds another version of one of them."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    present = [n for n in names if (folder / n).is_file()]
    changed = _git_changed(folder, present)
    if changed:
        raise UserError(f"--adopt: {folder / changed[0]} differs from its version in git "
                        f"({len(changed)} file(s) changed); only unchanged files are taken as "
                        "the toolkit's (nothing was adopted)")
    new = adopt(folder, writer, present)
    if new and log is not None:
        log(f"{folder}: adopted {len(new)} file(s) as {writer}'s ({', '.join(new[:4])}"
            f"{', ...' if len(new) > 4 else ''})")
    return new
