"""``speechkit judge``: LLM-judged scores of a run's meeting notes, beside the exact notes scores."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

EPILOG = """\
RUN is a run folder (what `speechkit run` or `speechkit recipe` wrote: run.json, the notes), or
the folder of `speechkit recipe --level all`, whose level folders l1, l2, l3 are each judged.
One request per meeting asks the judge model for faithfulness, coherence, recall, precision and
conciseness of the run's summary, 1-5, against the workspace's gold summary and roster (length
not judged, roster-consistent name expansions faithful, speakers not judged), and one per run
action item matched to a gold one for its description quality, 1-5 against a rubric (the gold
item and the reference transcript around it shown, the assignee not judged), with a JSON schema;
answers are cached by the request's content (RUN/cache/llm), so judging again asks nothing.
Writes RUN/judged.json (per meeting, means with 95% bootstrap CIs over meetings, the judge
model the server reported, request counts; docs/scores-schema.md) and prints the table; a
finished run's scores.json (the judged metrics beside the exact ones) and report are made again,
and a --level all folder's comparison. The endpoint and model: --base-url/--model, else
SPEECHKIT_LLM_BASE_URL/SPEECHKIT_LLM_MODEL, else the local server on the packaged model
(docs/llm.md). `speechkit step judge RUN --set similarity=lexical` sets the other options.

examples:
  speechkit judge runs/whisper-demo
  SPEECHKIT_LLM_BASE_URL=http://gpu-box:8000/v1 SPEECHKIT_LLM_MODEL=Qwen/Qwen2.5-7B-Instruct speechkit judge runs/x/l3
  speechkit judge runs/x --llm-failures allow --max-retries 0
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.llm_options import add_endpoint_options
    from speechkit.cli.score import add_bootstrap_options

    p = sub.add_parser("judge", help="LLM-judged scores of a run's meeting notes (beside scores.json's)",
                       description="Judge the meeting notes of a run with a language model against the "
                                   "workspace's gold notes: the paper's five summary dimensions and the action "
                                   "items' description quality, 1-5, with 95% bootstrap CIs over meetings and the "
                                   "judge model named.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, metavar="RUN", help="a run folder, or a --level all folder (l1, l2, l3)")
    p.add_argument("--workspace", "-w", type=Path, help="the workspace (default: the one RUN/run.json names)")
    add_endpoint_options(p, "fail (default): an unavailable endpoint or a failed request stops with an error "
                            "and writes nothing; allow: judge the rest and state the share not judged")
    add_bootstrap_options(p)
    p.set_defaults(handler=run)


def judge_options(args: argparse.Namespace):
    """The judge's options from the command line, checked as a recipe's are (``--timeout-s: ...``)."""
    from speechkit.cli.llm_options import endpoint_settings, options_from_args
    from speechkit.steps.judge import JudgeOptions

    return options_from_args(JudgeOptions, endpoint_settings(args))


def run(args: argparse.Namespace) -> int:
    from speechkit.core.stage import Spec
    from speechkit.core.step import StepJob
    from speechkit.io.run_folder import RunFolder, level_folders
    from speechkit.postrun import run_step_on_finished
    from speechkit.report.comparison import remake_level_comparison
    from speechkit.steps.judge import DEFAULT_BACKEND, format_judged

    spec = Spec("judge", DEFAULT_BACKEND, judge_options(args))
    for k, run in enumerate(level_folders(args.run)):
        started = time.perf_counter()
        job = StepJob(run.workspace(args.workspace), args.resamples, args.seed)
        judged = run_step_on_finished(run, spec, job, args.cache_dir or args.run / "cache" / "llm")
        print(("\n" if k else "") + format_judged(judged, run.root))
        print(f"wrote {run.file(RunFolder.JUDGED)} ({time.perf_counter() - started:.1f} s)")
    if (remade := remake_level_comparison(args.run)) is not None:
        print(f"wrote {remade} (the levels compared again)")
    return 0
