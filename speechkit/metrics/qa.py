"""Question-answering scores: a system's answers against a meeting's gold questions.

An answer is right when it *states* the gold answer's canonical entities, deterministically:

- a **person** (``who_owns``, ``who_asked``): ``qa_accuracy`` needs the person's full canonical
  name, ``qa_accuracy_lenient`` also takes one of the person's roster nicknames ("Toby" for
  Tobias Tanaka); names are compared as whole words after :func:`speechkit.text_similarity.fold`
  (case, accents, punctuation). An answer that also names another person of the workspace (by
  canonical name; for the lenient score, also by nickname) is wrong. A first name alone
  ("Tobias") is right in neither.
- a **number**: its value and its unit, each as whole words of the answer after the shared
  normalisation (:mod:`speechkit.metrics.normalize`, Whisper's English normaliser, which writes
  spoken numbers as digits: "twenty five hundred messages" states 2,500 messages; "June twenty
  fifth" states June 25: ordinal endings of digits are dropped; "45 ,000", digit groups a
  recognizer wrote apart, is 45,000).
- a **day**: the weekday's name (or a common abbreviation: "Wed", "Thurs"), and no other weekday;
  a day that is no weekday, its words after the normalisation.
- a **choice** (``decision``): every content word of the gold choice
  (:func:`speechkit.text_similarity.content_words`), as decision recall matches decisions.

Scores per meeting are :class:`~speechkit.metrics.bootstrap.Ratio` s (right / asked): over all
questions, per question type, and over the "who" questions (``who_owns`` and ``who_asked``);
a question left unanswered is wrong; a meeting whose QA backend got no usable answer is not
applicable, with the reason, never 0. The ``qa`` step's metric family
(:mod:`speechkit.steps.qa.metrics`) puts them into a run's scores.json from its ``qa.json``;
answers to ids that are not the meeting's gold questions, and meetings that are not the
workspace's scored meetings, are left out and named (:func:`ignored_answers`).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from speechkit.io.questions import QUESTION_TYPES, Entity, MeetingQuestions, Question, gold_questions_of
from speechkit.metrics.bootstrap import Ratio, bootstrap, micro
from speechkit.metrics.catalog import FRACTION, Details, Metric
from speechkit.metrics.normalize import normalize
from speechkit.text_similarity import content_words, fold
from speechkit.workspace import Person, Workspace

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ABBREVIATIONS = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday", "weds": "wednesday",
                  "thu": "thursday", "thur": "thursday", "thurs": "thursday", "fri": "friday", "sat": "saturday",
                  "sun": "sunday"}
#: How answers are marked, as scores.json and qa.json record it.
RULES = ("right when the answer states the gold entities: a person's full canonical name (lenient: or a roster "
         "nickname) and no other person's; a number's value and unit; a weekday and no other; every content word "
         "of a decision's choice; after case/accent folding (names) or Whisper's English normaliser, split digit "
         "groups rejoined and ordinal endings dropped (numbers, days, choices); an unanswered question is wrong")
QUESTIONS = "questions"
_NEEDS = ("gold questions", "run answers")


def _questions(types: tuple[str, ...] = (), lenient: bool = False) -> Callable[[Details], Ratio | None]:
    """Read the share of questions answered right (of ``types``; all when empty) from the counts
    of ``details.questions``."""
    def read(details: Details) -> Ratio | None:
        d = details.get("questions")
        if not d:
            return None
        if not types:
            return Ratio(d["right_lenient" if lenient else "right"], d["questions"])
        counts = [d["by_type"][t] for t in types]
        return Ratio(sum(c["right"] for c in counts), sum(c["questions"] for c in counts))
    return read


#: The question metrics, in the order of scores.json.
QUESTION_METRICS: tuple[Metric, ...] = (
    Metric("qa_accuracy", "QA accuracy", "QA", QUESTIONS, "higher", FRACTION, _NEEDS,
           "the meeting has no gold questions", _questions()),
    Metric("qa_accuracy_lenient", "QA accuracy lenient", "QALenient", QUESTIONS, "higher", FRACTION, _NEEDS,
           "the meeting has no gold questions", _questions(lenient=True)),
    Metric("qa_accuracy_who", "QA accuracy, who", "QAWho", QUESTIONS, "higher", FRACTION, _NEEDS,
           "no who-owns or who-asked question", _questions(("who_owns", "who_asked"))),
    *(Metric(f"qa_accuracy_{kind}", f"QA accuracy, {kind.replace('_', ' ')}", short, QUESTIONS, "higher", FRACTION,
             _NEEDS, f"no {kind.replace('_', ' ')} question", _questions((kind,)))
      for kind, short in (("who_owns", "QAOwner"), ("who_asked", "QAAsker"), ("due", "QADue"),
                          ("decision", "QADecision"), ("number", "QANumber"))),
)
_ORDINAL = re.compile(r"\b(\d+)(?:st|nd|rd|th)\b")
_SPLIT_DIGITS = re.compile(r"(\d) ([.,]\d)")


def normalized(text: str) -> str:
    """``text`` as numbers and days are compared: digit groups a recognizer split rejoined ("45 ,000"
    is 45,000), the shared normalisation, ordinal endings dropped."""
    return _ORDINAL.sub(r"\1", normalize(_SPLIT_DIGITS.sub(r"\1\2", text)))


def _has(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words (both already normalised)."""
    return bool(phrase) and f" {phrase} " in f" {text} "


