"""``speechkit qa RUN``: answer the workspace's gold questions from a run's own output and score them."""
from __future__ import annotations

import argparse
from pathlib import Path

from speechkit.errors import SpeechkitError

EPILOG = """\
Each meeting's questions (meetings/<id>/questions.json of the workspace) are answered from what
the run wrote for it: its transcript, its notes and the context its level gave (context/<id>.json).
Backends: extractive (no language model, the default) or llm (an OpenAI-compatible endpoint:
--set base_url=..., --set model=..., else SPEECHKIT_LLM_BASE_URL/SPEECHKIT_LLM_MODEL, else the
local server). Writes RUN/qa.json (answers, marks, scores with 95% bootstrap CIs over meetings).
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from speechkit.cli.score import add_bootstrap_options
    from speechkit.steps.qa import BACKENDS

    p = subparsers.add_parser("qa", help="answer the gold questions from a run's output; write RUN/qa.json",
                              description="Answer the gold questions from a run's own output and score them.",
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", type=Path, help="a run folder (speechkit run / recipe --out)")
    p.add_argument("--workspace", metavar="WS", type=Path,
                   help="the workspace the run is of (default: the one its run.json names)")
    p.add_argument("--backend", choices=sorted(BACKENDS), default="extractive",
                   help="how to answer (default extractive)")
    p.add_argument("--set", metavar="OPTION=VALUE", action="append", default=[], dest="settings",
                   help="a backend option (repeatable), checked as a recipe's qa block is")
    p.add_argument("--out", metavar="FILE", type=Path, help="where to write (default RUN/qa.json)")
    add_bootstrap_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.core.options import OptionError
    from speechkit.core.step import StepJob
    from speechkit.io.run_folder import RunFolder
    from speechkit.metrics.qa import QUESTION_METRICS
    from speechkit.postrun import run_step_on_finished
    from speechkit.recipe import RecipeError, parse_settings
    from speechkit.steps import parse_step

    if not args.run.is_dir():
        raise SpeechkitError(f"{args.run}: run folder not found")
    try:
        spec = parse_step("qa", {"backend": args.backend, **parse_settings(args.settings)}, "qa")
    except OptionError as exc:
        raise RecipeError("--set", exc.problem, field=exc.field) from None
    run = RunFolder(args.run)
    job = StepJob(run.workspace(args.workspace), args.resamples, args.seed, out=args.out)
    document = run_step_on_finished(run, spec, job, None)
    for metric in QUESTION_METRICS:
        entry = document["scores"][metric.key]
        shown = metric.format_estimate(entry)
        print(f"{metric.label:<28} {shown}  ({entry['numerator']:g}/{entry['denominator']:g} questions)")
    for mid, reason in document["not_applicable"].items():
        print(f"n/a {mid}: {reason}")
    return 0
