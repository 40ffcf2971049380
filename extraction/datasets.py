"""File loaders of the paper's eight tasks (templates and options of paper Table 3, verbatim).

Each task is a :class:`TaskSpec`: its Table 3 template and options, the fields that may be
truncated, per-split file patterns inside a data folder laid out like ``../shared/data`` (see its
MANIFEST.md), the Hugging Face ``datasets`` name, and a ``normalize`` function that turns one raw
row (local file or Hugging Face format) into ``(record, label)`` or ``None`` (row dropped).

Choices documented here:
- ARC: only questions with exactly four choices are kept; choices labelled ``"1".."4"`` are
  presented as ``A..D`` (same order). Three- and five-choice questions are dropped and counted
  in ``meta["dropped"]`` (ARC-Challenge dev: 299 rows -> 295, ARC-Easy dev: 570 -> 567), so the
  options are always ``A B C D``. The ``{options}`` slot follows the promptsource template
  ``pick_the_most_correct_option``: ``"Options:\\n- A: ...\\n- B: ...\\n- C: ...\\n- D: ..."``.
- MNLI: the ``{options}`` slot is the promptsource text ``"always, sometimes, or never true?"``.
- RTE: the SuperGLUE jsonl is preferred over the GLUE parquet when both exist (same 277 pairs).
- Table 3's typographic apostrophes (``it’s``, ``I’m``) are kept verbatim.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["TaskSpec", "SPECS", "SUPPORTED_TASKS", "default_data_dir", "load_task_records"]

_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class TaskSpec:
    name: str
    template: str
    options: tuple[str, ...]
    truncatable: tuple[str, ...]
    files: dict  # split -> tuple of glob patterns relative to data_dir (first match wins)
    normalize: Callable[[dict], tuple[dict, int] | None]
    default_split: str = "validation"
    hf: tuple[str, str | None] | None = None  # (path, config) for datasets.load_dataset


def _binary(value, true_index: int, name: str) -> int:
    """Map a true/false label (bool, 0/1, "true"/"false") to an option index."""
    if isinstance(value, str):
        v = value.strip().lower()
        if v not in ("true", "false", "0", "1"):
            raise ValueError(f"{name}: label {value!r} is not true/false")
        truth = v in ("true", "1")
    else:
        if int(value) not in (0, 1):
            raise ValueError(f"{name}: label {value!r} is outside the 2 options")
        truth = bool(int(value))
    return true_index if truth else 1 - true_index


def _named(value, names: tuple[str, ...], task: str) -> int:
    """Map a label given as a class name or an integer index to an option index."""
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        v = value.strip().lower()
        if v not in names:
            raise ValueError(f"{task}: label {value!r} is not one of {names}")
        return names.index(v)
    idx = int(value)
    if not 0 <= idx < len(names):
        raise ValueError(f"{task}: label {idx} is outside the {len(names)} options {names}")
    return idx


def _sst2(row):
    return {"text": row["sentence"]}, _binary(row["label"], 1, "sst2")


def _rte(row):
    text1 = row.get("premise", row.get("sentence1"))
    text2 = row.get("hypothesis", row.get("sentence2"))
    # options (Yes, No): entailment (index 0 in GLUE/SuperGLUE) -> Yes = 0
    return {"text1": text1, "text2": text2}, _named(row["label"], ("entailment", "not_entailment"),
                                                    "rte")


def _wic(row):
    rec = {k: row[k] for k in ("word", "sentence1", "sentence2")}
    return rec, _binary(row["label"], 1, "wic")


def _boolq(row):
    return {"passage": row["passage"], "question": row["question"]}, _binary(row["label"], 1,
                                                                             "boolq")


def _ag_news(row):
    if "text" in row:  # Hugging Face format: text, label 0..3
        return {"text": row["text"]}, _ag_label(int(row["label"]))
    # Zhang et al. csv: class 1..4, title, description
    return {"text": row["title"] + " " + row["description"]}, _ag_label(int(row["class"]) - 1)


def _ag_label(idx: int) -> int:
    if not 0 <= idx < 4:
        raise ValueError(f"ag_news: label {idx} is outside the 4 options (classes 1-4 in the csv)")
    return idx


def _mnli(row):
    text1 = row.get("premise", row.get("sentence1"))
    text2 = row.get("hypothesis", row.get("sentence2"))
    label = row["label"] if "label" in row else row["gold_label"]
    names = ("entailment", "neutral", "contradiction")  # -> Always, Sometimes, Never
    rec = {"text1": text1, "text2": text2, "options": "always, sometimes, or never true?"}
    return rec, _named(label, names, "mnli")


def _qqp(row):
    label = row["label"] if "label" in row else row["is_duplicate"]
    return {"question1": row["question1"], "question2": row["question2"]}, _binary(label, 1, "qqp")


def _arc(row):
    q = row["question"]
    if isinstance(q, dict):  # official jsonl: question{stem, choices[{text, label}]}
        stem, texts = q["stem"], [c["text"] for c in q["choices"]]
        labels = [c["label"] for c in q["choices"]]
    else:  # Hugging Face ai2_arc: question str, choices{text: [...], label: [...]}
        stem, texts, labels = q, list(row["choices"]["text"]), list(row["choices"]["label"])
    if len(texts) != 4:
        return None
    key = str(row["answerKey"]).strip()
    if key not in labels:
        raise ValueError(f"arc: answerKey {key!r} not among the choice labels {labels}")
    options = "Options:\n" + "\n".join(f"- {ltr}: {t}" for ltr, t in zip("ABCD", texts))
    return {"text": stem, "options": options}, labels.index(key)


def _arc_spec(name: str, subset: str) -> TaskSpec:
    return TaskSpec(
        name=name,
        template="Pick the most correct option to answer the following question.\n\n{text} "
        "\n\n{options} {answer}",
        options=("A", "B", "C", "D"),
        truncatable=(),
        files={
            "validation": (f"arc/ARC-{subset}-Dev.jsonl", f"ai2_arc/ARC-{subset}/validation*"),
            "train": (f"arc/ARC-{subset}-Train.jsonl", f"ai2_arc/ARC-{subset}/train*"),
            "test": (f"arc/ARC-{subset}-Test.jsonl", f"ai2_arc/ARC-{subset}/test*"),
        },
        normalize=_arc,
        hf=("allenai/ai2_arc", f"ARC-{subset}"),
    )


def _glue_files(task: str, val: tuple[str, ...], train: tuple[str, ...] = ()) -> dict:
    hf_val = "validation_matched" if task == "mnli" else "validation"
    return {
        "validation": val + (f"glue/{task}/{hf_val}*", f"{task}/{hf_val}*"),
        "train": train + (f"glue/{task}/train*", f"{task}/train*"),
    }


SPECS: dict[str, TaskSpec] = {
    "ag_news": TaskSpec(
        "ag_news", "What label best describes this news article?\n {text} {answer}",
        ("World", "Sports", "Business", "Science"), ("text",),
        {"test": ("ag_news/test.csv", "ag_news/test-*.parquet", "ag_news/test*.jsonl"),
         "train": ("ag_news/train.csv", "ag_news/train-*.parquet", "ag_news/train*.jsonl")},
        _ag_news, default_split="test", hf=("fancyzhx/ag_news", None)),
    "arc_challenge": _arc_spec("arc_challenge", "Challenge"),
    "arc_easy": _arc_spec("arc_easy", "Easy"),
    "boolq": TaskSpec(
        "boolq", "{passage}\n\nAfter reading this passage, I have a question: {question} True or "
        "False? {answer}", ("False", "True"), ("passage",),
        {"validation": ("superglue/BoolQ/val.jsonl", "super_glue/boolq/validation*"),
         "train": ("superglue/BoolQ/train.jsonl", "super_glue/boolq/train*")},
        _boolq, hf=("aps/super_glue", "boolq")),
    "mnli": TaskSpec(
        "mnli", "Suppose it’s true that {text1} Then, is \"{text2}\" {options} {answer}",
        ("Always", "Sometimes", "Never"), ("text1",),
        _glue_files("mnli", ("glue/mnli/dev_matched.tsv", "mnli/dev_matched.tsv")),
        _mnli, default_split="validation", hf=("nyu-mll/glue", "mnli")),
    "qqp": TaskSpec(
        "qqp", "I’m an administrator on the website Quora. There are two posts, one that asks "
        "\"{question1}\" and another that asks \"{question2}\" I can merge questions if they are "
        "asking the same thing. Can I merge these two questions? {answer}", ("no", "yes"), (),
        _glue_files("qqp", ("glue/qqp/dev.tsv", "qqp/dev.tsv")), _qqp, hf=("nyu-mll/glue", "qqp")),
    "rte": TaskSpec(
        "rte", "{text1} Using only the above description and what you know about the world, is "
        "{text2} definitely correct? Yes or No? {answer}", ("Yes", "No"), ("text1",),
        {"validation": ("superglue/RTE/val.jsonl", "super_glue/rte/validation*",
                        "glue/rte/validation*", "glue/rte/dev.tsv"),
         "train": ("superglue/RTE/train.jsonl", "glue/rte/train*")},
        _rte, hf=("aps/super_glue", "rte")),
    "sst2": TaskSpec(
        "sst2", "{text}\nQuestion: Was that sentence positive or negative? Answer: {answer}",
        ("negative", "positive"), ("text",),
        _glue_files("sst2", ("glue/sst2/dev.tsv",), ("glue/sst2/train.tsv",)),
        _sst2, hf=("nyu-mll/glue", "sst2")),
    "wic": TaskSpec(
        "wic", "Does the word \"{word}\" have the same meaning in these two sentences? Yes, No?\n "
        "{sentence1}\n{sentence2} {answer}", ("No", "Yes"), (),
        {"validation": ("superglue/WiC/val.jsonl", "super_glue/wic/validation*"),
         "train": ("superglue/WiC/train.jsonl", "super_glue/wic/train*")},
        _wic, hf=("aps/super_glue", "wic")),
}
_ALIASES = {"arc": "arc_challenge", "agnews": "ag_news", "sst_2": "sst2"}
SUPPORTED_TASKS: tuple[str, ...] = tuple(sorted(SPECS) + ["arc"])
_SPLIT_ALIASES = {"dev": "validation", "val": "validation", "validation_matched": "validation"}


def default_data_dir() -> Path | None:
    """``$INFODIV_DATA_DIR`` if set, else ``../shared/data`` next to the repository if present."""
    env = os.environ.get("INFODIV_DATA_DIR")
    if env:
        return Path(env)
    cand = _ROOT.parent / "shared" / "data"
    return cand if cand.is_dir() else None


def _hf_available() -> bool:
    return importlib.util.find_spec("datasets") is not None


def _sources(data_dir) -> list:
    """Where to look, in order: an explicit ``data_dir`` or ``$INFODIV_DATA_DIR`` alone;
    otherwise Hugging Face ``datasets`` (when importable) and then ``../shared/data``."""
    if data_dir is not None:
        return [Path(data_dir)]
    if os.environ.get("INFODIV_DATA_DIR"):
        return [default_data_dir()]
    out: list = ["hf"] if _hf_available() else []
    local = default_data_dir()
    return out + ([local] if local is not None else [])


def get_spec(name: str) -> TaskSpec:
    key = str(name).strip().lower().replace("-", "_")
    key = _ALIASES.get(key, key)
    if key not in SPECS:
        raise ValueError(f"unknown task {name!r}; supported: {', '.join(SUPPORTED_TASKS)}")
    return SPECS[key]


def _read_rows(path: Path, spec: TaskSpec) -> list[dict]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    if suffix == ".parquet":
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is a test dependency
            raise ImportError(f"reading {path} needs pandas and pyarrow (pip install "
                              "'infodiv[data]')") from exc
        return pd.read_parquet(path).to_dict("records")
    if suffix == ".tsv":
        with open(path, encoding="utf-8", newline="") as f:
            return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    if suffix == ".csv" and spec.name == "ag_news":
        with open(path, encoding="utf-8", newline="") as f:
            return [dict(zip(("class", "title", "description"), r)) for r in csv.reader(f)]
    raise ValueError(f"{spec.name}: do not know how to read {path} (expected jsonl/parquet/tsv)")


def _find_files(spec: TaskSpec, data_dir: Path, split: str) -> list[Path]:
    for pattern in spec.files[split]:
        found = sorted(p for p in data_dir.glob(pattern) if p.is_file()
                       and p.suffix.lower() in (".jsonl", ".parquet", ".tsv", ".csv"))
        if found:
            return found
    raise FileNotFoundError(f"no data file in {data_dir}")


def _normalize(spec: TaskSpec, rows: list[dict], where: str):
    records, labels, dropped = [], [], 0
    for i, row in enumerate(rows):
        try:
            out = spec.normalize(row)
        except KeyError as exc:
            raise ValueError(f"{where}: row {i} lacks column {exc}") from None
        except ValueError as exc:
            raise ValueError(f"{where}: row {i}: {exc}") from None
        if out is None:
            dropped += 1
            continue
        records.append(out[0])
        labels.append(out[1])
    if not records:
        raise ValueError(f"{where}: task {spec.name!r} is empty (no usable rows)")
    return records, np.asarray(labels, dtype=np.int64), dropped


def _split_name(spec: TaskSpec, split: str) -> str:
    """The published name of ``split`` (MNLI's validation split is ``validation_matched``)."""
    return "validation_matched" if (spec.name == "mnli" and split == "validation") else split


def _load_split(spec: TaskSpec, source, split: str):
    """Rows of one split from ``source`` (a folder or ``"hf"``) as (records, labels, meta)."""
    if source == "hf":
        rows, where = _load_hf(spec, split), f"datasets:{spec.hf[0]}/{spec.hf[1]}:{split}"
        files = [where]
    else:
        paths = _find_files(spec, Path(source), split)
        rows = [r for p in paths for r in _read_rows(p, spec)]
        files = [str(p) for p in paths]
        where = ", ".join(files)
    records, labels, dropped = _normalize(spec, rows, where)
    meta = {"task": spec.name, "split": _split_name(spec, split), "source_files": files,
            "n_rows": len(rows), "dropped": dropped, "template": spec.template,
            "options": list(spec.options)}
    if spec.normalize is _arc:
        meta["dropped_reason"] = "ARC questions without exactly four choices"
    return records, labels, meta


def _load_hf(spec: TaskSpec, split: str) -> list[dict]:
    """Rows from Hugging Face ``datasets`` by name (any failure -> FileNotFoundError)."""
    import datasets

    hf_split = _split_name(spec, split)
    try:
        ds = datasets.load_dataset(spec.hf[0], spec.hf[1], split=hf_split)
    except Exception as exc:  # offline, hub errors, unknown split: fall back to local files
        raise FileNotFoundError(f"datasets.load_dataset{(spec.hf[0], spec.hf[1], hf_split)} "
                                f"failed: {type(exc).__name__}: {exc}") from exc
    return [dict(r) for r in ds]


def load_task_records(name: str, *, data_dir=None, split: str | None = None,
                      with_pool: bool = False):
    """Load one task: ``(spec, records, labels, meta, pool)``.

    Sources are tried in the order of :func:`_sources`. With ``with_pool``, ``pool`` is
    ``(records, labels, meta)`` of the train split of the same source when it has one (used for
    demonstrations) and the evaluated split is not itself train; else None.
    """
    spec = get_spec(name)
    split = spec.default_split if split is None else _SPLIT_ALIASES.get(split, split)
    if split not in spec.files:
        raise ValueError(f"{spec.name}: unknown split {split!r}; known: {sorted(spec.files)}")
    errors = []
    for source in _sources(data_dir):
        try:
            records, labels, meta = _load_split(spec, source, split)
        except FileNotFoundError as exc:
            errors.append(str(exc))
            continue
        if errors:
            meta["fallback_from"] = errors
        pool = None
        if with_pool and split != "train" and "train" in spec.files:
            try:
                pool = _load_split(spec, source, "train")
            except FileNotFoundError:
                pool = None
        return spec, records, labels, meta, pool
    if not errors:
        errors.append("no data folder: pass data_dir=, set INFODIV_DATA_DIR or create "
                      f"{_ROOT.parent / 'shared' / 'data'}; 'datasets' is not installed")
    raise FileNotFoundError(f"{spec.name} ({split}): " + "; ".join(errors) + "; files expected "
                            f"under a data folder as one of {', '.join(spec.files[split])}")
