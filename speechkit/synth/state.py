"""The latent state of a synthetic workspace, sampled from a seed.

Everything observable (meetings, audio, references, artifacts) is derived from this state,
so every metric has an exact reference. ``LatentState.to_dict()`` is written to
``truth/state.json`` in the workspace (not an artifact: systems must not read it).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field

import numpy as np

from speechkit.synth import pools
from speechkit.synth.spoken import date_canonical, date_spoken, number_words, paired_words

MEETING_KINDS = ("standup", "review", "1:1")


@dataclass(frozen=True)
class Term:
    """A workspace term: canonical written form, verbatim spoken form and TTS form (word for word).

    ``kind`` is ``jargon`` or ``number``; ``topic`` says what a number measures.
    """

    canonical: str
    spoken: str
    tts: str
    kind: str
    topic: str = ""
    unit: str = ""

    def __post_init__(self) -> None:
        if len(self.spoken.split()) != len(self.tts.split()):
            raise ValueError(f"term {self.canonical!r}: spoken and TTS forms differ in word count")


@dataclass(frozen=True)
class Persona:
    """A person: identity, role, speaking style and voice."""

    id: str
    name: str
    nickname: str | None
    role: str
    voice: str
    filler_rate: float
    repeat_rate: float
    backchannels: tuple[str, ...]

    @property
    def first_name(self) -> str:
        return self.name.split()[0]


@dataclass(frozen=True)
class Project:
    """A project with its owner, jargon, numbers and the phrase templates that talk about it."""

    id: str
    name: Term
    topic: str
    owner: str
    jargon: tuple[Term, ...]
    numbers: tuple[Term, ...]
    tasks: tuple[str, ...]
    statuses: tuple[str, ...]
    decisions: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass
class ActionItem:
    """An action item: opened in one meeting, possibly closed in a later one.

    ``task`` is the template (``{j}`` stands for ``term``); ``description`` is it filled in.
    """

    id: str
    project: str
    assignee: str
    task: str
    term: str
    description: str
    due: str
    opened_in: str
    closed_in: str | None = None


@dataclass(frozen=True)
class Decision:
    """A decision taken in a meeting."""

    id: str
    project: str
    question: str
    choice: str
    meeting: str


@dataclass(frozen=True)
class MeetingPlan:
    """A scheduled meeting: who attends, what it covers, how hard its audio is."""

    id: str
    date: dt.datetime
    kind: str
    title: str
    host: str
    attendees: tuple[str, ...]
    projects: tuple[str, ...]
    hard: bool
    seed: int


@dataclass
class LatentState:
    """The whole latent state; action items and decisions are filled in as meetings are written."""

    seed: int
    org: str
    people: tuple[Persona, ...]
    projects: tuple[Project, ...]
    meetings: tuple[MeetingPlan, ...]
    action_items: list[ActionItem] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)

    def person(self, pid: str) -> Persona:
        return next(p for p in self.people if p.id == pid)

    def project(self, pid: str) -> Project:
        return next(p for p in self.projects if p.id == pid)

    def terms(self) -> list[Term]:
        """Every scored term (project names and jargon, numbers), in a fixed order."""
        return [t for p in self.projects for t in (p.name, *p.jargon, *p.numbers)]

    def to_dict(self) -> dict:
        data = asdict(self)
        for m in data["meetings"]:
            m["date"] = m["date"].isoformat(timespec="minutes")
        return data


def _number_term(rng: np.random.Generator, topic: str, kind: str, unit: str, start: dt.date) -> Term:
    """Sample a number of the given kind; canonical as documents write it, spoken as people say it."""
    if kind == "date":
        day = start + dt.timedelta(days=int(rng.integers(20, 120)))
        return Term(date_canonical(day), date_spoken(day), date_spoken(day), "number", topic)
    if kind == "count":
        n = int(rng.choice([250, 400, 600, 1200, 1500, 2500, 3000, 4800]))
        words = paired_words(n) if n % 100 == 0 and n < 10000 and n // 100 % 10 else number_words(n)
        return Term(f"{n:,}", words, words, "number", topic, unit)
    if kind == "percent":
        whole, tenth = int(rng.integers(0, 10)), int(rng.integers(1, 10))
        words = f"{number_words(whole)} point {number_words(tenth)} percent"
        return Term(f"{whole}.{tenth}%", words, words, "number", topic)
    if kind == "ticket":
        n = int(rng.integers(1100, 9900))
        words = paired_words(n)
        return Term(str(n), words, words, "number", topic)
    if kind == "money":
        n = int(rng.choice([18, 24, 36, 45, 60, 75, 120, 250])) * 1000
        words = number_words(n) + " dollars"
        return Term(f"${n:,}", words, words, "number", topic)
    if kind == "ms":
        n = int(rng.choice([80, 120, 150, 180, 250, 300]))
        words = paired_words(n) if n >= 100 and n % 100 else number_words(n)
        return Term(str(n), words, words, "number", topic, unit)
    if kind in ("seconds", "minutes", "megabytes"):
        n = int(rng.choice([15, 30, 45, 90, 120] if kind != "megabytes" else [48, 64, 85, 110]))
        words = number_words(n)
        return Term(str(n), words, words, "number", topic, unit)
    raise ValueError(f"unknown number kind {kind!r}")


def _people(rng: np.random.Generator, count: int, voices: list[str]) -> tuple[Persona, ...]:
    firsts = rng.permutation(len(pools.FIRST_NAMES))[:count]
    lasts = rng.permutation(len(pools.SURNAMES))[:count]
    roles = rng.permutation(len(pools.ROLES))
    voice_order = rng.permutation(count)  # the first `count` voices, shuffled over people
    people = []
    for i in range(count):
        first, nick = pools.FIRST_NAMES[firsts[i]]
        bcs = rng.choice(len(pools.BACKCHANNELS), size=3, replace=False)
        people.append(Persona(
            id=f"p{i + 1}", name=f"{first} {pools.SURNAMES[lasts[i]]}", nickname=nick,
            role=pools.ROLES[roles[i % len(roles)]], voice=voices[voice_order[i]],
            filler_rate=round(float(rng.uniform(0.02, 0.08)), 3), repeat_rate=round(float(rng.uniform(0.0, 0.015)), 3),
            backchannels=tuple(pools.BACKCHANNELS[j] for j in sorted(bcs))))
    return tuple(people)


def _projects(rng: np.random.Generator, people: tuple[Persona, ...], count: int, start: dt.date) -> tuple[Project, ...]:
    chosen = rng.choice(len(pools.PROJECTS), size=count, replace=False)
    owners = rng.permutation(len(people))
    out = []
    for i, t in enumerate(chosen):
        tpl = pools.PROJECTS[int(t)]
        name = Term(*tpl["name"], kind="jargon")
        jargon = tuple(Term(c, s, say, "jargon") for c, s, say in tpl["jargon"])
        numbers = tuple(_number_term(rng, topic, kind, unit, start) for topic, kind, unit in tpl["numbers"])
        out.append(Project(id=f"proj{i + 1}", name=name, topic=tpl["topic"], owner=people[owners[i % len(people)]].id,
                           jargon=jargon, numbers=numbers, tasks=tpl["tasks"], statuses=tpl["statuses"],
                           decisions=tpl["decisions"]))
    return tuple(out)


def _meetings(rng: np.random.Generator, seed: int, people: tuple[Persona, ...], projects: tuple[Project, ...],
              count: int, start: dt.date, difficulty: str) -> tuple[MeetingPlan, ...]:
    """Plan meetings on consecutive working days; every person attends at least two (when count allows)."""
    ids = [p.id for p in people]
    kinds = ["standup" if i % 3 == 0 else ("1:1" if i % 3 == 2 else "review") for i in range(count)]
    rosters: list[list[str]] = []
    for kind in kinds:
        size = 2 if kind == "1:1" else min(len(ids), int(rng.integers(3, 6)))
        rosters.append(sorted(rng.choice(ids, size=size, replace=False).tolist(), key=ids.index))
    # Top up: anyone in fewer than two meetings joins the smallest non-1:1 meetings.
    for pid in ids:
        while sum(pid in r for r in rosters) < min(2, count):
            options = [i for i, r in enumerate(rosters) if pid not in r and (kinds[i] != "1:1" or count < 3)]
            if not options:
                break
            target = min(options, key=lambda i: (len(rosters[i]), i))
            rosters[target] = sorted(rosters[target] + [pid], key=ids.index)
    hard_flags = {"clean": [False] * count, "hard": [True] * count,
                  "mixed": [i % 3 == 1 for i in range(count)]}[difficulty]
    plans = []
    day = start
    for i, (kind, roster) in enumerate(zip(kinds, rosters)):
        while day.weekday() >= 5:
            day += dt.timedelta(days=1)
        owners = [p for p in projects if p.owner in roster] or list(projects)
        focus = [owners[int(rng.integers(len(owners)))].id]
        if kind != "1:1" and len(projects) > 1:
            other = [p.id for p in projects if p.id != focus[0]]
            focus.append(other[int(rng.integers(len(other)))])
        host = roster[int(rng.integers(len(roster)))]
        names = [people[ids.index(r)].first_name for r in roster]
        title = {"standup": "Team stand-up",
                 "review": f"{projects[[p.id for p in projects].index(focus[0])].name.canonical} review",
                 "1:1": f"{names[0]} / {names[1]} 1:1"}[kind]
        when = dt.datetime.combine(day, dt.time(9 + int(rng.integers(0, 7)), int(rng.choice([0, 30]))))
        plans.append(MeetingPlan(id=f"m{i + 1:02d}", date=when, kind=kind, title=title, host=host,
                                 attendees=tuple(roster), projects=tuple(focus), hard=hard_flags[i],
                                 seed=int(np.random.SeedSequence([seed, i]).generate_state(1)[0])))
        day += dt.timedelta(days=1 + int(rng.integers(0, 2)))
    return tuple(plans)


def build_state(seed: int, people: int, meetings: int, voices: list[str], difficulty: str = "mixed",
                projects: int = 3) -> LatentState:
    """Sample a latent state: an organisation, ``people`` personas, projects and a meeting calendar."""
    if not 2 <= people <= len(voices):
        raise ValueError(f"people must be between 2 and {len(voices)} (one distinct voice each), got {people}")
    if meetings < 1:
        raise ValueError(f"meetings must be at least 1, got {meetings}")
    if difficulty not in ("clean", "mixed", "hard"):
        raise ValueError(f"difficulty must be clean, mixed or hard, got {difficulty!r}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xC0FFEE]))
    start = dt.date(2026, 3, 2) + dt.timedelta(days=int(rng.integers(0, 60)))
    org = pools.ORGS[int(rng.integers(len(pools.ORGS)))]
    persons = _people(rng, people, voices)
    projs = _projects(rng, persons, min(projects, len(pools.PROJECTS)), start)
    plans = _meetings(rng, seed, persons, projs, meetings, start, difficulty)
    return LatentState(seed=seed, org=org, people=persons, projects=projs, meetings=plans)
