"""Workspace records: the people, their term sets, meetings in calendar order and artifacts.

A workspace lives in a folder with a manifest (``workspace.yaml``, see docs/workspace-format.md);
:func:`speechkit.io.manifest.load_workspace` reads and validates it into these records. All paths
held here are absolute and already checked to lie inside the workspace folder.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from speechkit.language import ENGLISH, SpokenLanguage

ARTIFACT_KINDS = ("agenda", "email", "slides", "document")


@dataclass(frozen=True)
class Person:
    """A workspace member. ``id`` is the stable key used by references; ``name`` is canonical."""

    id: str
    name: str
    nicknames: tuple[str, ...] = ()
    role: str | None = None
    enrollments: tuple[Path, ...] = ()

    @property
    def first_name(self) -> str:
        return self.name.split()[0]

    @property
    def spoken_names(self) -> list[str]:
        """What people call this person (name, then nicknames), without a name that is only the
        person's id: importers copy the id where a corpus has no names (AMI's ``MEE089``), and an
        id is no word anyone says."""
        return [n for n in (self.name, *self.nicknames) if n != self.id]

    def answers_to(self, name: str | None) -> bool:
        """True if ``name`` is this person's full name, first name or a nickname (any case).

        This is the tolerant first-name match of named-speaker accuracy.
        """
        if not name:
            return False
        key = " ".join(name.lower().split())
        accepted = {self.name.lower(), self.first_name.lower(), *(n.lower() for n in self.nicknames)}
        return key in accepted or key.split()[0] in {self.first_name.lower(), *(n.lower() for n in self.nicknames)}


@dataclass(frozen=True)
class TermSet:
    """Terms whose recognition is scored: numbers and dates, and jargon, in canonical written form."""

    numbers: tuple[str, ...] = ()
    jargon: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.numbers or self.jargon)


@dataclass(frozen=True)
class Artifact:
    """A document around the meetings: an agenda, an email, slides or another document."""

    id: str
    kind: str
    path: Path
    date: dt.date | None = None
    meeting: str | None = None
    title: str | None = None

    def read_text(self) -> str:
        return self.path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Meeting:
    """One recorded meeting and its references.

    ``reference`` is the verbatim transcript with word times and person ids (SegLST or STM);
    ``terms``, when given, lists the workspace terms actually spoken in this meeting. When it is
    None the scorer derives it by scanning the normalised reference text. An ``enrollment_only``
    meeting supplied voice enrollments: it is neither run nor scored. ``notes`` is the meeting's
    gold notes file (:mod:`speechkit.io.notes`), None when the workspace has none for it.
    ``language`` is what is spoken in it (the workspace's unless the manifest says otherwise); its
    reference is in that language.
    """

    id: str
    date: dt.date | dt.datetime
    audio: Path
    title: str | None = None
    kind: str | None = None
    reference: Path | None = None
    rttm: Path | None = None
    canonical: Path | None = None
    attendees: tuple[str, ...] = ()
    terms: TermSet | None = None
    enrollment_only: bool = False
    notes: Path | None = None
    language: SpokenLanguage = ENGLISH


@dataclass
class Workspace:
    """A series of meetings of one organisation with everything known around them."""

    name: str
    root: Path
    people: tuple[Person, ...]
    meetings: tuple[Meeting, ...]
    terms: TermSet = field(default_factory=TermSet)
    artifacts: tuple[Artifact, ...] = ()
    metadata: dict = field(default_factory=dict)
    manifest_path: Path | None = None
    language: SpokenLanguage = ENGLISH

    @property
    def scored_meetings(self) -> tuple[Meeting, ...]:
        """The meetings a run processes and scores: all but the enrollment-only ones."""
        return tuple(m for m in self.meetings if not m.enrollment_only)

    def person(self, person_id: str) -> Person:
        for p in self.people:
            if p.id == person_id:
                return p
        raise KeyError(f"workspace {self.name!r} has no person {person_id!r}")

    def meeting(self, meeting_id: str) -> Meeting:
        for m in self.meetings:
            if m.id == meeting_id:
                return m
        raise KeyError(f"workspace {self.name!r} has no meeting {meeting_id!r}")

    def artifacts_for(self, meeting_id: str) -> list[Artifact]:
        """Artifacts tied to a meeting (its agenda, prep emails, slides)."""
        return [a for a in self.artifacts if a.meeting == meeting_id]

    def artifacts_before(self, meeting: Meeting) -> list[Artifact]:
        """Artifacts a deployed system could have seen by the meeting's date (undated ones too)."""
        day = meeting.date.date() if isinstance(meeting.date, dt.datetime) else meeting.date
        return [a for a in self.artifacts
                if a.meeting == meeting.id or a.date is None or a.date <= day]
