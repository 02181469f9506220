"""The question metrics of a run: its ``qa.json`` answers marked against the gold questions.

The answers of ``RUN/qa.json`` (the ``qa`` step's; where the run has none, the answers a whole
system wrote per meeting, :meth:`~speechkit.io.run_folder.RunFolder.answers`) are marked again
against each meeting's gold questions (:mod:`speechkit.metrics.qa`: what is right), so that an
edited qa.json cannot claim marks it does not earn, and folded into scores.json: per meeting
(value, ``details.questions``, the reason where not applicable) and over the meetings, with the
scores' bootstrap settings.
What of the file no score used (answers to ids that are not gold questions, meetings the workspace
does not score) is named: a warning, and ``settings.questions.ignored``.
"""
from __future__ import annotations

import logging
from typing import Any

from speechkit.io.run_folder import ANSWERS, RunFolder
from speechkit.io.system_files import read_answers_file
from speechkit.metrics.family import ScoringRun, StepFamily
from speechkit.metrics.qa import QUESTION_METRICS, QUESTIONS, RULES, ignored_answers, score_run
from speechkit.steps.qa.answers import read_answers

log = logging.getLogger(__name__)


def system_answers(folder: RunFolder, scores: dict[str, Any]) -> tuple[dict[str, dict[str, str]] | None, str | None]:
    """The answers a whole system wrote for the scored meetings (a meeting without a file has none),
    and where they lie; (None, None) when it wrote none."""
    found = {mid: read_answers_file(folder.answers(mid), mid) for mid in scores["meetings"]
             if folder.answers(mid).is_file()}
    return (found, ANSWERS.pattern) if found else (None, None)


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
        answers, source = (read_answers(path), RunFolder.QA) if path.is_file() else system_answers(run.folder, scores)
        scored, reasons = score_run(run.workspace, list(scores["meetings"]), answers)
        ignored = ignored_answers(answers or {}, scored, list(scores["meetings"]))
        for line in ignored:
            log.warning("%s: left out: %s", path, line)
        for mid, marks in scored.items():
            scores["meetings"][mid]["details"]["questions"] = marks.details()
        self.fold_ratios(scores, {mid: s.ratios() for mid, s in scored.items()},
                         {mid: dict.fromkeys(self.keys, reason) for mid, reason in reasons.items()})
        scores["settings"][self.name] = {"answers": source, "rules": RULES,
                                         **({"ignored": ignored} if ignored else {})}
