"""The experiments' writers keep what they did not write (DESIGN.md 2.10): ``infodiv zoo
report|depth-report|depth-page|depth-bundle|depth-reproduce``.

Per command: a file of the user's in ``--out`` (or a model's folder, a depth root's
``analysis/``, the bundle) with one of the names it writes is kept byte for byte and refused in
one line, exit 2, no traceback, before any work; a rerun replaces only the files its manifest
lists and says which; a per-model report or a depth summary edited since the toolkit wrote it
is recomputed and the log says so (``zoo report``, which recomputes it) or refused with the
command that recomputes it (``--analyses`` without curves, ``depth-page``, ``depth-reproduce``).
Folders written before manifests are taken as the toolkit's only with ``--adopt``, and then only
files git holds unchanged. Tiny synthetic zoos and fake depth roots: seconds each.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from _cli_checks import one_line_error
from _paths import ROOT

from infodiv.cli import main
from infodiv.outputs import MANIFEST, adopt, read_manifest

#: the zoo report at its smallest: curves without inference, no intervals, no null
FAST = ["--analyses", "--resamples", "0", "--probe-null", "0", "--information-null", "0",
        "--info-method", "none", "--n-bootstrap", "0", "--n-permutations", "0", "--quiet"]
CURVES = ["--analyses", "curves", "--curves-inference", "0", "--curves-power", "0",
          "--curves-secondary", "0", "0"]
NAMES = ("llama-d8-L1-s0", "llama-d8-L2-s0")


def snapshot(path: Path) -> dict:
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(Path(path).rglob("*")) if p.is_file()}


def tiny_zoo(out: Path) -> Path:
    """Two synthetic models' contributions and their records, as a report wrote them."""
    from _synthetic_runs import synthetic

    rows = []
    for i, name in enumerate(NAMES):
        m = 2 * (i + 1) + 1
        run = synthetic(n=80, m=m, c=2, signal=0.8, seed=0)     # the same labels: seed 0
        run.meta["fingerprint"] = f"tiny-{m}"
        run.save(out / "contributions" / name)
        rows.append({"model": name, "depth": i + 1, "repeats": 1, "shared": False, "seed": 0,
                     "width": 8, "params": 10, "executions": i + 1, "n_members": m})
    (out / "summary.json").write_text(json.dumps(rows))
    adopt(out, "infodiv zoo report", ["summary.json"])
    return out


def zoo(out: Path, *more: str) -> list[str]:
    return ["zoo", "report", "--from-contributions", "--out", str(out), *FAST, *more]


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    out = tiny_zoo(tmp_path_factory.mktemp("zoo") / "out")
    assert main(zoo(out, *CURVES)) == 0
    return out


@pytest.fixture
def done(reported, tmp_path):
    return Path(shutil.copytree(reported, tmp_path / "out"))


# ------------------------------------------------------------------ zoo report
def test_zoo_report_refuses_a_users_page_file_before_any_work(capsys, tmp_path):
    out = tiny_zoo(tmp_path / "out")
    (out / "summary.md").write_text("my reading")
    (out / "README.md").write_text("my readme")        # no template: README.md is not written
    before = snapshot(out)
    one_line_error(capsys, zoo(out), "summary.md", "did not write", "nothing was replaced")
    assert snapshot(out) == before                      # no model folder, no figure: no work
    (out / "summary.md").unlink()
    assert main(zoo(out)) == 0
    assert (out / "README.md").read_text() == "my readme"
    assert "README.md" not in read_manifest(out)["files"]


@pytest.mark.slow
def test_zoo_report_rerun_replaces_only_its_own_files(capsys, done):
    (done / "NOTES.txt").write_text("mine")
    capsys.readouterr()
    assert main(zoo(done, *CURVES)) == 0
    said = capsys.readouterr().out
    assert f"{done}: replaced" in said and "summary.json" in said
    assert (done / "NOTES.txt").read_text() == "mine"
    listed = read_manifest(done)["files"]
    assert "summary.json" in listed and "NOTES.txt" not in listed
    for name in NAMES:
        assert {"report.json", "zoo_settings.json"} <= set(
            read_manifest(done / name / "curves")["files"])
        assert "figures.json" in read_manifest(done / name)["files"]


