"""Tasks: Table 3 templates, loaders on the real files, demonstrations, custom tasks, bad input."""

from __future__ import annotations

import csv
import json
import re
import shutil
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from _paths import ROOT

from extraction import SUPPORTED_TASKS, Task, get_task
from extraction import datasets as ds

SST2_TEMPLATE = "{text}\nQuestion: Was that sentence positive or negative? Answer: {answer}"
PAPER = ROOT.parent / "shared" / "seeds" / (
    "paper-diversity-of-transformer-layers.txt")


def _toy(n=6, **kw):
    records = [{"text": f"sentence number {i}", "y": i % 2} for i in range(n)]
    return Task.from_records(records, template=SST2_TEMPLATE, options=["negative", "positive"],
                             label="y", name="toy", **kw)


# ----------------------------------------------------------------------------- custom tasks
def test_from_records_prompt_segments_answer_prefix():
    task = _toy(truncatable=["text"])
    assert len(task) == 6
    assert task.prompt(1) == (
        "sentence number 1\nQuestion: Was that sentence positive or negative? Answer:")
    assert task.answer_prefix() == " "
    assert task.answer(1) == " positive" and task.answer(0) == " negative"
    segs = task.segments(1)
    assert "".join(t for t, _ in segs) == task.prompt(1)
    assert [tr for _, tr in segs] == [True, False]
    assert task.labels.dtype == np.int64 and task.labels.tolist() == [0, 1] * 3
    assert task.demonstration(1) == task.prompt(1) + " positive"


def test_template_without_answer_slot_and_other_prefixes():
    recs = [{"text": "a", "y": 0}, {"text": "b", "y": 1}]
    t = Task.from_records(recs, template="{text}\nQuestion: Was that positive? Answer:",
                          options=["no", "yes"], label="y")
    assert t.prompt(0) == "a\nQuestion: Was that positive? Answer:" and t.answer_prefix() == " "
    t = Task.from_records(recs, template="{text} =>\n{answer}", options=["no", "yes"], label="y")
    assert t.prompt(1) == "b =>" and t.answer_prefix() == "\n"
    t = Task.from_records(recs, template="Q: {text}?{answer}", options=["no", "yes"], label="y")
    assert t.prompt(1) == "Q: b?" and t.answer_prefix() == ""


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(records=[]), ValueError, "empty"),
        (dict(options=["negative"]), ValueError, "at least 2 options"),
        (dict(options=["same", "same"]), ValueError, "distinct"),
        (dict(template="{text} {answer} trailing"), ValueError, "end with its"),
        (dict(template="{text} {} {answer}"), ValueError, "positional"),
        (dict(template="{text {answer}"), ValueError, "format string"),
        (dict(template="{txt} {answer}"), ValueError, r"lacks template field\(s\) \['txt'\]"),
        (dict(truncatable=["passage"]), ValueError, "not in the template fields"),
        (dict(label="nolabel"), ValueError, "no label field 'nolabel'"),
    ],
)
def test_from_records_bad_input(kwargs, exc, match):
    args = dict(records=[{"text": "x", "y": 0}, {"text": "z", "y": 1}], template=SST2_TEMPLATE,
                options=["negative", "positive"], label="y")
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        Task.from_records(args.pop("records"), **args)


@pytest.mark.parametrize("bad", [2, -1])
def test_label_outside_options(bad):
    with pytest.raises(ValueError, match=rf"label {bad} of record 1 is outside the 2 options"):
        Task.from_records([{"text": "x", "y": 0}, {"text": "z", "y": bad}],
                          template=SST2_TEMPLATE, options=["negative", "positive"], label="y")


@pytest.mark.parametrize("bad", ["1", 1.0, True, None])
def test_label_must_be_integer(bad):
    with pytest.raises(TypeError, match="integer option index"):
        Task.from_records([{"text": "x", "y": bad}], template=SST2_TEMPLATE,
                          options=["negative", "positive"], label="y")


def test_index_errors():
    task = _toy()
    assert task.prompt(-1) == task.prompt(5)
    with pytest.raises(IndexError):
        task.prompt(6)
    with pytest.raises(IndexError):
        task.segments("0")


