"""Meetings as turns, written from the latent state: a sequence of dialogue acts, each realised
by a phrasing family (:mod:`speechkit.synth.acts`, :mod:`speechkit.synth.families`).

Each turn is a list of :class:`~speechkit.synth.spoken.Piece` objects, so the same turn gives
the canonical written form, the verbatim spoken form (with disfluencies, repetitions and
restarts) and the TTS form. Writing a meeting advances the latent state: it opens and closes
action items, records decisions and records, per act, the family that realised it, its lines
and any correction (``LatentState.acts``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from speechkit.synth.acts import LATER, ActRecord, Family, FamilyCycle
from speechkit.synth.disfluency import disfluent
from speechkit.synth.language import ENGLISH, Language
from speechkit.synth.spoken import Piece, canonical_text, verbatim_words
from speechkit.synth.state import ActionItem, Decision, LatentState, MeetingPlan, Persona, Project, Term, slip

#: Acts whose turns carry no fact a gold note or question depends on: the mix may cut them short.
INTERRUPTIBLE = frozenset({"greeting", "small_talk", "status", "aside", "closing"})
#: The moves of each meeting kind, cycled over its projects; ``assign`` is a request, a volunteer
#: or an assignment to someone absent.
MOVES = {"standup": ("status", "assign", "number", "aside", "question", "assign"),
         "review": ("status", "decision", "assign", "number", "question", "aside", "assign", "decision"),
         "1:1": ("status", "assign", "question", "decision", "number", "aside")}
ASSIGN_ACTS = (("request", 0.45), ("volunteer", 0.3), ("absent", 0.25))
#: At most this many open items of earlier meetings are checked on at the start of a meeting.
MAX_FOLLOW_UPS = 3


@dataclass
class Turn:
    """One turn of one person.

    ``backchannel`` turns are placed over the floor holder's speech; an ``overlaps`` turn starts
    before the previous turn ends (a written interruption); ``act`` is the id of the act record
    the turn realises; ``interruptible``: the mix may cut the turn short.
    """

    speaker: str
    pieces: list[Piece]
    backchannel: bool = False
    overlaps: bool = False
    act: str = ""
    interruptible: bool = False

    @property
    def words(self) -> list[str]:
        return verbatim_words(self.pieces)


def render(template: str, slots: dict[str, object], language: Language = ENGLISH) -> list[Piece]:
    """Pieces for a template in ``language`` (:meth:`speechkit.synth.language.Language.render`)."""
    return language.render(template, slots)


class _MeetingWriter:
    """Writes one meeting's turns; holds the meeting's generator, the workspace's family cycle
    and the later parts of acts still to be said."""

    def __init__(self, state: LatentState, plan: MeetingPlan, rng: np.random.Generator,
                 cursors: dict[str, list[Term]], cycle: FamilyCycle, language: Language) -> None:
        self.state, self.plan, self.rng, self.cursors, self.cycle = state, plan, rng, cursors, cycle
        self.lang = language
        self.turns: list[Turn] = []
        self.people = [state.person(pid) for pid in plan.attendees]
        self.host = state.person(plan.host)
        self.pending: list[tuple[int, ActRecord, list[tuple[str, str]], dict, dict]] = []

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def address(self, person: Persona) -> str:
        """How others call a person: the nickname half of the time when there is one."""
        return person.nickname if person.nickname and self.rng.random() < 0.5 else person.first_name

    def others(self, *exclude: Persona) -> list[Persona]:
        return [p for p in self.people if p not in exclude] or self.people

    def next_term(self, project: Project, kind: str) -> Term:
        """Cycle through a project's jargon (or numbers) so a workspace covers many distinct terms."""
        key = f"{project.id}:{kind}"
        if not self.cursors.get(key):
            pool = list(project.jargon if kind == "jargon" else project.numbers)
            self.cursors[key] = [pool[i] for i in self.rng.permutation(len(pool))]
        return self.cursors[key].pop(0)

    def fresh(self, project: Project, templates: tuple, taken: set[str]) -> tuple:
        """A template (a task, or a decision's ``(question, options)``) and a jargon term whose
        canonical text is not in ``taken`` (what the meeting already assigned or decided), so no
        question about the meeting has two answers; the last draw when every one is taken."""
        for _ in range(2 * len(project.jargon)):
            template, j = self.pick(templates), self.next_term(project, "jargon")
            text = template[0] if isinstance(template, tuple) else template
            if canonical_text(self.lang.render(text, {"j": j})) not in taken:
                break
        return template, j

    @property
    def word_count(self) -> int:
        return sum(len(t.words) for t in self.turns)

    # --- acts ----------------------------------------------------------------------------------

    def cast(self, who: Persona | None = None, host: Persona | None = None) -> tuple[dict, dict]:
        """The roles of an act (host, who, alt when there is a third attendee, absent when someone
        is not in the meeting) and the slots naming them."""
        host = host or self.host
        who = who if who is not None and who != host else self.pick(self.others(host))
        roles: dict[str, Persona] = {"host": host, "who": who}
        third = [p for p in self.people if p not in (host, who)]
        if third:
            roles["alt"] = self.pick(third)
        absent = [p for p in self.state.people if p.id not in self.plan.attendees]
        if absent:
            roles["absent"] = self.pick(absent)
        slots: dict[str, object] = {"x": self.address(who), "h": self.address(host),
                                    "z": self.pick([p for p in self.state.people if p not in (who, host)]
                                                   or self.state.people)}
        if "alt" in roles:
            slots["y"] = self.address(roles["alt"])
        if "absent" in roles:
            slots["a"] = roles["absent"].first_name
        return roles, slots

    def perform(self, act: str, roles: dict[str, Persona], slots: dict[str, object]) -> tuple[Family, ActRecord] | None:
        """Realise ``act`` with the next fitting family; its part after :data:`LATER` waits for
        the next act. None when no family fits the roles and slots."""
        family = self.cycle.next(act, set(roles), set(slots))
        if family is None:
            return None
        record = ActRecord(id=f"{self.plan.id}-{len(self.state.acts) + 1:03d}", meeting=self.plan.id, act=act,
                           family=family.id, split=family.split)
        self.state.acts.append(record)
        lines = list(family.lines)
        later = lines.index(LATER) if LATER in lines else len(lines)
        self.speak(record, lines[:later], roles, slots)
        if later < len(lines):
            self.pending.append((len(self.state.acts), record, lines[later + 1:], roles, slots))
        return family, record

    def speak(self, record: ActRecord, lines: list[tuple[str, str]], roles: dict, slots: dict) -> None:
        for role, template in lines:
            speaker = roles[role.lstrip("~")]
            pieces = self.lang.render(template, slots)
            first = pieces[0]
            if first.term is None and first.canonical and first.canonical[0].islower():
                pieces[0] = replace(first, canonical=self.lang.capital(first.canonical))
            pieces = disfluent(pieces, speaker, self.rng, self.lang)
            self.turns.append(Turn(speaker.id, pieces, overlaps=role.startswith("~"), act=record.id,
                                   interruptible=record.act in INTERRUPTIBLE))
            record.lines.append({"speaker": speaker.id, "text": canonical_text(pieces)})
            if len(pieces) >= 8:
                self.backchannel(speaker)

    def returns(self, every: bool = False) -> None:
        """Say the later parts of acts another act has come after since (topic returns); with
        ``every``, all of them."""
        due = [p for p in self.pending if every or p[0] < len(self.state.acts)]
        self.pending = [p for p in self.pending if p not in due]
        for _, record, lines, roles, slots in due:
            self.speak(record, lines, roles, slots)

    def backchannel(self, floor: Persona) -> None:
        listeners = [p for p in self.people if p.id != floor.id]
        if listeners and self.rng.random() < 0.5:
            who = self.pick(listeners)
            self.turns.append(Turn(who.id, self.lang.plain(self.pick(who.backchannels)), backchannel=True))

    def simple(self, act: str) -> None:
        """An act with no fact: greeting, small talk, closing."""
        self.perform(act, *self.cast())

    def status(self, project: Project) -> None:
        owner = self.state.person(project.owner)
        roles, slots = self.cast(who=owner if owner in self.people else None)
        a, b = self.rng.choice(len(project.statuses), size=2, replace=False)
        first, second = project.statuses[a], project.statuses[b].replace("{j}", "{k}")
        slots.update(p=project.name, t=project.topic, j=self.next_term(project, "jargon"),
                     k=self.next_term(project, "jargon"), s=first, s2=second, S=self.lang.capital(first),
                     S2=self.lang.capital(second))
        self.perform("status", roles, slots)

    def assign(self, project: Project) -> None:
        """Open an action item: a request, a volunteer or an assignment to someone absent."""
        names, weights = zip(*ASSIGN_ACTS)
        act = str(self.rng.choice(names, p=np.array(weights) / sum(weights)))
        roles, slots = self.cast()
        opened = {a.description for a in self.state.action_items if a.opened_in == self.plan.id}
        task, j = self.fresh(project, project.tasks, opened)
        weekdays = self.lang.pools.weekdays
        d, d0 = (weekdays[i] for i in self.rng.choice(len(weekdays), size=2, replace=False))
        slots.update(task=task, job=self.lang.gerund(task), j=j, d=d, d0=d0)
        done = self.perform(act, roles, slots) or self.perform("request", roles, slots)
        if done is None:
            return
        family, record = done
        owner = roles[family.owner]
        item = ActionItem(id=f"a{len(self.state.action_items) + 1}", project=project.id, assignee=owner.id,
                          task=task, term=j.canonical, due=d,
                          description=canonical_text(self.lang.render(task, {"j": j})), opened_in=self.plan.id,
                          requested_by=roles["host"].id if family.asked else None)
        self.state.action_items.append(item)
        record.target = item.id
        if family.corrects == "due":
            record.correction = {"field": "due", "first": d0, "final": d}

    def follow_up(self) -> bool:
        """Check on the first open item of an earlier meeting whose owner is here; False: none."""
        open_items = [a for a in self.state.action_items if a.closed_in is None
                      and a.assignee in self.plan.attendees and a.opened_in != self.plan.id
                      and not any(r.act == "follow_up" and r.target == a.id and r.meeting == self.plan.id
                                  for r in self.state.acts)]
        if not open_items:
            return False
        item = open_items[0]
        who = self.state.person(item.assignee)
        asker = self.host if who != self.host else self.pick(self.others(who))
        roles, slots = self.cast(who=who, host=asker)
        project = self.state.project(item.project)
        status = self.pick(project.statuses).replace("{j}", "{k}")
        slots.update(task=item.task, job=self.lang.gerund(item.task), k=self.next_term(project, "jargon"), d=item.due,
                     j=next(t for t in project.jargon if t.canonical == item.term), S=self.lang.capital(status))
        done = self.perform("follow_up", roles, slots)
        if done is not None:
            done[1].target = item.id
            if done[0].outcome == "done":
                item.closed_in = self.plan.id
        return True

    def decision(self, project: Project) -> None:
        roles, slots = self.cast()
        decided = {d.question for d in self.state.decisions if d.meeting == self.plan.id}
        (question, options), j = self.fresh(project, project.decisions, decided)
        c = int(self.rng.integers(2))
        slots.update(q=question, c=options[c], c0=options[1 - c], j=j)
        done = self.perform("decision", roles, slots)
        if done is None:
            return
        family, record = done
        text = {k: canonical_text(self.lang.render(v, {"j": j})) for k, v in (("q", question), ("c", options[c]),
                                                                     ("c0", options[1 - c]))}
        decision = Decision(id=f"d{len(self.state.decisions) + 1}", project=project.id, question=text["q"],
                            choice=text["c"], meeting=self.plan.id)
        self.state.decisions.append(decision)
        record.target = decision.id
        if family.corrects == "choice":
            record.correction = {"field": "choice", "first": text["c0"], "final": text["c"]}

    def _number_slots(self, project: Project, slots: dict) -> Term:
        n = self.next_term(project, "number")
        n0 = slip(n, self.rng, self.lang)
        unit = f" {n.unit}" if n.unit else ""
        slots.update(n=n, n0=n0, N="{n}" + unit, N0="{n0}" + unit, nt=n.topic, Nt=self.lang.capital(n.topic))
        return n

    def number(self, project: Project) -> None:
        owner = self.state.person(project.owner)
        roles, slots = self.cast(who=owner if owner in self.people else None)
        n = self._number_slots(project, slots)
        done = self.perform("number", roles, slots)
        if done is not None:
            done[1].target = n.canonical
            if done[0].corrects == "number":
                done[1].correction = {"field": "number", "first": slots["n0"].canonical, "final": n.canonical}

    def question(self, project: Project) -> None:
        owner = self.state.person(project.owner)
        roles, slots = self.cast(who=owner if owner in self.people else None)
        n = self._number_slots(project, slots)
        slots["j"] = self.next_term(project, "jargon")
        done = self.perform("question", roles, slots)
        if done is not None and "N" in done[0].slots:
            done[1].target = n.canonical

    def aside(self, project: Project) -> None:
        """Something that sounds like an action item and is not one."""
        roles, slots = self.cast()
        slots.update(task=self.pick(project.tasks), j=self.next_term(project, "jargon"))
        others = [a for a in self.state.action_items if a.closed_in is None and a.opened_in != self.plan.id
                  and a.assignee not in self.plan.attendees]
        if others:
            item = others[0]
            owner_project = self.state.project(item.project)
            slots.update(o=self.state.person(item.assignee).first_name, otask=item.task.replace("{j}", "{ot}"),
                         ot=next(t for t in owner_project.jargon if t.canonical == item.term), od=item.due)
        self.perform("aside", roles, slots)


