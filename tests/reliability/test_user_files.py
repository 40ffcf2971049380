"""Every command that writes keeps what it did not write (DESIGN.md 2.10).

Per command: a folder holding the user's files, an existing output file, and a finished run of
another kind are each kept intact, byte for byte; a refusal is one line, exit 2, no traceback;
``--overwrite`` (or a rerun over the toolkit's own output) replaces only the files the folder's
manifest lists and says which. Synthetic runs and the tiny random-weight models: seconds each.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from _cli_checks import one_line_error
from _synthetic_runs import synthetic_run

from infodiv.cli import main
from infodiv.outputs import MANIFEST, read_manifest

DEC = ["--info-method", "none", "--inference", "0", "--no-every-variant"]
CUR = ["--objective", "accuracy", "--n-curve-orders", "4", "--n-triples", "2", "--stability",
       "0", "--no-graph", "--no-inference", "--no-selection-verdicts"]


def snapshot(path: Path) -> dict:
    """Every file under ``path`` -> its bytes."""
    return {p.relative_to(path).as_posix(): p.read_bytes()
            for p in sorted(Path(path).rglob("*")) if p.is_file()}


def contrib(n=40, m=3, seed=0):
    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(n, m, mu=0.5, random_state=seed)
    run.meta.update(model={"model_id": "synthetic"}, task="ci-control", n_examples=n)
    return run


def user_files(folder: Path) -> dict:
    """The user's notes and a folder of theirs inside ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "NOTES.txt").write_text("my thesis notes")
    (folder / "mine").mkdir(exist_ok=True)
    (folder / "mine" / "draft.md").write_text("draft")
    return {"NOTES.txt": b"my thesis notes", "mine/draft.md": b"draft"}


def kept(folder: Path, files: dict) -> bool:
    return all((folder / name).read_bytes() == data for name, data in files.items())


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """An extraction (``infodiv extract``'s output) with its analyses and page beside it,
    made stage by stage."""
    x = contrib().save(tmp_path_factory.mktemp("finished") / "x")
    assert main(["decompose", str(x), *DEC]) == 0
    assert main(["curves", str(x), *CUR]) == 0
    assert main(["report", str(x)]) == 0
    return x


@pytest.fixture
def extraction(finished, tmp_path):
    """A copy of :func:`finished` for one test."""
    import shutil

    return Path(shutil.copytree(finished, tmp_path / "x"))


# ------------------------------------------------------------------ decompose / curves --out
@pytest.mark.parametrize("cmd, flags, name", [("decompose", DEC, "decompositions.json"),
                                              ("curves", CUR, "report.json")])
def test_a_stage_into_a_folder_of_the_users_keeps_their_files(capsys, tmp_path, cmd, flags,
                                                              name):
    x = contrib().save(tmp_path / "x")
    out = tmp_path / "mine"
    theirs = user_files(out)
    assert main([cmd, str(x), "--out", str(out), *flags]) == 0
    assert kept(out, theirs)
    listed = read_manifest(out)["files"]
    assert name in listed and not set(listed) & set(theirs)
    capsys.readouterr()
    assert main([cmd, str(x), "--out", str(out), *flags]) == 0     # a rerun: its own files
    said = capsys.readouterr().out
    assert "replaced" in said and name in said and kept(out, theirs)
    # a file of the user's with the stage's name: refused, kept, nothing of the stage written
    other = tmp_path / "other"
    theirs = {**user_files(other), name: b"my own numbers"}
    (other / name).write_bytes(b"my own numbers")
    one_line_error(capsys, [cmd, str(x), "--out", str(other), *flags], name,
                   "nothing was replaced")
    assert snapshot(other) == theirs


def test_a_stage_never_writes_into_another_stages_folder_or_a_run_folder(capsys, extraction):
    before = snapshot(extraction)
    one_line_error(capsys, ["decompose", str(extraction), "--out", str(extraction / "curves"),
                            *DEC], "holds the output of infodiv curves")
    one_line_error(capsys, ["curves", str(extraction), "--out",
                            str(extraction / "decompositions"), *CUR],
                   "holds the output of infodiv decompose")
    one_line_error(capsys, ["curves", str(extraction), "--out", str(extraction), *CUR],
                   "is a run folder or an extraction")
    assert snapshot(extraction) == before


