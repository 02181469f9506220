"""LLM-judged scores of a run's meeting notes (``speechkit judge RUN``), beside the deterministic ones.

The judge follows the summary-quality judge of the paper the notes scores come from: one request
per meeting asks a language model for five integer scores from 1 to 5 (:data:`DIMENSIONS`:
faithfulness, coherence, recall, precision, conciseness) of the run's summary, reference-grounded:
the prompt holds the workspace roster (names, nicknames, roles), the gold summary
(``meetings/<id>/notes.json`` of the workspace) and the system summary. The prompt says that
length is not judged (conciseness judges filler and repetition, not length against the
reference), that a name written more fully than the reference writes it, consistent with the
roster, is faithful, and that who said what is not judged. The answer is asked for with a JSON
schema (an object with one ``enum`` 1-5 per dimension) and parsed; the request goes through
:class:`~speechkit.llm.client.LLMClient`, so the endpoint is the option's, else the
environment's, else the local server on the packaged model, and answers are kept in the
response cache (keyed by the content of the request: a second judgement of the same summaries
sends nothing).

Before the meetings, the judge is checked on two summaries whose scores are known
(:meth:`Judge.check`): the reference itself (faithful and complete) and an unrelated summary
(neither). A judge that does not score the first high and the second low on faithfulness and
recall fails the check; judged.json and the table say so beside its figures (the packaged 135M
model answers 1, 2, 3, 4, 5 in the order of the dimensions whatever it is shown).

:func:`judge_run` writes ``RUN/judged.json`` (docs/scores-schema.md): each meeting's scores or
why it has none, per dimension the mean over the judged meetings with a 95% bootstrap CI over
meetings (:func:`speechkit.metrics.bootstrap.bootstrap` of one ratio ``score / 1`` per meeting),
the judge's endpoint and the model the server reported, and the request counts. Failures follow
the run's policy (``failures`` of :class:`~speechkit.llm.client.ClientOptions`): with ``fail``,
an unreachable endpoint stops before any request and failed requests (answers that are not
scores included) above ``max_failed_share`` stop before anything is written; with ``allow`` the
meetings whose request failed or whose answer was not scores are not applicable, and the share
of them is stated. These scores never replace the
deterministic notes scores of scores.json.
"""
from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from speechkit.core.options import bounded
from speechkit.core.section import Section
from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.io.atomic import write_json
from speechkit.io.markdown import cell, code
from speechkit.io.notes import read_gold_notes, run_notes
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_view import RunView
from speechkit.llm import session
from speechkit.llm.client import BadAnswer, ClientOptions, LLMClient, LLMUnavailable, NoAnswer, RequestFailed
from speechkit.llm.session import EndpointUsage
from speechkit.metrics.bootstrap import RESAMPLES, SEED, Ratio, bootstrap
from speechkit.notes import GoldNotes, Notes
from speechkit.stages.summarize.metrics import NO_RUN_NOTES
from speechkit.workspace import Person, Workspace

log = logging.getLogger(__name__)

SCHEMA = "speechkit.judged/1"
BACKENDS = {"llm": "speechkit.steps.judge:Judge"}
DEFAULT_BACKEND = "llm"
#: The prompt's name in judged.json; raised when its wording changes.
PROMPT = "speechkit-notes-judge/1"
#: The paper's five summary dimensions, in the order judged.json and the table list them.
DIMENSIONS = ("faithfulness", "coherence", "recall", "precision", "conciseness")
SCALE = (1, 2, 3, 4, 5)
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
    """

    max_tokens: int | None = bounded(200, ge=1, le=1_000_000)
    max_summary_chars: int = bounded(4000, ge=100, le=1_000_000)


def judge_schema() -> dict[str, Any]:
    """The JSON schema of the judge's answer: one integer 1-5 per dimension, nothing else."""
    return {"type": "object", "properties": {d: {"type": "integer", "enum": list(SCALE)} for d in DIMENSIONS},
            "required": list(DIMENSIONS), "additionalProperties": False}


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


def scores_of(answer: Mapping[str, Any]) -> dict[str, int]:
    """The dimension scores an answer holds; :class:`BadAnswer` (``wrong-shape``) unless each is an integer 1-5."""
    scores = {}
    for dim in DIMENSIONS:
        value = answer.get(dim)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value not in SCALE:
            raise BadAnswer("wrong-shape", f"{dim}: expected an integer from 1 to 5, got {value!r}"[:200])
        scores[dim] = value
    return scores


