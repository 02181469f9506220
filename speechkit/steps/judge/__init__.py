"""LLM-judged scores of a run's meeting notes (``speechkit judge RUN``), beside the exact ones.

The judge follows the judges of the paper the notes scores come from, on two kinds of request:

- **summaries**: one request per meeting asks a language model for five integer scores from 1 to
  5 (:data:`DIMENSIONS`: faithfulness, coherence, recall, precision, conciseness) of the run's
  summary, reference-grounded: the prompt holds the workspace roster (names, nicknames, roles),
  the gold summary (``meetings/<id>/notes.json`` of the workspace) and the system summary. The
  prompt says that length is not judged (conciseness judges filler and repetition, not length
  against the reference), that a name written more fully than the reference writes it,
  consistent with the roster, is faithful, and that who said what is not judged.
- **action items** (:mod:`speechkit.steps.judge.items`): one request per run action item matched
  to a gold one asks for its description quality, 1-5 against a rubric with anchors (the gold
  item and the reference transcript around it shown, the assignee shown on neither side).

Answers are asked for with a JSON schema (one ``enum`` 1-5 per dimension) and parsed; the
requests go through :class:`~speechkit.llm.client.LLMClient`, so the endpoint is the option's,
else the environment's, else the local server on the packaged model, and answers are kept in the
response cache (keyed by the content of the request: a second judgement of the same notes sends
nothing).

Before the meetings, the judge is checked on controls whose scores are known (:meth:`Judge.check`):
the first judged meeting's reference summary itself (faithful and complete) and an unrelated
summary (neither); the first matched gold action item against itself and against a wrong item. A
judge that does not score the right ones high and the wrong ones low fails the check; judged.json,
the table, the report and scores.json say so beside its figures (the packaged 135M model answers
1, 2, 3, 4, 5 in the order of the dimensions whatever it is shown).

:func:`judge_run` writes ``RUN/judged.json`` (docs/scores-schema.md): each meeting's summary
scores and judged items or why it has none, per dimension the mean over the judged meetings with
a 95% bootstrap CI over meetings (:func:`speechkit.metrics.bootstrap.bootstrap`: one ratio
``score / 1`` per meeting; description quality: the meeting's item score sum over its judged
items), the judge's endpoint and the model the server reported, and the request counts. Failures
follow the run's policy (``failures`` of :class:`~speechkit.llm.client.ClientOptions`): with
``fail``, an unreachable endpoint stops before any request and failed requests (answers that are
not scores included) above ``max_failed_share`` stop before anything is written; with ``allow``
the meetings or items whose request failed are not applicable, and the share is stated.
scores.json takes the judged metrics from judged.json (:mod:`speechkit.steps.judge.metrics`),
beside, never instead of, the exact notes scores.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from speechkit.core.options import bounded
from speechkit.core.section import Section
from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.io.atomic import write_json
from speechkit.io.markdown import cell, code
from speechkit.io.notes import read_gold_notes, run_notes
from speechkit.io.references import meeting_reference
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_view import RunView
from speechkit.llm import session
from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, LLMUnavailable, NoAnswer, RequestFailed
from speechkit.llm.session import EndpointUsage
from speechkit.metrics.bootstrap import RESAMPLES, SEED, Ratio, bootstrap
from speechkit.notes import ActionItem, GoldNotes, Notes
from speechkit.stages.summarize.metrics import NO_GOLD, NO_RUN_NOTES
from speechkit.steps.judge.items import (
    ITEM_PROMPT,
    RUBRIC,
    WRONG_ITEM,
    ItemToJudge,
    first_item,
    item_messages,
    items_reason,
    items_to_judge,
)
from speechkit.steps.judge.metrics import DESCRIPTION, DESCRIPTION_ALL, DIMENSIONS, SCALE, JudgedFamily
from speechkit.text_similarity import TextSimilarity, text_similarity
from speechkit.workspace import Person, Workspace

log = logging.getLogger(__name__)

SCHEMA = "speechkit.judged/3"
BACKENDS = {"llm": "speechkit.steps.judge:Judge"}
DEFAULT_BACKEND = "llm"
#: The prompt's name in judged.json; raised when its wording changes.
PROMPT = "speechkit-notes-judge/1"
#: The dimensions the judge's check reads (:meth:`Judge.check`).
CHECKED = ("faithfulness", "recall")
#: The check's summary of another meeting: no faithfulness, no recall.
UNRELATED = ("The team chose a caterer for the summer party, agreed to water the office plants on Fridays "
             "and moved the book club to the small meeting room.")

SYSTEM_PROMPT = ("You judge the summaries of workplace meetings against a reference summary. You answer "
                 "only with the JSON object asked for.")

USER_PROMPT = """ROSTER (the people of the workspace: name, nicknames, role):
{roster}

