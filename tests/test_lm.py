"""N-gram LMs from text: normalisation, kaldingram ARPA building, caching, KenLM loading."""
from __future__ import annotations

import re

import kenlm
import pytest

from speechkit.errors import FormatError
from speechkit.lm import arpa_unigrams, build_arpa, cached_arpa, corpus_lines, load_lm, normalize_text


@pytest.fixture(scope="module")
def stm_text(realdata) -> list[str]:
    """The reference transcript of the real two-speaker recording, one utterance a line."""
    lines = (realdata / "pyannote-sample" / "sample.stm").read_text().splitlines()
    return [line.split(maxsplit=5)[5] for line in lines if len(line.split(maxsplit=5)) == 6]


def _next_word_mass(model: kenlm.Model, history: list[str], vocabulary: list[str]) -> float:
    """Sum over the vocabulary (and </s>) of P(word | <s> history)."""
    state = kenlm.State()
    model.BeginSentenceWrite(state)
    for word in history:
        after = kenlm.State()
        model.BaseScore(state, word, after)
        state = after
    return sum(10 ** model.BaseScore(state, w, kenlm.State()) for w in [*vocabulary, "</s>"])


@pytest.mark.parametrize(("raw", "spoken"), [
    ("Send the pacs.008 by 2024!", "send the pacs dot zero zero eight by twenty twenty four"),
    ("Café’s rate: 3.5% of 1,000", "cafe's rate three point five percent of one thousand"),
    ("'Kubernetes' isn't K8s", "kubernetes isn't k eight s"),
])
def test_normalize_text_spells_what_a_ctc_model_emits(raw, spoken):
    assert normalize_text(raw) == spoken


def test_normalize_text_keeps_digits_the_alphabet_has():
    assert normalize_text("v1.2 rollout", alphabet="abcdefghijklmnopqrstuvwxyz0123456789") == (
        "v1 point 2 rollout")


def test_corpus_lines_split_sentences():
    assert corpus_lines(["First line. Second one!\nThird: yes", "  ", "..."]) == [
        "first line", "second one", "third", "yes"]


def test_build_arpa_is_a_normalised_kneser_ney_model(tmp_path, stm_text):
    path = build_arpa(stm_text, tmp_path / "sample.arpa", order=3)
    model = load_lm(path)
    assert model.order == 3
    vocabulary = arpa_unigrams(path)
    assert {"hello", "know", "there"} <= set(vocabulary)
    assert not {"<s>", "</s>", "<unk>"} & set(vocabulary)
    # every conditional distribution sums to one (over the vocabulary, </s> and <unk>)
    for history in ([], ["oh"], ["i", "didn't"], ["unheard", "words"]):
        mass = _next_word_mass(model, history, [*vocabulary, "<unk>"])
        assert mass == pytest.approx(1.0, abs=1e-3), history
    # a sentence of the text beats the same words shuffled
    assert model.score("i didn't know you were there") > model.score("there were you know didn't i")


def test_unknown_words_and_tiny_texts_keep_finite_scores(tmp_path):
    path = build_arpa(["we deploy kubernetes", "the pacs message"], tmp_path / "tiny.arpa")
    model = load_lm(path)
    # every trigram is seen once: without the discount cap each would get log10 p = -99
    scores = [score for score, _, _ in model.full_scores("we deploy kubernetes")]
    assert min(scores) > -3
    # a word outside the text costs about as much as a word seen once, not KenLM's -100
    unknown = [score for score, _, oov in model.full_scores("we zebra") if oov]
    assert len(unknown) == 1 and unknown[0] > -3


def test_build_arpa_rejects_bad_options(tmp_path):
    with pytest.raises(ValueError, match="no words"):
        build_arpa(["!!! ...", ""], tmp_path / "empty.arpa")
    for order in (1, 7):  # KenLM needs bigrams at least; kaldingram builds up to 5-grams
        with pytest.raises(ValueError, match="order"):
            build_arpa(["some words"], tmp_path / "x.arpa", order=order)
    assert not list(tmp_path.iterdir())


def test_cached_arpa_builds_once_per_text(tmp_path):
    first = cached_arpa(["We deploy Kubernetes on Friday."], cache_dir=tmp_path)
    stamp = first.stat().st_mtime_ns
    # the same words after normalisation hit the cache
    again = cached_arpa(["we deploy  kubernetes on friday"], cache_dir=tmp_path)
    assert again == first and again.stat().st_mtime_ns == stamp
    other = cached_arpa(["we deploy on monday"], cache_dir=tmp_path)
    bigger = cached_arpa(["We deploy Kubernetes on Friday."], order=4, cache_dir=tmp_path)
    assert len({first, other, bigger}) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in (first, other, bigger))
    assert all(re.fullmatch(r"[0-9a-f]{24}\.[34]gram\.arpa", p.name) for p in tmp_path.iterdir())


def test_load_lm_names_the_bad_file(tmp_path):
    with pytest.raises(FormatError, match="no such language model file"):
        load_lm(tmp_path / "missing.arpa")
    bad = tmp_path / "bad.arpa"
    bad.write_text("this is not an ARPA file\n")
    with pytest.raises(FormatError, match=re.escape(str(bad))):
        load_lm(bad)
    with pytest.raises(FormatError, match="1-grams"):
        arpa_unigrams(bad)