# ------------------------------------------------------------------ report --out
def test_report_keeps_the_users_page_folder_and_files(capsys, extraction, tmp_path):
    page = tmp_path / "page.html"
    page.write_text("my page")
    one_line_error(capsys, ["report", str(extraction), "--out", str(page)], "add --overwrite",
                   "page.html")
    assert page.read_text() == "my page"
    assert main(["report", str(extraction), "--out", str(page), "--overwrite"]) == 0
    assert "replaced page.html" in capsys.readouterr().out
    folder = tmp_path / "pages"
    theirs = user_files(folder)
    assert main(["report", str(extraction), "--out", str(folder)]) == 0
    assert kept(folder, theirs) and (folder / "report.html").is_file()
    assert set(read_manifest(folder)["files"]) == {"report.html", "report.json", "report.csv"}
    (folder / "report.csv").write_text("my table")           # the user's edit is theirs
    one_line_error(capsys, ["report", str(extraction), "--out", str(folder)], "report.csv")
    assert (folder / "report.csv").read_text() == "my table" and kept(folder, theirs)
    before = snapshot(extraction)
    one_line_error(capsys, ["report", str(extraction), "--out", str(extraction / "curves")],
                   "holds the output of infodiv curves")
    assert snapshot(extraction) == before


# ------------------------------------------------------------------ extract --out
def test_extract_overwrite_never_replaces_a_run_folders_extraction(capsys, no_model_load,
                                                                   tmp_path, extract_argv):
    root = tmp_path / "finished"
    synthetic_run().save(root / "contributions")
    (root / "run.json").write_text(json.dumps({"config": {}, "stages": {}}))
    user_files(root)
    before = snapshot(root)
    one_line_error(capsys, extract_argv(root / "contributions", "--overwrite"),
                   "extraction of the infodiv run folder", "nothing was written")
    assert snapshot(root) == before


def test_extract_overwrite_never_replaces_an_extraction_with_its_analyses(
        capsys, no_model_load, extraction, extract_argv):
    before = snapshot(extraction)
    one_line_error(capsys, extract_argv(extraction, "--overwrite"),
                   "never replaces analyses", "curves", "decompositions")
    one_line_error(capsys, extract_argv(extraction), "another extraction")
    assert snapshot(extraction) == before


def test_extract_into_a_folder_of_the_users_is_refused(capsys, no_model_load, tmp_path,
                                                       extract_argv):
    folder = tmp_path / "notes"
    user_files(folder)
    before = snapshot(folder)
    for more in ((), ("--overwrite",)):
        one_line_error(capsys, extract_argv(folder, *more), "NOTES.txt")
    assert snapshot(folder) == before


def test_another_extractions_shards_are_refused_unless_discarded(tmp_path):
    """The shard store: shards of another extraction (another ``run`` key) at ``out`` are
    refused, never deleted; with ``discard`` they go; the same run under another fingerprint
    (other weights at the same path) is discarded with a warning, as before."""
    import numpy as np

    from extraction.outdir import OutputRefused
    from extraction.shards import ShardStore

    out = tmp_path / "run"
    ShardStore(out, "fp1", run="sst2").save(0, {"u": np.ones(3)})
    shards = snapshot(out.parent / ".run.partial")
    with pytest.raises(OutputRefused, match="interrupted extraction .* --overwrite"):
        ShardStore(out, "fp2", run="rte")
    assert snapshot(out.parent / ".run.partial") == shards
    with pytest.warns(UserWarning, match="discarding shards"):
        assert ShardStore(out, "fp2", run="sst2").load(0) is None
    with pytest.warns(UserWarning, match="discarding shards"):
        ShardStore(out, "fp1", run="sst2").save(0, {"u": np.ones(3)})
    with pytest.warns(UserWarning, match="discarding shards"):
        assert ShardStore(out, "fp2", run="rte", discard=True).load(0) is None


@pytest.mark.slow
def test_an_interrupted_extractions_shards_are_kept_from_another_extraction(tmp_path):
    """Shards of an interrupted extraction at ``out`` are never deleted by an extraction of
    another task into the same ``out``; ``--overwrite`` (``overwrite=True``) discards them."""
    from _tiny_models import tiny_model, torch_threads
    from _tiny_tasks import tiny_task, word_records

    from extraction.outdir import OutputRefused
    from extraction.runner import extract
    from extraction.shards import partial_dir
    from extraction.tasks import Task

    model, tok = tiny_model("llama", tmp_path / "model")
    a = Task.from_records(word_records(8), template="{text} Answer:",
                          options=["negative", "positive"], label="label")
    out = tmp_path / "run"
    with torch_threads(1):
        assert extract(model, tok, a, out=out, batch_size=2, shard_size=4, progress=False,
                       only_shards=[0]) is None
        shards = snapshot(partial_dir(out))
        assert any(name.startswith("shard-") for name in shards)
        with pytest.raises(OutputRefused, match="resume shards of an interrupted extraction"):
            extract(model, tok, tiny_task(), out=out, batch_size=2, shard_size=4,
                    progress=False)
        assert snapshot(partial_dir(out)) == shards and not out.exists()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            done = extract(model, tok, tiny_task(), out=out, batch_size=2, shard_size=4,
                           progress=False, overwrite=True)
    assert done.n_examples == len(tiny_task()) and not partial_dir(out).exists()
    assert read_manifest(out)["writer"] == "infodiv extract"


