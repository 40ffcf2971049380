"""A number edited in any stage output is refused or recomputed, never published (DESIGN.md
2.10).

Every file a stage wrote is listed with its sha256 in its folder's manifest; a reader checks it
there, so the check needs no key inside the file and no ``run.json``. Editing one digit of any
stage output (``meta.json``, ``arrays.npz``, ``decompositions.json``, the curves
``report.json``, their markdown) of a run made stage by stage or by ``infodiv run``, with
``run.json``, without it and with it truncated, makes ``infodiv report`` refuse before a page
is written: exit 2, one line naming the file and the command that recomputes it, no traceback.
``infodiv run`` recomputes such a stage and says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _cli_checks import one_line_error

from infodiv.cli import main
from infodiv.outputs import MANIFEST

DEC = ["--info-method", "none", "--inference", "0", "--no-every-variant"]
CUR = ["--objective", "accuracy", "--n-curve-orders", "4", "--n-triples", "2", "--stability",
       "0", "--no-graph", "--no-inference", "--no-selection-verdicts"]
STAGE_FILES = ("meta.json", "arrays.npz", "decompositions/decompositions.json",
               "decompositions/decompositions.md", "curves/report.json", "curves/report.md")


def contrib(n=40, m=3):
    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(n, m, mu=0.5, random_state=0)
    run.meta.update(model={"model_id": "synthetic"}, task="ci-control", n_examples=n)
    return run


def edit_a_number(path: Path) -> None:
    """Change one digit of the first number with a fraction in a text file (a JSON value, a
    markdown table cell) or one byte in the middle of a binary file, keeping it well formed
    where it was (the file still parses: only its sha256 tells)."""
    data = path.read_bytes()
    if path.suffix in (".json", ".md"):
        text = data.decode()
        m = re.search(r"\d\.(\d)", text[len(text) // 3:])
        assert m, path
        i = len(text) // 3 + m.start(1)
        text = text[:i] + ("7" if text[i] != "7" else "3") + text[i + 1:]
        path.write_text(text)
    else:
        b = bytearray(data)
        b[len(b) // 2] ^= 0x01
        path.write_bytes(bytes(b))


@pytest.fixture(scope="module")
def stage_by_stage(tmp_path_factory):
    """An extraction, then ``decompose``, ``curves`` and ``report`` on it, one command each."""
    x = contrib().save(tmp_path_factory.mktemp("x") / "x")
    assert main(["decompose", str(x), *DEC]) == 0
    assert main(["curves", str(x), *CUR]) == 0
    assert main(["report", str(x)]) == 0
    return x


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A run folder with run.json (its stages recorded) and the same stage outputs."""
    from infodiv.study.runfolder import RunFolder

    root = tmp_path_factory.mktemp("runs") / "synthetic-ci-control-n40-0shot-block"
    folder = RunFolder(root, {"model": "synthetic", "task": "ci-control", "n": 40},
                       "infodiv run --model synthetic --task ci-control --n 40")
    folder.prepare("new")
    contrib().save(folder.contributions)
    folder.done("extract", "k-extract", 1.0)
    assert main(["decompose", str(root), *DEC]) == 0
    assert main(["curves", str(root), *CUR]) == 0
    assert main(["report", str(root)]) == 0
    assert json.loads((root / "run.json").read_text())["stages"].keys() == {
        "extract", "decompose", "curves"}
    return root


