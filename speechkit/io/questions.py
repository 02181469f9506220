"""Questions about a meeting with known answers: the records and their file (``questions.json``).

A workspace may hold, per meeting, ``meetings/<id>/questions.json`` (docs/workspace-format.md,
"Gold questions"): questions whose answers the meeting states, each with its ``type``
(:data:`QUESTION_TYPES`), the question and answer texts and the answer as canonical entities
(:class:`Entity`: a person by id and canonical name, a number with its unit, a day, a choice).
`speechkit synth` derives them from the latent state (:mod:`speechkit.synth.questions`);
`speechkit import folder` takes a corpus's own. Every problem of a file is a
:class:`~speechkit.errors.FormatError` naming the file and the field
(``questions.json: questions[2].entities[0].id: unknown person id 'p9'``).
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.errors import FormatError
from speechkit.io._lines import present_input
from speechkit.io.atomic import write_text
from speechkit.io.fields import FieldError, checked_mapping
from speechkit.io.jsonfile import read_json

if TYPE_CHECKING:
    from speechkit.workspace import Workspace

QUESTIONS_VERSION = 1
#: Question type -> the kind of entity its answer is.
QUESTION_TYPES: dict[str, str] = {"who_owns": "person", "decision": "choice", "number": "number",
                                  "due": "day", "who_asked": "person"}
#: Entity kind -> (required fields, optional fields).
ENTITY_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "person": (("id", "canonical"), ()), "number": (("value",), ("unit",)),
    "day": (("value",), ()), "choice": (("text",), ())}
#: The most questions of one meeting, entities of one answer, characters of one text (a question,
#: an answer, an entity's field), and bytes of one questions file: answering and scoring read
#: every question's text.
MAX_QUESTIONS = 1000
MAX_ENTITIES = 20
MAX_TEXT_CHARS = 2000
MAX_FILE_BYTES = 16 << 20


def default_questions_path(meeting: str) -> str:
    """Where a workspace keeps a meeting's gold questions (relative to its root)."""
    return f"meetings/{meeting}/questions.json"


def _text(data: Mapping[str, Any], key: str, where: str) -> str:
    value = data.get(key)
    field = f"{where}.{key}".lstrip(".")
    if not isinstance(value, str) or not value.strip():
        raise FieldError(field, "missing" if value is None else f"expected a non-empty string, got {value!r}"[:120])
    if len(value) > MAX_TEXT_CHARS:
        raise FieldError(field, f"a text of {len(value):,} characters; at most {MAX_TEXT_CHARS:,}")
    return " ".join(value.split())


@dataclass(frozen=True)
class Entity:
    """An answer's canonical entity: ``kind`` (person, number, day, choice) and its fields
    (:data:`ENTITY_FIELDS`: a person's ``id`` and ``canonical`` name, a number's ``value`` and
    ``unit``, a day's ``value``, a choice's ``text``)."""

    kind: str
    fields: tuple[tuple[str, str], ...]

    def get(self, key: str) -> str | None:
        return dict(self.fields).get(key)

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, **dict(self.fields)}

    @classmethod
    def of(cls, kind: str, **fields: str | None) -> Entity:
        """An entity from keyword fields (those that are None or empty left out)."""
        return cls(kind, tuple((k, v) for k, v in fields.items() if v))

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Entity:
        if not isinstance(data, dict):
            raise FieldError(where, f"expected an object, got {type(data).__name__}")
        kind = data.get("kind")
        if kind not in ENTITY_FIELDS:
            raise FieldError(f"{where}.kind", f"expected one of {', '.join(ENTITY_FIELDS)}, got {kind!r}"[:200])
        required, optional = ENTITY_FIELDS[kind]
        obj = checked_mapping(data, where, ("kind", *required, *optional))
        fields = [(k, _text(obj, k, where)) for k in required]
        fields += [(k, _text(obj, k, where)) for k in optional if obj.get(k) not in (None, "")]
        return cls(kind, tuple(fields))


@dataclass(frozen=True)
class Ask:
    """A question as a system is asked it: ``id``, ``type`` (what kind of answer is expected) and
    its ``text``; never its answer."""

    id: str
    type: str
    text: str