def test_with_demonstrations_same_task_no_self_leak_and_seeded():
    task = _toy(n=8)
    a = task.with_demonstrations(3, seed=1)
    b = task.with_demonstrations(3, seed=1)
    c = task.with_demonstrations(3, seed=2)
    assert [a.prompt(i) for i in range(8)] == [b.prompt(i) for i in range(8)]
    assert [a.prompt(i) for i in range(8)] != [c.prompt(i) for i in range(8)]
    for i in range(8):
        demos = a.demonstrations[i].split("\n\n")[:-1]
        assert len(demos) == 3 and len(set(demos)) == 3
        assert task.demonstration(i) not in demos
        assert all(d in {task.demonstration(j) for j in range(8)} for d in demos)
        assert a.prompt(i) == a.demonstrations[i] + task.prompt(i)
        assert a.segments(i)[0] == (a.demonstrations[i], False)
    assert a.meta["shots"] == 3 and a.meta["seed"] == 1
    with pytest.raises(ValueError, match="pool holds only 7"):
        task.with_demonstrations(8)
    with pytest.raises(ValueError, match="non-negative"):
        task.with_demonstrations(-1)
    assert task.with_demonstrations(0) is task


# ----------------------------------------------------------------------------- templates
TABLE3 = {  # paper Table 3 verbatim ("\n" in the table is a newline)
    "ag_news": ("What label best describes this news article?\n {text} {answer}",
                ["World", "Sports", "Business", "Science"]),
    "arc_challenge": ("Pick the most correct option to answer the following question.\n\n{text} "
                      "\n\n{options} {answer}", ["A", "B", "C", "D"]),
    "boolq": ("{passage}\n\nAfter reading this passage, I have a question: {question} True or "
              "False? {answer}", ["False", "True"]),
    "mnli": ("Suppose it’s true that {text1} Then, is \"{text2}\" {options} {answer}",
             ["Always", "Sometimes", "Never"]),
    "qqp": ("I’m an administrator on the website Quora. There are two posts, one that asks "
            "\"{question1}\" and another that asks \"{question2}\" I can merge questions if they "
            "are asking the same thing. Can I merge these two questions? {answer}", ["no", "yes"]),
    "rte": ("{text1} Using only the above description and what you know about the world, is "
            "{text2} definitely correct? Yes or No? {answer}", ["Yes", "No"]),
    "sst2": (SST2_TEMPLATE, ["negative", "positive"]),
    "wic": ("Does the word \"{word}\" have the same meaning in these two sentences? Yes, No?\n "
            "{sentence1}\n{sentence2} {answer}", ["No", "Yes"]),
}


def test_templates_match_table3_literals():
    assert set(SUPPORTED_TASKS) == {"ag_news", "arc", "arc_challenge", "arc_easy", "boolq",
                                    "mnli", "qqp", "rte", "sst2", "wic"}
    for name, (template, options) in TABLE3.items():
        spec = ds.get_spec(name)
        assert spec.template == template, name
        assert list(spec.options) == options, name
    assert ds.get_spec("arc_easy").template == TABLE3["arc_challenge"][0]
    assert ds.get_spec("arc") is ds.get_spec("arc_challenge")


def test_templates_match_the_paper_text():
    if not PAPER.is_file():
        pytest.skip(f"paper text not found at {PAPER}")
    text = PAPER.read_text(encoding="utf-8")
    table = text[text.index("Table 3: The used templates") :].split("\n\n")[1]
    names = {"AG News": "ag_news", "ARC": "arc_challenge", "BoolQ": "boolq", "MNLI": "mnli",
             "QQP": "qqp", "RTE": "rte", "SST-2": "sst2", "WIC": "wic"}
    rows = [r.split("\t") for r in table.splitlines()[1:]]
    assert len(rows) == 8
    for task, template, options in rows:
        spec = ds.get_spec(names[task])
        assert spec.template == template.replace("\\n", "\n"), task
        assert list(spec.options) == re.split(r", | ", options), task