def _copy(src: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(src, dest)
    return dest


def _refused(capsys, root: Path, page: Path, *needles, advice: bool = True) -> str:
    err = one_line_error(capsys, ["report", str(root), "--out", str(page)], *needles)
    assert not page.exists() and not page.with_suffix(".json").exists(), err
    assert not advice or "recompute" in err or "re-extract" in err, err
    return err


@pytest.mark.parametrize("name", STAGE_FILES)
def test_an_edited_number_in_any_stage_output_is_refused_stage_by_stage(
        capsys, stage_by_stage, tmp_path, name):
    x = _copy(stage_by_stage, tmp_path / "x")
    assert main(["report", str(x), "--out", str(tmp_path / "before.html")]) == 0
    edit_a_number(x / name)
    _refused(capsys, x, tmp_path / "page.html", Path(name).name)


@pytest.mark.parametrize("run_json", ["kept", "missing", "truncated"])
@pytest.mark.parametrize("name", ["contributions/meta.json", "contributions/arrays.npz",
                                  "decompositions/decompositions.json", "curves/report.json"])
def test_an_edited_number_in_a_run_folder_is_refused_with_or_without_run_json(
        capsys, run_folder, tmp_path, name, run_json):
    root = _copy(run_folder, tmp_path / run_folder.name)
    edit_a_number(root / name)
    if run_json == "missing":
        (root / "run.json").unlink()
    elif run_json == "truncated":   # refused for its run.json first, before any stage file
        text = (root / "run.json").read_text()
        (root / "run.json").write_text(text[: len(text) // 2])
        _refused(capsys, root, tmp_path / "page.html", "run.json", advice=False)
        (root / "run.json").unlink()
    _refused(capsys, root, tmp_path / "page.html", Path(name).name)


def test_a_stripped_checksum_is_no_way_around_the_manifest(capsys, stage_by_stage, tmp_path):
    """A meta.json edited and stripped of its own ``doc_sha256`` is refused by every reader
    (the manifest beside it holds the sha256); with the manifest deleted too, nothing is left
    to check it against: refused as well."""
    x = _copy(stage_by_stage, tmp_path / "x")
    doc = json.loads((x / "meta.json").read_text())
    doc.pop("doc_sha256")
    doc["meta"]["n_examples"] = 61
    (x / "meta.json").write_text(json.dumps(doc, indent=2))
    for argv in (["decompose", str(x), "--out", str(tmp_path / "d"), *DEC],
                 ["curves", str(x), "--out", str(tmp_path / "c"), *CUR],
                 ["report", str(x), "--out", str(tmp_path / "p.html")]):
        one_line_error(capsys, argv, "meta.json", "re-extract")
    (x / MANIFEST).unlink()
    for argv in (["decompose", str(x), "--out", str(tmp_path / "d"), *DEC],
                 ["report", str(x), "--out", str(tmp_path / "p.html")]):
        one_line_error(capsys, argv, "meta.json", "no checksum", "re-extract")
    assert not (tmp_path / "p.html").exists() and not (tmp_path / "d").exists()


@pytest.mark.parametrize("damage", ["truncated", "deleted", "manifest deleted",
                                    "manifest edited"])
def test_a_damaged_decompositions_json_never_drops_its_section_silently(
        capsys, stage_by_stage, tmp_path, damage):
    x = _copy(stage_by_stage, tmp_path / "x")
    path = x / "decompositions" / "decompositions.json"
    if damage == "truncated":
        path.write_text(path.read_text()[:100])
    elif damage == "deleted":
        path.unlink()
    elif damage == "manifest deleted":
        (x / "decompositions" / MANIFEST).unlink()
    else:
        doc = json.loads((x / "decompositions" / MANIFEST).read_text())
        doc["files"]["decompositions.json"] = "0" * 64
        (x / "decompositions" / MANIFEST).write_text(json.dumps(doc))
    from infodiv.study.runfolder import verify_files

    assert [stage for stage, _ in verify_files(x)] == ["decompose"]
    _refused(capsys, x, tmp_path / "page.html", "decompositions", "infodiv decompose")


def test_the_page_readers_refuse_an_edited_file_themselves(stage_by_stage, tmp_path):
    """The library readers of a page (the answer block, the rows, the one-screen summary)
    check the manifest too, whoever calls them."""
    from infodiv.reports.answer import answer
    from infodiv.reports.summary import collect
    from infodiv.runfiles import UserError

    x = _copy(stage_by_stage, tmp_path / "x")
    assert answer(x)["verdicts"] is not None and collect(x)["rows"]
    edit_a_number(x / "curves" / "report.json")
    for read in (answer, collect):
        with pytest.raises(UserError, match="report.json changed since infodiv curves"):
            read(x)


def test_a_stage_recomputed_into_its_own_folder_replaces_the_damaged_file(capsys,
                                                                          stage_by_stage,
                                                                          tmp_path):
    """The refusal's advice works: ``infodiv curves X`` replaces its own damaged report.json
    (and says so); the page is then written from the recomputed numbers."""
    x = _copy(stage_by_stage, tmp_path / "x")
    good = json.loads((x / "curves" / "report.json").read_text())["objectives"]
    edit_a_number(x / "curves" / "report.json")
    err = _refused(capsys, x, tmp_path / "page.html", "report.json")
    redo = err.split("`")[1]
    assert redo == f"infodiv curves {x}"
    assert main(["curves", str(x), *CUR]) == 0
    assert "replaced" in capsys.readouterr().out
    again = json.loads((x / "curves" / "report.json").read_text())["objectives"]
    assert again["accuracy"]["curves"] == good["accuracy"]["curves"]
    assert main(["report", str(x), "--out", str(tmp_path / "page.html")]) == 0


@pytest.mark.slow
def test_infodiv_run_recomputes_an_edited_stage_and_refuses_without_run_json(capsys,
                                                                            tmp_path):
    """Through ``infodiv run``: an edited decompositions.json is recomputed (the run says
    why), the page holds the recomputed numbers; a run folder whose run.json is gone is
    refused in one line before anything is written."""
    from _tiny_models import tiny_model

    tiny_model("llama", tmp_path / "llama")
    import numpy as np

    rng = np.random.default_rng(0)
    words = "the a movie film plot story was is good bad great awful not very fun boring".split()
    data = tmp_path / "data" / "glue" / "sst2"
    data.mkdir(parents=True)
    data.joinpath("dev.tsv").write_text("sentence\tlabel\n" + "".join(
        " ".join(rng.choice(words, 6)) + f"\t{i % 2}\n" for i in range(24)))
    argv = ["run", "--model", str(tmp_path / "llama"), "--data-dir", str(tmp_path / "data"),
            "--n", "24", "--out", str(tmp_path / "runs"), "--info-method", "none",
            "--decompose-inference", "0", "--no-every-variant", *CUR, "--quiet"]
    assert main(argv) == 0
    root = tmp_path / "runs" / "llama-sst2-n24-0shot-block"
    dec = root / "decompositions" / "decompositions.json"
    good = dec.read_bytes()
    edit_a_number(dec)
    capsys.readouterr()
    assert main(argv) == 0
    said = capsys.readouterr().out
    assert "decompose: decompositions/decompositions.json is missing or changed" in said
    assert "recomputing" in said and dec.read_bytes() == good
    (root / "run.json").unlink()
    edit_a_number(dec)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    one_line_error(capsys, argv, "not made by infodiv run", "nothing was written")
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before
    _refused(capsys, root, tmp_path / "page.html", "decompositions.json")
