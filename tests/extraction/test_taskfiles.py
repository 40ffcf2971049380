"""Custom task files (.csv, .jsonl): extraction.taskfiles and `infodiv extract --task-file`."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from _tiny_models import torch_threads

from extraction.contributions import Contributions
from extraction.taskfiles import load_task_file, parse_options

TEMPLATE = "{text} Question: Was that sentence positive or negative? Answer: {answer}"
ROWS = [{"text": "the movie was good", "y": "positive"}, {"text": "bad", "y": "0"},
        {"text": "it is not a good film", "y": ""}, {"text": "great fun", "y": 1}]


def _write(folder, rows, kind):
    path = folder / f"data.{kind}"
    if kind == "csv":
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=["text", "y"])
            w.writeheader()
            w.writerows(rows)
    else:
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    return path


@pytest.mark.parametrize("kind", ["csv", "jsonl"])
def test_load_task_file_labels_as_strings_indices_or_missing(tmp_path, kind):
    path = _write(tmp_path, ROWS, kind)
    task = load_task_file(path, template=TEMPLATE, options=["negative", "positive"],
                          label_field="y", allow_unlabelled=True)
    assert task.labels.tolist() == [1, 0, -1, 1] and task.n_unlabelled == 1
    assert task.prompt(0).endswith("positive or negative? Answer:") and task.name == "data"
    assert task.meta["n_rows"] == 4 and task.meta["source_files"] == [str(path)]
    unlabelled = load_task_file(path, template=TEMPLATE, options=["negative", "positive"])
    assert unlabelled.labels.tolist() == [-1] * 4
    assert len(load_task_file(path, template=TEMPLATE, options=["a", "b"], n=2)) == 2


def test_task_file_errors_name_the_problem(tmp_path):
    opts = ["negative", "positive"]
    with pytest.raises(ValueError, match="must end in .csv or .jsonl"):
        load_task_file(tmp_path / "x.txt", template=TEMPLATE, options=opts)
    with pytest.raises(FileNotFoundError):
        load_task_file(tmp_path / "x.csv", template=TEMPLATE, options=opts)
    path = _write(tmp_path, [{"text": "good", "y": "neutral"}], "jsonl")
    with pytest.raises(ValueError, match=r"record 0: label 'neutral' in field 'y' is neither"):
        load_task_file(path, template=TEMPLATE, options=opts, label_field="y")
    path = _write(tmp_path, [{"text": "good", "y": 5}], "jsonl")
    with pytest.raises(ValueError, match="outside the 2 options"):
        load_task_file(path, template=TEMPLATE, options=opts, label_field="y")
    (tmp_path / "bad.jsonl").write_text('{"text": "a"}\nnot json\n')
    with pytest.raises(ValueError, match="line 2, column 1 is not JSON"):
        load_task_file(tmp_path / "bad.jsonl", template=TEMPLATE, options=opts)
    with pytest.raises(ValueError, match=r"field\(s\) \['text'\] are not columns"):
        load_task_file(_write(tmp_path, [{"txt": "a", "y": 0}], "jsonl"), template=TEMPLATE,
                       options=opts)
    assert parse_options('["a, b", "c"]') == ["a, b", "c"]
    assert parse_options("negative, positive") == ["negative", "positive"]


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from _tiny_models import tiny_model

    folder = tmp_path_factory.mktemp("tiny") / "llama"
    tiny_model("llama", folder)
    return folder


def test_cli_extract_task_file_unlabelled_and_refusals(tiny_folder, tmp_path, capsys):
    from infodiv.cli import main

    path = _write(tmp_path, ROWS, "csv")
    out = tmp_path / "run"
    argv = ["extract", "--model", str(tiny_folder), "--task-file", str(path), "--template",
            TEMPLATE, "--options", "negative,positive", "--label-field", "y", "--unlabelled",
            "--out", str(out), "--device", "cpu", "--quiet"]
    with torch_threads(1):
        assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "N=4 M=5 C=2" in printed and "unlabelled=1" in printed
    c = Contributions.load(out)
    assert c.raw_labels.tolist() == [1, 0, -1, 1] and c.meta["task"] == "data"
    with torch_threads(1):   # the same command again: the same run, reused, not refused
        assert main(argv) == 0
    assert Contributions.load(out).meta["fingerprint"] == c.meta["fingerprint"]
    assert c.meta["task_meta"]["label_field"] == "y" and c.meta["max_exactness_error"] < 1e-4
    # neuron granularity with top-k and the last-but-one position through the CLI
    with torch_threads(1):
        assert main(argv[:-5] + ["--out", str(tmp_path / "n"), "--granularity", "neuron",
                                 "--neuron-top-k", "3", "--position", "-2", "--device", "cpu",
                                 "--quiet"]) == 0
    n = Contributions.load(tmp_path / "n")
    assert n.n_members == 1 + 2 + 2 * 4 and n.meta["positions"] == [-2] * 4
    capsys.readouterr()      # the runs above may print transformers' weight-loading bar
    for bad, msg in [(["--task", "sst2"], "exactly one of --task"),
                     ([], "--task-file needs --template and --options"),
                     (["--shots", "1"], "--shots needs labelled demonstrations; 1 of 4")]:
        base = ["extract", "--model", str(tiny_folder), "--task-file", str(path), "--quiet",
                "--out", str(tmp_path / "x")]
        if msg.startswith("--shots"):
            base += ["--template", TEMPLATE, "--options", "negative,positive", "--label-field",
                     "y", "--unlabelled"]
        assert main(base + bad) == 2
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1
    assert np.isfinite(c.u).all()


def test_cli_fixed_demos_share_one_prefix(tiny_folder, tmp_path, capsys):
    """--fixed-demos: every prompt starts with the same demonstrations, drawn from records that
    are no example (a task file's rows after --n), so the savings cache them as one prefix."""
    from infodiv.cli import main

    rows = [{"text": f"sentence number {i}", "y": i % 2} for i in range(9)]
    path = _write(tmp_path, rows, "jsonl")
    base = ["extract", "--model", str(tiny_folder), "--task-file", str(path), "--template",
            TEMPLATE, "--options", "negative,positive", "--label-field", "y", "--n", "4",
            "--device", "cpu", "--quiet"]
    with torch_threads(1):
        assert main([*base, "--shots", "2", "--fixed-demos", "--out", str(tmp_path / "f")]) == 0
        assert main([*base, "--shots", "2", "--out", str(tmp_path / "r")]) == 0
    fixed, per_example = Contributions.load(tmp_path / "f"), Contributions.load(tmp_path / "r")
    demos = fixed.meta["task_meta"]
    assert demos["fixed_demos"] is True and demos["demo_source"] == "other split"
    assert fixed.meta["savings"]["prefix_cache_tokens"] > 0
    assert per_example.meta["savings"]["prefix_cache_tokens"] < \
        fixed.meta["savings"]["prefix_cache_tokens"]
    assert fixed.meta["max_exactness_error"] < 1e-4
    capsys.readouterr()
    for bad, msg in [(["--fixed-demos"], "--fixed-demos needs --shots"),
                     (["--shots", "6", "--fixed-demos"], "needs 6 labelled records after the "
                                                         "first --n 4")]:
        assert main([*base, *bad, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert msg in err and len(err.strip().splitlines()) == 1