# ----------------------------------------------------------------------------- real files
COUNTS = {  # name: (loaded, rows in the file, dropped)
    "sst2": (872, 872, 0), "rte": (277, 277, 0), "wic": (638, 638, 0),
    "boolq": (2000, 3270, 0), "ag_news": (2000, 7600, 0),
    # ARC: only 4-choice questions are kept (3- and 5-choice questions are DROPPED):
    # Challenge dev 299 rows = 291 ABCD + 4 "1234" + 3 three-choice + 1 five-choice -> 295;
    # Easy dev 570 rows = 546 ABCD + 21 "1234" + 1 three-choice + 2 five-choice -> 567.
    "arc_challenge": (295, 299, 4), "arc_easy": (567, 570, 3),
}


@pytest.fixture(scope="session")
def real_tasks(shared_data_dir):
    return {name: get_task(name, data_dir=shared_data_dir) for name in COUNTS}


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_real_loader_counts_and_templates(real_tasks, name):
    task = real_tasks[name]
    loaded, rows, dropped = COUNTS[name]
    assert len(task) == loaded == task.meta["n"] == len(task.labels)
    assert task.meta["n_rows"] == rows and task.meta["dropped"] == dropped
    assert task.meta["n_available"] == rows - dropped
    spec = ds.get_spec(name)
    assert task.template == spec.template and task.options == list(spec.options)
    assert task.meta["source_files"] and all(Path(p).is_file() for p in task.meta["source_files"])
    assert task.labels.min() >= 0 and task.labels.max() == len(task.options) - 1
    p = task.prompt(0)
    assert p == p.rstrip() and task.answer_prefix() == " "


def test_real_label_balance(real_tasks):
    counts = {k: np.bincount(t.labels, minlength=len(t.options)) for k, t in real_tasks.items()}
    assert counts["sst2"].tolist() == [428, 444]
    assert counts["rte"].tolist() == [146, 131]  # Yes = entailment
    assert counts["wic"].tolist() == [319, 319]
    assert counts["boolq"].tolist() == [744, 1256]  # first 2000 of 3270 (2033 true overall)
    assert counts["ag_news"].tolist() == [511, 526, 449, 514]
    for arc in ("arc_challenge", "arc_easy"):
        assert counts[arc].min() > 0.18 * counts[arc].sum()


def test_real_field_mapping(shared_data_dir, real_tasks):
    with open(shared_data_dir / "ag_news" / "test.csv", newline="", encoding="utf-8") as f:
        first = next(csv.reader(f))
    ag = real_tasks["ag_news"]
    assert ag.records[0]["text"] == first[1] + " " + first[2]
    assert ag.labels[0] == int(first[0]) - 1 == 2  # Business
    assert ag.prompt(0) == ("What label best describes this news article?\n " + first[1] + " "
                            + first[2])
    rows = [json.loads(x) for x in open(shared_data_dir / "superglue/BoolQ/val.jsonl")]
    bq = real_tasks["boolq"]
    assert bq.prompt(1) == (rows[1]["passage"] + "\n\nAfter reading this passage, I have a "
                            "question: " + rows[1]["question"] + " True or False?")
    assert bq.labels[1] == (rows[1]["label"] == "true")
    arc_rows = [json.loads(x) for x in open(shared_data_dir / "arc/ARC-Challenge-Dev.jsonl")]
    kept = [r for r in arc_rows if len(r["question"]["choices"]) == 4]
    numeric = next(i for i, r in enumerate(kept) if r["question"]["choices"][0]["label"] == "1")
    arc = real_tasks["arc_challenge"]
    r = kept[numeric]
    assert arc.labels[numeric] == int(r["answerKey"]) - 1
    choices = [c["text"] for c in r["question"]["choices"]]
    assert arc.prompt(numeric) == (
        "Pick the most correct option to answer the following question.\n\n"
        + r["question"]["stem"] + " \n\nOptions:\n- A: " + choices[0] + "\n- B: " + choices[1]
        + "\n- C: " + choices[2] + "\n- D: " + choices[3])


def test_sst2_tsv_and_parquet_agree(shared_data_dir, tmp_path, real_tasks):
    (tmp_path / "glue" / "sst2").mkdir(parents=True)
    shutil.copy(shared_data_dir / "glue/sst2/validation-0000.parquet", tmp_path / "glue/sst2")
    pq = get_task("sst2", data_dir=tmp_path, n=None)
    assert pq.meta["source_files"][0].endswith(".parquet")
    assert pq.records == real_tasks["sst2"].records
    assert np.array_equal(pq.labels, real_tasks["sst2"].labels)


