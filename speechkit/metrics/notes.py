"""Meeting-notes scores of one meeting: predicted :class:`~speechkit.notes.Notes` against its gold notes.

Every score is a :class:`~speechkit.metrics.bootstrap.Ratio` (value None, "not applicable", when
its denominator is 0; the notes metrics' catalogue entries,
:mod:`speechkit.stages.summarize.metrics`, say why), so scores
over meetings and their bootstrap intervals come out of the same machinery as the transcript
metrics. :attr:`NotesScores.details` holds the counts each ratio is read back from (scores.json
``details.meeting_notes``) and what the report shows: the matched, missed and extra action items,
the decisions found and missed.

- ``action_item_precision`` / ``action_item_recall`` / ``action_item_f1``: predicted and gold
  action items are matched one-to-one (Hungarian assignment, ``scipy.optimize.linear_sum_assignment``)
  on the similarity of their descriptions (:mod:`speechkit.text_similarity`: all-MiniLM-L6-v2
  cosine, or the lexical fallback; threshold 0.6 for both); a pair counts as a match when
  its similarity reaches the threshold. Among equally similar pairs, the one whose assignee
  agrees is preferred. Precision = matches / predicted, recall = matches / gold, F1 = 2 matches /
  (predicted + gold).
- ``assignee_accuracy``: of the matched predicted items, the share whose assignee is written as
  the gold person's canonical name, compared after :func:`speechkit.text_similarity.fold`
  (case, accents, punctuation and
  spacing). The scorer maps no nicknames: "Toby" for Tobias Tanaka is wrong at every level;
  resolving it is the system's job.
- ``assignee_accuracy_partial``: the same with partial credit, the share of the canonical name's
  words the predicted name holds (as the paper scores the OpenAI stack): for Devon Ashby,
  "Devon Ashby" 1, "Devon" 0.5, "Devin" 0, "Toby" 0.
- ``decision_recall``: the share of gold decisions whose choice the notes state: matched
  one-to-one with the predicted decisions, a pair counting when every content word of the gold
  choice (:func:`speechkit.text_similarity.content_words`) is in the predicted decision's topic
  or choice.
- ``summary_fact_recall``: the share of gold facts (numbers, decisions, action items opened and
  closed) all of whose key entities occur in the summary (normalised whole-word match, as term
  recall matches terms); ``summary_number_recall``: the same for the number facts only.
- ``summary_entity_precision``: of the names in the summary (words written with a capital
  letter other than at a sentence start, with a capital inside, or mixing letters and digits;
  calendar words and the words that open spoken sentences, :data:`NOT_NAMES`, aside; sentences
  written all in capitals are skipped), the share that exist in the workspace: a word of a
  person's name or nickname, of a workspace term or of a meeting title. Hallucinated names
  count against it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from speechkit.metrics.bootstrap import Ratio
from speechkit.metrics.normalize import normalize
from speechkit.metrics.terms import occurs
from speechkit.notes import ActionItem, Decision, GoldNotes, Notes
from speechkit.text_similarity import FUNCTION_WORDS, TextSimilarity, content_words, fold
from speechkit.workspace import Workspace

#: Capitalised words that are not names: calendar words, and the words that open sentences in
#: speech (a summary cut from a transcript without punctuation has them mid-sentence).
NOT_NAMES = FUNCTION_WORDS | frozenset((
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december i i'm i'll i'd i've ok okay so yes yeah no not we we're we'll "
    "it's that's there's let's you they he she alright all right sure thanks thank great sorry good morning "
    "hi hey hello well also then now just maybe but if when what where how why who did do does can could "
    "would will should is was were has have had our my your their its").split())
_EDGE = "\"'()[]{}<>.,;:!?*_`“”‘’"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TIE = 1e-6  # weight of assignee agreement among equally similar descriptions


def assignee_credit(predicted: str | None, canonical: str) -> tuple[float, float]:
    """``(exact, partial)`` credit of a predicted assignee against the gold canonical name."""
    if not predicted:
        return 0.0, 0.0
    said, gold = fold(predicted), fold(canonical)
    words = gold.split()
    partial = sum(w in said.split() for w in words) / len(words) if words else 0.0
    return float(said == gold), partial


def _word(raw: str) -> str:
    word = raw.strip(_EDGE)
    return word[:-2] if word.endswith(("'s", "’s")) else word


def vocabulary(ws: Workspace) -> frozenset[str]:
    """The folded words of the workspace's names: people and nicknames, terms, meeting titles."""
    texts = [*(p.name for p in ws.people), *(n for p in ws.people for n in p.nicknames),
             *ws.terms.jargon, *ws.terms.numbers, *(m.title for m in ws.meetings if m.title)]
    return frozenset(fold(_word(w)) for t in texts for w in t.split() if fold(_word(w)))


def summary_names(summary: str) -> list[str]:
    """The words of ``summary`` that read as names (see the module docstring), in order."""
    out = []
    for sentence in _SENTENCE_END.split(summary):
        if not any(c.islower() for c in sentence):
            continue  # all capitals (CTC output): case says nothing about names
        for k, raw in enumerate(sentence.split()):
            word = _word(raw)
            if not word or not any(c.isalpha() for c in word) or word.casefold().replace("’", "'") in NOT_NAMES:
                continue
            capital = k > 0 and word[0].isupper()
            if capital or any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word):
                out.append(word)
    return out


