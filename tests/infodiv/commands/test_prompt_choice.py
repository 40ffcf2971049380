"""The prompt setting on ``infodiv run``: every prompt option of ``infodiv extract``, and the
choice on held-out rows (``--choose-prompt``, infodiv.study.prompt_choice) recorded in run.json."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from _cli_checks import one_line_error

from infodiv.cli import build_parser, main
from infodiv.commands.options import study_settings
from infodiv.data import bundled_data_dir
from infodiv.study.prompt_choice import (
    DEFAULT_CANDIDATES,
    PromptSetting,
    choice_rows,
    compare_settings,
    score_readout,
    setting_of,
)

ROOT = bundled_data_dir().parents[1]
PROMPT_DESTS = ("chat_template", "start", "shots", "fixed_demos", "demo_start")


def _sub(name):
    parser = build_parser()
    return next(a for a in parser._actions if a.dest == "command").choices[name]


# ------------------------------------------------------------------------ settings, rows
@pytest.mark.parametrize("name, setting", [
    ("zero-shot", PromptSetting()),
    ("chat-template", PromptSetting(chat_template=True)),
    ("fixed-4-shot", PromptSetting(shots=4, fixed_demos=True)),
    ("2-shot", PromptSetting(shots=2)),
    ("chat-template+fixed-1-shot", PromptSetting(True, 1, True)),
])
def test_setting_names_round_trip(name, setting):
    assert PromptSetting.parse(name) == setting and setting.name == name


@pytest.mark.parametrize("bad", ["few-shot", "0-shot", "chat", "zero-shot+chat-template",
                                 "fixed-2-shot+fixed-3-shot", ""])
def test_unknown_setting_names_are_refused(bad):
    with pytest.raises(ValueError, match="unknown prompt setting"):
        PromptSetting.parse(bad)


def test_choice_rows_follow_the_analysed_rows_and_never_overlap():
    assert choice_rows(np.arange(2000), 7600, 400) == (2000, 2400)
    assert choice_rows(np.array([0, 7, 30]), 100, 10) == (31, 41)   # stratified rows
    assert choice_rows(np.arange(100, 200), 400, 50, start=0) == (0, 50)
    with pytest.raises(ValueError, match=r"rows 150..199 hold 50 analysed row\(s\)"):
        choice_rows(np.arange(100, 200), 400, 50, start=150)
    with pytest.raises(ValueError, match="needs rows 2000..2399 of the split, which holds 2000"):
        choice_rows(np.arange(2000), 2000, 400)


def test_fixed_demonstrations_come_after_the_held_out_rows():
    """On a split without a train split (the bundled AG News rows) the candidates' fixed
    demonstrations, and so the chosen run's, are drawn after the held-out rows."""
    from infodiv.study.prompt_choice import demo_start_for, rows_task
    from infodiv.study.settings import ExtractionSettings

    ext = ExtractionSettings(tasks=("ag_news",), data_dir=str(bundled_data_dir()), n=100)
    fixed = PromptSetting(shots=2, fixed_demos=True)
    assert demo_start_for(ext, "ag_news", fixed, 150) == 150
    assert demo_start_for(ext, "ag_news", PromptSetting(shots=2), 150) is None
    assert demo_start_for(ext, "ag_news", PromptSetting(chat_template=True), 150) is None
    task = rows_task(ext, "ag_news", (100, 150), fixed, seed=0)
    assert len(task) == 50 and task.meta["start"] == 100 and task.meta["demo_rows"][0] == 150
    assert task.prompt(0).startswith(task.demonstrations[0])
    with pytest.raises(ValueError, match="--demo-start 120 is below the end of the prompt "
                                         r"choice's rows \(..149\)"):
        demo_start_for(ExtractionSettings(tasks=("ag_news",), data_dir=str(bundled_data_dir()),
                                          shots=2, fixed_demos=True, demo_start=120),
                       "ag_news", fixed, 150)


