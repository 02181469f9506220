"""``speechkit probe``: search for the questions about a meeting a run answers badly (Evaluation-as-Search)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

EPILOG = """\
RUN is a run folder (what `speechkit run` or `speechkit recipe` wrote: run.json, the transcripts,
the notes, the contexts), or the folder of `speechkit recipe --level all`, whose level folders l1, l2, l3
are each probed (compare their finding rates). Per meeting, for at most --iterations iterations
and --token-budget estimated tokens: UCB over cognitive demands picks --questions demands; a
generator writes a question from the reference transcript, a self-verifier checks it (one
replacement); a question too like an earlier one is dropped; the system answers from its own
output at its level (its transcript, notes and context); a judge that sees only the reference
transcript, the question and the answer scores faithfulness and completeness 1-5 (finding: the
lower at most 3, severe at most 2; near miss: 4). A demand with 4 probes and no finding is
dropped. Writes RUN/probe.json (every probe, its scores and label) and prints the finding rate,
the severity share and the findings by demand (docs/qa.md). The endpoint and model:
--base-url/--model, else SPEECHKIT_LLM_BASE_URL/SPEECHKIT_LLM_MODEL, else the local server on the
packaged model (docs/llm.md); answers are cached (RUN/cache/llm).

examples:
  speechkit probe runs/whisper-demo --meeting m01 --iterations 2 --questions 2
  SPEECHKIT_LLM_BASE_URL=http://gpu-box:8000/v1 SPEECHKIT_LLM_MODEL=Qwen/Qwen2.5-7B-Instruct speechkit probe runs/x
"""

#: Search flag -> ProbeOptions field (each checked as a recipe's option is).
FLAGS = {"iterations": "iterations", "questions": "questions_per_iteration", "token_budget": "token_budget",
         "transcript_bytes": "transcript_bytes", "demand": "demands"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.llm_options import add_endpoint_options

    p = sub.add_parser("probe", help="adaptive probing: questions a run answers badly, judged by an LLM",
                       description="Search for the questions about a meeting that a run answers badly from its "
                                   "own output: UCB over cognitive demands, self-verified novel questions, a "
                                   "blind judge (paper: Evaluation-as-Search).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, metavar="RUN", help="a run folder, or a --level all folder (l1, l2, l3)")
    p.add_argument("--workspace", "-w", type=Path, help="the workspace (default: the one RUN/run.json names)")
    p.add_argument("--meeting", action="append", metavar="ID", help="probe this meeting (repeatable; default all)")
    p.add_argument("--iterations", type=int, metavar="N", help="I_max: most iterations per meeting (default 20)")
    p.add_argument("--questions", type=int, metavar="K", help="K: probes per iteration (default 10)")
    p.add_argument("--token-budget", type=int, metavar="N",
                   help="most estimated tokens per meeting, prompts and answers (default 200000)")
    p.add_argument("--transcript-bytes", type=int, metavar="N",
                   help="most UTF-8 bytes of each transcript in a prompt (default 6000)")
    p.add_argument("--demand", action="append", metavar="NAME",
                   help="a cognitive demand to search over (repeatable; default the eight of docs/qa.md)")
    add_endpoint_options(p, "fail (default): an unavailable endpoint stops before any probe, failed requests "
                            "stop with an error after probe.json is written; allow: go on")
    p.set_defaults(handler=run)


def probe_options(args: argparse.Namespace):
    """The probe's options from the command line, checked as a recipe's are (``--iterations: ...``)."""
    from speechkit.cli.llm_options import endpoint_settings, options_from_args
    from speechkit.steps.probe.loop import ProbeOptions

    given = {field: getattr(args, flag) for flag, field in FLAGS.items() if getattr(args, flag) is not None}
    if "demands" in given:
        given["demands"] = tuple(given["demands"])
    return options_from_args(ProbeOptions, {**given, **endpoint_settings(args)}, FLAGS)


def run(args: argparse.Namespace) -> int:
    from speechkit.core.stage import Spec
    from speechkit.core.step import StepJob
    from speechkit.io.run_folder import RunFolder, level_folders
    from speechkit.metrics.bootstrap import RESAMPLES, SEED
    from speechkit.postrun import run_step_on_finished
    from speechkit.steps.probe import DEFAULT_BACKEND
    from speechkit.steps.probe.results import format_summary

    spec = Spec("probe", DEFAULT_BACKEND, probe_options(args))
    rates = {}
    for k, run in enumerate(level_folders(args.run)):
        started = time.perf_counter()
        job = StepJob(run.workspace(args.workspace), RESAMPLES, SEED, tuple(args.meeting) if args.meeting else None)
        document = run_step_on_finished(run, spec, job, args.cache_dir or args.run / "cache" / "llm")
        print(("\n" if k else "") + format_summary(document))
        print(f"wrote {run.file(RunFolder.PROBE)} ({time.perf_counter() - started:.1f} s)")
        rates[f"L{document['level']}"] = document["summary"]["finding_rate"]
    if len(rates) > 1:
        print("\nfinding rate per level: " + ", ".join(
            f"{level} {'n/a' if rate is None else f'{rate:.1%}'}" for level, rate in rates.items()))
    return 0
