"""Meetings as turns, written from the latent state with templates and a seeded generator.

Each turn is a list of :class:`~speechkit.synth.spoken.Piece` objects, so the same turn gives
the canonical written form, the verbatim spoken form (with disfluencies and repetitions) and
the TTS form. Writing a meeting advances the latent state: it opens and closes action items
and records decisions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from speechkit.synth import pools
from speechkit.synth.spoken import Piece, canonical_text, filler, plain, verbatim_words
from speechkit.synth.state import ActionItem, Decision, LatentState, MeetingPlan, Persona, Project, Term

WORDS_PER_MINUTE = 140
_SLOT = re.compile(r"^(.*?)\{(\w+)\}(.*)$")


@dataclass
class Turn:
    """One turn of one person; ``backchannel`` turns are placed over the floor holder's speech."""

    speaker: str
    pieces: list[Piece]
    backchannel: bool = False

    @property
    def words(self) -> list[str]:
        return verbatim_words(self.pieces)


def _term_piece(term: Term, suffix: str) -> Piece:
    say = term.tts.split()
    say[-1] += suffix
    return Piece(canonical=term.canonical + suffix, words=tuple(term.spoken.split()), say=tuple(say),
                 term=term.canonical)


def render(template: str, slots: dict[str, object]) -> list[Piece]:
    """Pieces for a template; ``{x}`` slots hold a Term, a Persona (said by first name) or text."""
    out: list[Piece] = []
    for token in template.split():
        m = _SLOT.match(token)
        if not m:
            out.extend(plain(token))
            continue
        prefix, key, suffix = m.groups()
        value = slots[key]
        if isinstance(value, Term):
            out.extend(plain(prefix))
            out.append(_term_piece(value, suffix))
        elif isinstance(value, Persona):
            out.extend(plain(prefix + value.first_name + suffix))
        else:
            out.extend(render(prefix + str(value) + suffix, slots))
    return out


def disfluent(pieces: list[Piece], person: Persona, rng: np.random.Generator) -> list[Piece]:
    """Insert fillers (um, uh) and word repetitions at the person's rates."""
    if len(pieces) < 4:
        return pieces
    out: list[Piece] = []
    for i, piece in enumerate(pieces):
        if i > 0 and piece.term is None and rng.random() < person.filler_rate:
            out.append(filler("um" if rng.random() < 0.5 else "uh"))
        if piece.term is None and len(piece.words) == 1 and rng.random() < person.repeat_rate:
            out.append(filler(piece.words[0]))
        out.append(piece)
    return out


