"""Run folders of ``infodiv run``: names, the ``run.json`` record, stage keys, resume counts.

A run folder ``<out>/<model>-<task>-n<N>-<shots>shot-<granularity>[-strat][-chat][-fixed]
[-from<START>]/`` holds

- ``run.json``: the configuration that identifies the run (its prompt setting included:
  ``chat_template``, ``fixed_demos``, ``demo_start``, ``start`` where they are not the
  default), the command that made it, one content key per finished stage, the sha256 of every
  file each stage wrote (``files``), the wall times, and with ``--choose-prompt`` the comparison
  that chose the prompt setting (``prompt_choice``, :mod:`infodiv.study.prompt_choice`);
- ``contributions/`` (the Contributions run directory), ``decompositions/``, ``curves/``,
  ``report.html`` with ``summary.json`` / ``summary.csv``, and ``README.md``.

Every stage folder carries the manifest of :mod:`infodiv.outputs` (``contributions/``: written
by ``infodiv extract``, ``decompositions/`` by ``infodiv decompose``, ``curves/`` by ``infodiv
curves``; the page beside ``run.json`` by ``infodiv report``), so each stage's files are checked
on read with or without ``run.json`` (:func:`stage_problems`).

A folder that holds a run with another configuration is never replaced silently: the caller
refuses with the differing settings, and names the files in it that the toolkit did not write,
unless ``--overwrite`` is given; then only the toolkit's files go (those the manifests list,
and those ``run.json`` records with their sha256), and the user's stay
(:meth:`RunFolder.prepare`). Stages whose key is
unchanged are skipped. A key hashes the stage's input arrays, its settings
(:func:`stage_settings`: every setting of the stage with its default filled in, not only those
typed) and :func:`code_digest` of the packages that compute it, so a run made before a default
or a formula changed is recomputed, never reused (the extraction stage digests ``extraction``,
the analyses ``infodiv`` and ``estimators``). A stage whose files no longer match their
manifest or their recorded sha256 (truncated, edited, swapped, deleted) is recomputed and says
so (:meth:`RunFolder.stale`); ``infodiv report`` refuses it with the command that recomputes it
(:func:`verify_files`). A stage that failed has no record, so the next run redoes it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path

from infodiv.runfiles import RUN_FILE, UserError

__all__ = ["RunFolder", "stage_key", "code_digest", "shards_done",
           "STAGE_DIRS", "STAGE_WRITERS", "PAGE_WRITER", "PAGE_FILES", "stage_settings",
           "stage_key_of", "file_digests", "verify_files", "stage_problems", "record_stage"]

# the settings that make two runs different runs (everything else may change between resumes)
IDENTITY = ("model", "task", "n", "shots", "granularity", "stratify", "seed", "dtype",
            "max_length", "template", "options", "label_field", "task_sha256",
            "chat_template", "fixed_demos", "demo_start", "start")
# stage -> the folder (inside the run folder) holding every file it writes
STAGE_DIRS = {"extract": "contributions", "decompose": "decompositions", "curves": "curves"}
# stage -> the writer its folder's manifest names (infodiv.outputs)
STAGE_WRITERS = {"extract": "infodiv extract", "decompose": "infodiv decompose",
                 "curves": "infodiv curves"}
PAGE_WRITER = "infodiv report"   # the page of a run, beside run.json
PAGE_FILES = ("report.html", "report.json", "report.csv")


def stage_key(*parts) -> str:
    """Content key of a stage: sha256 of its inputs and settings (JSON)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


#: the packages whose code a stage key digests: the three import packages, side by side
_PACKAGE_ROOTS = {name: Path(__file__).resolve().parents[2] / name
                  for name in ("infodiv", "extraction", "estimators")}


@functools.cache
def code_digest(*packages: str) -> str:
    """sha256 over the Python sources of ``packages`` (relative path and bytes of every
    ``*.py`` file, in sorted order): the part of a stage key that changes with the code."""
    h = hashlib.sha256()
    for name in packages:
        root = _PACKAGE_ROOTS[name]
        for file in sorted(root.rglob("*.py")):
            h.update(f"{name}/{file.relative_to(root).as_posix()}\0".encode())
            h.update(file.read_bytes())
    return h.hexdigest()