def match_action_items(predicted: tuple[ActionItem, ...], gold: tuple[ActionItem, ...],
                       similarity: TextSimilarity) -> list[tuple[int, int, float]]:
    """One-to-one matches ``(predicted index, gold index, similarity)`` at or above the threshold."""
    if not predicted or not gold:
        return []
    sim = similarity.matrix([p.description for p in predicted], [g.description for g in gold])
    credit = {(a, b): assignee_credit(a, b)[1] if b else 0.0  # per distinct pair of names, not of items
              for a in {p.assignee for p in predicted} for b in {g.assignee for g in gold}}
    agree = np.array([[credit[p.assignee, g.assignee] for g in gold] for p in predicted])
    rows, cols = linear_sum_assignment(sim + _TIE * agree, maximize=True)
    return [(int(i), int(j), float(sim[i, j])) for i, j in zip(rows, cols) if sim[i, j] >= similarity.threshold]


def match_decisions(predicted: tuple[Decision, ...], gold: tuple[Decision, ...]) -> list[tuple[int, int]]:
    """One-to-one ``(predicted index, gold index)`` pairs where the prediction states the gold choice
    (every content word of the gold choice is in the prediction's topic or choice); among those,
    pairs whose topics share more words are preferred."""
    if not predicted or not gold:
        return []
    said = [content_words(f"{p.topic} {p.choice}") for p in predicted]  # each text normalised once
    wanted = [content_words(g.choice) for g in gold]
    topics, gold_topics = [content_words(p.topic) for p in predicted], [content_words(g.topic) for g in gold]
    states = np.array([[bool(w) and w <= s for w in wanted] for s in said], dtype=float)
    topic = np.array([[len(t & u) for u in gold_topics] for t in topics])
    rows, cols = linear_sum_assignment(states * (1 + 1e-3 * topic), maximize=True)
    return [(int(i), int(j)) for i, j in zip(rows, cols) if states[i, j]]


def _item(item: ActionItem) -> dict[str, Any]:
    return {"description": item.description, "assignee": item.assignee}


@dataclass(frozen=True)
class NotesScores:
    """One meeting's notes scores (metric key -> Ratio) and what they were computed from."""

    ratios: dict[str, Ratio]
    similarity: str
    details: dict[str, Any] = field(default_factory=dict)

    def values(self) -> dict[str, float | None]:
        return {key: ratio.value for key, ratio in self.ratios.items()}


def score_notes(predicted: Notes, gold: GoldNotes, names: Iterable[str], similarity: TextSimilarity) -> NotesScores:
    """Score ``predicted`` against ``gold``; ``names``: the workspace's folded name words (:func:`vocabulary`)."""
    known = frozenset(names)
    pairs = match_action_items(predicted.action_items, gold.action_items, similarity)
    matches = []
    for i, j, sim in pairs:
        said, want = predicted.action_items[i], gold.action_items[j]
        exact, partial = assignee_credit(said.assignee, want.assignee) if want.assignee else (None, None)
        matches.append({"predicted": _item(said), "gold": _item(want), "similarity": round(sim, 4),
                        "assignee_right": None if exact is None else bool(exact), "assignee_credit": partial})
    credits = [(m["assignee_right"], m["assignee_credit"]) for m in matches if m["assignee_right"] is not None]
    decided = dict((j, i) for i, j in match_decisions(predicted.decisions, gold.decisions))
    summary = f" {normalize(predicted.summary)} "
    stated = [all(occurs(e, summary) for e in f.entities) for f in gold.facts]
    numbers = [s for s, f in zip(stated, gold.facts) if f.kind == "number"]
    named = summary_names(predicted.summary)
    unknown = [w for w in named if fold(w) not in known]
    counts = {"predicted_items": len(predicted.action_items), "gold_items": len(gold.action_items),
              "matched_items": len(pairs), "assignees_scored": len(credits),
              "assignees_right": sum(right for right, _ in credits), "assignee_credit": sum(c for _, c in credits),
              "gold_decisions": len(gold.decisions), "decisions_found": len(decided),
              "gold_facts": len(stated), "facts_stated": sum(stated),
              "gold_numbers": len(numbers), "numbers_stated": sum(numbers),
              "summary_names": len(named), "summary_names_known": len(named) - len(unknown)}
    ratios = {
        "assignee_accuracy": Ratio(counts["assignees_right"], counts["assignees_scored"]),
        "assignee_accuracy_partial": Ratio(counts["assignee_credit"], counts["assignees_scored"]),
        "action_item_precision": Ratio(counts["matched_items"], counts["predicted_items"]),
        "action_item_recall": Ratio(counts["matched_items"], counts["gold_items"]),
        "action_item_f1": Ratio(2 * counts["matched_items"], counts["predicted_items"] + counts["gold_items"]),
        "decision_recall": Ratio(counts["decisions_found"], counts["gold_decisions"]),
        "summary_fact_recall": Ratio(counts["facts_stated"], counts["gold_facts"]),
        "summary_entity_precision": Ratio(counts["summary_names_known"], counts["summary_names"]),
        "summary_number_recall": Ratio(counts["numbers_stated"], counts["gold_numbers"]),
    }
    matched_gold, matched_predicted = {j for _, j, _ in pairs}, {i for i, _, _ in pairs}
    details = {
        **counts,
        "matches": matches,
        "missed_items": [_item(g) for j, g in enumerate(gold.action_items) if j not in matched_gold],
        "extra_items": [_item(p) for i, p in enumerate(predicted.action_items) if i not in matched_predicted],
        "decisions": [{"topic": d.topic, "choice": d.choice, "found": j in decided,
                       "stated": f"{predicted.decisions[decided[j]].topic}: {predicted.decisions[decided[j]].choice}"
                       if j in decided else None} for j, d in enumerate(gold.decisions)],
        "facts_missed": [f.text for s, f in zip(stated, gold.facts) if not s],
        "unknown_names": unknown,
    }
    return NotesScores(ratios, f"{similarity.name} >= {similarity.threshold}", details)