# ------------------------------------------------------------------ run --out
def _tiny_data(tmp_path, n=8) -> Path:
    """An SST-2 dev file of ``n`` rows of the tiny models' words."""
    import numpy as np

    rng = np.random.default_rng(0)
    words = "the a movie film plot story was is good bad great awful not very fun boring".split()
    data = tmp_path / "data" / "glue" / "sst2"
    data.mkdir(parents=True)
    data.joinpath("dev.tsv").write_text("sentence\tlabel\n" + "".join(
        " ".join(rng.choice(words, 6)) + f"\t{i % 2}\n" for i in range(n)))
    return tmp_path / "data"


def test_run_refuses_a_different_run_and_names_the_users_files(capsys, no_model_load,
                                                              tmp_path):
    model = tmp_path / "tinymodel"
    model.mkdir()
    (model / "config.json").write_text("{}")
    out = tmp_path / "runs"
    folder = out / "tinymodel-sst2-n8-0shot-block"
    synthetic_run().save(folder / "contributions")
    (folder / "run.json").write_text(json.dumps({"config": {"model": "another", "n": 8}}))
    user_files(folder)
    before = snapshot(folder)
    err = one_line_error(capsys, ["run", "--model", str(model), "--data-dir",
                                  str(_tiny_data(tmp_path)), "--n", "8", "--out", str(out),
                                  "--quiet"], "holds a different run", "NOTES.txt", "mine/",
                         "--overwrite keeps")
    assert "contributions" not in err.split("infodiv did not write")[1]
    assert snapshot(folder) == before


def test_replacing_a_run_removes_only_the_toolkits_files(tmp_path):
    """``RunFolder.prepare("replace")`` (``infodiv run --overwrite``): the files the manifests
    list (and run.json records) go, the user's notes, folder and a file of theirs inside a
    stage folder stay, and the log says which were kept."""
    from infodiv.study.runfolder import RunFolder

    root = tmp_path / "synthetic-ci-control-n60-0shot-block"
    folder = RunFolder(root, {"model": "synthetic", "n": 60}, "infodiv run ...")
    folder.prepare("new")
    contrib().save(folder.contributions)
    folder.done("extract", "k", 1.0)
    assert main(["decompose", str(root), *DEC]) == 0
    assert main(["curves", str(root), *CUR]) == 0
    assert main(["report", str(root)]) == 0
    theirs = user_files(root)
    (root / "curves" / "my_plot.py").write_text("plot")
    theirs["curves/my_plot.py"] = b"plot"
    other = RunFolder(root, {"model": "synthetic", "n": 61}, "infodiv run ...")
    assert other.foreign() == ["NOTES.txt", "curves/my_plot.py", "mine/"]
    lines = []
    other.prepare(other.check(overwrite=True), log=lines.append)
    assert snapshot(root) == {**theirs, "run.json": (root / "run.json").read_bytes()}
    assert len(lines) == 1 and "kept 3 of yours" in lines[0] and "NOTES.txt" in lines[0]


@pytest.mark.slow
def test_run_overwrite_keeps_the_users_notes_and_folder(capsys, tmp_path):
    """``infodiv run --overwrite`` over a run folder of another run that holds the user's
    NOTES.txt and a folder of theirs: both are kept, the run is replaced, one line says so."""
    from _tiny_models import tiny_model

    tiny_model("llama", tmp_path / "llama")
    data = _tiny_data(tmp_path, 24)
    out = tmp_path / "runs"
    argv = ["run", "--model", str(tmp_path / "llama"), "--data-dir", str(data), "--out",
            str(out), "--info-method", "none", "--decompose-inference", "0",
            "--no-every-variant", *CUR, "--quiet"]
    assert main([*argv, "--n", "24"]) == 0
    folder = out / "llama-sst2-n24-0shot-block"
    theirs = user_files(folder)
    (folder / "run.json").write_text(json.dumps({**json.loads((folder / "run.json")
                                                              .read_text()),
                                                 "config": {"n": 99}}))
    capsys.readouterr()
    one_line_error(capsys, [*argv, "--n", "24"], "NOTES.txt", "--overwrite keeps")
    assert main([*argv, "--n", "24", "--overwrite"]) == 0
    said = capsys.readouterr().out
    assert "kept 2 of yours" in said and kept(folder, theirs)
    assert json.loads((folder / "run.json").read_text())["config"]["n"] == 24
    assert (folder / MANIFEST).is_file() and (folder / "report.html").is_file()


# ------------------------------------------------------------------ single output files
def test_select_and_validate_keep_an_existing_out_file(capsys, extraction, tmp_path):
    table = tmp_path / "table.json"
    table.write_text("mine")
    one_line_error(capsys, ["select", str(extraction), "--out", str(table)], "exists",
                   "--overwrite")
    rc = main(["validate", "--like", str(extraction), "--out", str(table)])
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "exists" in err and "\n" not in err, err
    assert table.read_text() == "mine"