def _person_right(answer: str, entity: Entity, people: Sequence[Person], lenient: bool) -> bool:
    said = fold(answer)
    person = next((p for p in people if p.id == entity.get("id")), None)
    names = [entity.get("canonical") or ""] + (list(person.nicknames) if lenient and person else [])
    if not any(_has(said, fold(n)) for n in names):
        return False
    others = [p for p in people if p.id != entity.get("id")]
    wrong = [n for p in others for n in (p.name, *(p.nicknames if lenient else ())) if fold(n)]
    return not any(_has(said, fold(n)) for n in wrong)


def _day_right(answer: str, value: str) -> bool:
    said = [_ABBREVIATIONS.get(w, w) for w in normalized(answer).split()]
    gold = normalized(value)
    if gold not in WEEKDAYS:
        return _has(" ".join(said), gold)
    return gold in said and not any(d in said for d in WEEKDAYS if d != gold)


def entity_stated(answer: str, entity: Entity, people: Sequence[Person], lenient: bool = False) -> bool:
    """Whether ``answer`` states ``entity`` (the rules of the module docstring); ``people``: the
    workspace's, for nicknames and for naming someone else."""
    if entity.kind == "person":
        return _person_right(answer, entity, people, lenient)
    if entity.kind == "day":
        return _day_right(answer, entity.get("value") or "")
    if entity.kind == "number":
        said = normalized(answer)
        return _has(said, normalized(entity.get("value") or "")) and (
            not entity.get("unit") or _has(said, normalized(entity.get("unit") or "")))
    words = content_words(entity.get("text") or "")
    return bool(words) and words <= set(normalize(answer).split())


def answer_right(answer: str, question: Question, people: Sequence[Person], lenient: bool = False) -> bool:
    """Whether ``answer`` states every entity of the gold answer of the question's expected kind."""
    expected = [e for e in question.entities if e.kind == QUESTION_TYPES[question.type]]
    return bool(answer.strip()) and all(entity_stated(answer, e, people, lenient) for e in expected)


@dataclass
class QuestionScores:
    """One meeting's marks: per question, whether its answer is right (``right``) and right
    leniently (``lenient``); :meth:`ratios` and :meth:`details` from them."""

    questions: tuple[Question, ...]
    right: dict[str, bool]
    lenient: dict[str, bool]

    def _ratio(self, types: Sequence[str], marks: Mapping[str, bool]) -> Ratio:
        asked = [q for q in self.questions if q.type in types]
        return Ratio(sum(marks[q.id] for q in asked), len(asked))

    def ratios(self) -> dict[str, Ratio]:
        """The meeting's ratio of every question metric of the catalogue."""
        return ratios_from_details(self.details())

    def details(self) -> dict[str, Any]:
        """Counts (scores.json ``details.questions``): questions, right and right leniently, overall and by type."""
        by_type = {t: {"questions": sum(q.type == t for q in self.questions),
                       "right": sum(self.right[q.id] for q in self.questions if q.type == t),
                       "right_lenient": sum(self.lenient[q.id] for q in self.questions if q.type == t)}
                   for t in QUESTION_TYPES}
        return {"questions": len(self.questions), "right": sum(self.right.values()),
                "right_lenient": sum(self.lenient.values()), "by_type": by_type}