def test_rte_glue_parquet_matches_superglue(shared_data_dir, tmp_path, real_tasks):
    (tmp_path / "glue" / "rte").mkdir(parents=True)
    shutil.copy(shared_data_dir / "glue/rte/validation-0000.parquet", tmp_path / "glue/rte")
    glue = get_task("rte", data_dir=tmp_path)
    assert len(glue) == 277 and np.array_equal(glue.labels, real_tasks["rte"].labels)
    same = sum(a == b for a, b in zip(glue.records, real_tasks["rte"].records))
    assert same >= 271  # 6 GLUE rows keep quotes around titles (MANIFEST.md)


def test_arc_alias_n_and_split(shared_data_dir, real_tasks):
    arc = get_task("arc", data_dir=shared_data_dir, n=10)
    assert arc.name == "arc_challenge" and len(arc) == 10
    assert [arc.prompt(i) for i in range(10)] == [real_tasks["arc_challenge"].prompt(i)
                                                  for i in range(10)]
    train = get_task("ARC-Challenge", data_dir=shared_data_dir, split="train", n=None)
    assert train.meta["split"] == "train" and train.meta["n_rows"] == 1119
    assert len(train) == 1119 - 2  # one 3-choice and one 5-choice question dropped


def test_real_shots_from_train_split_deterministic(shared_data_dir):
    a = get_task("arc", data_dir=shared_data_dir, n=30, shots=2, seed=3)
    b = get_task("arc", data_dir=shared_data_dir, n=30, shots=2, seed=3)
    c = get_task("arc", data_dir=shared_data_dir, n=30, shots=2, seed=4)
    assert a.meta["demo_split"] == "train" and a.meta["shots"] == 2
    prompts = [a.prompt(i) for i in range(30)]
    assert prompts == [b.prompt(i) for i in range(30)] != [c.prompt(i) for i in range(30)]
    train = get_task("arc", data_dir=shared_data_dir, split="train", n=None)
    train_demos = {train.demonstration(i) for i in range(len(train))}
    for i in range(30):
        demos = a.demonstrations[i].split("\n\nPick")
        assert len(demos) == 2
        assert a.demonstrations[i].count(" \n\nOptions:\n") == 2
        first = demos[0]
        assert first in train_demos
        assert a.prompt(i).endswith(get_task("arc", data_dir=shared_data_dir, n=30).prompt(i))


def test_real_shots_same_split_no_self_leak_independent_of_n(shared_data_dir):
    full = get_task("sst2", data_dir=shared_data_dir, n=None)
    own = [full.demonstration(i) for i in range(len(full))]
    a = get_task("sst2", data_dir=shared_data_dir, n=None, shots=4, seed=0)
    assert a.meta["demo_source"] == "same split, self excluded"
    for i in range(len(a)):
        demos = a.demonstrations[i].split("\n\n")[:-1]
        assert len(demos) == 4 and own[i] not in demos and set(demos) <= set(own)
    small = get_task("sst2", data_dir=shared_data_dir, n=5, shots=4, seed=0)
    assert [small.prompt(i) for i in range(5)] == [a.prompt(i) for i in range(5)]
    # the pool is the whole split, not only the first n
    assert any(d not in own[:5] for i in range(5) for d in small.demonstrations[i].split("\n\n"))


# ----------------------------------------------------------------------------- MNLI / QQP
MNLI_ROWS = [
    {"premise": "A man plays a guitar.", "hypothesis": "A person makes music.", "label": 0},
    {"premise": "A dog sleeps.", "hypothesis": "The dog is brown.", "label": 1},
    {"premise": "It is raining.", "hypothesis": "The sun is shining.", "label": 2},
]
QQP_ROWS = [
    {"question1": "How do I learn Python?", "question2": "What is the best way to learn Python?",
     "label": 1},
    {"question1": "Why is the sky blue?", "question2": "How tall is Everest?", "label": 0},
]


def _write(path: Path, rows, fmt):
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif fmt == "parquet":
        import pandas as pd

        pd.DataFrame(rows).to_parquet(path)
    else:
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t")
            w.writeheader()
            w.writerows(rows)


