"""Documents around the meetings, in Markdown: agendas, prep and follow-up emails, slides.

Each is written from the latent state and the meeting's plan alone, as a real one would be:
the agenda names the projects, the points the meeting goes through and the action items carried
over from earlier meetings; the prep email and the slides hold the facts of the meeting's
projects (their jargon and key numbers, the same for every meeting of a project); the follow-up
email the meeting's outcomes. No document is made from the terms a meeting says (the set the
scorer counts): which scored terms each kind may hold, and why, is docs/synth.md's "What the
artifacts may hold". People appear by full name and terms in canonical written form.
Follow-up emails are dated the day after their meeting and prep emails after every earlier
meeting (:func:`prep_day`), so no document is context for a meeting whose outcomes it holds.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from speechkit.synth.dialogue import MOVES
from speechkit.synth.state import ActionItem, LatentState, MeetingPlan

#: The agenda's points for a project, from the moves a meeting of its kind makes (dialogue.MOVES).
AGENDA_POINTS = {"status": "status", "decision": "decisions to take", "question": "open questions",
                 "assign": "next steps"}


@dataclass(frozen=True)
class Document:
    """One artifact: its id, kind (agenda, email, slides), date, meeting (if tied to one), title, text."""

    id: str
    kind: str
    date: dt.date
    meeting: str | None
    title: str
    text: str


def _names(state: LatentState, ids) -> str:
    return ", ".join(state.person(pid).name for pid in ids)


def open_items(state: LatentState, plan: MeetingPlan) -> list[ActionItem]:
    """The action items opened in earlier meetings and not closed before ``plan``'s meeting."""
    return [a for a in state.action_items
            if a.opened_in < plan.id and (a.closed_in is None or a.closed_in >= plan.id)]


def agenda(state: LatentState, plan: MeetingPlan) -> Document:
    """The meeting's invite and agenda: attendees; per project its topic, owner and the points the
    meeting's kind goes through; the open action items of the invited carried over."""
    lines = [f"# {plan.title}", "", f"**When:** {plan.date:%A %Y-%m-%d %H:%M}  ",
             f"**Host:** {state.person(plan.host).name}  ", f"**Attendees:** {_names(state, plan.attendees)}", "",
             "## Agenda", ""]
    points = ", ".join(AGENDA_POINTS[move] for move in dict.fromkeys(MOVES[plan.kind]) if move in AGENDA_POINTS)
    for k, pid in enumerate(plan.projects, 1):
        project = state.project(pid)
        owner = state.person(project.owner).name
        lines.append(f"{k}. {project.name.canonical} ({project.topic}, owner {owner}): {points}")
    carried = [a for a in open_items(state, plan) if a.assignee in plan.attendees]
    if carried:
        lines += ["", "## Carried over", ""]
        lines += [f"- {state.person(a.assignee).name}: {a.description} (due {a.due})" for a in carried]
    lines.append("")
    return Document(f"{plan.id}-agenda", "agenda", plan.date.date(), plan.id, f"Agenda: {plan.title}", "\n".join(lines))


def prep_day(state: LatentState, plan: MeetingPlan) -> dt.date:
    """The prep email's date: the day before the meeting, or the meeting's own day when an earlier
    meeting falls on the day before (the email holds the items open after it, so it is written after
    it, and an artifact dated that day would be context for the earlier meeting)."""
    day = plan.date.date() - dt.timedelta(days=1)
    earlier = [m.date.date() for m in state.meetings if m.id < plan.id]
    return plan.date.date() if earlier and max(earlier) >= day else day


def prep_email(state: LatentState, plan: MeetingPlan) -> Document:
    """An email from the host before the meeting (:func:`prep_day`): the facts of its projects
    (their jargon and key numbers) and the open action items."""
    day = prep_day(state, plan)
    host = state.person(plan.host)
    lines = [f"From: {host.name}", f"To: {_names(state, plan.attendees)}", f"Date: {day.isoformat()}",
             f"Subject: Prep for {plan.title}", "", "Hi all,", "",
             f"Ahead of {plan.title.lower()} on {plan.date:%A}, a few facts to have at hand:", ""]
    for pid in plan.projects:
        project = state.project(pid)
        lines.append(f"- {project.name.canonical}: jargon we keep using: "
                     + ", ".join(t.canonical for t in project.jargon) + ".")
        lines += [f"  - {n.topic.capitalize()}: {n.canonical}{' ' + n.unit if n.unit else ''}" for n in project.numbers]
    opened = open_items(state, plan)
    if opened:
        lines += ["", "Open action items:", ""]
        lines += [f"- {state.person(a.assignee).name}: {a.description} (due {a.due})" for a in opened]
    lines += ["", "Thanks,", host.first_name, ""]
    return Document(f"{plan.id}-prep-email", "email", day, plan.id, f"Prep for {plan.title}", "\n".join(lines))


def slides(state: LatentState, plan: MeetingPlan) -> Document:
    """Status slides for the meeting's first project."""
    project = state.project(plan.projects[0])
    lines = [f"# {project.name.canonical}: status", "", f"Owner: {state.person(project.owner).name}", "", "---", "",
             "## Key numbers", ""]
    lines += [f"- {n.topic.capitalize()}: **{n.canonical}**{' ' + n.unit if n.unit else ''}" for n in project.numbers]
    lines += ["", "---", "", "## Workstreams", ""]
    lines += [f"- {t.canonical}" for t in project.jargon]
    lines.append("")
    return Document(f"{plan.id}-slides", "slides", plan.date.date(), plan.id, f"{project.name.canonical} status",
                    "\n".join(lines))


def follow_up(state: LatentState, plan: MeetingPlan) -> Document:
    """The host's summary the day after: decisions taken and action items opened or closed."""
    day = plan.date.date() + dt.timedelta(days=1)
    host = state.person(plan.host)
    lines = [f"From: {host.name}", f"To: {_names(state, plan.attendees)}", f"Date: {day.isoformat()}",
             f"Subject: Notes from {plan.title}", "", "Hi all, notes from yesterday.", ""]
    decisions = [d for d in state.decisions if d.meeting == plan.id]
    if decisions:
        lines += ["Decisions:", ""] + [f"- {d.question}: {d.choice}" for d in decisions] + [""]
    opened = [a for a in state.action_items if a.opened_in == plan.id]
    closed = [a for a in state.action_items if a.closed_in == plan.id]
    if opened:
        lines += ["New action items:", ""]
        lines += [f"- {state.person(a.assignee).name}: {a.description} (by {a.due})" for a in opened] + [""]
    if closed:
        lines += ["Done:", ""] + [f"- {state.person(a.assignee).name}: {a.description}" for a in closed] + [""]
    lines += ["Thanks,", host.first_name, ""]
    return Document(f"{plan.id}-notes-email", "email", day, None, f"Notes from {plan.title}", "\n".join(lines))


def meeting_documents(state: LatentState, plan: MeetingPlan) -> list[Document]:
    """All documents around one meeting (call after every meeting is written, so the state holds
    its outcomes and the items open at it)."""
    docs = [agenda(state, plan), prep_email(state, plan)]
    if plan.kind != "1:1":
        docs.append(slides(state, plan))
    docs.append(follow_up(state, plan))
    return docs
