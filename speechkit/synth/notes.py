"""Gold notes of synthetic meetings, derived from the latent state (``truth/state.json``).

Per meeting: the action items it opened (assignee by person id and canonical name, description,
due day) and closed, its decisions, the numbers stated in it with what they measure, an outline
(the projects it covered) and a summary paragraph assembled from all of them, which states
every fact. Written in the state's language (``truth["language"]``, English when absent; the
sentences are the language's, :meth:`speechkit.synth.language.Language.notes_text`) to
``meetings/<id>/notes.json`` (docs/workspace-format.md).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from speechkit.io.notes import default_notes_path, write_notes
from speechkit.notes import ActionItem, Decision, Fact, GoldNotes
from speechkit.synth.language import Language
from speechkit.synth.languages import language
from speechkit.workspace import Meeting


def truth_language(truth: Mapping[str, Any]) -> Language:
    """The language a latent state was written in (English for a state that does not say)."""
    code = truth.get("language", "en")
    return language(code, tuple(truth.get("languages", ())) if code == "mixed" else ())


def _item(raw: Mapping[str, Any], people: Mapping[str, Mapping[str, Any]]) -> ActionItem:
    return ActionItem(description=raw["description"], assignee=people[raw["assignee"]]["name"],
                      assignee_id=raw["assignee"], due=raw["due"], id=raw["id"])


def _item_fact(kind: str, raw: Mapping[str, Any], people: Mapping[str, Mapping[str, Any]], lang: Language) -> Fact:
    name = people[raw["assignee"]]["name"]
    if kind == "action_item":
        # the due day is a key entity of an item written with a requester (a state written
        # before requested_by, the demo's first, keeps its two entities)
        due = (raw["due"],) if "requested_by" in raw else ()
        return Fact(kind, lang.notes_text("item", name=name, description=raw["description"], due=raw["due"]),
                    (name.split()[0], raw["term"], *due))
    return Fact(kind, lang.notes_text("closed", name=name, description=raw["description"]),
                (name.split()[0], raw["term"]))


def _decision_fact(raw: Mapping[str, Any], jargon: Sequence[str], lang: Language) -> Fact:
    term = next((t for t in sorted(jargon, key=len, reverse=True) if lang.contains(raw["question"], t)), None)
    choice = lang.without_article(raw["choice"])
    entities = (choice,) if term is None or lang.contains(choice, term) else (term, choice)
    return Fact("decision", lang.notes_text("decision", question=raw["question"], choice=raw["choice"]), entities)


def _number_fact(value: str, projects: Sequence[Mapping[str, Any]], lang: Language) -> Fact:
    project, number = next((p, n) for p in projects for n in p["numbers"] if n["canonical"] == value)
    unit = lang.notes_text("unit", unit=number["unit"]) if number["unit"] else ""
    return Fact("number", lang.notes_text("number", project=project["name"]["canonical"], topic=number["topic"],
                                          value=value, unit=unit), (value,))


def gold_notes(truth: Mapping[str, Any], meeting: str, numbers: Sequence[str]) -> GoldNotes:
    """The gold notes of ``meeting`` from the latent state; ``numbers``: the number terms (canonical)
    stated in it, in the order they were said (the meeting's spoken terms in the manifest)."""
    lang = truth_language(truth)
    people = {p["id"]: p for p in truth["people"]}
    projects = {p["id"]: p for p in truth["projects"]}
    plan = next(m for m in truth["meetings"] if m["id"] == meeting)
    opened = [a for a in truth["action_items"] if a["opened_in"] == meeting]
    closed = [a for a in truth["action_items"] if a["closed_in"] == meeting]
    decided = [d for d in truth["decisions"] if d["meeting"] == meeting]
    jargon = [t["canonical"] for p in truth["projects"] for t in (p["name"], *p["jargon"])]
    focus = [projects[pid] for pid in plan["projects"]]
    ordered = focus + [p for p in truth["projects"] if p not in focus]
    facts = ([_number_fact(v, ordered, lang) for v in dict.fromkeys(numbers)]
             + [_decision_fact(d, jargon, lang) for d in decided]
             + [_item_fact("action_item", a, people, lang) for a in opened]
             + [_item_fact("closed_action_item", a, people, lang) for a in closed])
    attendees = lang.listing([people[pid]["name"] for pid in plan["attendees"]])
    summary = lang.join([lang.notes_text("head", title=plan["title"], attendees=attendees)] + [f.text for f in facts])
    return GoldNotes(summary=summary, action_items=tuple(_item(a, people) for a in opened),
                     decisions=tuple(Decision(d["question"], d["choice"], d["id"]) for d in decided),
                     outline=tuple(p["name"]["canonical"] for p in focus),
                     closed_items=tuple(_item(a, people) for a in closed), facts=tuple(facts))


def write_gold_notes(root: str | Path, truth: Mapping[str, Any], meetings: Sequence[Meeting]) -> None:
    """Write ``meetings/<id>/notes.json`` for every meeting of a synthetic workspace at ``root``."""
    for m in meetings:
        numbers = m.terms.numbers if m.terms is not None else ()
        write_notes(Path(root) / default_notes_path(m.id), gold_notes(truth, m.id, numbers), m.id)