@pytest.mark.parametrize("fmt, rel", [
    ("parquet", "glue/mnli/validation_matched-00000-of-00001.parquet"),
    ("jsonl", "mnli/validation_matched.jsonl"),
    ("tsv", "glue/mnli/dev_matched.tsv"),
])
def test_mnli_hf_formats(tmp_path, fmt, rel):
    rows = MNLI_ROWS
    if fmt == "tsv":  # GLUE tsv: sentence1, sentence2, gold_label strings
        names = ["entailment", "neutral", "contradiction"]
        rows = [{"index": i, "sentence1": r["premise"], "sentence2": r["hypothesis"],
                 "gold_label": names[r["label"]]} for i, r in enumerate(MNLI_ROWS)]
    _write(tmp_path / rel, rows, fmt)
    task = get_task("mnli", data_dir=tmp_path)
    assert task.options == ["Always", "Sometimes", "Never"] and task.labels.tolist() == [0, 1, 2]
    assert task.meta["split"] == "validation_matched"
    assert task.prompt(1) == ("Suppose it’s true that A dog sleeps. Then, is \"The dog is brown.\""
                              " always, sometimes, or never true?")
    assert task.answer(2) == " Never"


@pytest.mark.parametrize("fmt, rel", [
    ("parquet", "glue/qqp/validation-00000-of-00001.parquet"),
    ("jsonl", "qqp/validation.jsonl"),
    ("tsv", "glue/qqp/dev.tsv"),
])
def test_qqp_hf_formats(tmp_path, fmt, rel):
    rows = QQP_ROWS
    if fmt == "tsv":  # GLUE tsv: id qid1 qid2 question1 question2 is_duplicate
        rows = [{"id": i, "qid1": 2 * i, "qid2": 2 * i + 1, "question1": r["question1"],
                 "question2": r["question2"], "is_duplicate": r["label"]}
                for i, r in enumerate(QQP_ROWS)]
    _write(tmp_path / rel, rows, fmt)
    task = get_task("qqp", data_dir=tmp_path)
    assert task.labels.tolist() == [1, 0] and task.answer(0) == " yes"
    assert task.prompt(1) == (
        "I’m an administrator on the website Quora. There are two posts, one that asks \"Why is "
        "the sky blue?\" and another that asks \"How tall is Everest?\" I can merge questions if "
        "they are asking the same thing. Can I merge these two questions?")


def test_mnli_unlabelled_rows_rejected(tmp_path):
    _write(tmp_path / "glue/mnli/validation_matched.jsonl",
           MNLI_ROWS + [{"premise": "a", "hypothesis": "b", "label": -1}], "jsonl")
    with pytest.raises(ValueError, match=r"row 3: mnli: label -1 is outside the 3 options"):
        get_task("mnli", data_dir=tmp_path)


# ----------------------------------------------------------------------------- bad input
def test_unknown_task_lists_supported():
    with pytest.raises(ValueError, match=r"unknown task 'imdb'; supported: ag_news, arc_challenge"):
        get_task("imdb")


def test_missing_files_say_where(tmp_path, shared_data_dir):
    with pytest.raises(FileNotFoundError, match=r"glue/sst2/dev\.tsv") as err:
        get_task("sst2", data_dir=tmp_path)
    assert str(tmp_path) in str(err.value)
    with pytest.raises(FileNotFoundError, match=r"glue/mnli/dev_matched\.tsv"):
        get_task("mnli", data_dir=shared_data_dir)
    with pytest.raises(FileNotFoundError, match=r"glue/qqp/dev\.tsv"):
        get_task("qqp", data_dir=shared_data_dir)
    with pytest.raises(ValueError, match="unknown split 'train_extra'"):
        get_task("sst2", data_dir=shared_data_dir, split="train_extra")


def test_bad_rows_and_empty_files(tmp_path):
    _write(tmp_path / "superglue/BoolQ/val.jsonl",
           [{"passage": "p", "question": "q", "label": "maybe"}], "jsonl")
    with pytest.raises(ValueError, match=r"row 0: boolq: label 'maybe' is not true/false"):
        get_task("boolq", data_dir=tmp_path)
    _write(tmp_path / "superglue/WiC/val.jsonl", [{"word": "w", "label": "true"}], "jsonl")
    with pytest.raises(ValueError, match=r"row 0 lacks column 'sentence1'"):
        get_task("wic", data_dir=tmp_path)
    (tmp_path / "superglue/RTE").mkdir(parents=True)
    (tmp_path / "superglue/RTE/val.jsonl").write_text("\n")
    with pytest.raises(ValueError, match="is empty"):
        get_task("rte", data_dir=tmp_path)