def ratios_from_details(details: Mapping[str, Any]) -> dict[str, Ratio]:
    """Every question metric's ratio from a meeting's ``details.questions`` counts (as the
    catalogue reads them back)."""
    return {metric.key: metric.from_details({"questions": details}) for metric in QUESTION_METRICS}


def score_answers(questions: MeetingQuestions, answers: Mapping[str, str], people: Sequence[Person]) -> QuestionScores:
    """Mark a meeting's answers (question id -> answer text; a missing one is wrong)."""
    qs = questions.questions
    return QuestionScores(qs, {q.id: answer_right(answers.get(q.id, ""), q, people) for q in qs},
                          {q.id: answer_right(answers.get(q.id, ""), q, people, lenient=True) for q in qs})


def aggregate(per_meeting: Mapping[str, Mapping[str, Ratio]], resamples: int, seed: int) -> dict[str, Any]:
    """Each question metric over the meetings: the micro ratio with its bootstrap CI, and the totals."""
    out: dict[str, Any] = {}
    for key in (metric.key for metric in QUESTION_METRICS):
        ratios = [r[key] for r in per_meeting.values()]
        total = micro(ratios)
        out[key] = {**bootstrap(ratios, resamples, seed).as_dict(),
                    "numerator": total.num, "denominator": total.den, "meetings": len(ratios)}
    return out


NO_GOLD = "no gold questions for this meeting (a workspace's meetings/<id>/questions.json)"
NO_ANSWERS = ("the run has no answers to questions (qa.json: speechkit qa RUN, or a recipe's qa step; or a "
              "whole system's own answers files)")
NOT_ANSWERED = "the run's answers (its qa.json, or a whole system's answers files) hold none for this meeting"
NO_USABLE_ANSWER = ("the QA backend got no usable answer for this meeting (its request failed, or its answer "
                    "was not answers: qa.json meetings.<id>.stats)")


def score_run(ws: Workspace, meetings: Sequence[str], answers: Mapping[str, Mapping[str, str] | None] | None,
              ) -> tuple[dict[str, QuestionScores], dict[str, str]]:
    """Mark the answers of each of ``meetings`` (``answers``: meeting -> question id -> answer,
    None for a meeting whose QA backend got no usable answer; None: the run has none); the
    meetings not scored, with the reason."""
    scored, reasons = {}, {}
    for mid in meetings:
        gold = gold_questions_of(ws, mid)
        if gold is None:
            reasons[mid] = NO_GOLD
        elif answers is None:
            reasons[mid] = NO_ANSWERS
        elif mid not in answers:
            reasons[mid] = NOT_ANSWERED
        elif answers[mid] is None:
            reasons[mid] = NO_USABLE_ANSWER
        else:
            scored[mid] = score_answers(gold, answers[mid], ws.people)
    return scored, reasons


def ignored_answers(answers: Mapping[str, Mapping[str, str] | None], scored: Mapping[str, QuestionScores],
                    meetings: Sequence[str]) -> list[str]:
    """What of a qa.json's ``answers`` no score used: meetings that are not among ``meetings``,
    answers to ids that are not gold questions of their (``scored``) meeting; one line each."""
    out = []
    unknown = sorted(set(answers) - set(meetings))
    if unknown:
        out.append(f"answers of {len(unknown)} meeting(s) that are not scored meetings of the workspace: "
                   f"{', '.join(unknown)}"[:300])
    for mid, marks in scored.items():
        extra = sorted(set(answers[mid] or {}) - {q.id for q in marks.questions})
        if extra:
            out.append(f"{mid}: {len(extra)} answer(s) to ids that are not its gold questions: "
                       f"{', '.join(extra)}"[:300])
    return out
