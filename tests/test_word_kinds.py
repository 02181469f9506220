"""The ASR error taxonomy: each WER error by kind of word, summing to WER's S/D/I exactly."""
from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from speechkit.io import read_transcripts
from speechkit.io.manifest import load_workspace
from speechkit.io.seglst import write_seglst
from speechkit.metrics.wer import align_words
from speechkit.metrics.word_kinds import KINDS, OPERATIONS, Vocabulary, term_positions, word_error_kinds, word_kind
from speechkit.scoring import score_files, score_workspace
from speechkit.transcript import Segment, Transcript
from speechkit.workspace import Person

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
PEOPLE = [Person("p1", "Tobias Tanaka", ("Toby",)), Person("p2", "Will Grant"), Person("A", "A")]
VOCABULARY = Vocabulary.of(PEOPLE, ["pacs.008", "New Jersey", "Kafka"])


def _totals(kinds: dict) -> dict[str, int]:
    return {name: sum(kinds[k][name] for k in KINDS) for name in (*OPERATIONS.values(), "errors", "reference_words")}


def test_each_word_gets_the_first_kind_that_fits():
    assert VOCABULARY.names == {"tobias", "tanaka", "toby", "grant"}  # "will" is a function word; "A" only an id
    kinds = {w: word_kind(w, False, VOCABULARY) for w in
             ("toby", "tanaka", "12%", "$4200000", "3rd", "march", "friday", "may", "the", "will", "yeah", "kafka",
              "ledger", "a")}
    assert kinds == {"toby": "name", "tanaka": "name", "12%": "number_date", "$4200000": "number_date",
                     "3rd": "number_date", "march": "number_date", "friday": "number_date", "may": "function_word",
                     "the": "function_word", "will": "function_word", "yeah": "function_word",
                     "kafka": "content_word", "ledger": "content_word", "a": "function_word"}
    assert word_kind("kafka", True, VOCABULARY) == "workspace_term"
    assert word_kind("toby", True, VOCABULARY) == "name"  # names first


def test_a_term_is_matched_as_a_word_sequence_on_its_own_side():
    words = "we moved new work to new jersey and kafka".split()
    assert term_positions(words, VOCABULARY.terms) == {5, 6, 8}  # "new work" is no term
    aligned = align_words("toby sent pacs.008 to new jersey", "tony sent pax to new jersey kafka on 8th")
    kinds = word_error_kinds(aligned.pairs, VOCABULARY)
    assert kinds["name"]["substitutions"] == 1  # toby -> tony: the reference word's kind
    assert kinds["workspace_term"] == {"substitutions": 1, "deletions": 0, "insertions": 1, "errors": 2,
                                       "reference_words": 3}  # pacs.008 -> pax; kafka inserted (its own kind)
    assert kinds["number_date"]["insertions"] == kinds["function_word"]["insertions"] == 1  # 8th, on
    assert _totals(kinds)["errors"] == aligned.errors


def _perturbed(ws_root: Path, out: Path) -> None:
    """Hypotheses of the demo meetings: each reference with words dropped, replaced and added, names
    and terms among them."""
    ws = load_workspace(ws_root)
    for meeting in ws.scored_meetings:
        [ref] = read_transcripts(meeting.reference).values()
        segments = []
        for k, seg in enumerate(ref.segments):
            words = []
            for i, word in enumerate(seg.text.split()):
                n = i + 3 * k
                if word.strip(",.?!") in ("Toby", "Sam", "Kafka"):
                    words.append("Tony")
                elif n % 7 == 3:
                    continue
                elif n % 11 == 5:
                    words.append("blah")
                else:
                    words.append(word)
                if n % 13 == 0:
                    words.append("the")
            segments.append(Segment(seg.start, seg.end, seg.speaker, " ".join(words), speaker_name=seg.speaker))
        write_seglst(out / f"{meeting.id}.json", [Transcript(meeting.id, segments)])


def test_the_kinds_sum_to_the_wer_counts_exactly_on_the_demo(tmp_path):
    """Real alignments: the demo's references against perturbed hypotheses, scored as a run is;
    per meeting and summed, every kind's S/D/I adds up to WER's."""
    _perturbed(DEMO, tmp_path / "hyp")
    scores = score_workspace(DEMO, tmp_path / "hyp", out=tmp_path / "scores.json")
    assert scores == json.loads((tmp_path / "scores.json").read_text())
    for mid, meeting in scores["meetings"].items():
        wer, kinds = meeting["details"]["wer"], meeting["details"]["word_error_kinds"]["kinds"]
        assert list(kinds) == list(KINDS)
        totals = _totals(kinds)
        assert {k: totals[k] for k in (*OPERATIONS.values(), "errors", "reference_words")} == {
            k: wer[k] for k in (*OPERATIONS.values(), "errors", "reference_words")}, mid
    summed = scores["components"]["word_error_kinds"]
    assert summed["meetings"] == len(scores["meetings"])
    assert {k: v for k, v in _totals(summed["kinds"]).items() if k != "reference_words"} == {
        **{k: scores["components"]["wer"][k] for k in OPERATIONS.values()},
        "errors": scores["totals"]["wer"]["numerator"]}
    kinds = summed["kinds"]
    assert kinds["name"]["substitutions"] > 0 and kinds["workspace_term"]["errors"] > 0  # Toby, Sam, Kafka -> Tony
    assert kinds["function_word"]["insertions"] > 0 and kinds["content_word"]["substitutions"] > 0
    assert all(kinds[k]["reference_words"] > 0 for k in KINDS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["toby", "tanaka", "new", "jersey", "kafka", "pacs.008", "12", "may", "the", "of",
                                 "ledger", "rollout", "will"]), max_size=30),
       st.lists(st.sampled_from(["tony", "toby", "new", "jersey", "kafka", "pax", "8", "the", "ledger", "a"]),
                max_size=30))
def test_the_kinds_sum_to_the_wer_counts_on_any_alignment(reference, hypothesis):
    aligned = align_words(" ".join(reference), " ".join(hypothesis))
    totals = _totals(word_error_kinds(aligned.pairs, VOCABULARY))
    assert (totals["substitutions"], totals["deletions"], totals["insertions"], totals["reference_words"]) == (
        aligned.substitutions, aligned.deletions, aligned.insertions, aligned.reference_words)


def test_a_pair_of_files_names_people_by_the_reference_labels(tmp_path):
    ref, hyp = tmp_path / "ref.stm", tmp_path / "hyp.stm"
    ref.write_text("m1 1 Diane_Smith 0.0 3.0 diane asked sheila about the 12 tickets\n")
    hyp.write_text("m1 1 S1 0.0 3.0 diana asked about a 12 ticket\n")
    scores = score_files(ref, hyp)
    kinds = scores["meetings"]["m1"]["details"]["word_error_kinds"]["kinds"]
    assert kinds["name"]["substitutions"] == 1  # "diane" (the label Diane_Smith); "sheila" is no one's name here
    assert kinds["content_word"]["deletions"] + kinds["content_word"]["substitutions"] >= 2
    assert _totals(kinds)["errors"] == scores["meetings"]["m1"]["details"]["wer"]["errors"]