REFERENCE SUMMARY (what the meeting established):
{gold}

SYSTEM SUMMARY (to judge):
{system}

Score the SYSTEM SUMMARY against the REFERENCE SUMMARY on each dimension, an integer from 1 (worst) to 5 (best):
- "faithfulness": every statement of the system summary is supported by the reference; 5: all are, 3: some \
details are unsupported or distorted, 1: mostly unsupported or contradicting it.
- "coherence": the system summary reads as one well-ordered, logical account; 5: clear throughout, 3: partly \
disjointed, 1: a list of unrelated fragments.
- "recall": the system summary states the reference's content (decisions, action items with their people, \
numbers); 5: all of it, 3: about half, 1: almost none.
- "precision": what the system summary states is meeting content the reference also holds, not chatter or \
asides; 5: all of it, 3: about half, 1: almost none.
- "conciseness": the system summary says what it says without filler or repetition; 5: none, 3: some, 1: mostly.
Rules:
- Do not judge length: a summary longer or shorter than the reference is neither better nor worse on any \
dimension, and the reference's length is not a target; conciseness judges filler and repetition only.
- A name written more fully than the reference writes it, consistent with the roster (a first name or a \
nickname as the person's full name), is faithful, not a fabrication.
- Do not judge who said what: speaker labels are opaque tags.
Answer with a JSON object with the keys {keys}."""


@dataclass(frozen=True)
class JudgeOptions(ClientOptions):
    """Options of the notes judge: the LLM client's (:class:`~speechkit.llm.client.ClientOptions`:
    endpoint, model, local server, deadline, retries, failure policy) and these.

    ``max_tokens`` [1, 1000000]: as the client's, 200 by default here (the answer is five small
    integers). ``max_summary_chars`` [100, 1000000]: the gold and the system summary are each cut
    after this many characters (marked ``[cut]``), so that a request fits the model's context.
    ``similarity``: how the run's action items are matched to the gold ones before their
    descriptions are judged (``auto``, ``embedding``, ``lexical``: as scoring's ``similarity``,
    :class:`~speechkit.metrics.options.ScoreOptions`, ``auto`` in both by default, so that the
    judged items are those whose assignee accuracy scores.json counts). ``excerpt_segments``
    [0, 1000]: the reference segments shown on either side of the one where a gold item was
    agreed; ``max_excerpt_chars`` [100, 1000000]: the excerpt is cut after this many characters.
    """

    max_tokens: int | None = bounded(200, ge=1, le=1_000_000)
    max_summary_chars: int = bounded(4000, ge=100, le=1_000_000)
    similarity: Literal["auto", "embedding", "lexical"] = "auto"
    excerpt_segments: int = bounded(2, ge=0, le=1000)
    max_excerpt_chars: int = bounded(1500, ge=100, le=1_000_000)


def judge_schema(dimensions: Sequence[str] = DIMENSIONS) -> dict[str, Any]:
    """The JSON schema of the judge's answer: one integer 1-5 per dimension of ``dimensions``, nothing else."""
    return {"type": "object", "properties": {d: {"type": "integer", "enum": list(SCALE)} for d in dimensions},
            "required": list(dimensions), "additionalProperties": False}


def roster_text(people: Sequence[Person]) -> str:
    """The roster as lines ``- Name (nicknames; role)``."""
    lines = []
    for p in people:
        extra = "; ".join(x for x in (", ".join(p.nicknames), p.role or "") if x)
        lines.append(f"- {p.name}" + (f" ({extra})" if extra else ""))
    return "\n".join(lines) or "(none)"


