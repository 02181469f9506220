"""WER: equals jiwer's on the normalised text, on the real pyannote sample reference."""
from __future__ import annotations

import dataclasses

import jiwer
import pytest

from speechkit.io import read_stm, write_seglst, write_stm
from speechkit.metrics.normalize import normalize, normalized_text
from speechkit.metrics.wer import align_words, word_error_rate
from speechkit.scoring import score_files
from speechkit.scoring.catalogue import catalogue
from speechkit.steps.judge.metrics import JUDGED
from speechkit.transcript import Segment, Transcript

family = catalogue().family


@pytest.fixture(scope="module")
def sample(realdata):
    return read_stm(realdata / "pyannote-sample" / "sample.stm")["sample"]


def perturb(ref: Transcript, fn) -> Transcript:
    """A copy of ``ref`` whose i-th word (over the whole meeting) is replaced by ``fn(i, word)``
    (None drops it)."""
    segs, i = [], 0
    for s in ref.segments:
        words = []
        for w in s.text.split():
            new = fn(i, w)
            i += 1
            if new is not None:
                words.append(new)
        segs.append(dataclasses.replace(s, text=" ".join(words), words=()))
    return Transcript(ref.session_id, segs)


PERTURBATIONS = {
    "dropped": lambda i, w: None if i % 4 == 1 else w,
    "substituted": lambda i, w: "banana" if i % 5 == 2 else w,
    "mixed": lambda i, w: None if i % 7 == 0 else ("kiwi" if i % 6 == 3 else (w + " extra" if i % 9 == 4 else w)),
}


@pytest.mark.parametrize("kind", sorted(PERTURBATIONS))
def test_wer_equals_jiwer_on_normalised_text(sample, kind):
    hyp = perturb(sample, PERTURBATIONS[kind])
    result = word_error_rate(sample.text, hyp.text)
    ref_n, hyp_n = normalize(sample.text), normalize(hyp.text)
    expected = jiwer.process_words(ref_n, hyp_n)
    assert result.ratio.value == pytest.approx(jiwer.wer(ref_n, hyp_n))
    assert result.ratio.value > 0
    assert (result.hits, result.substitutions, result.deletions, result.insertions) == (
        expected.hits, expected.substitutions, expected.deletions, expected.insertions)
    assert result.reference_words == len(ref_n.split())
    # the aligned pairs reproduce both word sequences and the counts
    assert [r for r, _, _ in result.pairs if r is not None] == ref_n.split()
    assert [h for _, h, _ in result.pairs if h is not None] == hyp_n.split()
    ops = [op for _, _, op in result.pairs]
    assert ops.count("substitute") == result.substitutions and ops.count("delete") == result.deletions
    assert ops.count("insert") == result.insertions and ops.count("equal") == result.hits


def test_identical_text_scores_zero(sample):
    result = word_error_rate(sample.text, sample.text)
    assert result.ratio.value == 0.0 and result.errors == 0 and result.reference_words > 40


def test_normaliser_applies_to_both_sides():
    # contraction, case, punctuation and spoken numbers are normalised away
    result = word_error_rate("I didn't know, it was TWELVE percent.", "i did not know it was 12%")
    assert result.errors == 0
    result = word_error_rate("I didn't know", "I did know")
    assert (result.deletions, result.errors, result.reference_words) == (1, 1, 4)
    assert ("not", None, "delete") in result.pairs


def test_empty_sides_never_divide_by_zero():
    assert word_error_rate("", "").ratio.value is None
    only_hyp = word_error_rate("", "hello there")
    assert only_hyp.ratio.value is None and only_hyp.insertions == 2 and only_hyp.ratio.num == 2
    only_ref = word_error_rate("hello there", "")
    assert only_ref.ratio.value == 1.0 and only_ref.deletions == 2


def test_score_files_wer_matches_jiwer(sample, realdata, tmp_path):
    hyp = perturb(sample, PERTURBATIONS["mixed"])
    hyp = Transcript("sample", [s.with_speaker(speaker_name=s.speaker) for s in hyp.segments])
    path = tmp_path / "hyp.json"
    write_seglst(path, [hyp])
    scores = score_files(realdata / "pyannote-sample" / "sample.stm", path)
    expected = jiwer.wer(normalized_text(sample), normalized_text(hyp))
    assert scores["meetings"]["sample"]["wer"]["value"] == pytest.approx(expected)
    assert scores["aggregate"]["wer"] == {"value": pytest.approx(expected), "ci_low": pytest.approx(expected),
                                          "ci_high": pytest.approx(expected)}
    details = scores["meetings"]["sample"]["details"]["wer"]
    assert details["errors"] == details["substitutions"] + details["deletions"] + details["insertions"] > 0
    # STM reference, SegLST hypothesis with names: the transcript metrics apply; DER/JER do not (a
    # SegLST holds transcript segments, not speaker turns), nor the term recalls, notes and questions
    assert set(scores["not_applicable"]) == {"number_recall", "term_recall", "speaker_consistency", "der", "jer",
                                             *family("notes").keys, *family("questions").keys,
                                             *family(JUDGED).keys}
    assert "turns" in scores["not_applicable"]["der"]
    assert scores["aggregate"]["named_speaker_accuracy"]["value"] > 0.5


def test_segments_without_text_are_fine():
    ref = Transcript("m", [Segment(0, 1, "A", "hello world")])
    hyp = Transcript("m", [Segment(0, 1, "X", ""), Segment(1, 2, "X", "hello word")])
    assert word_error_rate(ref.text, hyp.text).substitutions == 1


def test_wer_equals_cpwer_for_one_speaker_on_many_segments(sample, tmp_path):
    """WER and cpWER read the same per-segment tokens: with one speaker on each side they count the same errors."""
    end = sample.segments[-1].end  # and a number spoken across two segments, which neither may join
    split = [Segment(end + 1, end + 2, "A", "it was four point"), Segment(end + 2, end + 3, "A", "two million")]
    ref = Transcript("sample", [s.with_speaker("A") for s in sample.segments] + split)
    hyp = perturb(ref, PERTURBATIONS["mixed"])
    hyp = Transcript("sample", [s.with_speaker("X", speaker_name="X") for s in hyp.segments])
    assert len(ref.segments) > 10
    write_stm(tmp_path / "ref.stm", [ref])
    write_seglst(tmp_path / "hyp.json", [hyp])
    meeting = score_files(tmp_path / "ref.stm", tmp_path / "hyp.json")["meetings"]["sample"]
    wer, cp = meeting["details"]["wer"], meeting["details"]["cpwer"]
    assert wer["errors"] == cp["errors"] > 0 and wer["reference_words"] == cp["length"]
    assert meeting["wer"]["value"] == pytest.approx(meeting["cpwer"]["value"])


def test_a_number_split_across_two_segments_is_not_joined():
    reference = Transcript("m", [Segment(0, 4, "A", "We moved four point two million dollars.")])
    split = Transcript("m", [Segment(0, 2, "X", "we moved four point"), Segment(2, 4, "X", "two million dollars")])
    assert normalized_text(split) == f"{normalize('we moved four point')} {normalize('two million dollars')}"
    assert align_words(normalized_text(reference), normalized_text(reference)).errors == 0
    assert align_words(normalized_text(reference), normalized_text(split)).errors > 0
    # word_error_rate normalises the raw strings it is given: joined, the two halves make up the number
    assert word_error_rate(reference.text, split.text).errors == 0
