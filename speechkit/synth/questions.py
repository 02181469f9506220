"""Gold questions of synthetic meetings, derived from the latent state (``truth/state.json``).

Per meeting, in this order: for each action item it opened, who owns it (``who_owns``), when it
is due (``due``: the final day, after any correction) and who asked for it (``who_asked``: the
item's ``requested_by``; none for an item its owner took on unasked); for
each decision, what it chose (``decision``: the final choice, after any reversal); for each
project number stated in it, its value with its unit (``number``: the corrected value where a
number was misspoken and corrected). A question whose text two facts of the meeting would answer
differently (the same task given to two people) is left out. Written to
``meetings/<id>/questions.json`` (:mod:`speechkit.io.questions`, docs/workspace-format.md), in the
state's language (:func:`speechkit.synth.notes.truth_language`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from speechkit.io.questions import Entity, MeetingQuestions, Question, default_questions_path, write_questions
from speechkit.synth.notes import truth_language
from speechkit.workspace import Meeting


def _person(person: Mapping[str, Any]) -> tuple[str, tuple[Entity, ...]]:
    return person["name"], (Entity.of("person", id=person["id"], canonical=person["name"]),)


def _candidates(truth: Mapping[str, Any], meeting: str, numbers: Sequence[str]) -> list[tuple[str, str, str, tuple]]:
    """``(type, question, answer, entities)`` of every fact of ``meeting``, in the module's order."""
    lang = truth_language(truth)
    people = {p["id"]: p for p in truth["people"]}
    plan = next(m for m in truth["meetings"] if m["id"] == meeting)
    out: list[tuple[str, str, str, tuple]] = []
    for item in (a for a in truth["action_items"] if a["opened_in"] == meeting):
        task = lang.question_text("task", description=item["description"])
        out.append(("who_owns", lang.question_text("who_owns", task=task), *_person(people[item["assignee"]])))
        out.append(("due", lang.question_text("due", task=task), item["due"], (Entity.of("day", value=item["due"]),)))
        asker = item.get("requested_by", plan["host"])  # a state written before requested_by: the host
        if asker is not None:
            out.append(("who_asked", lang.question_text("who_asked", task=task), *_person(people[asker])))
    for d in (d for d in truth["decisions"] if d["meeting"] == meeting):
        out.append(("decision", lang.question_text("decision", question=d["question"]), d["choice"],
                    (Entity.of("choice", text=d["choice"]),)))
    focus = [p for p in truth["projects"] if p["id"] in plan["projects"]]
    projects = focus + [p for p in truth["projects"] if p not in focus]
    for value in dict.fromkeys(numbers):
        project, number = next((p, n) for p in projects for n in p["numbers"] if n["canonical"] == value)
        answer = lang.question_text("answer", value=value, unit=number["unit"]).strip()
        out.append(("number", lang.question_text("number", topic=number["topic"], project=project["name"]["canonical"]),
                    answer,
                    (Entity.of("number", value=value, unit=number["unit"]),)))
    return out


def gold_questions(truth: Mapping[str, Any], meeting: str, numbers: Sequence[str]) -> MeetingQuestions:
    """The gold questions of ``meeting`` from the latent state; ``numbers``: the number terms
    (canonical) stated in it, in the order said (the meeting's spoken terms in the manifest)."""
    candidates = _candidates(truth, meeting, numbers)
    answers: dict[str, set[str]] = {}
    for _, text, answer, _ in candidates:
        answers.setdefault(text, set()).add(answer)
    kept: dict[str, tuple] = {}
    for candidate in candidates:  # one question per text, the first, where all its facts agree
        if len(answers[candidate[1]]) == 1:
            kept.setdefault(candidate[1], candidate)
    return MeetingQuestions(meeting, tuple(Question(f"{meeting}-q{i:02d}", kind, text, answer, entities)
                                           for i, (kind, text, answer, entities) in enumerate(kept.values(), 1)))


def write_gold_questions(root: str | Path, truth: Mapping[str, Any], meetings: Sequence[Meeting]) -> None:
    """Write ``meetings/<id>/questions.json`` for every meeting of a synthetic workspace at ``root``."""
    for m in meetings:
        numbers = m.terms.numbers if m.terms is not None else ()
        write_questions(Path(root) / default_questions_path(m.id), gold_questions(truth, m.id, numbers))