def _cut(text: str, most: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= most else text[:most].rstrip() + " [cut]"


def judge_messages(gold: str, system: str, people: Sequence[Person], max_chars: int) -> list[dict[str, str]]:
    """The request's messages judging the system summary ``system`` against the gold summary ``gold``."""
    user = USER_PROMPT.format(roster=roster_text(people), gold=_cut(gold, max_chars) or "(empty)",
                              system=_cut(system, max_chars), keys=", ".join(f'"{d}"' for d in DIMENSIONS))
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def scores_of(answer: Mapping[str, Any], dimensions: Sequence[str] = DIMENSIONS) -> dict[str, int]:
    """The scores of ``dimensions`` an answer holds; :class:`BadAnswer` (``wrong-shape``) unless each
    is an integer 1-5."""
    scores = {}
    for dim in dimensions:
        value = answer.get(dim)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value not in SCALE:
            raise BadAnswer("wrong-shape", f"{dim}: expected an integer from 1 to 5, got {value!r}"[:200])
        scores[dim] = value
    return scores


def _description_of(answer: Mapping[str, Any]) -> int:
    return scores_of(answer, (DESCRIPTION,))[DESCRIPTION]


@dataclass(frozen=True)
class MeetingToJudge:
    """One meeting of a run: the run's notes and the gold notes (None where there are none), the
    run's action items matched to gold ones (``items``) or why there are none (``items_reason``)."""

    id: str
    notes: Notes | None
    gold: GoldNotes | None
    items: tuple[ItemToJudge, ...] = ()
    items_reason: str | None = None

    def reason(self) -> str | None:
        """Why the meeting's summary cannot be judged (None: it can)."""
        if self.gold is None:
            return NO_GOLD
        if not self.gold.summary:
            return "the gold notes of this meeting have no summary"
        if self.notes is None:
            return NO_RUN_NOTES
        if not self.notes.summary:
            return "the run's notes of this meeting have no summary"
        return None


def meetings_to_judge(run: RunFolder, ws: Workspace, options: JudgeOptions = JudgeOptions(),
                      ) -> list[MeetingToJudge]:
    """The run's notes and the gold notes of every meeting of ``ws`` the run processed, with the run's
    action items matched to the gold ones (``options``: the similarity and the excerpts)."""
    names = {p.id: p.name for p in ws.people}
    similarity: TextSimilarity | None = None
    out = []
    for meeting in ws.scored_meetings:
        notes = run_notes(run.notes(meeting.id), meeting.id)
        gold = read_gold_notes(meeting.notes, meeting.id, names) if meeting.notes else None
        reason, items = items_reason(notes, gold), ()
        if notes is not None and notes.failed is None and notes.action_items:
            similarity = similarity or text_similarity(options.similarity)
            items = items_to_judge(notes, gold if reason is None else None, meeting_reference(meeting), similarity,
                                   options.excerpt_segments, options.max_excerpt_chars)
            if reason is None and not any(i.matched for i in items):
                reason = "no action item of the run's notes matched a gold one"
        out.append(MeetingToJudge(meeting.id, notes, gold, items, reason))
    return out


class Judge:
    """The ``llm`` backend of the judge: scores summaries and action items through one LLM client
    (see the module docstring)."""

    Options = JudgeOptions

    def __init__(self, options: JudgeOptions) -> None:
        self.options = options
        self.client = LLMClient(options)

    def probe(self) -> str:
        """Check the endpoint before any request (see :meth:`LLMClient.probe`); what was found.
        Raises :class:`LLMUnavailable` unless failures are allowed."""
        try:
            found = self.client.probe()
        except LLMUnavailable as e:
            if self.options.failures == "fail":
                raise
            log.warning("judge: %s (going on: failures are allowed)", e)
            found = f"failed: {e}"
        session.current().usage(self.client.base_url, self.client.model).probe = found
        return found

    def scores(self, gold: str, system: str, people: Sequence[Person]) -> dict[str, int]:
        """The judge's scores of ``system`` against ``gold``; raises :class:`RequestFailed` or
        :class:`BadAnswer` (an answer that is not scores counts as a failed request too)."""
        messages = judge_messages(gold, system, people, self.options.max_summary_chars)
        return self.client.complete(messages, judge_schema(), name="judgement", read=scores_of)

    def description(self, item: ItemToJudge, system: ActionItem | None = None) -> int:
        """The judge's description quality of ``system`` (None: the item's run item) against the
        item's gold one, shown the item's excerpt; raises as :meth:`scores`."""
        messages = item_messages(item.gold, system or item.predicted, item.excerpt, DESCRIPTION)
        return self.client.complete(messages, judge_schema((DESCRIPTION,)), name="item judgement",
                                    read=_description_of)

    def check(self, meeting: MeetingToJudge | None, item: ItemToJudge | None,
              people: Sequence[Person]) -> dict[str, Any]:
        """judged.json's ``check``: the judge's scores of controls whose scores are known. With a
        ``meeting`` whose summary is judged, its reference summary itself and :data:`UNRELATED`:
        passed on them when it gives the reference at least 4 and the unrelated summary at most 2
        on each of :data:`CHECKED`. With a matched ``item``, its gold item itself (``item_right``)
        and :data:`~speechkit.steps.judge.items.WRONG_ITEM` (``item_wrong``): passed on them when
        it gives the first at least 4 and the second at most 2. ``passed``: on every control
        made; None when a control got no scores."""
        out: dict[str, Any] = {"passed": None, "reference": None, "unrelated": None, "item_right": None,
                               "item_wrong": None, "reason": None}
        controls = ([("reference", lambda: self.scores(meeting.gold.summary, meeting.gold.summary, people)),
                     ("unrelated", lambda: self.scores(meeting.gold.summary, UNRELATED, people))] if meeting else [])
        controls += ([("item_right", lambda: self.description(item, item.gold)),
                      ("item_wrong", lambda: self.description(item, WRONG_ITEM))] if item else [])
        for name, ask in controls:
            try:
                out[name] = ask()
            except NoAnswer as e:
                out["reason"] = f"the {name.replace('_', ' ')} control got no scores ({e.reason}): {e.detail}"[:300]
                return out
        failed = []
        if meeting and not all(out["reference"][d] >= 4 and out["unrelated"][d] <= 2 for d in CHECKED):
            failed.append(f"the reference itself {_listed(out['reference'])} and an unrelated summary "
                          f"{_listed(out['unrelated'])}")
        if item and not (out["item_right"] >= 4 and out["item_wrong"] <= 2):
            failed.append(f"a gold action item itself {out['item_right']} and a wrong item {out['item_wrong']} on "
                          "description quality")
        out["passed"] = not failed
        if failed:
            out["reason"] = f"the judge gave {'; '.join(failed)}: its scores say little"
        return out

    def endpoint(self) -> dict[str, Any]:
        """judged.json's ``judge``: the endpoint (``local server`` for the local one, whose port
        changes from run to run), the model requests named and where each came from (``option``,
        ``environment``, ``default``)."""
        e = self.client.endpoint
        return {"base_url": e.base_url or "local server", "model": self.client.model,
                "local_model": e.model if e.local else None,
                "sources": {k: "option" if v == "recipe" else v for k, v in e.sources.items()},
                "failures_policy": self.options.failures, "prompt": PROMPT}


def _listed(scores: Mapping[str, int]) -> str:
    return ", ".join(f"{d} {scores[d]}" for d in CHECKED)


def judged_model(reported: Sequence[str], requested: str) -> str:
    """The judge model to print: the model(s) the server reported, else the name requests gave."""
    return ", ".join(sorted(reported)) if reported else f"{requested} (as requested; no answer reported a model)"


def judge_run(run: RunFolder, ws: Workspace, judge: Judge, meetings: Sequence[MeetingToJudge],
              resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Judge the notes of ``meetings`` (:func:`meetings_to_judge`) of the level run folder ``run``
    (of ``ws``) and write its ``judged.json``, counting the requests in the current LLM session (a
    step's own, :mod:`speechkit.postrun`); ``judge``'s endpoint was probed before
    (:meth:`JudgeStep.check`) where there is something to judge.

    With nothing to judge (no gold notes, no notes) no endpoint is contacted and judged.json says
    why. Raises :class:`LLMUnavailable` under the ``fail`` policy as the module docstring says,
    before judged.json is written.
    """
    verdicts = Verdicts({}, {m.id: m.reason() for m in meetings if m.reason()}, Counter())
    _ask(judge, meetings, ws.people, verdicts)
    o = judge.options
    judged = {"schema": SCHEMA, "source": {"workspace": str(ws.root)}, "judge": judge.endpoint(),
              "dimensions": list(DIMENSIONS), "item_dimension": DESCRIPTION, "scale": [SCALE[0], SCALE[-1]],
              "item_settings": {"prompt": ITEM_PROMPT, "similarity": o.similarity,
                                "excerpt_segments": o.excerpt_segments, "max_excerpt_chars": o.max_excerpt_chars,
                                "rubric": {str(score): text for score, text in RUBRIC}},
              "bootstrap": {"resamples": resamples, "seed": seed, "unit": "meeting"},
              **verdicts.as_dict(meetings, judge.client.model, resamples, seed)}
    write_json(run.file(RunFolder.JUDGED), judged)
    return judged


class JudgeStep(Step):
    """The ``judge`` step: judged scores of the run's notes into ``judged.json``."""

    name = "judge"
    writes = (RunFolder.JUDGED,)
    backends = BACKENDS

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.judge = self.backend()
        self.meetings: list[MeetingToJudge] = []

    def check(self, run: RunFolder, job: StepJob) -> None:
        """Read the run's and the gold notes, match the action items, and probe the judge's endpoint
        where there is something to judge: bad notes or a dead endpoint leave the run folder as it was."""
        self.meetings = meetings_to_judge(run, job.workspace, self.judge.options)
        if any(m.reason() is None or m.items for m in self.meetings):
            self.judge.probe()

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        return judge_run(run, job.workspace, self.judge, self.meetings, job.resamples, job.seed)


STEP = JudgeStep
METRICS = (JudgedFamily(),)


@dataclass
class Verdicts:
    """What the judge said of a run's meetings: ``scores`` of the summaries judged, ``reasons`` why
    each other is not, ``items``: per meeting each matched item's score (None: its request failed,
    the reason in ``item_reasons``), answers ``rejected`` by reason, the endpoint's ``usage`` and the
    judge's ``check`` (:meth:`Judge.check`; both None: nothing asked)."""

    scores: dict[str, dict[str, int]]
    reasons: dict[str, str]
    rejected: Counter
    usage: EndpointUsage | None = None
    check: dict[str, Any] | None = None
    items: dict[str, list[int | None]] = field(default_factory=dict)
    item_reasons: dict[tuple[str, int], str] = field(default_factory=dict)

    def as_dict(self, meetings: Sequence[MeetingToJudge], requested: str, resamples: int,
                seed: int) -> dict[str, Any]:
        """judged.json's figures: the judge model, the requests, per dimension, per meeting."""
        u = self.usage
        reported = sorted(u.reported) if u is not None else []
        requests = {"requests": u.requests if u else 0, "cache_hits": u.cache_hits if u else 0,
                    "failed": u.failed if u else 0, "failures": dict(sorted(u.failures.items())) if u else {},
                    "rejected": dict(sorted(self.rejected.items())), "probe": u.probe if u else "not probed"}
        aggregate = {}
        for dim in DIMENSIONS:
            estimate = bootstrap([Ratio(s[dim], 1) for s in self.scores.values()], resamples, seed)
            aggregate[dim] = {"mean": estimate.value, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                              "meetings": len(self.scores)}
        found = {m.id: m.items for m in meetings}
        for key, matched_only in ((DESCRIPTION, True), (DESCRIPTION_ALL, False)):
            given = {mid: [s for s, item in zip(scores, found[mid])
                           if s is not None and (item.matched or not matched_only)]
                     for mid, scores in self.items.items()}
            given = {mid: g for mid, g in given.items() if g}
            estimate = bootstrap([Ratio(sum(g), len(g)) for g in given.values()], resamples, seed)
            aggregate[key] = {"mean": estimate.value, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                              "meetings": len(given), "items": sum(map(len, given.values()))}
            if matched_only:
                judged = given
        n = len(meetings)
        reasons = [*self.reasons.values(), *(m.items_reason for m in meetings if m.items_reason)]
        return {"judge_model": judged_model(reported, requested), "models_reported": reported, "requests": requests,
                "check": self.check, "aggregate": aggregate,
                "reason": None if self.scores or judged else "; ".join(sorted(set(reasons))) or "no meetings",
                "not_judged": {"meetings": len(self.reasons), "of": n,
                               "share": round(len(self.reasons) / n, 4) if n else None},
                "meetings": {m.id: self._meeting(m) for m in meetings}}

    def _meeting(self, m: MeetingToJudge) -> dict[str, Any]:
        """judged.json's entry of meeting ``m``: its summary's scores, its items' and why any is missing."""
        scores = self.items.get(m.id, [None] * len(m.items))
        given = [s for s, item in zip(scores, m.items) if s is not None and item.matched]
        every = [s for s in scores if s is not None]
        return {"scores": self.scores.get(m.id), "reason": self.reasons.get(m.id),
                DESCRIPTION: round(sum(given) / len(given), 4) if given else None,
                DESCRIPTION_ALL: round(sum(every) / len(every), 4) if every else None, "items_reason": m.items_reason,
                "items": [{**item.as_dict(), "score": score, "reason": self.item_reasons.get((m.id, k))}
                          for k, (item, score) in enumerate(zip(m.items, scores))]}


def _judged(ask: Any, key: Any, verdicts: Verdicts, reasons: dict[Any, str]) -> Any:
    """``ask()``, or None with the reason under ``key`` of ``reasons`` when its request failed or its
    answer was not scores (counted under ``verdicts.rejected``)."""
    try:
        return ask()
    except RequestFailed as e:
        reasons[key] = f"the judge request failed ({e.reason}): {e.detail}"[:300]
    except BadAnswer as e:
        reasons[key] = f"the judge's answer was not scores ({e.reason}): {e.detail}"[:300]
        verdicts.rejected[e.reason] += 1
    return None


def _ask(judge: Judge, meetings: Sequence[MeetingToJudge], people: Sequence[Person], verdicts: Verdicts) -> None:
    """Ask the judge about the summaries and the matched action items of ``meetings`` into
    ``verdicts``, its check first, counted in the current LLM session; under the ``fail`` policy,
    failed requests above ``max_failed_share`` raise :class:`LLMUnavailable`."""
    todo = [m for m in meetings if m.id not in verdicts.reasons]
    item = first_item([m.items for m in meetings])
    if not todo and item is None:
        return
    verdicts.check = judge.check(todo[0] if todo else None, item, people)
    for m in todo:
        scores = _judged(lambda m=m: judge.scores(m.gold.summary, m.notes.summary, people), m.id, verdicts,
                         verdicts.reasons)
        if scores is not None:
            verdicts.scores[m.id] = scores
    for m in meetings:
        if m.items:
            verdicts.items[m.id] = [_judged(lambda i=i: judge.description(i), (m.id, k), verdicts,
                                            verdicts.item_reasons) for k, i in enumerate(m.items)]
    u = verdicts.usage = session.current().usage(judge.client.base_url, judge.client.model)
    o = judge.options
    if o.failures == "fail" and u.failed and u.failed_share > o.max_failed_share:
        raise LLMUnavailable(f"{u.base_url}: model {u.model}: {u.failed} of {u.requests} judge requests failed "
                             f"({u.failed_share:.0%}); last: {u.last_failure}; --llm-failures allow judges the "
                             "rest and states the share not judged")


def _estimate_cells(a: Mapping[str, Any]) -> tuple[str, str]:
    """An aggregate entry of judged.json as its mean and its 95% CI (``n/a`` where there is none)."""
    mean = "n/a" if a["mean"] is None else f"{a['mean']:.2f}"
    return mean, "n/a" if a["ci_low"] is None else f"[{a['ci_low']:.2f}, {a['ci_high']:.2f}]"


def _rows(judged: Mapping[str, Any], of: str) -> list[tuple[str, str, str, str]]:
    """Per judged dimension: its name, mean, 95% CI and the meetings judged (``of``: how the count
    of all meetings is written after their count, `` of 6`` or ``/6``), with the items judged."""
    rows = [(dim, *_estimate_cells(judged["aggregate"][dim]), f"{judged['aggregate'][dim]['meetings']}{of}")
            for dim in judged["dimensions"]]
    return rows + [(key, *_estimate_cells(d), f"{d['meetings']}{of} ({d['items']} items)")
                   for key, d in ((k, judged["aggregate"].get(k)) for k in (DESCRIPTION, DESCRIPTION_ALL)) if d]


def format_judged(judged: Mapping[str, Any], where: str | Path = "") -> str:
    """The printed table of ``judged``: per dimension the mean, its 95% CI and the judge model
    beside each figure; the requests; the share of meetings not judged and why."""
    model = judged["judge_model"]
    head = f"LLM-judged notes scores{f' of {where}' if where else ''} (1-5; beside, not instead of, the exact ones)"
    if judged["reason"] is not None:
        return f"{head}\njudged scores n/a: {judged['reason']}"
    of = judged["not_judged"]["of"]
    rows = [["dimension", "mean", "95% CI", "meetings", "judge"], *([*r, model] for r in _rows(judged, f"/{of}"))]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [head, *("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)]
    r, j = judged["requests"], judged["judge"]
    lines.append(f"judge {model} at {j['base_url']} (requested model {j['model']}); requests: {r['requests']}, "
                 f"from the cache: {r['cache_hits']}, failed: {r['failed']}; 95% CI from "
                 f"{judged['bootstrap']['resamples']} bootstrap resamples of meetings "
                 f"(seed {judged['bootstrap']['seed']})")
    check = judged["check"]
    if check is not None:
        lines.append("judge check: " + ("passed (the right controls scored 4-5, the wrong ones 1-2)"
                                        if check["passed"] else f"FAILED: {check['reason']}"
                                        if check["passed"] is False else f"not made: {check['reason']}"))
    n = judged["not_judged"]
    if n["meetings"]:
        lines.append(f"summaries not judged: {n['meetings']} of {n['of']} meetings ({n['share']:.0%}), excluded "
                     "from the means:")
        lines += [f"  {mid}: {m['reason']}" for mid, m in judged["meetings"].items() if m["reason"]]
    return "\n".join(lines)


def judged_section(view: RunView) -> list[str]:
    """The LLM-judged notes scores of the run's ``judged.json``, the judge model beside every
    figure, after (never instead of) the exact ones; nothing without the file."""
    judged = view.document(RunFolder.JUDGED)
    if judged is None:
        return []
    model = judged["judge_model"]
    lines = [f"## LLM-judged notes scores (judge: {code(model)})", ""]
    if judged["reason"] is not None:
        return lines + [f"Not applicable: {judged['reason']}.", ""]
    check = judged.get("check") or {}
    if check.get("passed") is False:
        lines += [f"**The judge failed its check** ({check['reason']}): read these figures as noise.", ""]
    lines += ["Scores 1-5 of each summary against the gold summary, and of each action item matched to a gold one "
              f"(`{DESCRIPTION}`, the assignee not judged) and of every action item the run wrote down, those that "
              f"matched none judged against the transcript alone (`{DESCRIPTION_ALL}`), mean with a 95% bootstrap "
              "CI over meetings; they "
              "add to the exact notes scores above and replace none.", "",
              "| dimension | mean | 95% CI | meetings judged | judge |", "|---|---|---|---|---|",
              *(f"| {name} | {mean} | {ci} | {what} | {code(model)} |"
                for name, mean, ci, what in _rows(judged, f" of {judged['not_judged']['of']}"))]
    r = judged["requests"]
    lines += ["", f"Requests: {r['requests']} ({r['cache_hits']} from the cache, {r['failed']} failed)."]
    lines += [f"- {mid} not judged: {cell(m['reason'])}" for mid, m in judged["meetings"].items() if m["reason"]]
    lines += [f"- {mid} action items not judged: {cell(m['items_reason'])}" for mid, m in judged["meetings"].items()
              if m["items_reason"]]
    return lines + [""]


SECTIONS = (Section(120, judged_section),)