def test_zoo_report_refuses_a_users_file_in_a_model_folder(capsys, tmp_path):
    out = tiny_zoo(tmp_path / "out")
    (out / NAMES[1] / "curves").mkdir(parents=True)
    (out / NAMES[1] / "curves" / "report.json").write_text("{}")
    before = snapshot(out)
    one_line_error(capsys, zoo(out, *CURVES), "report.json", "nothing was replaced")
    assert snapshot(out) == before


@pytest.mark.slow
def test_an_edited_per_model_report_is_recomputed_and_said(capsys, done):
    path = done / NAMES[0] / "curves" / "report.json"
    fresh = json.loads(path.read_text())
    path.write_text(path.read_text().replace('"objectives"', '"objectives" ', 1) + "\n")
    figures = done / NAMES[1] / "figures.json"
    figures.write_text(figures.read_text()[:-20])                   # truncated
    capsys.readouterr()
    assert main(zoo(done, *CURVES)) == 0
    said = capsys.readouterr().out
    assert f"{path} changed since infodiv zoo report wrote it" in said and "recomput" in said
    assert f"{figures} changed since" in said
    assert json.loads(path.read_text())["objectives"].keys() == fresh["objectives"].keys()
    assert read_manifest(path.parent)["files"]["report.json"] != ""
    # only rereading (no --analyses curves): an edited report is refused, with the command
    path.write_text(path.read_text()[:-50])
    one_line_error(capsys, zoo(done, *CURVES[2:]), str(path), "changed since",
                   "--analyses curves")


def test_zoo_report_adopts_only_with_adopt_and_only_unchanged_in_git(capsys, tmp_path):
    out = tiny_zoo(tmp_path / "out")
    assert main(zoo(out)) == 0
    for folder in [out, *(out / n for n in NAMES)]:
        (folder / MANIFEST).unlink()               # results written before manifests
    before = snapshot(out)
    one_line_error(capsys, zoo(out), "did not write", "nothing was replaced")
    assert snapshot(out) == before
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(git + ["init", "-q"], cwd=out, check=True)
    subprocess.run(git + ["add", "."], cwd=out, check=True)
    subprocess.run(git + ["commit", "-qm", "x"], cwd=out, check=True)
    (out / "summary.md").write_text("edited after the commit")
    one_line_error(capsys, zoo(out, "--adopt"), "summary.md", "differs from its version in git")
    subprocess.run(["git", "checkout", "-q", "--", "summary.md"], cwd=out, check=True)
    capsys.readouterr()
    assert main(zoo(out, "--adopt")) == 0
    assert "adopted" in capsys.readouterr().out
    assert "summary.md" in read_manifest(out)["files"]


# ------------------------------------------------------------------ depth-page
@pytest.fixture
def depth_page(tmp_path):
    src = ROOT / "docs" / "results" / "depth"
    if not (src / MANIFEST).is_file():
        pytest.skip("no committed depth page with its manifest")
    return Path(shutil.copytree(src, tmp_path / "depth"))


def test_depth_page_rerun_replaces_only_its_own_and_keeps_the_numbers(capsys, depth_page):
    (depth_page / "NOTES.txt").write_text("mine")
    summary = (depth_page / "summary.json").read_bytes()
    capsys.readouterr()
    assert main(["zoo", "depth-page", "--out", str(depth_page)]) == 0
    assert "replaced 4 file(s) infodiv zoo depth-report wrote before" in capsys.readouterr().out
    assert (depth_page / "summary.json").read_bytes() == summary
    assert (depth_page / "NOTES.txt").read_text() == "mine"


@pytest.mark.parametrize("name, needles", [
    ("summary.json", ("changed since", "infodiv zoo depth-report ROOT")),
    ("README.md", ("README.md", "did not write", "nothing was replaced"))])