class _MeetingWriter:
    """Writes one meeting's turns; holds the meeting's generator and running word count."""

    def __init__(self, state: LatentState, plan: MeetingPlan, rng: np.random.Generator,
                 cursors: dict[str, list[Term]]) -> None:
        self.state, self.plan, self.rng, self.cursors = state, plan, rng, cursors
        self.turns: list[Turn] = []
        self.people = [state.person(pid) for pid in plan.attendees]
        self.host = state.person(plan.host)

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def address(self, person: Persona) -> str:
        """How others call a person: the nickname half of the time when there is one."""
        return person.nickname if person.nickname and self.rng.random() < 0.5 else person.first_name

    def say(self, speaker: Persona, template: str, **slots: object) -> None:
        pieces = disfluent(render(template, slots), speaker, self.rng)
        self.turns.append(Turn(speaker.id, pieces))

    def backchannel(self, floor: Persona) -> None:
        listeners = [p for p in self.people if p.id != floor.id]
        if listeners and self.rng.random() < 0.6:
            who = self.pick(listeners)
            self.turns.append(Turn(who.id, plain(self.pick(who.backchannels)), backchannel=True))

    def next_term(self, project: Project, kind: str) -> Term:
        """Cycle through a project's jargon (or numbers) so a workspace covers many distinct terms."""
        key = f"{project.id}:{kind}"
        if not self.cursors.get(key):
            pool = list(project.jargon if kind == "jargon" else project.numbers)
            self.cursors[key] = [pool[i] for i in self.rng.permutation(len(pool))]
        return self.cursors[key].pop(0)

    def others(self, *exclude: Persona) -> list[Persona]:
        return [p for p in self.people if p not in exclude] or self.people

    @property
    def word_count(self) -> int:
        return sum(len(t.words) for t in self.turns)

    # --- moves -------------------------------------------------------------------------------

    def opening(self) -> None:
        if self.plan.kind == "1:1":
            other = self.others(self.host)[0]
            self.say(self.host, self.pick(("Hey {x}, thanks for making time.", "Hi {x}, how's your week going?")),
                     x=self.address(other))
            self.say(other, self.pick(("Hey. Yeah, good, busy.", "Hi. Pretty good, thanks.")))
        else:
            self.say(self.host, self.pick(("Okay, let's get started.", "Morning everyone, let's keep this quick.",
                                           "Alright, I think we have everyone. Let's start.")))
            self.say(self.pick(self.others(self.host)), self.pick(("Morning.", "Hi everyone.", "Sounds good.")))

    def status(self, project: Project) -> None:
        owner = self.state.person(project.owner)
        who = owner if owner in self.people and owner != self.host else self.pick(self.others(self.host))
        j1, j2, j3 = (self.next_term(project, "jargon") for _ in range(3))
        n = self.next_term(project, "number")
        self.say(self.host, self.pick(("{x}, where are we on {p}?", "{x}, can you give us a quick update on {t}?",
                                       "So {x}, how is {p} going?")),
                 x=self.address(who), p=project.name, t=project.topic)
        a, b = self.rng.choice(len(project.statuses), size=2, replace=False)
        first, second = project.statuses[a], project.statuses[b].replace("{j}", "{k}")
        unit = f" {n.unit}" if n.unit else ""
        self.say(who, f"So {first}, and {second}. {{nt}} is {{n}}{unit} right now.",
                 j=j1, k=j3, nt=n.topic.capitalize(), n=n)
        self.backchannel(who)
        if len(self.people) > 2 and self.rng.random() < 0.7:
            asker = self.pick(self.others(who))
            self.say(asker, self.pick(("Is {j} part of that as well?", "And what about {j}?",
                                       "Sorry, does that include {j}?")), j=j2)
            self.say(who, self.pick(("Yeah, {j} too. I talked to {y} about it yesterday.",
                                     "Not yet, {j} is next. {y} is helping with that.",
                                     "Partly. {j} still needs a review from {y}.")),
                     j=j2, y=self.pick([p for p in self.state.people if p.id != who.id]))

    def follow_up(self) -> bool:
        open_items = [a for a in self.state.action_items if a.closed_in is None
                      and a.assignee in self.plan.attendees and a.opened_in != self.plan.id]
        if not open_items:
            return False
        item = open_items[0]
        who = self.state.person(item.assignee)
        asker = self.host if who != self.host else self.pick(self.others(who))
        project = self.state.project(item.project)
        term = next(t for t in project.jargon if t.canonical == item.term)
        self.say(asker, "{x}, did you get a chance to " + item.task + "?", x=self.address(who), j=term)
        if self.rng.random() < 0.7:
            status = self.pick(project.statuses)
            self.say(who, "Yes, that's done. " + status[0].upper() + status[1:] + ".",
                     j=self.next_term(project, "jargon"))
            item.closed_in = self.plan.id
        else:
            self.say(who, "Not yet, I'm waiting on {y} for {j}. Should be done by {d}.",
                     y=self.pick([p for p in self.state.people if p.id != who.id]),
                     j=self.next_term(project, "jargon"), d=self.pick(pools.WEEKDAYS))
        return True

    def decision(self, project: Project) -> None:
        j = self.next_term(project, "jargon")
        question, options = self.pick(project.decisions)
        first, second = options
        self.say(self.host, f"We need to decide on {question}. It's either {first} or {second}.", j=j)
        voter = self.pick(self.others(self.host))
        choice = self.pick(options)
        n = self.next_term(project, "number")
        unit = f" {n.unit}" if n.unit else ""
        self.say(voter, f"I'd go with {choice}. The other option means more work for {{y}}, "
                        f"and {{nt}} stays at {{n}}{unit}.",
                 y=self.pick(self.state.people), j=j, nt=n.topic, n=n)
        self.backchannel(voter)
        self.say(self.host, f"Okay, let's go with {choice} then.", j=j)
        self.state.decisions.append(Decision(
            id=f"d{len(self.state.decisions) + 1}", project=project.id,
            question=canonical_text(render(question, {"j": j})),
            choice=canonical_text(render(choice, {"j": j})), meeting=self.plan.id))

    def assign(self, project: Project) -> None:
        who = self.pick(self.others(self.host)) if len(self.people) > 1 else self.host
        j = self.next_term(project, "jargon")
        task = self.pick(project.tasks)
        day = self.pick(pools.WEEKDAYS)
        self.say(self.host, "{x}, can you " + task + " by {d}?", x=self.address(who), j=j, d=day)
        self.say(who, self.pick(("Sure, I'll " + task + " by {d}.", "Yeah, I can do that.",
                                 "Okay. I'll loop in {y} on {j} too.")),
                 j=j, d=day, y=self.pick([p for p in self.state.people if p.id != who.id]))
        self.state.action_items.append(ActionItem(
            id=f"a{len(self.state.action_items) + 1}", project=project.id, assignee=who.id, task=task,
            term=j.canonical, description=canonical_text(render(task, {"j": j})), due=day, opened_in=self.plan.id))

    def closing(self) -> None:
        self.say(self.host, self.pick(("Okay, I think that's it. Thanks everyone.", "Great, thanks all.",
                                       "Alright, that's all I had. Thanks.")))
        self.say(self.pick(self.others(self.host)), self.pick(("Thanks.", "Thanks, bye.", "Cheers.")))


def write_meeting(state: LatentState, plan: MeetingPlan, minutes: float, rng: np.random.Generator,
                  cursors: dict[str, list[Term]]) -> list[Turn]:
    """The turns of one meeting, about ``minutes`` long; updates the state's items and decisions."""
    w = _MeetingWriter(state, plan, rng, cursors)
    target = minutes * WORDS_PER_MINUTE
    w.opening()
    while w.follow_up() and w.word_count < target / 2:
        pass
    projects = [state.project(pid) for pid in plan.projects]
    step = 0
    while w.word_count < target:
        project = projects[step % len(projects)]
        move = ("status", "assign", "decision")[step % 3] if plan.kind != "standup" else ("status", "assign")[step % 2]
        getattr(w, move)(project)
        step += 1
    w.closing()
    return w.turns


def enrollment_text(person_index: int, sentences: int = 3) -> str:
    """The enrollment passage of the i-th person: Harvard sentences no meeting uses."""
    pool = pools.ENROLLMENT_SENTENCES
    start = (person_index * sentences) % len(pool)
    return " ".join(pool[(start + k) % len(pool)] for k in range(sentences))