@pytest.mark.parametrize("kw, match", [(dict(n=0), "n must be"), (dict(n=1.5), "n must be"),
                                       (dict(shots=-2), "shots must be"),
                                       (dict(shots=True), "shots must be")])
def test_get_task_bad_arguments(shared_data_dir, kw, match):
    with pytest.raises(ValueError, match=match):
        get_task("sst2", data_dir=shared_data_dir, **kw)


def test_default_data_dir_env(monkeypatch, tmp_path):
    _write(tmp_path / "glue/sst2/dev.tsv", [{"sentence": "great fun", "label": 1},
                                           {"sentence": "dull", "label": 0}], "tsv")
    monkeypatch.setenv("INFODIV_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(ds, "_hf_available", lambda: True)  # the env var wins over the hub
    task = get_task("sst2")
    assert task.labels.tolist() == [1, 0] and task.meta["source_files"][0].startswith(str(tmp_path))


def test_no_data_anywhere(monkeypatch):
    monkeypatch.delenv("INFODIV_DATA_DIR", raising=False)
    monkeypatch.setattr(ds, "default_data_dir", lambda: None)
    monkeypatch.setattr(ds, "_hf_available", lambda: False)
    with pytest.raises(FileNotFoundError, match=r"no data folder.*'datasets' is not installed"):
        get_task("sst2")


HF_ARC = [  # Hugging Face ai2_arc rows
    {"id": "q1", "question": "Which is a planet?", "answerKey": "2",
     "choices": {"text": ["Moon", "Mars", "Sun", "Comet"], "label": ["1", "2", "3", "4"]}},
    {"id": "q2", "question": "Pick E", "answerKey": "E",
     "choices": {"text": list("abcde"), "label": list("ABCDE")}},
    {"id": "q3", "question": "Water freezes at?", "answerKey": "A",
     "choices": {"text": ["0 C", "50 C", "100 C", "20 C"], "label": list("ABCD")}},
]


def test_hugging_face_path_with_a_fake_datasets_module(monkeypatch, shared_data_dir):
    calls = []

    def load_dataset(path, config, split):
        calls.append((path, config, split))
        if path == "allenai/ai2_arc":
            return HF_ARC if split == "validation" else HF_ARC[2:]
        if path == "aps/super_glue" and config == "boolq":
            return [{"passage": "p", "question": "q", "label": 1, "idx": 0}]
        raise ConnectionError("offline")

    monkeypatch.setitem(sys.modules, "datasets", types.SimpleNamespace(load_dataset=load_dataset))
    monkeypatch.delenv("INFODIV_DATA_DIR", raising=False)
    monkeypatch.setattr(ds, "_hf_available", lambda: True)
    monkeypatch.setattr(ds, "default_data_dir", lambda: shared_data_dir)
    arc = get_task("arc", shots=1)
    assert calls == [("allenai/ai2_arc", "ARC-Challenge", "validation"),
                     ("allenai/ai2_arc", "ARC-Challenge", "train")]
    assert len(arc) == 2 and arc.meta["dropped"] == 1 and arc.labels.tolist() == [1, 0]
    assert arc.meta["source_files"] == ["datasets:allenai/ai2_arc/ARC-Challenge:validation"]
    assert arc.prompt(0).endswith("question.\n\nWhich is a planet? \n\nOptions:\n- A: Moon\n"
                                  "- B: Mars\n- C: Sun\n- D: Comet")
    assert arc.demonstrations[0].endswith(" \n\nOptions:\n- A: 0 C\n- B: 50 C\n- C: 100 C\n"
                                          "- D: 20 C A\n\n")
    boolq = get_task("boolq")
    assert boolq.labels.tolist() == [1] and boolq.answer(0) == " True"
    # the hub fails (offline): fall back to ../shared/data and say so
    sst2 = get_task("sst2")
    assert len(sst2) == 872 and "ConnectionError: offline" in sst2.meta["fallback_from"][0]
    assert sst2.meta["source_files"][0].startswith(str(shared_data_dir))
