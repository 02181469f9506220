"""QA-pair and section-summary alignment (M3FinMeeting): counts, many-to-many, the threshold, empty sides;
pairs extracted through the LLM client and aligned with the demo's gold pairs and summary."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from llm_helpers import Endpoint, completion

from speechkit.io import read_transcripts
from speechkit.io.atomic import write_json
from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes, write_notes
from speechkit.io.questions import read_questions
from speechkit.io.run_folder import RunFolder
from speechkit.llm.client import ClientOptions, LLMClient
from speechkit.metrics.qa_alignment import (
    THRESHOLD,
    align_matrix,
    align_summaries,
    align_texts,
    cosine_matrix,
    sentences,
)
from speechkit.notes import Notes
from speechkit.steps.align import align_meeting, extract_pairs
from speechkit.text_similarity import LexicalSimilarity

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


class Vectors:
    """A text similarity over hand-set vectors: the cosine of the vectors the texts name."""

    name = "vectors"
    threshold = THRESHOLD

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def matrix(self, left, right) -> np.ndarray:
        return cosine_matrix(np.array([self.vectors[t] for t in left]), np.array([self.vectors[t] for t in right]))


def test_the_counts_give_precision_recall_and_f1():
    sim = Vectors({"p0": [1, 0, 0], "p1": [0.9, 0.3, 0], "p2": [0, 0, 1], "g0": [1, 0, 0], "g1": [0, 1, 0]})
    a = align_texts(["p0", "p1", "p2"], ["g0", "g1"], sim)
    # p0 and p1 align with g0 (cosine 1 and 0.95); p2 and g1 align with nothing
    assert (a.predicted, a.gold, a.aligned_predicted, a.aligned_gold) == (3, 2, 2, 1)
    assert a.precision == pytest.approx(2 / 3) and a.recall == pytest.approx(1 / 2)
    assert a.f1 == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))
    assert a.as_dict()["similarity"] == "vectors" and a.as_dict()["threshold"] == 0.75


def test_alignment_is_many_to_many_each_side_counted_on_its_own():
    # one predicted unit covering two gold units aligns with both: recall 1 from a single prediction
    wide = align_matrix(np.array([[0.9, 0.8]]))
    assert (wide.aligned_predicted, wide.aligned_gold, wide.precision, wide.recall) == (1, 2, 1.0, 1.0)
    # two predicted units repeating one gold unit both align with it: precision stays 1
    repeated = align_matrix(np.array([[0.9], [0.8], [0.1]]))
    assert (repeated.aligned_predicted, repeated.aligned_gold) == (2, 1)
    assert repeated.precision == pytest.approx(2 / 3) and repeated.recall == 1.0


def test_a_pair_exactly_at_the_threshold_aligns_and_just_below_does_not():
    assert align_matrix(np.array([[0.75]])).aligned_gold == 1
    assert align_matrix(np.array([[np.nextafter(0.75, 0)]])).aligned_gold == 0
    assert align_matrix(np.array([[0.5]]), threshold=0.5).aligned_predicted == 1
    # from vectors: (1,0,0,0,0) and (3,2,1,1,1) have a cosine of exactly 3/4
    sim = Vectors({"a": [1, 0, 0, 0, 0], "b": [3, 2, 1, 1, 1], "c": [3, 2, 1, 1, 1.01]})
    assert sim.matrix(["a"], ["b"])[0, 0] == 0.75
    assert align_texts(["a"], ["b"], sim).f1 == 1.0
    assert align_texts(["a"], ["c"], sim).f1 == 0.0


def test_empty_sides_leave_the_figures_they_divide_by_not_applicable():
    sim = Vectors({"g": [1, 0]})
    none_predicted = align_texts([], ["g"], sim)
    assert (none_predicted.precision, none_predicted.recall, none_predicted.f1) == (None, 0.0, None)
    no_gold = align_texts(["g"], [], sim)
    assert (no_gold.precision, no_gold.recall, no_gold.f1) == (0.0, None, None)
    nothing = align_texts([], [], sim)
    assert (nothing.predicted, nothing.gold, nothing.precision, nothing.recall, nothing.f1) == (0, 0, None, None, None)
    assert align_matrix(np.zeros((2, 3))).f1 == 0.0  # nothing aligned: 0, not n/a


def test_summary_sentences_are_cut_at_sentence_ends_not_inside_identifiers():
    text = "We moved pacs.008 to the new flow. P99 is 1.5 ms now!\nWho owns it? Adriana."
    assert sentences(text) == ["We moved pacs.008 to the new flow.", "P99 is 1.5 ms now!", "Who owns it?", "Adriana."]
    assert sentences("") == []


def test_the_summary_variant_aligns_sentences_of_the_two_summaries():
    sim = Vectors({"A.": [1, 0], "B.": [0, 1], "C.": [1, 0.1]})
    a = align_summaries("A. B.", "C.", sim)
    assert (a.predicted, a.gold, a.aligned_predicted, a.aligned_gold) == (2, 1, 1, 1)


def test_the_demo_gold_questions_align_with_themselves_and_not_with_answers():
    questions = read_questions(DEMO / "meetings" / "m01" / "questions.json", "m01").questions
    texts = [q.question for q in questions]
    same = align_texts(texts, texts, LexicalSimilarity())
    assert same.precision == 1.0 and same.recall == 1.0
    answers = [q.answer for q in read_questions(DEMO / "meetings" / "m02" / "questions.json", "m02").questions]
    other = align_texts(texts, answers, LexicalSimilarity())
    assert (other.aligned_predicted, other.aligned_gold, other.f1) == (0, 0, 0.0)  # a question is not an answer


def test_pairs_extracted_through_the_llm_client_align_with_the_demo_gold_pairs_and_summary(tmp_path):
    gold_question = read_questions(DEMO / "meetings" / "m01" / "questions.json", "m01").questions[0].question
    requests = []

    def answer(request, call):
        requests.append(request)
        pairs = [{"question": gold_question, "answer": "Adriana"}, {"question": "Is it sunny?", "answer": "yes"},
                 {"question": 5, "answer": "not a pair"}]
        return 200, completion(json.dumps({"pairs": pairs})), 0.0

    server = Endpoint(answer, models=["m"])
    try:
        client = LLMClient(ClientOptions(base_url=server.url, model="m", max_retries=0, timeout_s=5.0))
        transcript = read_transcripts(DEMO / "meetings" / "m01" / "reference.json")["m01"]
        pairs = extract_pairs(client, transcript, most=5, transcript_bytes=500)
    finally:
        server.close()
    assert [p.question for p in pairs] == [gold_question, "Is it sunny?"]  # the malformed one left out
    sent = requests[0]
    assert sent["response_format"]["json_schema"]["name"] == "pairs"
    opening = transcript.segments[0]
    assert f"{opening.speaker_name}: {' '.join(opening.text.split()[:2])}" in sent["messages"][-1]["content"]

    run = tmp_path / "run"
    write_json(run / "run.json", {"recipe": {"level": 1}, "workspace": {"root": str(DEMO)}})
    gold = read_gold_notes(DEMO / "meetings" / "m01" / "notes.json", "m01")
    number = gold.facts_of("number")[0].text  # one sentence of the gold summary, said again
    write_notes(run / "notes" / "m01.json", Notes(summary=f"{number} It rained."), "m01")
    found = align_meeting(RunFolder(run), load_workspace(DEMO), "m01", pairs, LexicalSimilarity())
    qa = found["qa_pairs"]
    assert (qa["predicted"], qa["aligned_predicted"], qa["similarity"]) == (2, 1, "lexical")
    assert qa["aligned_gold"] >= 1 and qa["recall"] == qa["aligned_gold"] / qa["gold"]
    summary = found["summary"]
    assert (summary["predicted"], summary["gold"], summary["aligned_predicted"],
            summary["aligned_gold"]) == (2, len(sentences(gold.summary)), 1, 1)


def _demo_run(folder: Path) -> Path:
    """A run folder of the demo at L1 whose transcripts are the references of m01 and m02."""
    write_json(folder / "run.json", {"recipe": {"level": 1}, "workspace": {"root": str(DEMO)}})
    for mid in ("m01", "m02"):
        (folder / "transcripts").mkdir(parents=True, exist_ok=True)
        (folder / "transcripts" / f"{mid}.json").write_bytes(
            (DEMO / "meetings" / mid / "reference.json").read_bytes())
    write_notes(folder / "notes" / "m01.json", Notes(summary="SettleMap: the cut-over date is May 8. It rained."),
                "m01")
    return folder


def test_align_run_pools_the_meetings_counts_and_the_command_prints_them(tmp_path, served, capsys):
    gold = {mid: [q.question for q in read_questions(DEMO / "meetings" / mid / "questions.json", mid).questions]
            for mid in ("m01", "m02")}

    def answer(request, call):  # m01 (asked first): two gold questions and a stray one; m02: one gold question
        questions = gold["m01"][:2] + ["Is it sunny?"] if call == 1 else gold["m02"][:1]
        return 200, completion(json.dumps({"pairs": [{"question": q, "answer": "x"} for q in questions]})), 0.0

    served.append(Endpoint(answer, models=["m"]))
    run = _demo_run(tmp_path / "run")
    from speechkit.cli import main

    assert main(["align", str(run), "--base-url", served[0].url, "--model", "m", "--max-retries", "0"]) == 0
    document = json.loads((run / "qa_pairs.json").read_text())
    m01, m02 = document["meetings"]["m01"], document["meetings"]["m02"]
    assert (m01["qa_pairs"]["predicted"], m02["qa_pairs"]["predicted"]) == (3, 1)
    pooled = document["run"]["qa_pairs"]
    for key in ("predicted", "gold", "aligned_predicted", "aligned_gold"):
        assert pooled[key] == m01["qa_pairs"][key] + m02["qa_pairs"][key]
    assert pooled["gold"] == len(gold["m01"]) + len(gold["m02"]) and pooled["aligned_predicted"] >= 3
    assert pooled["precision"] == pooled["aligned_predicted"] / 4
    # the summary variant needs the run's notes: m02 has none, so only m01 counts
    assert m02["summary"] is None and document["run"]["summary"] == {**m01["summary"]}
    assert document["endpoint"]["requests"] == 2 and document["endpoint"]["failed"] == 0
    printed = capsys.readouterr().out
    assert f"QA pairs   P {pooled['precision']:.3f}" in printed and "wrote" in printed


def test_align_run_with_a_dead_endpoint_fails_in_one_line_and_writes_nothing(tmp_path, capsys):
    run = _demo_run(tmp_path / "run")
    from speechkit.cli import main

    assert main(["align", str(run), "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--max-retries", "0",
                 "--timeout-s", "2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("speechkit align: error: ") and "127.0.0.1:9" in err[0]
    assert not (run / "qa_pairs.json").exists()
