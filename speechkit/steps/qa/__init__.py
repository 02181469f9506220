"""The ``qa`` step: answer each meeting's gold questions from the run's own output, and score them.

A recipe lists it (``steps: {qa: {backend: extractive}}``, on in every shipped recipe) or
``speechkit qa RUN`` runs it on a finished run. For each scored meeting with gold questions
(``meetings/<id>/questions.json``, :mod:`speechkit.io.questions`), the backend is asked the
questions (never their answers, :class:`~speechkit.io.questions.Ask`) with what the run produced
for the meeting at its level (:class:`~speechkit.io.run_output.MeetingOutput`). The answers,
each marked right or wrong, their scores with bootstrap CIs over meetings and the meetings
without questions (with the reason) go to ``RUN/qa.json`` (:mod:`~speechkit.steps.qa.answers`);
scores.json takes the question metrics from there (:mod:`~speechkit.steps.qa.metrics`).

Backends (:data:`BACKENDS`): ``extractive`` (:mod:`~speechkit.steps.qa.extractive`, the default)
and ``llm`` (:mod:`~speechkit.steps.qa.llm`); their options are validated as a stage's are.
docs/qa.md says what each score means.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from speechkit.core.stage import Spec, registered_class
from speechkit.core.step import Step, StepJob
from speechkit.io.atomic import write_json
from speechkit.io.questions import gold_questions_of
from speechkit.io.run_folder import TRANSCRIPT, RunFolder
from speechkit.io.run_output import read_output
from speechkit.metrics.bootstrap import RESAMPLES, SEED
from speechkit.metrics.qa import RULES, aggregate, score_run
from speechkit.steps.qa.answers import answers_document
from speechkit.steps.qa.metrics import QuestionFamily
from speechkit.workspace import Workspace

BACKENDS = {"extractive": "speechkit.steps.qa.extractive:ExtractiveAnswerer",
            "llm": "speechkit.steps.qa.llm:LLMAnswerer"}
DEFAULT_BACKEND = "extractive"


class QaStep(Step):
    """Answers the gold questions of every scored meeting into ``qa.json``."""

    name = "qa"
    reads = (TRANSCRIPT,)
    writes = (RunFolder.QA,)
    backends = BACKENDS

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        return answer_run(job.workspace, run, self.spec, job.out, job.resamples, job.seed)


STEP = QaStep
METRICS = (QuestionFamily(),)


def answer_run(ws: Workspace, run: RunFolder, spec: Spec, out: str | Path | None = None,
               resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Answer the gold questions of every scored meeting of ``ws`` from ``run``; write and return
    the ``qa.json`` mapping (``out``: default ``RUN/qa.json``)."""
    target = Path(out) if out is not None else run.file(RunFolder.QA)
    backend = registered_class(BACKENDS, spec.backend, "qa.backend")(spec.options)
    meetings = [m.id for m in ws.scored_meetings]
    golds = {mid: gold for mid in meetings if (gold := gold_questions_of(ws, mid)) is not None}
    if golds:
        backend.check()
    answered: dict[str, dict[str, Any]] = {}
    asked = {}
    for mid, gold in golds.items():
        output = read_output(run, ws, mid)
        answers, stats = backend.answer([q.ask for q in gold.questions], output)
        asked[mid] = (gold, output.level, stats)
        answered[mid] = answers
    scored, reasons = score_run(ws, meetings, answered)
    entries = {}
    for mid, (gold, level, stats) in asked.items():
        marks = scored[mid]
        entries[mid] = {"level": level, "stats": stats, "answers": [
            {"id": q.id, "type": q.type, "question": q.question, "answer": answered[mid].get(q.id, ""),
             "gold": q.answer, "right": marks.right[q.id], "right_lenient": marks.lenient[q.id]}
            for q in gold.questions]}
    totals = aggregate({mid: s.ratios() for mid, s in scored.items()}, resamples, seed)
    settings = {"bootstrap": {"resamples": resamples, "seed": seed, "unit": "meeting"}, "rules": RULES}
    document = answers_document(spec.as_dict(), str(ws.root), entries, reasons, settings, totals)
    write_json(target, document)
    return document