@dataclass(frozen=True)
class MeetingToJudge:
    """One meeting of a run: the run's notes and the gold notes (None where there are none)."""

    id: str
    notes: Notes | None
    gold: GoldNotes | None

    def reason(self) -> str | None:
        """Why the meeting cannot be judged (None: it can)."""
        if self.gold is None:
            return "no gold notes for this meeting (a workspace's meetings/<id>/notes.json)"
        if not self.gold.summary:
            return "the gold notes of this meeting have no summary"
        if self.notes is None:
            return NO_RUN_NOTES
        if not self.notes.summary:
            return "the run's notes of this meeting have no summary"
        return None


def meetings_to_judge(run: RunFolder, ws: Workspace) -> list[MeetingToJudge]:
    """The run's notes and the gold notes of every meeting of ``ws`` the run processed."""
    names = {p.id: p.name for p in ws.people}
    out = []
    for meeting in ws.scored_meetings:
        out.append(MeetingToJudge(meeting.id, run_notes(run.notes(meeting.id), meeting.id),
                                  read_gold_notes(meeting.notes, meeting.id, names) if meeting.notes else None))
    return out


class Judge:
    """The ``llm`` backend of the judge: scores summaries through one LLM client (see the module docstring)."""

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

    def check(self, meeting: MeetingToJudge, people: Sequence[Person]) -> dict[str, Any]:
        """judged.json's ``check``: the judge's scores of two summaries whose scores are known, the
        reference of ``meeting`` itself and :data:`UNRELATED`; ``passed`` when it gives the
        reference at least 4 and the unrelated summary at most 2 on each of :data:`CHECKED`
        (None when a control got no scores)."""
        out: dict[str, Any] = {"passed": None, "reference": None, "unrelated": None, "reason": None}
        for name, system in (("reference", meeting.gold.summary), ("unrelated", UNRELATED)):
            try:
                out[name] = self.scores(meeting.gold.summary, system, people)
            except NoAnswer as e:
                out["reason"] = f"the {name} control got no scores ({e.reason}): {e.detail}"[:300]
                return out
        out["passed"] = all(out["reference"][d] >= 4 and out["unrelated"][d] <= 2 for d in CHECKED)
        if not out["passed"]:
            out["reason"] = (f"the judge gave the reference itself {_listed(out['reference'])} and an unrelated "
                             f"summary {_listed(out['unrelated'])}: its scores say little")
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
    (:meth:`JudgeStep.check`) where there is a meeting to judge.

    With no meeting to judge (no gold notes, no notes) no endpoint is contacted and judged.json
    says why. Raises :class:`LLMUnavailable` under the ``fail`` policy as the module docstring
    says, before judged.json is written.
    """
    verdicts = Verdicts({}, {m.id: m.reason() for m in meetings if m.reason()}, Counter())
    todo = [m for m in meetings if m.id not in verdicts.reasons]
    _ask(judge, todo, ws.people, verdicts)
    judged = {"schema": SCHEMA, "source": {"workspace": str(ws.root)}, "judge": judge.endpoint(),
              "dimensions": list(DIMENSIONS), "scale": [SCALE[0], SCALE[-1]],
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
        """Read the run's and the gold notes, and probe the judge's endpoint where there is a
        meeting to judge: bad notes or a dead endpoint leave the run folder as it was."""
        self.meetings = meetings_to_judge(run, job.workspace)
        if any(m.reason() is None for m in self.meetings):
            self.judge.probe()

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        return judge_run(run, job.workspace, self.judge, self.meetings, job.resamples, job.seed)


STEP = JudgeStep


@dataclass
class Verdicts:
    """What the judge said of a run's meetings: ``scores`` of those judged, ``reasons`` why each
    other is not, answers ``rejected`` by reason, the endpoint's ``usage`` and the judge's
    ``check`` (:meth:`Judge.check`; both None: nothing asked)."""

    scores: dict[str, dict[str, int]]
    reasons: dict[str, str]
    rejected: Counter
    usage: EndpointUsage | None = None
    check: dict[str, Any] | None = None

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
        n = len(meetings)
        return {"judge_model": judged_model(reported, requested), "models_reported": reported, "requests": requests,
                "check": self.check, "aggregate": aggregate,
                "reason": None if self.scores else "; ".join(sorted(set(self.reasons.values()))) or "no meetings",
                "not_judged": {"meetings": len(self.reasons), "of": n,
                               "share": round(len(self.reasons) / n, 4) if n else None},
                "meetings": {m.id: {"scores": self.scores.get(m.id), "reason": self.reasons.get(m.id)}
                             for m in meetings}}


def _ask(judge: Judge, todo: Sequence[MeetingToJudge], people: Sequence[Person], verdicts: Verdicts) -> None:
    """Ask the judge about the meetings ``todo`` into ``verdicts``, counted in the current LLM
    session; under the ``fail`` policy, failed requests above ``max_failed_share`` raise
    :class:`LLMUnavailable`."""
    if not todo:
        return
    verdicts.check = judge.check(todo[0], people)
    for m in todo:
        try:
            verdicts.scores[m.id] = judge.scores(m.gold.summary, m.notes.summary, people)
        except RequestFailed as e:
            verdicts.reasons[m.id] = f"the judge request failed ({e.reason}): {e.detail}"[:300]
        except BadAnswer as e:
            verdicts.reasons[m.id] = f"the judge's answer was not scores ({e.reason}): {e.detail}"[:300]
            verdicts.rejected[e.reason] += 1
    u = verdicts.usage = session.current().usage(judge.client.base_url, judge.client.model)
    o = judge.options
    if o.failures == "fail" and u.failed and u.failed_share > o.max_failed_share:
        raise LLMUnavailable(f"{u.base_url}: model {u.model}: {u.failed} of {u.requests} judge requests failed "
                             f"({u.failed_share:.0%}); last: {u.last_failure}; --llm-failures allow judges the "
                             "rest and states the share not judged")


def format_judged(judged: Mapping[str, Any], where: str | Path = "") -> str:
    """The printed table of ``judged``: per dimension the mean, its 95% CI and the judge model
    beside each figure; the requests; the share of meetings not judged and why."""
    model = judged["judge_model"]
    head = f"LLM-judged notes scores{f' of {where}' if where else ''} (1-5; beside, not instead of, scores.json)"
    if judged["reason"] is not None:
        return f"{head}\njudged scores n/a: {judged['reason']}"
    rows = [["dimension", "mean", "95% CI", "meetings", "judge"]]
    for dim in judged["dimensions"]:
        a = judged["aggregate"][dim]
        ci = "n/a" if a["ci_low"] is None else f"[{a['ci_low']:.2f}, {a['ci_high']:.2f}]"
        rows.append([dim, f"{a['mean']:.2f}", ci, f"{a['meetings']}/{judged['not_judged']['of']}", model])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [head, *("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)]
    r, j = judged["requests"], judged["judge"]
    lines.append(f"judge {model} at {j['base_url']} (requested model {j['model']}); requests: {r['requests']}, "
                 f"from the cache: {r['cache_hits']}, failed: {r['failed']}; 95% CI from "
                 f"{judged['bootstrap']['resamples']} bootstrap resamples of meetings "
                 f"(seed {judged['bootstrap']['seed']})")
    check = judged["check"]
    if check is not None:
        lines.append("judge check: " + ("passed (the reference itself scored 4-5, an unrelated summary 1-2 on "
                                        f"{' and '.join(CHECKED)})" if check["passed"] else
                                        f"FAILED: {check['reason']}" if check["passed"] is False else
                                        f"not made: {check['reason']}"))
    n = judged["not_judged"]
    if n["meetings"]:
        lines.append(f"not judged: {n['meetings']} of {n['of']} meetings ({n['share']:.0%}), excluded from the means:")
        lines += [f"  {mid}: {m['reason']}" for mid, m in judged["meetings"].items() if m["reason"]]
    return "\n".join(lines)


def judged_section(view: RunView) -> list[str]:
    """The LLM-judged notes scores of the run's ``judged.json``, the judge model beside every
    figure, after (never instead of) the deterministic ones; nothing without the file."""
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
    lines += ["Scores 1-5 of each summary against the gold summary (mean, 95% bootstrap CI over meetings); "
              "they add to the notes scores above and replace none.", "",
              "| dimension | mean | 95% CI | meetings judged | judge |", "|---|---|---|---|---|"]
    of = judged["not_judged"]["of"]
    for dim in judged["dimensions"]:
        a = judged["aggregate"][dim]
        ci = "n/a" if a["ci_low"] is None else f"[{a['ci_low']:.2f}, {a['ci_high']:.2f}]"
        lines.append(f"| {dim} | {a['mean']:.2f} | {ci} | {a['meetings']} of {of} | {code(model)} |")
    r = judged["requests"]
    lines += ["", f"Requests: {r['requests']} ({r['cache_hits']} from the cache, {r['failed']} failed)."]
    lines += [f"- {mid} not judged: {cell(m['reason'])}" for mid, m in judged["meetings"].items() if m["reason"]]
    return lines + [""]


SECTIONS = (Section(120, judged_section),)