def test_depth_page_refuses_an_edited_summary_or_page(capsys, depth_page, name, needles):
    path = depth_page / name
    path.write_text(path.read_text().replace("0.", "1.", 1))
    before = snapshot(depth_page)
    one_line_error(capsys, ["zoo", "depth-page", "--out", str(depth_page)], *needles)
    assert snapshot(depth_page) == before


def test_depth_page_without_a_manifest_needs_adopt(capsys, depth_page):
    (depth_page / MANIFEST).unlink()
    before = snapshot(depth_page)
    one_line_error(capsys, ["zoo", "depth-page", "--out", str(depth_page)], "no readable",
                   "infodiv zoo depth-report")
    assert snapshot(depth_page) == before
    assert main(["zoo", "depth-page", "--out", str(depth_page), "--adopt"]) == 0
    assert set(read_manifest(depth_page)["files"]) == {"summary.json", "README.md",
                                                       "depth.png", "truncated.png"}


# ------------------------------------------------------------------ depth-report, bundle
def fake_root(path: Path, models=("llama-d4-L1-s0",)) -> Path:
    """A depth root as far as the checks before any work read it (files, not a trained grid),
    with each model's extraction beside it."""
    path.mkdir(parents=True)
    for name in ("depth.json", "heldout.jsonl", "heldout.task.json"):
        (path / name).write_text("{}")
    for name in models:
        (path / "models" / name / "model").mkdir(parents=True)
        (path / "models" / name / "model" / "zoo.json").write_text(json.dumps({"model": name}))
        run = path / "analysis" / "contributions" / name
        run.mkdir(parents=True)
        (run / "arrays.npz").write_bytes(b"arrays")
        (run / "meta.json").write_text("{}")
    return path


def test_depth_report_refuses_a_users_file_before_any_work(capsys, tmp_path):
    root = fake_root(tmp_path / "k2")
    out = tmp_path / "page"
    out.mkdir()
    (out / "README.md").write_text("my page")
    before = snapshot(tmp_path)
    one_line_error(capsys, ["zoo", "depth-report", str(root), "--out", str(out)], "README.md",
                   "did not write", "nothing was replaced")
    (out / "README.md").unlink()
    (root / "analysis" / "llama-d4-L1-s0.json").write_text("{}")     # not the toolkit's
    one_line_error(capsys, ["zoo", "depth-report", str(root), "--out", str(out)],
                   "llama-d4-L1-s0.json", "analysis")
    del before["page/README.md"]
    assert snapshot(tmp_path) == {**before, "k2/analysis/llama-d4-L1-s0.json": b"{}"}


def test_depth_bundle_replaces_only_its_own_and_reproduce_refuses_an_edit(capsys, tmp_path):
    root = fake_root(tmp_path / "k2")
    bundle = tmp_path / "bundle"
    assert main(["zoo", "depth-bundle", str(root), "--bundle", str(bundle)]) == 0
    assert "CHECKSUMS.json" in read_manifest(bundle)["files"]
    capsys.readouterr()
    assert main(["zoo", "depth-bundle", str(root), "--bundle", str(bundle)]) == 0
    assert "replaced" in capsys.readouterr().out
    (bundle / "notes.txt").write_text("mine")
    one_line_error(capsys, ["zoo", "depth-bundle", str(root), "--bundle", str(bundle)],
                   "notes.txt", "not a bundle this toolkit wrote")
    assert (bundle / "notes.txt").read_text() == "mine"
    (bundle / "notes.txt").unlink()
    meta = bundle / "k2" / "analysis" / "contributions" / "llama-d4-L1-s0" / "meta.json"
    meta.write_text('{"edited": 1}')
    one_line_error(capsys, ["zoo", "depth-reproduce", "--bundle", str(bundle), "--out",
                            str(tmp_path / "x"), "--work", str(tmp_path / "w")],
                   "changed", "meta.json", "infodiv zoo depth-bundle")
    assert not (tmp_path / "x").exists() and not (tmp_path / "w").exists()
