"""The latent state of a synthetic workspace, sampled from a seed.

Everything observable (meetings, audio, references, artifacts) is derived from this state,
so every metric has an exact reference. ``LatentState.to_dict()`` is written to
``truth/state.json`` in the workspace (not an artifact: systems must not read it).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field

import numpy as np

from speechkit.synth.acts import ActRecord
from speechkit.synth.spoken import date_canonical, date_spoken, number_words, paired_words

MEETING_KINDS = ("standup", "review", "1:1")


@dataclass(frozen=True)
class Term:
    """A workspace term: canonical written form, verbatim spoken form and TTS form (word for word).

    ``kind`` is ``jargon`` or ``number``; ``topic`` says what a number measures, ``measure`` what
    kind of number it is (``count``, ``date``, ``percent``...; see :func:`number_term`).
    """

    canonical: str
    spoken: str
    tts: str
    kind: str
    topic: str = ""
    unit: str = ""
    measure: str = ""

    def __post_init__(self) -> None:
        if len(self.spoken.split()) != len(self.tts.split()):
            raise ValueError(f"term {self.canonical!r}: spoken and TTS forms differ in word count")


@dataclass(frozen=True)
class Persona:
    """A person: identity, role, speaking style and voice.

    ``filler_rate``: um/uh per word; ``repeat_rate``: repeated words per word; ``restart_rate``:
    the share of turns in which the person restarts a phrase (:mod:`speechkit.synth.disfluency`).
    """

    id: str
    name: str
    nickname: str | None
    role: str
    voice: str
    filler_rate: float
    repeat_rate: float
    backchannels: tuple[str, ...]
    restart_rate: float = 0.0

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

    ``task`` is the template (``{j}`` stands for ``term``); ``description`` is it filled in;
    ``due`` the final due day (after any correction); ``requested_by`` the person who asked for it
    (None: its owner took it on unasked).
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
    requested_by: str | None = None


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
    """The whole latent state; action items, decisions and the acts that realised them are filled
    in as meetings are written (``phrasing``: the families the meetings were written from;
    ``language`` and ``languages``: what they are written in, :mod:`speechkit.synth.language`)."""

    seed: int
    org: str
    people: tuple[Persona, ...]
    projects: tuple[Project, ...]
    meetings: tuple[MeetingPlan, ...]
    phrasing: str = "all"
    action_items: list[ActionItem] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    acts: list[ActRecord] = field(default_factory=list)
    language: str = "en"
    languages: tuple[str, ...] = ("en",)

    def person(self, pid: str) -> Persona:
        return next(p for p in self.people if p.id == pid)

    def project(self, pid: str) -> Project:
        return next(p for p in self.projects if p.id == pid)

    def terms(self) -> list[Term]:
        """Every scored term (project names and jargon, numbers), in a fixed order."""
        return [t for p in self.projects for t in (p.name, *p.jargon, *p.numbers)]

    def to_dict(self) -> dict:
        data = asdict(self)
        if self.language == "en":  # an English state is written as it was before languages existed
            del data["language"], data["languages"]
        for m in data["meetings"]:
            m["date"] = m["date"].isoformat(timespec="minutes")
        return data


def _number_value(rng: np.random.Generator, measure: str, start: dt.date) -> int | dt.date:
    """Sample a value of the given measure."""
    if measure == "date":
        return start + dt.timedelta(days=int(rng.integers(20, 120)))
    choices = {"count": [250, 400, 600, 1200, 1500, 2500, 3000, 4800],
               "money": [x * 1000 for x in (18, 24, 36, 45, 60, 75, 120, 250)],
               "ms": [80, 120, 150, 180, 250, 300], "seconds": [15, 30, 45, 90, 120],
               "minutes": [15, 30, 45, 90, 120], "megabytes": [48, 64, 85, 110]}
    if measure == "percent":
        return int(rng.integers(0, 10)) * 10 + int(rng.integers(1, 10))  # tenths of a percent
    if measure == "ticket":
        return int(rng.integers(1100, 9900))
    if measure not in choices:
        raise ValueError(f"unknown number kind {measure!r}")
    return int(rng.choice(choices[measure]))


def number_term(measure: str, value: int | dt.date, topic: str, unit: str) -> Term:
    """A number term: canonical as documents write it, spoken as people say it.

    ``value`` is a date for ``date``, tenths of a percent for ``percent``, else the number.
    """
    if measure == "date":
        return Term(date_canonical(value), date_spoken(value), date_spoken(value), "number", topic, "", measure)
    n = int(value)
    if measure == "count":
        words = paired_words(n) if n % 100 == 0 and n < 10000 and n // 100 % 10 else number_words(n)
        return Term(f"{n:,}", words, words, "number", topic, unit, measure)
    if measure == "percent":
        words = f"{number_words(n // 10)} point {number_words(n % 10)} percent"
        return Term(f"{n // 10}.{n % 10}%", words, words, "number", topic, "", measure)
    if measure == "ticket":
        return Term(str(n), paired_words(n), paired_words(n), "number", topic, "", measure)
    if measure == "money":
        words = number_words(n) + " dollars"
        return Term(f"${n:,}", words, words, "number", topic, "", measure)
    if measure == "ms":
        words = paired_words(n) if n >= 100 and n % 100 else number_words(n)
        return Term(str(n), words, words, "number", topic, unit, measure)
    return Term(str(n), number_words(n), number_words(n), "number", topic, unit, measure)


_SLIPS = {"count": (100, 200, 300), "percent": (1, 2, 3), "ticket": (10, 20, 30), "money": (1000, 2000, 5000),
          "ms": (10, 20, 30), "seconds": (5, 10, 15), "minutes": (5, 10, 15), "megabytes": (2, 4, 6)}


def slip(term: Term, rng: np.random.Generator, language) -> Term:
    """A wrong value of the same measure as ``term``, near it (what someone says first and then
    corrects), said in ``language`` (:class:`speechkit.synth.language.Language`) like a term but
    not one of the workspace (its kind is ``slip``)."""
    value = language.value_of(term)
    if term.measure == "date":
        wrong: int | dt.date = value + dt.timedelta(days=int(rng.choice([-2, -1, 1, 2])))
    else:
        step = int(rng.choice(_SLIPS[term.measure]))
        wrong = value + step if rng.random() < 0.5 or value - step <= 0 else value - step
    made = language.number_term(term.measure, wrong, term.topic, term.unit)
    return Term(made.canonical, made.spoken, made.tts, "slip", made.topic, made.unit, made.measure)


def _people(rng: np.random.Generator, count: int, voices: list[str], language) -> tuple[Persona, ...]:
    pools = language.pools
    firsts = rng.permutation(len(pools.first_names))[:count]
    lasts = rng.permutation(len(pools.surnames))[:count]
    roles = rng.permutation(len(pools.roles))
    voice_order = rng.permutation(count)  # the first `count` voices, shuffled over people
    people = []
    for i in range(count):
        first, nick = pools.first_names[firsts[i]]
        surname = pools.surnames[lasts[i]]
        bcs = rng.choice(len(pools.backchannels), size=3, replace=False)
        people.append(Persona(
            id=f"p{i + 1}", name=language.full_name(first, surname), nickname=language.nickname(nick, surname),
            role=pools.roles[roles[i % len(roles)]], voice=voices[voice_order[i]],
            filler_rate=round(float(rng.uniform(0.02, 0.08)), 3),
            repeat_rate=round(float(rng.uniform(0.0, 0.015)), 3),
            backchannels=tuple(pools.backchannels[j] for j in sorted(bcs)),
            restart_rate=round(float(rng.uniform(0.05, 0.2)), 3)))
    return tuple(people)


def _projects(rng: np.random.Generator, people: tuple[Persona, ...], count: int, start: dt.date,
              language) -> tuple[Project, ...]:
    templates = language.pools.projects
    chosen = rng.choice(len(templates), size=count, replace=False)
    owners = rng.permutation(len(people))
    out = []
    for i, t in enumerate(chosen):
        tpl = templates[int(t)]
        name = Term(*tpl["name"], kind="jargon")
        jargon = tuple(Term(c, s, say, "jargon") for c, s, say in tpl["jargon"])
        numbers = tuple(language.number_term(kind, _number_value(rng, kind, start), topic, unit)
                        for topic, kind, unit in tpl["numbers"])
        out.append(Project(id=f"proj{i + 1}", name=name, topic=tpl["topic"], owner=people[owners[i % len(people)]].id,
                           jargon=jargon, numbers=numbers, tasks=tpl["tasks"], statuses=tpl["statuses"],
                           decisions=tpl["decisions"]))
    return tuple(out)


def _meetings(rng: np.random.Generator, seed: int, people: tuple[Persona, ...], projects: tuple[Project, ...],
              count: int, start: dt.date, difficulty: str, language) -> tuple[MeetingPlan, ...]:
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
        title = language.meeting_title(kind, projects[[p.id for p in projects].index(focus[0])].name.canonical, names)
        when = dt.datetime.combine(day, dt.time(9 + int(rng.integers(0, 7)), int(rng.choice([0, 30]))))
        plans.append(MeetingPlan(id=f"m{i + 1:02d}", date=when, kind=kind, title=title, host=host,
                                 attendees=tuple(roster), projects=tuple(focus), hard=hard_flags[i],
                                 seed=int(np.random.SeedSequence([seed, i]).generate_state(1)[0])))
        day += dt.timedelta(days=1 + int(rng.integers(0, 2)))
    return tuple(plans)


def build_state(seed: int, people: int, meetings: int, voices: list[str], difficulty: str = "mixed",
                projects: int = 3, *, language) -> LatentState:
    """Sample a latent state: an organisation, ``people`` personas, projects and a meeting calendar,
    from the pools of ``language`` (:class:`speechkit.synth.language.Language`)."""
    if not 2 <= people <= len(voices):
        raise ValueError(f"people must be between 2 and {len(voices)} (one distinct voice each), got {people}")
    if meetings < 1:
        raise ValueError(f"meetings must be at least 1, got {meetings}")
    if difficulty not in ("clean", "mixed", "hard"):
        raise ValueError(f"difficulty must be clean, mixed or hard, got {difficulty!r}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xC0FFEE]))
    start = dt.date(2026, 3, 2) + dt.timedelta(days=int(rng.integers(0, 60)))
    org = language.pools.orgs[int(rng.integers(len(language.pools.orgs)))]
    persons = _people(rng, people, voices, language)
    projs = _projects(rng, persons, min(projects, len(language.pools.projects)), start, language)
    plans = _meetings(rng, seed, persons, projs, meetings, start, difficulty, language)
    return LatentState(seed=seed, org=org, people=persons, projects=projs, meetings=plans, language=language.code,
                       languages=language.languages)
