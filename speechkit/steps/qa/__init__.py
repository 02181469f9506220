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

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from speechkit.core.stage import Spec
from speechkit.core.step import Step, StepJob
from speechkit.io.atomic import write_json
from speechkit.io.questions import MeetingQuestions, gold_questions_of
from speechkit.io.run_folder import RunFolder
from speechkit.io.run_output import MeetingOutput, read_output
from speechkit.metrics.bootstrap import RESAMPLES, SEED
from speechkit.metrics.qa import RULES, aggregate, score_run
from speechkit.steps.qa.answers import answers_document
from speechkit.steps.qa.metrics import QuestionFamily
from speechkit.workspace import Workspace

BACKENDS = {"extractive": "speechkit.steps.qa.extractive:ExtractiveAnswerer",
            "llm": "speechkit.steps.qa.llm:LLMAnswerer"}
DEFAULT_BACKEND = "extractive"


def questions_asked(ws: Workspace, run: RunFolder) -> dict[str, tuple[MeetingQuestions, MeetingOutput]]:
    """Each scored meeting of ``ws`` with gold questions: its questions and what ``run`` produced
    for it, read and checked."""
    golds = {m.id: gold for m in ws.scored_meetings if (gold := gold_questions_of(ws, m.id)) is not None}
    return {mid: (gold, read_output(run, ws, mid)) for mid, gold in golds.items()}


def answer_run(ws: Workspace, spec: Spec, answerer: Any, asked: Mapping[str, tuple[MeetingQuestions, MeetingOutput]],
               target: Path, resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Ask ``answerer`` (the backend of ``spec``) the questions ``asked`` (:func:`questions_asked`),
    mark its answers, and write and return the ``qa.json`` mapping into ``target``."""
    answered: dict[str, dict[str, Any] | None] = {}
    stats_of = {}
    for mid, (gold, output) in asked.items():
        answered[mid], stats_of[mid] = answerer.answer([q.ask for q in gold.questions], output)
    scored, reasons = score_run(ws, [m.id for m in ws.scored_meetings], answered)
    entries = {}
    for mid, (gold, output) in asked.items():
        marks = scored.get(mid)  # None: the backend got no usable answer (not applicable)
        entries[mid] = {"level": output.level, "stats": stats_of[mid], "answers": [
            {"id": q.id, "type": q.type, "question": q.question, "answer": answered[mid].get(q.id, ""),
             "gold": q.answer, "right": marks.right[q.id], "right_lenient": marks.lenient[q.id]}
            for q in gold.questions] if marks else []}
    totals = aggregate({mid: s.ratios() for mid, s in scored.items()}, resamples, seed)
    settings = {"bootstrap": {"resamples": resamples, "seed": seed, "unit": "meeting"}, "rules": RULES}
    document = answers_document(spec.as_dict(), str(ws.root), entries, reasons, settings, totals)
    write_json(target, document)
    return document


class QaStep(Step):
    """Answers the gold questions of every scored meeting into ``qa.json``: the questions and the
    run's output are read, and the backend checked, before anything is written."""

    name = "qa"  # reads the transcripts of the meetings with gold questions only: no ``reads``
    writes = (RunFolder.QA,)
    backends = BACKENDS

    def __init__(self, spec: Spec) -> None:
        super().__init__(spec)
        self.answerer = self.backend()
        self.asked: dict[str, tuple[MeetingQuestions, MeetingOutput]] = {}

    def check(self, run: RunFolder, job: StepJob) -> None:
        self.asked = questions_asked(job.workspace, run)
        if self.asked:
            self.answerer.check()

    def run(self, run: RunFolder, job: StepJob) -> dict[str, Any]:
        target = job.out if job.out is not None else run.file(RunFolder.QA)
        return answer_run(job.workspace, self.spec, self.answerer, self.asked, target, job.resamples, job.seed)


STEP = QaStep
METRICS = (QuestionFamily(),)
