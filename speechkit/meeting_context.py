"""What a cascade may know about one meeting besides its audio: the data that the context
builder (:mod:`speechkit.context`) fills and the stages read.

A module of plain data with no imports of the stages, so the context builder, the stages and the
command line can all use it without loading one another.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from speechkit.workspace import Person

if TYPE_CHECKING:
    import numpy as np

    from speechkit.io.questions import Ask
    from speechkit.notes import Notes
    from speechkit.transcript import Transcript

log = logging.getLogger("speechkit.context")


@dataclass
class Biasing:
    """Context that steers recognition towards expected words.

    ``prompt``: free text given to decoders that take a prompt (Whisper ``initial_prompt``).
    ``hotwords``: words and phrases to favour (Whisper ``hotwords``; CTC score-level boost).
    ``hotword_weight``: strength of the CTC hot-word boost (None: the recognizer's default).
    ``lm_text``: text from which a decoder may build an n-gram LM (CTC + KenLM).
    ``verify_hotwords``: biasing that must never make a window worse (L2: the system's own words).
    A recognizer that supports it (Whisper) decodes each window with and without the biasing and
    keeps the biased decoding only where it holds more of the hot words than the unbiased one
    (and is not flagged as a loop); elsewhere the unbiased decoding. Others bias unconditionally.
    """

    prompt: str | None = None
    hotwords: list[str] = field(default_factory=list)
    hotword_weight: float | None = None
    lm_text: str | None = None
    verify_hotwords: bool = False

    def __bool__(self) -> bool:
        return bool(self.prompt or self.hotwords or self.lm_text)


@dataclass
class NotesContext:
    """What a notes backend (the ``summarize`` stage) may know besides the transcript.

    ``earlier_notes`` (L2+): the system's own notes of earlier meetings (summaries and action
    items), newest first. ``roster`` (L3): the people (name, nicknames, role). ``emails`` (L3): a
    digest of the emails dated up to the meeting, newest first. ``agenda`` (L3): the meeting's
    title and kind and its agenda. Each is cut to its byte budget by the context builder
    (:func:`speechkit.context.build_context`); each level's is a superset of the level below.
    """

    earlier_notes: str = ""
    roster: tuple[Person, ...] = ()
    emails: str = ""
    agenda: str = ""

    def roster_lines(self) -> list[str]:
        """One line per person: "Name (nicknames: A, B; role)"."""
        return [roster_line(p) for p in self.roster]

    def text(self) -> str:
        """The CONTEXT block of a notes prompt (empty at L1)."""
        parts = [("Earlier meetings (the notes taken then)", self.earlier_notes),
                 ("People", "\n".join(self.roster_lines())), ("Emails", self.emails), ("This meeting", self.agenda)]
        return "\n\n".join(f"{title}:\n{body}" for title, body in parts if body)

    def as_dict(self) -> dict[str, Any]:
        """As JSON data (part of the summarize stage's key, and of ``context/<meeting>.json``)."""
        return {"earlier_notes": self.earlier_notes, "roster": self.roster_lines(), "emails": self.emails,
                "agenda": self.agenda}


@dataclass(frozen=True)
class EarlierMeeting:
    """What the system itself produced for an earlier meeting (L2+), whole: its ``transcript`` and its
    ``notes`` (None: it wrote none). What a system that takes its earlier outputs back gets."""

    meeting: str
    transcript: Transcript
    notes: Notes | None = None


def roster_line(person: Person) -> str:
    """``person`` as the notes context lists them: "Tobias Tanaka (Toby; site reliability engineer)"."""
    extra = [", ".join(person.nicknames), person.role or ""]
    extra = [e for e in extra if e]
    return f"{person.name} ({'; '.join(extra)})" if extra else person.name


@dataclass
class MeetingContext:
    """Everything a cascade may use for one meeting.

    ``biasing``: prompt, hot words and LM text for ASR. ``enrollments``: person name -> voice
    clips, for identification. ``stable_labels``: name each voice as in earlier meetings
    (``prior_speakers``: name or label -> centroid) and give new voices labels that no earlier
    meeting used. ``expected_speakers``: how many people the meeting has (L3: its invite), the
    diarizer's speaker count. ``terms``, ``names`` (canonical name -> nicknames) and ``lm_text``: the
    vocabulary for correction. ``notes``: what the notes backend may know
    (:class:`NotesContext`). ``level``: the context level (None: no level, ``speechkit
    transcribe``). ``earlier`` (L2+): the system's own outputs for the earlier meetings, in
    calendar order (:class:`EarlierMeeting`). ``questions``: what the meeting's gold questions ask
    (never their answers), at every level: what a whole system answers (the ``system`` stage);
    no stage of the cascade reads them. ``identify_unenrolled``: identification is asked without
    enrollments (L1 and L2 under the paper's rules, :mod:`speechkit.level_rules`). ``turn_guards``:
    the corrector checks each rewritten turn (False: only a batch of the wrong length is rejected).
    ``log``: what was added, with its size and budget.
    :func:`speechkit.context.build_context` fills these by context level; ``speechkit
    transcribe`` fills ``biasing`` and ``enrollments`` from its options.
    """

    biasing: Biasing = field(default_factory=Biasing)
    enrollments: dict[str, list[Path]] = field(default_factory=dict)
    stable_labels: bool = False
    prior_speakers: dict[str, np.ndarray] = field(default_factory=dict)
    expected_speakers: int | None = None
    terms: list[str] = field(default_factory=list)
    names: dict[str, list[str]] = field(default_factory=dict)  # canonical name -> nicknames
    lm_text: str = ""
    notes: NotesContext = field(default_factory=NotesContext)
    level: int | None = None
    earlier: list[EarlierMeeting] = field(default_factory=list)
    questions: tuple[Ask, ...] = ()
    identify_unenrolled: bool = False
    turn_guards: bool = True
    log: list[dict] = field(default_factory=list)

    def add(self, source: str, items: int, budget: int | None = None) -> None:
        """Log one addition: its source, its size and its budget."""
        entry = {"source": source, "items": items, "budget": budget}
        self.log.append(entry)
        log.info("context: %s: %d item(s)%s", source, items,
                 f" (budget {budget})" if budget is not None else "")