@dataclass(frozen=True)
class Question:
    """A question about one meeting: ``id``, ``type`` (:data:`QUESTION_TYPES`), the ``question``
    and ``answer`` texts and the answer's canonical ``entities``."""

    id: str
    type: str
    question: str
    answer: str
    entities: tuple[Entity, ...]

    @property
    def ask(self) -> Ask:
        """The question as a system is asked it: without its answer."""
        return Ask(self.id, self.type, self.question)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "question": self.question, "answer": self.answer,
                "entities": [e.to_dict() for e in self.entities]}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Question:
        obj = checked_mapping(data, where, ("id", "type", "question", "answer", "entities"))
        kind = obj.get("type")
        if kind not in QUESTION_TYPES:
            raise FieldError(f"{where}.type", f"expected one of {', '.join(QUESTION_TYPES)}, got {kind!r}"[:200])
        raw = obj.get("entities")
        if not isinstance(raw, list) or not raw:
            raise FieldError(f"{where}.entities", "expected a non-empty list of entities")
        if len(raw) > MAX_ENTITIES:
            raise FieldError(f"{where}.entities", f"{len(raw):,} entities; at most {MAX_ENTITIES}")
        entities = tuple(Entity.from_dict(e, f"{where}.entities[{i}]") for i, e in enumerate(raw))
        if not any(e.kind == QUESTION_TYPES[kind] for e in entities):
            raise FieldError(f"{where}.entities", f"a {kind} question needs a {QUESTION_TYPES[kind]} entity")
        return cls(_text(obj, "id", where), kind, _text(obj, "question", where), _text(obj, "answer", where),
                   entities)


@dataclass(frozen=True)
class MeetingQuestions:
    """The gold questions of one meeting."""

    meeting: str
    questions: tuple[Question, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"version": QUESTIONS_VERSION, "meeting": self.meeting,
                "questions": [q.to_dict() for q in self.questions]}

    @classmethod
    def from_dict(cls, data: Any) -> MeetingQuestions:
        obj = checked_mapping(data, "", ("version", "meeting", "questions"))
        version = obj.get("version")
        if type(version) is not int or version != QUESTIONS_VERSION:  # true and 1.0 are not 1
            raise FieldError("version", f"expected the integer {QUESTIONS_VERSION}, got {version!r}"[:120])
        raw = obj.get("questions")
        if not isinstance(raw, list):
            raise FieldError("questions", "expected a list of questions")
        if len(raw) > MAX_QUESTIONS:
            raise FieldError("questions", f"{len(raw):,} questions; at most {MAX_QUESTIONS:,} per meeting")
        questions = tuple(Question.from_dict(q, f"questions[{i}]") for i, q in enumerate(raw))
        seen: set[str] = set()
        for i, q in enumerate(questions):
            if q.id in seen:
                raise FieldError(f"questions[{i}].id", f"duplicate id {q.id!r}"[:120])
            seen.add(q.id)
        return cls(_text(obj, "meeting", ""), questions)


def read_questions(path: str | Path, meeting: str | None = None,
                   people: Mapping[str, str] | None = None) -> MeetingQuestions:
    """Read and check a questions file: ``meeting``, when given, is the id its ``meeting`` must
    be; ``people`` (person id -> canonical name), when given, must hold every person entity's id
    with that canonical name."""
    try:
        found = MeetingQuestions.from_dict(read_json(path, MAX_FILE_BYTES))
    except FieldError as exc:
        raise FormatError(path, exc.problem, field=exc.field or None) from None
    if meeting is not None and found.meeting != meeting:
        raise FormatError(path, f"belongs to meeting {found.meeting!r}, not {meeting!r}"[:200], field="meeting")
    for i, q in enumerate(found.questions):
        for k, e in enumerate(q.entities):
            if people is None or e.kind != "person":
                continue
            where = f"questions[{i}].entities[{k}]"
            if e.get("id") not in people:
                raise FormatError(path, f"unknown person id {e.get('id')!r}"[:200], field=f"{where}.id")
            if e.get("canonical") != people[e.get("id")]:
                raise FormatError(path, f"{e.get('canonical')!r} is not the canonical name "
                                        f"{people[e.get('id')]!r} of {e.get('id')}"[:200], field=f"{where}.canonical")
    return found


def write_questions(path: str | Path, questions: MeetingQuestions) -> None:
    """Write a questions file atomically; the same questions give the same bytes."""
    write_text(path, json.dumps(questions.to_dict(), indent=1, ensure_ascii=False) + "\n")


def gold_questions_of(ws: Workspace, meeting: str) -> MeetingQuestions | None:
    """The meeting's gold questions (checked against the workspace people), None when it has none."""
    path = ws.root / default_questions_path(meeting)
    if not present_input(path, ws.root, "the workspace folder"):
        return None
    return read_questions(path, meeting, {p.id: p.name for p in ws.people})