def shards_done(contrib_dir: Path) -> int:
    """Examples already saved in the shards of an interrupted extraction into ``contrib_dir``."""
    from extraction.shards import partial_dir

    partial = partial_dir(contrib_dir)
    try:
        plan = json.loads((partial / "manifest.json").read_text()).get("plan") or []
    except (OSError, ValueError):
        return 0
    done = 0
    for i, shard in enumerate(plan):
        if (partial / f"shard-{i:05d}.npz").is_file() and \
                (partial / f"shard-{i:05d}.json").is_file():
            done += sum(len(batch) for batch in shard)
    return done


def file_digests(folder: Path, root: Path) -> dict:
    """``{path relative to root: sha256}`` of every file under ``folder``."""
    from extraction.contributions import sha256_file

    return {p.relative_to(root).as_posix(): sha256_file(p)
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


def _damaged(root: Path, recorded: dict) -> list[str]:
    """The recorded files that are missing or whose sha256 changed."""
    from extraction.contributions import sha256_file

    bad = []
    for rel, digest in recorded.items():
        path = root / rel
        if not path.is_file() or sha256_file(path) != digest:
            bad.append(rel)
    return bad


def stage_problems(root, stage: str) -> list[str]:
    """What is wrong with the folder of ``stage`` in the run folder ``root`` by its manifest
    alone (no run.json needed): no readable manifest, a listed file missing or changed, a
    manifest of another writer. Empty when sound or when the folder is absent."""
    from infodiv.outputs import MANIFEST, read_manifest

    sub = STAGE_DIRS[stage]
    folder = Path(root) / sub
    if not folder.is_dir():
        return []
    doc = read_manifest(folder)
    if doc is None:
        return [f"{sub}/ has no readable {MANIFEST} (its files cannot be checked against what "
                "the toolkit wrote)"]
    if doc["writer"] != STAGE_WRITERS[stage]:
        return [f"{sub}/ holds the output of {doc['writer']}, not of {STAGE_WRITERS[stage]}"]
    return [f"{sub}/{rel} is missing or changed since {doc['writer']} wrote it"
            for rel in _damaged(folder, doc["files"])]


def verify_files(root) -> list[tuple[str, str]]:
    """``[(stage, problem)]`` of a run folder: stage folders whose manifest is missing or does
    not match their files (:func:`stage_problems`, with or without run.json), files run.json
    records missing or changed, stage folders that no finished stage wrote. Empty for a sound
    folder."""
    root = Path(root)
    problems = [(stage, p) for stage in STAGE_DIRS for p in stage_problems(root, stage)]
    try:
        doc = json.loads((root / RUN_FILE).read_text())
    except (OSError, ValueError):
        return problems
    files = doc.get("files") if isinstance(doc, dict) else None
    stages = (doc.get("stages") if isinstance(doc, dict) else None) or {}
    for stage, sub in STAGE_DIRS.items():
        recorded = (files or {}).get(stage)
        if recorded:
            for rel in _damaged(root, recorded):
                problems.append((stage, f"{rel} is missing or changed since {stage} wrote it"))
        elif (root / sub).is_dir() and stage not in stages and files is not None:
            problems.append((stage, f"{sub}/ holds no finished {stage} stage (it failed or was "
                                    "interrupted)"))
    return problems


def stage_settings(stage: str, settings) -> dict:
    """What a stage's key hashes of the study's :class:`~infodiv.study.settings.StudySettings`:
    the settings that stage reads and the study seed (``n_jobs`` is left out: the numbers do
    not depend on it)."""
    from dataclasses import asdict

    if stage == "decompose":
        return {"decompose": asdict(settings.decompose), "seed": settings.seed}
    inference = {k: v for k, v in asdict(settings.inference).items() if k != "n_jobs"}
    return {"curves": asdict(settings.curves), "inference": inference,
            "selection": asdict(settings.selection), "seed": settings.seed}


def stage_key_of(root, stage: str, settings) -> str:
    """The content key of ``stage`` of the run folder ``root`` under ``settings``: its input
    arrays' sha256, :func:`stage_settings` and the code digest of the analysis packages."""
    arrays = json.loads((Path(root) / "contributions" / "meta.json").read_text())[
        "arrays_sha256"]
    return stage_key(stage, arrays, stage_settings(stage, settings),
                     code_digest("infodiv", "estimators"))


def record_stage(root, stage: str, out, settings, ok: bool, seconds: float = 0.0) -> None:
    """After a standalone ``infodiv decompose|curves`` into a run folder's own stage folder:
    record the stage (its key for these ``settings``, its files) or, when it failed, forget
    it."""
    root, out = Path(root), Path(out)
    if not (root / RUN_FILE).is_file() or out.resolve() != (root / STAGE_DIRS[stage]).resolve():
        return
    folder = RunFolder.open(root)
    if not ok:
        folder.forget(stage)
        return
    folder.done(stage, stage_key_of(root, stage, settings), seconds)


class RunFolder:
    """One run folder and its ``run.json``.

    Parameters
    ----------
    path : Path
        The folder.
    config : dict
        The run's settings; the keys in :data:`IDENTITY` decide whether an existing folder
        holds the same run.
    command : str
        The command line that (re)creates the run, kept for the "re-extract" advice.
    """

    def __init__(self, path: Path, config: dict, command: str):
        self.path = Path(path)
        self.config = dict(config)
        self.command = command
        self.doc = {"config": self.config, "command": command, "stages": {}, "timings_s": {},
                    "files": {}}
        self._recorded = {}   # the files run.json records of the run the folder holds

    @classmethod
    def open(cls, path) -> RunFolder:
        """The run folder at ``path`` as its run.json describes it."""
        doc = json.loads((Path(path) / RUN_FILE).read_text())
        folder = cls(path, doc.get("config", {}), doc.get("command", ""))
        folder.doc.update(doc)
        folder.doc.setdefault("files", {})
        return folder

    @property
    def contributions(self) -> Path:
        return self.path / "contributions"

    def check(self, overwrite: bool) -> str:
        """Refuse (UserError) a folder holding another run; return "new", "same" or "replace".

        Nothing is written or removed here; :meth:`prepare` acts on the answer.
        """
        file = self.path / RUN_FILE
        if not self.path.exists() or not any(self.path.iterdir()):
            return "new"
        if not file.is_file():
            raise UserError(f"{self.path} exists and was not made by infodiv run (no {RUN_FILE});"
                            " choose another --out (nothing was written)")
        try:
            old = json.loads(file.read_text())
        except (OSError, ValueError):
            old = {}
        old_cfg = old.get("config", {}) if isinstance(old, dict) else {}
        self._recorded = (old.get("files") if isinstance(old, dict) else None) or {}
        diffs = [f"{k} {old_cfg.get(k)!r} -> {self.config.get(k)!r}" for k in IDENTITY
                 if old_cfg.get(k) != self.config.get(k)]
        if not diffs:
            self.doc["stages"] = old.get("stages", {})
            self.doc["files"] = old.get("files", {})
            return "same"
        if overwrite:
            return "replace"
        theirs = self.foreign()
        kept = (f"; it also holds {len(theirs)} file(s) infodiv did not write "
                f"({', '.join(theirs[:3])}{', ...' if len(theirs) > 3 else ''}), which "
                "--overwrite keeps" if theirs else "")
        raise UserError(f"{self.path} holds a different run ({', '.join(diffs)}){kept}; pass "
                        "--overwrite to replace the run's own files or choose another --out")

    def _ours(self) -> dict:
        """``{stage folder or "": names}`` of the files of this folder the toolkit wrote:
        those its manifests list and those run.json records with their sha256 unchanged."""
        from infodiv.outputs import read_manifest

        ours = {"": set(PAGE_FILES) & set((read_manifest(self.path) or {"files": {}})["files"])}
        for stage, sub in STAGE_DIRS.items():
            listed = set((read_manifest(self.path / sub) or {"files": {}})["files"])
            recorded = {**self._recorded, **(self.doc.get("files") or {})}.get(stage) or {}
            listed |= {rel.split("/", 1)[1] for rel in recorded
                       if "/" in rel and rel not in _damaged(self.path, {rel: recorded[rel]})}
            ours[sub] = listed
        return ours

    def foreign(self) -> list[str]:
        """The files and folders of the run folder the toolkit did not write (relative paths;
        a folder of the user's as ``name/``)."""
        from infodiv.outputs import MANIFEST

        if not self.path.is_dir():
            return []
        ours = self._ours()
        out = []
        for entry in sorted(self.path.iterdir()):
            name = entry.name
            if name in (RUN_FILE, MANIFEST, ".contributions.partial") or name in ours[""] or \
                    name.startswith((f".{RUN_FILE}.tmp-", ".infodiv-")):
                continue
            if name in ours and entry.is_dir():
                out += [f"{name}/{p.relative_to(entry).as_posix()}"
                        for p in sorted(entry.rglob("*")) if p.is_file()
                        and p.relative_to(entry).as_posix() not in ours[name] | {MANIFEST}]
            else:
                out.append(name + "/" if entry.is_dir() else name)
        return out

    def prepare(self, state: str, log=None) -> None:
        """Create the folder and write run.json; for ``state == "replace"`` first remove the
        toolkit's files of the run it held (:meth:`_ours`; the user's stay, and ``log`` is
        told which were kept)."""
        if state == "replace":
            self._clear(log)
            self.doc.update(stages={}, files={}, timings_s={})
        self.path.mkdir(parents=True, exist_ok=True)
        self.save()

    def _clear(self, log) -> None:
        from infodiv.outputs import MANIFEST, prune

        kept, ours = self.foreign(), self._ours()
        for sub, names in ours.items():
            for name in names:
                (self.path / sub / name).unlink(missing_ok=True)
            (self.path / sub / MANIFEST).unlink(missing_ok=True)
            prune(self.path, [f"{sub}/{n}" for n in names] if sub else [])
        (self.path / RUN_FILE).unlink(missing_ok=True)
        if log is not None:
            log(f"{self.path.name}: --overwrite: removed the "
                f"{sum(len(v) for v in ours.values())} file(s) of the run it held"
                + (f"; kept {len(kept)} of yours ({', '.join(kept[:3])}"
                   f"{', ...' if len(kept) > 3 else ''})" if kept else ""))

    def save(self) -> None:
        tmp = self.path / f".{RUN_FILE}.tmp-{os.getpid()}"
        tmp.write_text(json.dumps(self.doc, indent=1, default=str))
        os.replace(tmp, self.path / RUN_FILE)

    def stale(self, stage: str, key: str) -> str | None:
        """None when ``stage`` finished with the same key and every file it wrote is unchanged;
        else why it must be (re)computed."""
        old = self.doc["stages"].get(stage)
        if old is None:
            return "not computed yet"
        if old != key:
            return "settings or code changed since the last run"
        problems = stage_problems(self.path, stage)
        if problems:
            more = f" and {len(problems) - 1} more" if len(problems) > 1 else ""
            return f"{problems[0]}{more}"
        if not (self.path / STAGE_DIRS[stage]).is_dir():
            return "its folder is missing"
        recorded = self.doc["files"].get(stage)
        if not recorded:
            return "its files carry no checksums (made by an older infodiv)"
        bad = _damaged(self.path, recorded)
        if bad:
            more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
            return f"{bad[0]}{more} is missing or changed since it was written"
        return None

    def done(self, stage: str, key: str, seconds: float) -> None:
        """Record a finished stage: its key, the sha256 of the files its folder's manifest
        lists (the files the stage wrote) and its wall time."""
        from infodiv.outputs import read_manifest

        sub = STAGE_DIRS[stage]
        manifest = read_manifest(self.path / sub)
        self.doc["stages"][stage] = key
        self.doc["files"][stage] = (
            {f"{sub}/{n}": d for n, d in manifest["files"].items()} if manifest
            else file_digests(self.path / sub, self.path))
        self.doc["timings_s"][stage] = round(seconds, 2)
        self.save()

    def forget(self, stage: str) -> None:
        """Drop a stage's record (it failed or is about to be rewritten)."""
        for part in ("stages", "files", "timings_s"):
            self.doc.setdefault(part, {}).pop(stage, None)
        self.save()
