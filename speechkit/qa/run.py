"""The ``qa`` step over a run: answer each meeting's gold questions from the run's own output.

``speechkit qa RUN`` runs it on a finished run; a recipe with a ``qa`` block (``qa: {backend:
extractive}``) runs it before scoring, so that scores.json holds the question metrics
(:func:`speechkit.metrics.qa.add_question_scores`). For each scored meeting with gold questions
(``meetings/<id>/questions.json``), the backend is asked the questions (never their answers,
:class:`~speechkit.qa.questions.Ask`) with what the run produced for the meeting at its level
(:class:`~speechkit.qa.output.MeetingOutput`). The answers, each marked right or wrong, their
scores with bootstrap CIs over meetings and the meetings without questions (with the reason)
go to ``RUN/qa.json`` (:mod:`speechkit.qa.answers`).

Backends (:data:`BACKENDS`): ``extractive`` (:mod:`speechkit.qa.extractive`, the default) and
``llm`` (:mod:`speechkit.qa.llm`); their options are validated as a stage's are.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from speechkit.io.atomic import check_output_file, write_json
from speechkit.metrics.bootstrap import RESAMPLES, SEED
from speechkit.metrics.qa import RULES, aggregate, gold_questions_of, score_run
from speechkit.qa.answers import answers_document
from speechkit.qa.output import read_output
from speechkit.stages import StageSpec, registered_class
from speechkit.stages.options import OptionError
from speechkit.workspace import Workspace

BACKENDS = {"extractive": "speechkit.qa.extractive:ExtractiveAnswerer", "llm": "speechkit.qa.llm:LLMAnswerer"}
DEFAULT_BACKEND = "extractive"


def parse_qa(data: Mapping[str, Any] | None, where: str = "qa") -> StageSpec:
    """A recipe's ``qa`` block (None: the defaults) as a checked spec; raises :class:`OptionError`."""
    if data is not None and not isinstance(data, Mapping):
        raise OptionError(where, "expected a mapping of options")
    data = dict(data or {})
    backend = data.pop("backend", DEFAULT_BACKEND)
    if not isinstance(backend, str):
        raise OptionError(f"{where}.backend", f"expected a backend name, got {backend!r}"[:200])
    options = registered_class(BACKENDS, backend, f"{where}.backend").Options.from_dict(data, where)
    return StageSpec("qa", backend, options)


def answer_run(ws: Workspace, run_dir: str | Path, spec: StageSpec | None = None, out: str | Path | None = None,
               resamples: int = RESAMPLES, seed: int = SEED) -> dict[str, Any]:
    """Answer the gold questions of every scored meeting of ``ws`` from the run in ``run_dir``;
    write and return the ``qa.json`` mapping (``out``: default ``RUN/qa.json``)."""
    spec = spec or parse_qa(None)
    run = Path(run_dir)
    target = Path(out) if out is not None else run / "qa.json"
    check_output_file(target, {"the workspace manifest": ws.manifest_path})
    backend = registered_class(BACKENDS, spec.backend, "qa.backend")(spec.options)
    meetings = [m.id for m in ws.scored_meetings]
    golds = {mid: gold for mid in meetings if (gold := gold_questions_of(ws, mid)) is not None}
    if golds:
        backend.check()
    answered: dict[str, dict[str, Any] | None] = {}
    asked = {}
    for mid, gold in golds.items():
        output = read_output(ws, run, mid)
        answers, stats = backend.answer([q.ask for q in gold.questions], output)
        asked[mid] = (gold, output.level, stats)
        answered[mid] = answers
    scored, reasons = score_run(ws, meetings, answered)
    entries = {}
    for mid, (gold, level, stats) in asked.items():
        marks = scored.get(mid)  # None: the backend got no usable answer (not applicable)
        entries[mid] = {"level": level, "stats": stats, "answers": [
            {"id": q.id, "type": q.type, "question": q.question, "answer": answered[mid].get(q.id, ""),
             "gold": q.answer, "right": marks.right[q.id], "right_lenient": marks.lenient[q.id]}
            for q in gold.questions] if marks else []}
    totals = aggregate({mid: s.ratios() for mid, s in scored.items()}, resamples, seed)
    settings = {"bootstrap": {"resamples": resamples, "seed": seed, "unit": "meeting"}, "rules": RULES}
    document = answers_document(spec.as_dict(), str(ws.root), entries, reasons, settings, totals)
    write_json(target, document)
    return document
