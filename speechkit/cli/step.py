"""``speechkit step NAME RUN``: run one post-run step on a finished run, then its scores and report again."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

EPILOG = """\
NAME is a post-run step (speechkit.steps.STEPS: qa, align, judge, probe, and any a plug-in adds);
RUN a run folder, or the folder of `speechkit recipe --level all`, whose level folders l1, l2,
l3 are each run. The step's options are set as a recipe's steps: block sets them (--set
backend=llm, --set model=...), checked the same way. When the step wrote into a finished run, the
run's scores (where the step has metrics) and its report are made again from the folder, the
bytes a run with the step in its recipe writes. qa, align, judge and probe also have commands of
their own, with flags.

examples:
  speechkit step qa runs/whisper-demo/l3
  speechkit step judge runs/whisper-demo --set base_url=http://gpu-box:8000/v1 --set model=Qwen/Qwen2.5-7B-Instruct
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.score import add_bootstrap_options

    p = sub.add_parser("step", help="run one post-run step (qa, align, judge, probe, ...) on a finished run",
                       description="Run a post-run step on a finished run folder, then make its scores and "
                                   "report again from the folder.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", metavar="NAME", help="the step (speechkit.steps.STEPS)")
    p.add_argument("run", type=Path, metavar="RUN", help="a run folder, or a --level all folder (l1, l2, l3)")
    p.add_argument("--workspace", "-w", type=Path, help="the workspace (default: the one RUN/run.json names)")
    p.add_argument("--set", metavar="OPTION=VALUE", action="append", default=[], dest="settings",
                   help="a step option (repeatable), checked as a recipe's steps: block is")
    p.add_argument("--cache-dir", type=Path, help="the LLM response cache (default RUN/cache/llm)")
    add_bootstrap_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.core.options import OptionError
    from speechkit.core.step import StepJob
    from speechkit.errors import SpeechkitError
    from speechkit.io.run_folder import level_folders
    from speechkit.postrun import run_step_on_finished
    from speechkit.recipe import RecipeError, parse_settings
    from speechkit.report.comparison import remake_level_comparison
    from speechkit.steps import STEPS, parse_step, step_module

    if args.name not in STEPS:
        raise SpeechkitError(f"unknown step {args.name!r}; the steps: {', '.join(STEPS)}")
    try:
        spec = parse_step(args.name, parse_settings(args.settings), args.name)
    except OptionError as exc:
        raise RecipeError("--set", exc.problem, field=exc.field) from None
    writes = step_module(args.name).STEP.writes
    for run in level_folders(args.run):
        started = time.perf_counter()
        job = StepJob(run.workspace(args.workspace), args.resamples, args.seed)
        run_step_on_finished(run, spec, job, args.cache_dir or args.run / "cache" / "llm")
        print(f"{args.name}: wrote {', '.join(str(run.file(name)) for name in writes)} "
              f"({time.perf_counter() - started:.1f} s)")
    if (remade := remake_level_comparison(args.run)) is not None:
        print(f"wrote {remade} (the levels compared again)")
    return 0
