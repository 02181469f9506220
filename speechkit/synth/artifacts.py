"""Documents around the meetings, in Markdown: agendas, prep and follow-up emails, slides.

They mention the people (full names), the jargon in canonical written form and the numbers,
so a system given them (context level L3) can recover what the audio alone leaves ambiguous.
Follow-up emails are dated the day after their meeting, so they are context only for later
meetings.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from speechkit.synth.state import LatentState, MeetingPlan


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


def agenda(state: LatentState, plan: MeetingPlan, terms: list[str]) -> Document:
    """The meeting's invite and agenda: attendees, projects, topics (terms to be discussed)."""
    lines = [f"# {plan.title}", "", f"**When:** {plan.date:%A %Y-%m-%d %H:%M}  ",
             f"**Host:** {state.person(plan.host).name}  ", f"**Attendees:** {_names(state, plan.attendees)}", "",
             "## Agenda", ""]
    for k, pid in enumerate(plan.projects, 1):
        project = state.project(pid)
        owner = state.person(project.owner).name
        lines.append(f"{k}. {project.name.canonical} ({project.topic}, owner {owner})")
    lines += ["", "## Topics", "", ", ".join(terms) if terms else "(none)", ""]
    return Document(f"{plan.id}-agenda", "agenda", plan.date.date(), plan.id, f"Agenda: {plan.title}", "\n".join(lines))


def prep_email(state: LatentState, plan: MeetingPlan) -> Document:
    """An email from the host the day before: project facts and the open action items."""
    day = plan.date.date() - dt.timedelta(days=1)
    host = state.person(plan.host)
    lines = [f"From: {host.name}", f"To: {_names(state, plan.attendees)}", f"Date: {day.isoformat()}",
             f"Subject: Prep for {plan.title}", "", "Hi all,", "",
             f"Ahead of {plan.title.lower()} on {plan.date:%A}, a few facts to have at hand:", ""]
    for pid in plan.projects:
        project = state.project(pid)
        lines.append(f"- {project.name.canonical}: jargon we keep using: "
                     + ", ".join(t.canonical for t in project.jargon) + ".")
        lines += [f"  - {n.topic.capitalize()}: {n.canonical}{' ' + n.unit if n.unit else ''}" for n in project.numbers]
    opened = [a for a in state.action_items
              if a.opened_in < plan.id and (a.closed_in is None or a.closed_in >= plan.id)]
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


def meeting_documents(state: LatentState, plan: MeetingPlan, terms: list[str]) -> list[Document]:
    """All documents around one meeting (call after the meeting is written, so its outcomes are known)."""
    docs = [agenda(state, plan, terms), prep_email(state, plan)]
    if plan.kind != "1:1":
        docs.append(slides(state, plan))
    docs.append(follow_up(state, plan))
    return docs
