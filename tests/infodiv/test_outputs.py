"""The output policy (infodiv.outputs): a stage's files reach its folder only over the
toolkit's own files, a user's file is never replaced or deleted, and a file read back is the one
the toolkit wrote (sha256 against the folder's manifest, recomputed here with hashlib)."""

from __future__ import annotations

import hashlib
import json

import pytest

from infodiv.outputs import (
    MANIFEST,
    check_single_file,
    read_verified,
    staged_output,
    verify_folder,
)
from infodiv.runfiles import UserError


def _stage(out, files, writer="infodiv curves", log=None):
    with staged_output(out, writer, log=log) as tmp:
        for name, text in files.items():
            (tmp / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp / name).write_text(text)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_manifest_lists_what_the_stage_wrote_and_nothing_else(tmp_path):
    out = tmp_path / "curves"
    out.mkdir()
    (out / "NOTES.txt").write_text("mine")
    _stage(out, {"report.json": "{}", "figs/a.png": "png"})
    doc = json.loads((out / MANIFEST).read_text())
    assert doc["writer"] == "infodiv curves"
    assert doc["files"] == {"report.json": _sha(out / "report.json"),
                            "figs/a.png": _sha(out / "figs" / "a.png")}
    assert (out / "NOTES.txt").read_text() == "mine"
    assert not list(out.glob(".infodiv-staging-*"))


def test_a_rerun_replaces_only_the_toolkits_files_and_says_which(tmp_path):
    out = tmp_path / "curves"
    _stage(out, {"report.json": "1", "old.png": "x"})
    (out / "NOTES.txt").write_text("mine")
    lines = []
    _stage(out, {"report.json": "2"}, log=lines.append)
    assert (out / "report.json").read_text() == "2"
    assert not (out / "old.png").exists()             # the toolkit's, no longer written
    assert (out / "NOTES.txt").read_text() == "mine"
    assert len(lines) == 1 and "replaced 1 file(s)" in lines[0] and "report.json" in lines[0]


@pytest.mark.parametrize("edit", ["user file with a stage name", "stage file edited"])
def test_a_file_of_the_users_in_the_way_is_refused_and_kept(tmp_path, edit):
    out = tmp_path / "curves"
    if edit == "stage file edited":
        _stage(out, {"report.json": "1"})
    out.mkdir(exist_ok=True)
    (out / "report.json").write_text("the user's own report")
    with pytest.raises(UserError, match=r"1 file\(s\) that infodiv curves did not write .*"
                                        r"report\.json.*nothing was replaced"):
        _stage(out, {"report.json": "2", "b.png": "x"})
    assert (out / "report.json").read_text() == "the user's own report"
    assert not (out / "b.png").exists() and not list(out.glob(".infodiv-staging-*"))


def test_a_failing_stage_leaves_the_folder_as_it_was(tmp_path):
    out = tmp_path / "curves"
    _stage(out, {"report.json": "1"})
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(RuntimeError):
        with staged_output(out, "infodiv curves") as tmp:
            (tmp / "report.json").write_text("half")
            raise RuntimeError("stage failed")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert not list(out.glob(".infodiv-staging-*"))


def test_another_writers_folder_and_a_file_as_folder_are_refused(tmp_path):
    out = tmp_path / "dec"
    _stage(out, {"decompositions.json": "{}"}, writer="infodiv decompose")
    with pytest.raises(UserError, match="holds the output of infodiv decompose"):
        _stage(out, {"report.json": "{}"})
    (tmp_path / "f").write_text("x")
    with pytest.raises(UserError, match="is a file, not a folder"):
        _stage(tmp_path / "f", {"a": "b"})


def test_read_back_only_what_the_toolkit_wrote(tmp_path):
    out = tmp_path / "curves"
    _stage(out, {"report.json": '{"estimate": 0.00085}'})
    redo = "recompute it with `infodiv curves RUN`"
    assert read_verified(out / "report.json", redo) == b'{"estimate": 0.00085}'
    assert verify_folder(out, redo)["writer"] == "infodiv curves"
    (out / "report.json").write_text('{"estimate": 0.124}')          # an edited number
    with pytest.raises(UserError, match="changed since infodiv curves wrote it; recompute"):
        read_verified(out / "report.json", redo)
    with pytest.raises(UserError, match=r"1 file\(s\) missing or changed"):
        verify_folder(out, redo)
    (out / "extra.json").write_text("{}")
    with pytest.raises(UserError, match="was not written by the toolkit"):
        read_verified(out / "extra.json", redo)
    (out / MANIFEST).unlink()
    with pytest.raises(UserError, match="no readable .infodiv-manifest.json"):
        read_verified(out / "report.json", redo)


def test_a_single_output_file_needs_overwrite(tmp_path):
    page = tmp_path / "page.html"
    assert check_single_file(page, False) == page
    page.write_text("mine")
    with pytest.raises(UserError, match="exists; add --overwrite"):
        check_single_file(page, False)
    assert check_single_file(page, True) == page
    with pytest.raises(UserError, match="is a folder"):
        check_single_file(tmp_path, True)


def test_a_users_file_named_by_expect_is_refused_before_the_stage_runs(tmp_path):
    out = tmp_path / "curves"
    out.mkdir()
    (out / "report.json").write_text("mine")
    ran = []
    with pytest.raises(UserError, match="report.json"):
        with staged_output(out, "infodiv curves", expect=("report.json",)):
            ran.append(1)
    assert not ran and (out / "report.json").read_text() == "mine"


def test_replace_changed_replaces_the_writers_own_damaged_file_and_says_so(tmp_path):
    out = tmp_path / "curves"
    _stage(out, {"report.json": "1", "old.png": "x"})
    (out / "report.json").write_text("1 truncat")
    lines = []
    with staged_output(out, "infodiv curves", log=lines.append, replace_changed=True) as tmp:
        (tmp / "report.json").write_text("2")
    assert (out / "report.json").read_text() == "2" and not (out / "old.png").exists()
    assert read_verified(out / "report.json", "redo") == b"2" and "replaced 1" in lines[0]


def test_a_hosted_writer_adds_and_replaces_only_its_own_files(tmp_path):
    """The page beside an extraction: its files are recorded as its own (``by``); the owner's
    files and manifest writer stay, and the page's rerun replaces only the page."""
    out = tmp_path / "x"
    _stage(out, {"meta.json": "{}"}, writer="infodiv extract")
    with pytest.raises(UserError, match="holds the output of infodiv extract"):
        _stage(out, {"report.html": "p"}, writer="infodiv report")
    for text in ("page 1", "page 2"):
        with staged_output(out, "infodiv report", host=("infodiv extract",)) as tmp:
            (tmp / "report.html").write_text(text)
    doc = json.loads((out / MANIFEST).read_text())
    assert doc["writer"] == "infodiv extract" and doc["by"] == {"report.html": "infodiv report"}
    assert set(doc["files"]) == {"meta.json", "report.html"}
    assert (out / "meta.json").read_text() == "{}"
    with pytest.raises(UserError, match="meta.json"):      # the owner's file is not the page's
        with staged_output(out, "infodiv report", host=("infodiv extract",)) as tmp:
            (tmp / "meta.json").write_text("[]")
    assert read_verified(out / "report.html", "redo") == b"page 2"

