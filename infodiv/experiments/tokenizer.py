"""The zoo's tokenizer: a lower-cased word-level vocabulary trained on the training rows.

One tokenizer serves every zoo model. Word level (``tokenizers`` WordLevel model, Whitespace
pre-tokenizer ``\\w+|[^\\w\\s]+``, NFKC + lower-case normaliser, ``<s>`` prepended) keeps the
prompts short (median 52 tokens on AG News) so that training fits the CPU budget, and a vocabulary
of a few thousand entries keeps the embedding from dominating the parameter count. Words outside
the vocabulary become ``<unk>``. Trained on the training rows only (never the held-out rows).
The answer tokens are the lower-cased option words ``world sports business science``; they
must be in the vocabulary (checked).
"""

from __future__ import annotations

__all__ = ["SPECIALS", "train_tokenizer"]

SPECIALS = ("<pad>", "<s>", "</s>", "<unk>")


def train_tokenizer(task, *, vocab_size: int = 4096, min_frequency: int = 2):
    """Train the word-level tokenizer on the prompts (and gold answers) of ``task``.

    Parameters
    ----------
    task : extraction.Task
        The training rows (template included, so the template words are in the vocabulary).
    vocab_size : int
        Vocabulary size including the 4 special tokens (``<pad> <s> </s> <unk>``).
    min_frequency : int
        Words seen fewer times are left out.

    Returns
    -------
    transformers.PreTrainedTokenizerFast

    Raises
    ------
    ValueError
        ``vocab_size`` below 16, or an option word missing from the trained vocabulary.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    if int(vocab_size) < 16:
        raise ValueError(f"vocab_size must be at least 16, got {vocab_size}")
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.WordLevelTrainer(vocab_size=int(vocab_size),
                                        min_frequency=int(min_frequency),
                                        special_tokens=list(SPECIALS), show_progress=False)
    texts = [task.prompt(i) + task.answer(i) for i in range(len(task))]
    tok.train_from_iterator(texts, trainer=trainer)
    vocab = tok.get_vocab()
    missing = [o for o in task.options if o.lower() not in vocab]
    if missing:
        raise ValueError(f"option words {missing} are not in the trained vocabulary of "
                         f"{len(vocab)}; raise vocab_size")
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", vocab["<s>"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>", pad_token="<pad>")
