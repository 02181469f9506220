"""The question metrics of a run: its ``qa.json`` answers marked against the gold questions.

The answers of ``RUN/qa.json`` (the ``qa`` step's) are marked again against each meeting's gold
questions (:mod:`speechkit.metrics.qa`: what is right), so that an edited qa.json cannot claim
marks it does not earn, and folded into scores.json: per meeting (value, ``details.questions``,
the reason where not applicable) and over the meetings, with the scores' bootstrap settings.
What of the file no score used (answers to ids that are not gold questions, meetings the workspace
does not score) is named: a warning, and ``settings.questions.ignored``.
"""
from __future__ import annotations

import logging
from typing import Any

from speechkit.io.run_folder import RunFolder
from speechkit.metrics.family import ScoringRun, StepFamily
from speechkit.metrics.qa import QUESTION_METRICS, QUESTIONS, RULES, ignored_answers, score_run
from speechkit.steps.qa.answers import read_answers

log = logging.getLogger(__name__)


class QuestionFamily(StepFamily):
    """The question metrics from the run's ``qa.json`` (none without a workspace)."""

    name = QUESTIONS
    metrics = QUESTION_METRICS
    title = "Questions"
    what = "question"

    def fold(self, scores: dict[str, Any], run: ScoringRun) -> None:
        if run.workspace is None or run.folder is None:
            return
        path = run.folder.file(RunFolder.QA)
        answers = read_answers(path) if path.is_file() else None
        scored, reasons = score_run(run.workspace, list(scores["meetings"]), answers)
        ignored = ignored_answers(answers or {}, scored, list(scores["meetings"]))
        for line in ignored:
            log.warning("%s: left out: %s", path, line)
        for mid, marks in scored.items():
            scores["meetings"][mid]["details"]["questions"] = marks.details()
        self.fold_ratios(scores, {mid: s.ratios() for mid, s in scored.items()},
                         {mid: dict.fromkeys(self.keys, reason) for mid, reason in reasons.items()})
        scores["settings"][self.name] = {"answers": RunFolder.QA if answers is not None else None, "rules": RULES,
                                         **({"ignored": ignored} if ignored else {})}
