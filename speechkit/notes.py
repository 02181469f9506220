"""Meeting notes: a summary, action items, decisions and an outline; and the gold notes.

:class:`Notes` is what a notes backend produces for one meeting. :class:`GoldNotes` is the
reference a workspace may hold per meeting (``meetings/<id>/notes.json``, docs/workspace-format.md):
the same fields plus the action items the meeting closed and the facts a summary should state
(decisions, action items, numbers with their values). Both convert to and from the JSON mapping
of the notes file (``to_dict`` / ``from_dict``); ``from_dict`` checks every field and raises
:class:`NotesError` naming the first bad one (:mod:`speechkit.io.notes` adds the file name).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from speechkit.io.fields import FieldError, checked_mapping

NOTES_FORMAT = "speechkit-notes/1"
#: The most entries of each list of a meeting's notes (action items, decisions, outline, closed
#: items, facts, a fact's entities): scoring matches them pairwise.
MAX_ITEMS = 1000
#: The longest text of an entry (a description, a name, a topic, a fact) and of a summary, in characters.
MAX_TEXT_CHARS = 10_000
MAX_SUMMARY_CHARS = 1_000_000
#: What a gold fact is about: a decision, an action item opened or closed, a number stated.
FACT_KINDS = ("decision", "action_item", "closed_action_item", "number")


class NotesError(FieldError):
    """A notes mapping is malformed: ``field`` (``action_items[2].due``) and what is wrong."""


def _text(data: Mapping[str, Any], key: str, where: str, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise NotesError(f"{where}{key}",
                         "missing" if value is None else f"expected a non-empty string, got {value!r}"[:120])
    return _bounded(value, f"{where}{key}", MAX_TEXT_CHARS).strip()


def _bounded(text: str, where: str, most: int) -> str:
    if len(text) > most:
        raise NotesError(where, f"a text of {len(text):,} characters; at most {most:,}")
    return text


def _list(data: Mapping[str, Any], key: str, where: str) -> list:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise NotesError(f"{where}{key}", f"expected a list, got {type(value).__name__}")
    if len(value) > MAX_ITEMS:
        raise NotesError(f"{where}{key}", f"{len(value):,} entries; at most {MAX_ITEMS:,} per meeting")
    return value


def _strings(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    items = _list(data, key, where)
    for i, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise NotesError(f"{where}{key}[{i}]", f"expected a non-empty string, got {item!r}"[:120])
        _bounded(item, f"{where}{key}[{i}]", MAX_TEXT_CHARS)
    return tuple(item.strip() for item in items)


def _compact(obj: Any) -> dict[str, Any]:
    """The dataclass as a mapping in field order, without the optional fields that are None."""
    return {f.name: getattr(obj, f.name) for f in fields(obj) if getattr(obj, f.name) is not None}


@dataclass(frozen=True)
class ActionItem:
    """Something someone is to do: ``assignee`` as the notes write it (a name, a nickname, or None),
    ``assignee_id`` the workspace person id when known; ``due`` as said ("Friday")."""

    description: str
    assignee: str | None = None
    assignee_id: str | None = None
    due: str | None = None
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _compact(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> ActionItem:
        obj = checked_mapping(data, where.rstrip("."), tuple(f.name for f in fields(cls)))
        return cls(**{f.name: _text(obj, f.name, where, required=f.name == "description") for f in fields(cls)})


@dataclass(frozen=True)
class Decision:
    """A decision: what was decided (``topic``, the question) and the ``choice`` taken."""

    topic: str
    choice: str
    id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _compact(self)

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> Decision:
        obj = checked_mapping(data, where.rstrip("."), ("topic", "choice", "id"))
        return cls(topic=_text(obj, "topic", where), choice=_text(obj, "choice", where),
                   id=_text(obj, "id", where, required=False))


@dataclass(frozen=True)
class Fact:
    """A gold fact a summary should state: ``kind`` (one of :data:`FACT_KINDS`), a sentence
    saying it, and its key ``entities``, the strings a summary stating it contains (people's
    first names, workspace terms, the decision's choice; for a number, its value)."""

    kind: str
    text: str
    entities: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "entities": list(self.entities)}

    @classmethod
    def from_dict(cls, data: Any, where: str = "") -> Fact:
        obj = checked_mapping(data, where.rstrip("."), ("kind", "text", "entities"))
        kind = _text(obj, "kind", where)
        if kind not in FACT_KINDS:
            raise NotesError(f"{where}kind", f"unknown kind {kind!r}; expected one of {', '.join(FACT_KINDS)}")
        entities = _strings(obj, "entities", where)
        if not entities:
            raise NotesError(f"{where}entities", "expected at least one entity")
        return cls(kind=kind, text=_text(obj, "text", where), entities=entities)


