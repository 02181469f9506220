"""Scored-term exposure: how many of a meeting's scored terms the context a run gave it holds.

Term and number recall count a meeting's scored terms (its manifest ``terms``, else the workspace
terms its reference holds: :func:`speechkit.metrics.terms.term_recalls`). A context that holds a
term already makes recalling it easier; this module says, per meeting and per stream of its
context, which of its scored terms the stream holds, so a report shows how much of a level's term
recall the context hands over. It is scoring's side: the runner calls it when it writes
``context/<meeting>.json`` (after the meeting ran); the context builder never reads the scorer's
term set.

A term is in a stream when its normalised form is a whole-word substring of one of the stream's
units, each normalised on its own (a line of a text, an item of a list): the matching of term
recall, where a meeting's text is normalised segment by segment.

At L1 every stream is empty. At L2 the streams hold the system's own words (its confident rare
words, its confident text, its notes of earlier meetings): what it holds there it earned. At L3
they also hold the workspace text (the jargon list, the documents, the roster), which holds many
scored terms by design (docs/synth.md, "What the artifacts may hold").
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from speechkit.io.references import meeting_reference
from speechkit.metrics.normalize import normalize, normalized_text
from speechkit.metrics.terms import occurs, term_recalls

if TYPE_CHECKING:
    from speechkit.meeting_context import MeetingContext
    from speechkit.workspace import Meeting, Workspace

#: The streams of a context a cascade reads, by key, with what each is.
STREAMS = {"asr_prompt": "ASR prompt", "hotwords": "hot words", "correction_terms": "correction terms",
           "lm_text": "LM text", "notes_context": "notes context"}
#: Any of :data:`STREAMS`.
ANY = "any"
#: What the meeting's gold questions ask, given to a whole system (the ``system`` stage) at every
#: level and read by no stage of a cascade: reported apart, not in :data:`ANY`.
QUESTIONS = "questions"
KINDS = ("numbers", "jargon")


def _lines(text: str | None) -> list[str]:
    return (text or "").splitlines()


def context_streams(ctx: MeetingContext) -> dict[str, list[str]]:
    """The units of each stream of ``ctx`` (:data:`STREAMS`, then :data:`QUESTIONS`)."""
    return {"asr_prompt": _lines(ctx.biasing.prompt), "hotwords": list(ctx.biasing.hotwords),
            "correction_terms": list(ctx.terms), "lm_text": _lines(ctx.lm_text),
            "notes_context": _lines(ctx.notes.text()), QUESTIONS: [ask.text for ask in ctx.questions]}


def terms_in(terms: Sequence[str], units: Iterable[str]) -> list[str]:
    """The ``terms`` (in their order) found in any of ``units``."""
    padded = [f" {normalize(unit)} " for unit in units if unit.strip()]
    return [t for t in terms if any(occurs(t, text) for text in padded)]


def scored_terms(ws: Workspace, meeting: Meeting) -> tuple[dict[str, tuple[str, ...]], str] | None:
    """The meeting's scored terms by kind (``numbers``, ``jargon``) and their source, as term recall
    takes them (the manifest's list, else the workspace terms its reference holds); None where it
    scores none."""
    reference = meeting_reference(meeting) if meeting.terms is None else None
    if meeting.terms is None and reference is None:
        return None
    text = normalized_text(reference) if reference is not None else ""
    numbers, jargon = term_recalls(text, "", ws.terms, meeting.terms)
    if not numbers.spoken and not jargon.spoken:
        return None
    return {"numbers": numbers.spoken, "jargon": jargon.spoken}, numbers.source


def meeting_exposure(ws: Workspace, meeting: Meeting, ctx: MeetingContext) -> dict[str, Any] | None:
    """``context/<meeting>.json``'s ``scored_term_exposure``: how many terms the meeting scores
    (``scored``), and per stream, any of them, and the questions, the scored terms found there;
    None where the meeting scores no terms."""
    scored = scored_terms(ws, meeting)
    if scored is None:
        return None
    terms, source = scored
    units = context_streams(ctx)
    units[ANY] = [u for key in STREAMS for u in units[key]]
    found = {key: {kind: terms_in(terms[kind], units[key]) for kind in KINDS}
             for key in (*STREAMS, ANY, QUESTIONS)}
    return {"source": source, "scored": {kind: len(terms[kind]) for kind in KINDS}, "found": found}


def run_exposure(meetings: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """run.json's ``scored_term_exposure`` from the meetings' exposures (meeting -> its
    :func:`meeting_exposure`): ``per_meeting``, the scored terms and how many of them each stream
    held; ``streams``, summed over the meetings (term types per meeting), by kind and in all, with
    their ``share`` of the scored terms; None where no meeting scores a term."""
    given = {mid: e for mid, e in meetings.items() if e}
    scored = {kind: sum(e["scored"][kind] for e in given.values()) for kind in KINDS}
    total = sum(scored.values())
    if not total:
        return None
    keys = (*STREAMS, ANY, QUESTIONS)
    streams = {}
    for key in keys:
        counts = {kind: sum(len(e["found"][key][kind]) for e in given.values()) for kind in KINDS}
        streams[key] = {**counts, "all": sum(counts.values()), "share": round(sum(counts.values()) / total, 4),
                        **{f"{kind}_share": round(counts[kind] / scored[kind], 4) if scored[kind] else None
                           for kind in KINDS}}
    per_meeting = {mid: {"scored": sum(e["scored"].values()),
                         **{key: sum(len(e["found"][key][kind]) for kind in KINDS) for key in keys}}
                   for mid, e in given.items()}
    return {"meetings": len(given), "scored": {**scored, "all": total}, "streams": streams,
            "per_meeting": per_meeting}
