"""QA-pair and summary alignment on Chinese and Japanese: sentences cut at 。！？, units compared by
their character-bigram overlap, whose threshold is measured here on hand-written paraphrases of
the gold questions of synthetic scripts (no audio)."""
from __future__ import annotations

import numpy as np
import pytest

from speechkit.cjk import sentences
from speechkit.metrics.qa_alignment import align_summaries, align_texts
from speechkit.synth import SynthOptions
from speechkit.synth.notes import gold_notes
from speechkit.synth.questions import gold_questions
from speechkit.synth.script import write_script
from speechkit.text_similarity import CharacterSimilarity, LexicalSimilarity

#: Paraphrases of each gold question type, worded unlike the generator's questions.
PARAPHRASES = {
    "zh": {"who_owns": "{d}这件事由谁来做？", "due": "{d}要在哪天之前完成？", "who_asked": "是谁要求{d}的？",
           "decision": "{q}最终是怎么定的？", "number": "{p}那边{t}现在是什么数？"},
    "ja": {"who_owns": "{d}は誰がやることになりましたか？", "due": "{d}はいつまでにやる必要がありますか？",
           "who_asked": "{d}をお願いしたのは誰でしたか？", "decision": "{q}はどう決まりましたか？",
           "number": "{p}の{t}の数字は？"},
}


def _meetings(code: str, seeds=(1, 2)):
    for seed in seeds:
        options = SynthOptions(seed=seed, meetings=4, people=4, minutes=2, language=code, check_voices=False)
        script = write_script(options, [v.id for v in options.spoken_language.voices])
        truth = script.state.to_dict()
        numbers = {n.canonical for p in script.state.projects for n in p.numbers}
        for plan in script.state.meetings:
            said = list(dict.fromkeys(p.term for t in script.turns[plan.id] for p in t.pieces if p.term in numbers))
            yield truth, plan.id, said


def _paraphrase(code: str, truth: dict, meeting: str, question) -> str:
    template = PARAPHRASES[code][question.type]
    if question.type == "decision":
        return template.format(q=next(d["question"] for d in truth["decisions"]
                                      if d["meeting"] == meeting and d["question"] in question.question))
    if question.type == "number":
        project, number = next((p, n) for p in truth["projects"] for n in p["numbers"]
                               if n["topic"] in question.question and p["name"]["canonical"] in question.question)
        return template.format(p=project["name"]["canonical"], t=number["topic"])
    return template.format(d=next(a["description"] for a in truth["action_items"]
                                  if a["opened_in"] == meeting and a["description"] in question.question))


def test_cjk_sentences_end_at_full_stops_with_or_without_spaces():
    assert sentences("决定了。下周再看！好吗？他说：「好的。」然后P99是1.5毫秒。") == \
        ["决定了。", "下周再看！", "好吗？", "他说：「好的。」", "然后P99是1.5毫秒。"]
    assert sentences("会議は終わりました。次は水曜日です。 Then pacs.008 is done. Next") == \
        ["会議は終わりました。", "次は水曜日です。", "Then pacs.008 is done.", "Next"]


def test_the_character_threshold_is_where_paraphrases_and_other_questions_part():
    """Paraphrases score with their gold question, other questions of the meeting against it: the
    threshold is (within one grid step) the one that best tells them apart, and does so well."""
    sim = CharacterSimilarity()
    same, other = [], []
    for code in ("zh", "ja"):
        for truth, meeting, said in _meetings(code):
            questions = gold_questions(truth, meeting, said).questions
            if not questions:
                continue
            m = sim.matrix([_paraphrase(code, truth, meeting, q) for q in questions], [q.question for q in questions])
            same += list(np.diag(m))
            other += list(m[~np.eye(len(questions), dtype=bool)])
    same, other = np.array(same), np.array(other)
    assert len(same) > 100 and len(other) > 500

    def balanced(t: float) -> float:
        return ((same >= t).mean() + (other < t).mean()) / 2

    grid = np.arange(0.1, 0.8, 0.025)
    best = grid[int(np.argmax([balanced(t) for t in grid]))]
    assert abs(best - sim.threshold) <= 0.03 and balanced(sim.threshold) > 0.85
    assert (same >= sim.threshold).mean() > 0.95


def test_cjk_questions_and_summaries_align_by_characters():
    truth, meeting, said = next(m for m in _meetings("zh", seeds=(1,)) if gold_questions(*m).questions)
    gold = [q.question for q in gold_questions(truth, meeting, said).questions]
    predicted = [_paraphrase("zh", truth, meeting, q) for q in gold_questions(truth, meeting, said).questions][:2]
    predicted.append("今天中午吃什么？")
    a = align_texts(predicted, gold, LexicalSimilarity())
    assert a.similarity == "char-bigram" and a.threshold == CharacterSimilarity.threshold
    assert (a.predicted, a.aligned_predicted) == (3, 2) and a.aligned_gold >= 2
    summary = gold_notes(truth, meeting, said).summary
    parts = sentences(summary)
    assert len(parts) >= 3 and all(p.endswith("。") for p in parts)
    half = "".join(parts[: len(parts) // 2])
    s = align_summaries(half, summary, LexicalSimilarity())
    assert s.similarity == "char-bigram" and s.precision == 1.0 and s.recall < 1.0


@pytest.mark.parametrize("texts", [["Who owns the load test?", "When is it due?"]])
def test_english_units_keep_the_given_similarity(texts):
    a = align_texts(texts, texts, LexicalSimilarity(), 0.6)
    assert a.similarity == "lexical" and a.threshold == 0.6 and a.aligned_gold == 2