def write_meeting(state: LatentState, plan: MeetingPlan, minutes: float, rng: np.random.Generator,
                  cursors: dict[str, list[Term]], cycle: FamilyCycle, language: Language = ENGLISH) -> list[Turn]:
    """The turns of one meeting in ``language``, about ``minutes`` long (at the language's
    ``words_per_minute``); updates the state's items, decisions and acts."""
    w = _MeetingWriter(state, plan, rng, cursors, cycle, language)
    target = minutes * language.words_per_minute
    w.simple("greeting")
    if rng.random() < 0.5:
        w.simple("small_talk")
    for _ in range(MAX_FOLLOW_UPS):
        if w.word_count >= target / 2 or not w.follow_up():
            break
        w.returns()
    projects = [state.project(pid) for pid in plan.projects]
    moves = MOVES[plan.kind]
    step = 0
    while w.word_count < target:
        getattr(w, moves[step % len(moves)])(projects[step % len(projects)])
        w.returns()
        if rng.random() < 0.08:
            w.simple("small_talk")
        step += 1
    w.returns(every=True)
    w.simple("closing")
    return w.turns


def enrollment_text(person_index: int, sentences: int = 3, language: Language = ENGLISH) -> str:
    """The enrollment passage of the i-th person: sentences of the language's pool that no meeting
    uses (Harvard sentences in English)."""
    pool = language.pools.enrollment_sentences
    start = (person_index * sentences) % len(pool)
    return language.join([pool[(start + k) % len(pool)] for k in range(sentences)])
