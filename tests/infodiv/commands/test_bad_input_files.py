"""Bad input, files: broken model folders, strict task files, hints that work.

Every case: one line on stderr, exit 2, no traceback, no model loaded, nothing changed.
"""

from __future__ import annotations

import json
import shlex
import struct

import pytest
from _cli_checks import one_line_error

from extraction.models import ModelLoadError, check_model_files
from extraction.taskfiles import load_task_file

TEMPLATE = "{text} Answer: {answer}"




def safetensors_bytes(n_floats: int = 6) -> bytes:
    header = json.dumps({"w": {"dtype": "F32", "shape": [n_floats],
                               "data_offsets": [0, 4 * n_floats]}}).encode()
    return struct.pack("<Q", len(header)) + header + b"\0" * (4 * n_floats)


@pytest.fixture
def model_folder(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_bytes(safetensors_bytes())
    return folder


# ------------------------------------------------------------------ model folders
def test_broken_config_json_is_one_line(capsys, no_model_load, model_folder, tmp_path):
    (model_folder / "config.json").write_text('{"model_type": "llama",')
    for cmd in (["extract", "--task", "sst2"], ["run"]):
        one_line_error(capsys, [*cmd, "--model", str(model_folder), "--out",
                                str(tmp_path / "out")], "config.json is not valid JSON")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_truncated_safetensors_is_one_line(capsys, no_model_load, model_folder, tmp_path):
    full = safetensors_bytes()
    check_model_files(model_folder)   # the whole file passes
    for cut in (4, 20, len(full) - 1):
        (model_folder / "model.safetensors").write_bytes(full[:cut])
        with pytest.raises(ModelLoadError, match="truncated"):
            check_model_files(model_folder)
    one_line_error(capsys, ["run", "--model", str(model_folder), "--out", str(tmp_path / "o")],
                   "model.safetensors", "is truncated")


def test_loader_failure_is_one_line(capsys, model_folder, tmp_path, monkeypatch):
    """Whatever transformers raises while loading becomes one ModelLoadError line."""
    import transformers

    def broken(*a, **k):
        raise OSError("Unable to load weights from checkpoint file\nline two\nline three")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", broken)
    one_line_error(capsys, ["extract", "--model", str(model_folder), "--task", "sst2",
                            "--out", str(tmp_path / "o"), "--quiet"],
                   "cannot load model", "OSError: Unable to load weights")


def test_model_naming_a_file(capsys, no_model_load, tmp_path):
    f = tmp_path / "weights.bin"
    f.write_bytes(b"x")
    err = one_line_error(capsys, ["run", "--model", str(f), "--out", str(tmp_path / "o")],
                         "is a file, not a model folder")
    assert "does not exist" not in err and "did you mean" not in err


# ------------------------------------------------------------------ task files
def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def load(path, **kw):
    kw = {"template": TEMPLATE, "options": ["neg", "pos"], "label_field": "y", **kw}
    return load_task_file(path, **kw)


def test_task_file_bom_is_dropped(tmp_path):
    path = write(tmp_path, "bom.csv", "\ufefftext,y\ngood,pos\nbad,neg\n")
    assert load(path).labels.tolist() == [1, 0]
    path = write(tmp_path, "bom.jsonl", '\ufeff{"text": "good", "y": "pos"}\n')
    assert load(path).labels.tolist() == [1]


@pytest.mark.parametrize("text, needles", [
    ('text,y\ngood,pos\n"bad,neg\nfine,pos\nmore,neg\n', ["line 3", "never closed"]),
    ("text,y\ngood,pos\nbad\n", ["line 3, column 2 (y)", "1 cell(s), the header 2"]),
    ("text,y\ngood,pos,extra\n", ["line 2, column 3", "3 cell(s)"]),
    ("text,y\ngood,pos\nbad,\n", ["line 3, column 'y'", "label is empty", "--unlabelled"]),
    ("text,y\ngood,pos\nbad,maybe\n", ["line 3, column 'y'", "'maybe'"]),
    ("text,label\ngood,pos\n", ["--label-field 'y' is not a column", "['text', 'label']"]),
    ("txt,y\ngood,pos\n", ["field(s) ['text'] are not columns"]),
])
def test_task_file_errors_name_file_line_and_column(tmp_path, text, needles):
    path = write(tmp_path, "t.csv", text)
    with pytest.raises(ValueError) as exc:
        load(path)
    msg = str(exc.value)
    assert str(path) in msg or "--label-field" in msg, msg
    for needle in needles:
        assert needle in msg, (needle, msg)


def test_task_file_needs_an_answer_slot_and_is_a_file(tmp_path):
    path = write(tmp_path, "t.csv", "text,y\ngood,pos\n")
    with pytest.raises(ValueError, match=r"has no \{answer\} slot"):
        load(path, template="{text} Sentiment:")
    with pytest.raises(ValueError, match="is a folder"):
        load(tmp_path)
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        load(tmp_path / "d.csv")
    empty = write(tmp_path, "e.csv", "text,y\ngood,\n")
    assert load(empty, allow_unlabelled=True).labels.tolist() == [-1]


def test_cli_task_file_label_field_required_unless_unlabelled(capsys, no_model_load, tmp_path,
                                                              model_folder):
    path = write(tmp_path, "t.csv", "text,y\ngood,pos\nbad,neg\nok,pos\nmeh,neg\n")
    base = ["--model", str(model_folder), "--task-file", str(path), "--template", TEMPLATE,
            "--options", "neg,pos", "--out", str(tmp_path / "o")]
    for cmd in ("extract", "run"):
        one_line_error(capsys, [cmd, *base], "needs --label-field", "--unlabelled")
        one_line_error(capsys, [cmd, *base, "--label-field", "label"],
                       "--label-field 'label' is not a column")
        one_line_error(capsys, [cmd, *base, "--label-field", "y", "--template", "{text}"],
                       "no {answer} slot")
        one_line_error(capsys, [cmd, *base[:3], str(tmp_path), *base[4:], "--label-field", "y"],
                       "is a folder")
    one_line_error(capsys, ["run", *base, "--label-field", "y", "--task", "sst2"],
                   "not both")
    one_line_error(capsys, ["run", "--template", TEMPLATE, "--out", str(tmp_path / "o")],
                   "--template needs --task-file")


# ------------------------------------------------------------------ hints that work when pasted
def test_resume_command_is_complete_and_pasteable(tmp_path, monkeypatch):
    """The Ctrl-C hint keeps every option, with absolute quoted paths, so it works pasted from
    any folder; run.json keeps the same command with relative paths (reports show it)."""
    from infodiv.cli import build_parser
    from infodiv.commands.run import rerun_command

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my data").mkdir()
    argv = ["run", "--model", "my model", "--task", "sst2", "--n", "40", "--seed", "3",
            "--data-dir", "my data", "--out", "out dir", "--threads", "1",
            "--n-curve-orders", "7", "--objective", "accuracy", "--info-method", "copula",
            "--batch-size", "4", "--device", "cpu", "--overwrite"]
    (tmp_path / "my model").mkdir()
    args = build_parser().parse_args(argv)
    portable = shlex.split(rerun_command(args._parser, args)("my model", "sst2"))
    assert portable[portable.index("--out") + 1] == "out dir"   # run.json, reports: relative
    words = shlex.split(rerun_command(args._parser, args)("my model", "sst2", absolute=True))
    assert words[:2] == ["infodiv", "run"] and "--overwrite" not in words
    again = build_parser().parse_args(words[1:])
    for name in ("n", "seed", "threads", "n_permutations", "objective", "info_method",
                 "batch_size", "device", "task"):
        assert getattr(again, name) == getattr(args, name), name
    assert again.model == [str(tmp_path / "my model")]
    assert again.data_dir == tmp_path / "my data" and again.out == tmp_path / "out dir"


def test_overwrite_hint_names_the_folder_the_run_is_in_now(capsys, tmp_path):
    from infodiv.runfiles import reextract

    root = tmp_path / "moved" / "m-sst2-n4-0shot-block"
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps(
        {"command": "infodiv run --model m --task sst2 --n 4 --out /old/place"}))
    hint = reextract(root / "contributions", root, None)
    words = shlex.split(hint.split("`")[1])
    assert words[words.index("--out") + 1] == str(tmp_path / "moved") and "/old/place" not in hint
