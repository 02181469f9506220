"""The notes context per level (the summarize stage's CONTEXT block): L1 nothing, L2 the system's
own notes of earlier meetings, L3 also the roster, an email digest and the agenda; each addition
cut to its byte budget, never inside a UTF-8 character, each level a superset of the one below,
and logged."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from speechkit.context import PriorMeeting, build_context, cut_utf8
from speechkit.io.manifest import load_workspace
from speechkit.io.notes import read_gold_notes
from speechkit.meeting_context import roster_line
from speechkit.notes import ActionItem, Notes
from speechkit.recipe import ContextBudget
from speechkit.transcript import Transcript

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


@pytest.fixture(scope="module")
def demo():
    return load_workspace(DEMO)


def _prior(demo, upto: int, summary: str = "Ünïcødé summary ✓ of the meeting") -> list[PriorMeeting]:
    return [PriorMeeting(m.id, Transcript(m.id, []), {}, notes=Notes(
        f"{m.id}: {summary}", (ActionItem("send the DPA redlines", "Tobias Tanaka", None, "Friday"),)))
        for m in demo.scored_meetings[:upto]]


def _contexts(demo, index: int, budget: ContextBudget = ContextBudget()):
    meeting = demo.scored_meetings[index]
    return {level: build_context(demo, meeting, level, _prior(demo, index), budget) for level in (1, 2, 3)}


def test_each_level_is_a_strict_superset_of_the_level_below(demo):
    ctx = _contexts(demo, 2)
    notes = {level: c.notes for level, c in ctx.items()}
    assert notes[1].text() == "" and notes[1].as_dict()["roster"] == []
    assert notes[2].earlier_notes.startswith("m02: m02:")  # the newest earlier meeting first
    assert "m01" in notes[2].earlier_notes and "send the DPA redlines" in notes[2].earlier_notes
    assert not (notes[2].roster or notes[2].emails or notes[2].agenda)
    assert notes[3].earlier_notes == notes[2].earlier_notes  # L3 keeps all of L2's, then adds
    assert [p.name for p in notes[3].roster] == [p.name for p in demo.people]
    nicknamed = next(p for p in demo.people if p.nicknames)
    assert f"{nicknamed.name} ({nicknamed.nicknames[0]}; {nicknamed.role})" in notes[3].text()
    meeting = demo.scored_meetings[2]
    assert notes[3].agenda.startswith(f"{meeting.title} ({meeting.kind})")
    assert notes[2].text() in notes[3].text() and notes[1].text() in notes[2].text()
    assert 0 == len(notes[1].text()) < len(notes[2].text()) < len(notes[3].text())
    logged = {e["source"]: e for e in ctx[3].log if e["source"].startswith("notes:")}
    assert logged["notes: roster people"]["items"] == len(demo.people)
    assert logged["notes: email digest (bytes)"] == {"source": "notes: email digest (bytes)",
                                                     "items": len(notes[3].emails.encode()), "budget": 1200}
    assert not any(e["source"].startswith("notes:") for e in ctx[1].log)


def test_the_first_meeting_has_no_earlier_notes(demo):
    ctx = _contexts(demo, 0)
    assert ctx[2].notes.text() == "" and ctx[3].notes.earlier_notes == ""
    assert ctx[3].notes.roster and ctx[3].notes.agenda


def test_only_emails_dated_before_the_meeting_are_digested(demo):
    meeting = demo.scored_meetings[2]
    emails = _contexts(demo, 2)[3].notes.emails  # m03's
    assert f"Prep for {meeting.title}" in emails  # its own prep email, dated the day before
    # m04's prep email, dated m03's day, lists the items m03 opened: the gold of m03
    opened = read_gold_notes(meeting.notes, meeting.id).action_items
    assert opened and not any(item.description in emails for item in opened)
    day_before = (meeting.date.date() - dt.timedelta(days=1)).isoformat()
    assert emails.split("\n")[0].startswith(f"[{day_before}")  # newest first


@pytest.mark.parametrize("budget", range(1, 40))
def test_cuts_never_split_a_character_and_respect_the_budget(demo, budget):
    text = "m02: Ünïcødé ✓ 𝄞 naïve café"
    cut = cut_utf8(text, budget)
    assert len(cut.encode("utf-8")) <= budget and text.startswith(cut)
    assert len(cut.encode("utf-8")) > budget - 4  # the longest prefix that fits (a character is at most 4 bytes)


def test_every_addition_is_cut_to_its_own_budget(demo):
    small = ContextBudget(notes_prior_bytes=37, notes_roster_bytes=80, notes_emails_bytes=101, notes_agenda_bytes=23)
    notes = _contexts(demo, 3, small)[3].notes
    assert len(notes.earlier_notes.encode()) <= 37 and notes.earlier_notes
    assert len(notes.emails.encode()) <= 101 and len(notes.agenda.encode()) <= 23
    notes.earlier_notes.encode().decode("utf-8")  # whole characters only
    # the roster is cut by whole people: as many whole lines as fit in 80 bytes
    lines = [len(roster_line(p).encode()) + 1 for p in demo.people]
    fit = max(k for k in range(len(lines) + 1) if sum(lines[:k]) - 1 <= 80)
    assert 0 < fit < len(lines) and [p.name for p in notes.roster] == [p.name for p in demo.people[:fit]]
    none = ContextBudget(notes_prior_bytes=0, notes_roster_bytes=0, notes_emails_bytes=0, notes_agenda_bytes=0)
    assert _contexts(demo, 3, none)[3].notes.text() == ""
