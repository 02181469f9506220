"""The documents around synthetic meetings hold a meeting's scored terms only where the latent
state gives that kind of document a reason to (docs/synth.md, "What the artifacts may hold"), and
none is context for a meeting whose outcomes it holds.

Written from the script (the latent state and the turns; no audio): a meeting's scored terms are
taken as every term its turns say, a superset of the manifest's (which leaves out the terms of a
turn the mix cut short). A term is in a text as term recall finds it in a transcript: its
normalised form a whole-word substring of a line, normalised (:func:`speechkit.metrics.terms.occurs`).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from speechkit.io.manifest import load_workspace
from speechkit.metrics.normalize import normalize
from speechkit.metrics.terms import occurs
from speechkit.synth.artifacts import Document, meeting_documents
from speechkit.synth.options import SynthOptions
from speechkit.synth.script import Script, write_script
from speechkit.synth.state import LatentState, MeetingPlan, Project
from speechkit.synth.voices import VOICES
from speechkit.workspace import Artifact, Meeting, Workspace

DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"
VOICE_IDS = [v.id for v in VOICES]
#: Seeds of both phrasings and several sizes; 8 meetings so that items are carried over often.
OPTIONS = [SynthOptions(seed=1, meetings=8, people=5, minutes=2.0),
           SynthOptions(seed=22, meetings=6, people=6, minutes=1.7, phrasing="tuned"),
           SynthOptions(seed=61, meetings=8, people=5, minutes=2.0, phrasing="held-out"),
           SynthOptions(seed=83, meetings=7, people=4, minutes=3.0),
           SynthOptions(seed=5, meetings=8, people=6, minutes=1.5, projects=2, phrasing="held-out")]


def terms_in(terms, text: str) -> set[str]:
    lines = [f" {normalize(line)} " for line in text.splitlines() if line.strip()]
    return {t for t in terms if any(occurs(t, line) for line in lines)}


def said(script: Script, plan: MeetingPlan) -> list[str]:
    """Every term the meeting's turns say."""
    return list(dict.fromkeys(p.term for turn in script.turns[plan.id] for p in turn.pieces if p.term))


def _facts(project: Project) -> list[str]:
    return [project.name.canonical, project.topic, *(t.canonical for t in (*project.jargon, *project.numbers))]


def licensed_sources(state: LatentState, plan: MeetingPlan, doc: Document) -> list[str]:
    """The latent state's texts a document of ``doc``'s kind about ``plan``'s meeting has a reason
    to quote (the rule of docs/synth.md, written out again here); every document may give its date
    and the meeting's time (a number term may read like a time: "14:30" holds "30")."""
    dates = [f"{plan.date:%A %Y-%m-%d %H:%M}", doc.date.isoformat()]
    projects = [state.project(pid) for pid in plan.projects]
    still_open = [a for a in state.action_items
                  if a.opened_in < plan.id and (a.closed_in is None or a.closed_in >= plan.id)]
    if doc.id == f"{plan.id}-agenda":  # the plan: its projects and their topics; the items carried over
        return [*dates, plan.title, *(f"{p.name.canonical}: {p.topic}" for p in projects),
                *(a.description for a in still_open if a.assignee in plan.attendees)]
    if doc.id == f"{plan.id}-prep-email":  # the projects' facts; the items open before the meeting
        return [*dates, plan.title, *(f for p in projects for f in _facts(p)), *(a.description for a in still_open)]
    if doc.id == f"{plan.id}-slides":  # the status deck of the first project: its facts
        return [*dates, *_facts(projects[0])]
    assert doc.id == f"{plan.id}-notes-email", doc.id  # the outcomes, the day after
    return [*dates, plan.title, *(f"{d.question}: {d.choice}" for d in state.decisions if d.meeting == plan.id),
            *(a.description for a in state.action_items if plan.id in (a.opened_in, a.closed_in))]


def unlicensed(state: LatentState, plan: MeetingPlan, doc: Document, scored) -> set[str]:
    """The scored terms ``doc`` holds that its licensed sources do not."""
    every = [t.canonical for t in state.terms()]
    licensed = terms_in(every, "\n".join(licensed_sources(state, plan, doc)))
    return terms_in(scored, doc.text) - licensed


@pytest.fixture(scope="module", params=OPTIONS, ids=lambda o: f"seed{o.seed}-{o.phrasing}")
def script(request) -> Script:
    return write_script(request.param, VOICE_IDS)