# ------------------------------------------------------------------------------- scoring
def _readouts(n=200, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    # informative but biased: the raw argmax always answers option 0, an offset fixes it
    biased = np.stack([5.0 + 2.0 * (y == 0), 2.0 * (y == 1)], axis=1) + \
        0.1 * rng.normal(size=(n, 2))
    # unbiased but weak: the raw argmax is as good as the calibrated one
    weak = 0.6 * np.eye(2)[y] + rng.normal(size=(n, 2))
    return y, biased, weak


def test_the_criterion_decides_and_differences_are_paired():
    y, biased, weak = _readouts()
    scores = {"biased": score_readout(biased, y, 0), "weak": score_readout(weak, y, 0)}
    assert scores["biased"]["accuracy"] == 0.5 and scores["biased"]["accuracy_calibrated"] > 0.95
    assert 0.55 < scores["weak"]["accuracy"] < 0.8
    for s in scores.values():
        for key in ("accuracy", "accuracy_calibrated"):
            lo, hi = s[f"{key}_ci"]
            assert lo <= s[key] <= hi
    chosen, table = compare_settings(scores, "accuracy_calibrated", random_state=1)
    assert chosen == "biased"
    assert table["biased"]["difference_from_chosen"] == {"estimate": 0.0, "ci": [0.0, 0.0]}
    diff = table["weak"]["difference_from_chosen"]
    assert diff["estimate"] == pytest.approx(scores["biased"]["accuracy_calibrated"]
                                             - scores["weak"]["accuracy_calibrated"])
    assert 0 < diff["ci"][0] <= diff["estimate"] <= diff["ci"][1]
    assert not any(k.startswith("rows_") for row in table.values() for k in row)
    assert compare_settings(scores, "accuracy", random_state=1)[0] == "weak"
    # a tie goes to the setting listed first
    tie = {"b": scores["weak"], "a": scores["weak"]}
    assert compare_settings(tie, "accuracy")[0] == "b"


# --------------------------------------------------------------------- the command line
def test_run_takes_every_prompt_option_of_extract():
    run, extract = _sub("run"), _sub("extract")
    for dest in PROMPT_DESTS:
        a = next(x for x in run._actions if x.dest == dest)
        b = next(x for x in extract._actions if x.dest == dest)
        assert (a.option_strings, a.help, a.default, type(a)) == \
            (b.option_strings, b.help, b.default, type(b)), dest


def test_prompt_options_become_study_settings():
    parser = build_parser()
    args = parser.parse_args(["run", "--task", "ag_news", "--chat-template", "--shots", "4",
                              "--fixed-demos", "--demo-start", "2400", "--start", "10"])
    ext = study_settings(args).extraction
    assert (ext.chat_template, ext.shots, ext.fixed_demos, ext.demo_start, ext.start) == (
        True, 4, True, 2400, 10)
    assert setting_of(ext).name == "chat-template+fixed-4-shot"
    choice = study_settings(parser.parse_args(["run", "--choose-prompt"])).prompt_choice
    assert choice.choose_prompt == DEFAULT_CANDIDATES
    assert choice.choice_criterion == "accuracy_calibrated"
    picked = study_settings(parser.parse_args(
        ["run", "--choose-prompt", "zero-shot", "chat-template", "--choice-criterion",
         "accuracy", "--choice-n", "50"])).prompt_choice
    assert (picked.choose_prompt, picked.choice_criterion, picked.choice_n) == (
        ("zero-shot", "chat-template"), "accuracy", 50)


@pytest.fixture
def agnews_page():
    page = ROOT / "docs" / "results" / "smollm2-135m-agnews-block" / "report_page.json"
    if not page.is_file():
        pytest.skip(f"{page} is absent")
    return json.loads(page.read_text())


def test_run_reproduces_the_agnews_block_pages_prompt_setting(agnews_page, smollm2_available,
                                                              no_model_load, tmp_path):
    """``infodiv run --task ag_news --n 2000 --chat-template`` is the page's setting on the
    page's rows, and the run folder and run.json say so."""
    from infodiv.study.pipeline import plan_study

    sel = agnews_page["prompt_selection"]
    page_setting = sel["settings"][sel["chosen"]]
    args = build_parser().parse_args(
        ["run", "--task", "ag_news", "--n", "2000", "--chat-template",
         "--data-dir", str(bundled_data_dir())])
    settings = study_settings(args)
    assert setting_of(settings.extraction) == PromptSetting(
        page_setting["chat_template"], page_setting["shots"], page_setting["fixed_demos"])
    [(_, task, folder, _)] = plan_study(settings, tmp_path)
    assert folder.path.name == "smollm2-135m-ag_news-n2000-0shot-block-chat"
    assert folder.config["chat_template"] is True and len(task) == 2000
    assert task.meta.get("start", 0) == 0 and sel["rows"][0] >= len(task)   # held out


def test_choice_refusals_come_before_any_model(capsys, smollm2_available, no_model_load,
                                               tmp_path):
    base = ["run", "--task", "ag_news", "--n", "2000", "--data-dir", str(bundled_data_dir()),
            "--out", str(tmp_path), "--choose-prompt"]
    # the bundled copy holds rows 0-1999 only: no held-out rows after them
    one_line_error(capsys, base, "needs rows 2000..2399 of the ag_news split, which holds "
                                 "2000 rows")
    one_line_error(capsys, [*base, "--choice-start", "1900", "--choice-n", "50"],
                   "rows 1900..1949 hold 50 analysed row(s)")
    one_line_error(capsys, [*base[:-1], "--choose-prompt", "chat-template", "--chat-template"],
                   "--chat-template would be overridden")
    one_line_error(capsys, [*base, "sometimes-shot"], "unknown prompt setting 'sometimes-shot'")
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------------- end to end
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
TEMPLATE = "{text} Question: Was that sentence positive or negative? Answer: {answer}"


@pytest.fixture(scope="module")
def chat_tiny(tmp_path_factory):
    """A tiny llama whose word-level tokenizer has a chat template, and a 60-row task file."""
    from _tiny_models import tiny_model
    from _tiny_tasks import word_records

    root = tmp_path_factory.mktemp("choice")
    _, tok = tiny_model("llama", root / "llama")
    tok.chat_template = CHATML
    tok.save_pretrained(root / "llama")
    with (root / "data.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["text", "label"])
        w.writeheader()
        w.writerows({"text": r["text"], "label": ["bad", "good"][r["label"]]}
                    for r in word_records(60, seed=1))
    return root


@pytest.mark.slow
def test_run_chooses_the_prompt_on_held_out_rows_and_records_it(chat_tiny, tmp_path,
                                                                 monkeypatch, capsys):
    out = tmp_path / "runs"
    argv = ["run", "--model", str(chat_tiny / "llama"), "--task-file",
            str(chat_tiny / "data.csv"), "--template", TEMPLATE, "--options", "bad,good",
            "--label-field", "label", "--n", "16", "--choose-prompt", "zero-shot",
            "chat-template", "fixed-2-shot", "--choice-n", "16", "--objective", "accuracy",
            "--n-curve-orders", "4", "--n-triples", "2", "--n-bootstrap", "20",
            "--power-replicates", "0", "--stability", "0", "--no-selection-verdicts",
            "--info-method", "none", "--decompose-inference", "0", "--no-every-variant",
            "--no-graph", "--threads", "1", "--quiet", "--out", str(out)]
    assert main(argv) == 0
    [folder] = [p for p in out.iterdir() if (p / "run.json").is_file()]
    doc = json.loads((folder / "run.json").read_text())
    rec = doc["prompt_choice"]
    assert rec["rows"] == [16, 32] and rec["analysed_rows"] == [0, 15]
    assert rec["candidates"] == ["zero-shot", "chat-template", "fixed-2-shot"]
    values = [rec["settings"][s]["accuracy_calibrated"] for s in rec["candidates"]]
    assert rec["chosen"] == rec["candidates"][int(np.argmax(values))]
    best = PromptSetting.parse(rec["chosen"])
    assert {k: rec["setting"][k] for k in ("chat_template", "shots", "fixed_demos")} == {
        "chat_template": best.chat_template, "shots": best.shots,
        "fixed_demos": best.fixed_demos}
    assert doc["config"].get("chat_template", False) == best.chat_template
    assert doc["config"]["shots"] == best.shots
    if best.fixed_demos:   # drawn after the held-out rows, as the candidate's were
        assert rec["setting"]["demo_start"] == 32 and doc["config"]["demo_start"] == 32
    # the held-out extractions: the candidates' rows, none of them analysed
    choice = out / "llama-data-prompt-choice-rows16-31"
    assert json.loads((choice / "prompt_choice.json").read_text())["chosen"] == rec["chosen"]
    for s in rec["candidates"]:
        meta = json.loads((choice / f"select-{s}" / "meta.json").read_text())["meta"]
        assert meta["n_examples"] == 16 and meta["chat_template"] == ("chat" in s)
    analysed = json.loads((folder / "contributions" / "meta.json").read_text())["meta"]
    assert analysed["n_examples"] == 16 and analysed["chat_template"] == best.chat_template
    # rerun: the choice and the extraction are reused, no model is loaded
    import extraction.models

    def boom(*a, **k):
        raise AssertionError("a model was loaded although nothing changed")

    monkeypatch.setattr(extraction.models, "load_model", boom)
    capsys.readouterr()
    assert main(argv) == 0
    assert "extracting" not in capsys.readouterr().out