def _items(data: Mapping[str, Any], key: str, kind: type) -> tuple:
    return tuple(kind.from_dict(item, f"{key}[{i}].") for i, item in enumerate(_list(data, key, "")))


_CONTENT_KEYS = ("format", "meeting", "summary", "action_items", "decisions", "outline")
NOTES_KEYS = _CONTENT_KEYS + ("failed",)
GOLD_KEYS = _CONTENT_KEYS + ("closed_action_items", "facts")


@dataclass(frozen=True)
class Notes:
    """The notes of one meeting. ``failed``: set (why) when the notes backend got no usable
    answer for them (every request to its language model failed or was not notes): the notes
    are then empty, and their scores not applicable, never 0."""

    summary: str = ""
    action_items: tuple[ActionItem, ...] = ()
    decisions: tuple[Decision, ...] = ()
    outline: tuple[str, ...] = ()
    failed: str | None = None

    def to_dict(self, meeting: str | None = None) -> dict[str, Any]:
        """The notes file mapping (``meeting``: the meeting id it belongs to, when given)."""
        out: dict[str, Any] = {"format": NOTES_FORMAT}
        if meeting is not None:
            out["meeting"] = meeting
        out.update(summary=self.summary, action_items=[a.to_dict() for a in self.action_items],
                   decisions=[d.to_dict() for d in self.decisions], outline=list(self.outline))
        if self.failed is not None:
            out["failed"] = self.failed
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Notes:
        obj = _check_header(data, NOTES_KEYS)
        return cls(**_notes_fields(obj), failed=_text(obj, "failed", "", required=False))


def _check_header(data: Any, allowed: tuple[str, ...]) -> Mapping[str, Any]:
    obj = checked_mapping(data, "", allowed)
    version = obj.get("format", NOTES_FORMAT)
    if version != NOTES_FORMAT:
        raise NotesError("format", f"unsupported format {version!r}; this speechkit reads {NOTES_FORMAT!r}")
    return obj


def _notes_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    summary = obj.get("summary", "")
    if not isinstance(summary, str):
        raise NotesError("summary", f"expected a string, got {type(summary).__name__}")
    return {"summary": _bounded(summary, "summary", MAX_SUMMARY_CHARS).strip(),
            "action_items": _items(obj, "action_items", ActionItem),
            "decisions": _items(obj, "decisions", Decision), "outline": _strings(obj, "outline", "")}


@dataclass(frozen=True)
class GoldNotes(Notes):
    """Reference notes: a :class:`Notes` (the perfect prediction) plus the action items the
    meeting closed and the facts its summary states."""

    closed_items: tuple[ActionItem, ...] = ()
    facts: tuple[Fact, ...] = ()

    def to_dict(self, meeting: str | None = None) -> dict[str, Any]:
        out = super().to_dict(meeting)
        out.update(closed_action_items=[a.to_dict() for a in self.closed_items],
                   facts=[f.to_dict() for f in self.facts])
        return out

    @classmethod
    def from_dict(cls, data: Any) -> GoldNotes:
        obj = _check_header(data, GOLD_KEYS)
        return cls(**_notes_fields(obj), closed_items=_items(obj, "closed_action_items", ActionItem),
                   facts=_items(obj, "facts", Fact))

    def facts_of(self, *kinds: str) -> tuple[Fact, ...]:
        """The facts of the given kinds (all facts when none is given)."""
        return tuple(f for f in self.facts if not kinds or f.kind in kinds)