def test_no_document_holds_a_scored_term_its_kind_has_no_reason_to_hold(script):
    state, checked = script.state, 0
    for plan in state.meetings:
        scored = said(script, plan)
        for doc in meeting_documents(state, plan):
            assert not unlicensed(state, plan, doc, scored), (doc.id, doc.text)
            checked += 1
        # the check sees a list of the meeting's terms: the old agenda's "## Topics" line, for one
        agenda = meeting_documents(state, plan)[0]
        topics = Document(agenda.id, agenda.kind, agenda.date, agenda.meeting, agenda.title,
                          agenda.text + "\n## Topics\n\n" + ", ".join(scored) + "\n")
        assert unlicensed(state, plan, topics, scored), plan.id
    assert checked >= 3 * len(state.meetings)


def test_an_agenda_holds_no_number_and_names_the_items_carried_over(script):
    state = script.state
    numbers = [t.canonical for t in state.terms() if t.kind == "number"]
    carried = 0
    for plan in state.meetings:
        agenda = meeting_documents(state, plan)[0]
        when = terms_in(numbers, f"{plan.date:%A %Y-%m-%d %H:%M}")
        assert agenda.kind == "agenda" and not terms_in(numbers, agenda.text) - when, agenda.text
        for project in plan.projects:
            assert state.project(project).name.canonical in agenda.text
        items = [a for a in state.action_items if a.opened_in < plan.id and a.assignee in plan.attendees
                 and (a.closed_in is None or a.closed_in >= plan.id)]
        assert all(a.description in agenda.text for a in items)
        carried += len(items)
    assert carried  # the seeds carry items over


def _calendar(script: Script) -> tuple[Workspace, dict[str, Document]]:
    """The script's meetings and documents as a workspace (no files): what a context may read of it."""
    docs = {d.id: d for plan in script.state.meetings for d in meeting_documents(script.state, plan)}
    meetings = tuple(Meeting(plan.id, plan.date, Path(f"{plan.id}.flac")) for plan in script.state.meetings)
    artifacts = tuple(Artifact(d.id, d.kind, Path(f"{d.id}.md"), d.date, d.meeting, d.title) for d in docs.values())
    return Workspace("script", Path("."), (), meetings, artifacts=artifacts), docs


def test_no_document_a_meeting_may_read_was_written_after_it(script):
    """A meeting's context holds the documents dated up to its day (Workspace.artifacts_before): none
    of them is a later meeting's (whose prep email lists the items this one opens) nor its follow-up."""
    ws, _ = _calendar(script)
    for meeting in ws.meetings:
        for artifact in ws.artifacts_before(meeting):
            source = artifact.id.split("-")[0]
            assert source < meeting.id or (source == meeting.id and artifact.kind != "email") \
                or artifact.id == f"{meeting.id}-prep-email", (meeting.id, artifact.id)


def test_documents_depend_on_the_latent_state_alone():
    """Two scripts of one seed give the same documents; documents made again from a finished
    state are the same (they read no generator)."""
    options = OPTIONS[0]
    one, two = write_script(options, VOICE_IDS), write_script(options, VOICE_IDS)
    for a, b in zip(one.state.meetings, two.state.meetings):
        assert meeting_documents(one.state, a) == meeting_documents(two.state, b) == meeting_documents(one.state, a)


def test_the_demo_artifacts_are_the_generators_and_hold_no_scored_term_without_a_reason():
    """The committed demo's artifacts are what the generator writes from its options, and hold of
    each meeting's scored terms (the manifest's) only the licensed ones."""
    ws = load_workspace(DEMO)
    o = ws.metadata["options"]
    script = write_script(SynthOptions(seed=o["seed"], meetings=o["meetings"], people=o["people"],
                                       minutes=o["minutes"], difficulty=o["difficulty"], projects=o["projects"],
                                       phrasing=o["phrasing"]), VOICE_IDS)
    truth = json.loads((DEMO / "truth" / "state.json").read_text(encoding="utf-8"))
    assert [a.description for a in script.state.action_items] == [a["description"] for a in truth["action_items"]]
    files = {a.id: a for a in ws.artifacts}
    for plan in script.state.meetings:
        meeting = ws.meeting(plan.id)
        scored = [*meeting.terms.numbers, *meeting.terms.jargon]
        for doc in meeting_documents(script.state, plan):
            assert files[doc.id].read_text() == doc.text and files[doc.id].date == doc.date
            assert not unlicensed(script.state, plan, doc, scored), doc.id
