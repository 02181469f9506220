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
dropped. The transcript is read whole, in parts of --transcript-bytes that the probes take in
turn. --strategy random is the random-probing baseline: demands drawn uniformly at random
(seeded by --seed) on the same budget; with both strategies (in one command, or one after the
other on the same options) probe.json compares their finding rates, overall and per demand.
Writes RUN/probe.json (every probe, its scores and label) and prints the finding rates with
their 95% intervals, the severity share, the findings by demand and the difference of the
strategies with its interval and Fisher's exact test (docs/qa.md). The endpoint and model:
--base-url/--model, else SPEECHKIT_LLM_BASE_URL/SPEECHKIT_LLM_MODEL, else the local server on the
packaged model (docs/llm.md); answers are cached (RUN/cache/llm).

examples:
  speechkit probe runs/whisper-demo --meeting m01 --iterations 2 --questions 2
  speechkit probe runs/whisper-demo --strategy ucb --strategy random   # the search against the baseline
  SPEECHKIT_LLM_BASE_URL=http://gpu-box:8000/v1 SPEECHKIT_LLM_MODEL=Qwen/Qwen2.5-7B-Instruct speechkit probe runs/x
"""

#: Search flag -> ProbeOptions field (each checked as a recipe's option is).
FLAGS = {"iterations": "iterations", "questions": "questions_per_iteration", "token_budget": "token_budget",
         "transcript_bytes": "transcript_bytes", "demand": "demands", "strategy": "strategies"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.llm_options import add_endpoint_options
    from speechkit.cli.score import bounded_int
    from speechkit.metrics.bootstrap import MAX_SEED, SEED
    from speechkit.steps.probe.loop import STRATEGIES

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
                   help="most UTF-8 bytes of each transcript in a prompt: the transcript is read whole, "
                        "in parts this long (default 6000)")
    p.add_argument("--demand", action="append", metavar="NAME",
                   help="a cognitive demand to search over (repeatable; default the eight of docs/qa.md)")
    p.add_argument("--strategy", action="append", choices=STRATEGIES,
                   help="ucb (the search, default) or random (the baseline); repeatable: both are compared")
    p.add_argument("--seed", metavar="N", type=bounded_int(MAX_SEED), default=SEED,
                   help=f"seed of the random strategy's draws, 0 to 2^63-1 (default {SEED})")
    add_endpoint_options(p, "fail (default): an unavailable endpoint stops before any probe, failed requests "
                            "stop with an error after probe.json is written; allow: go on")
    p.set_defaults(handler=run)


def probe_options(args: argparse.Namespace):
    """The probe's options from the command line, checked as a recipe's are (``--iterations: ...``)."""
    from speechkit.cli.llm_options import endpoint_settings, options_from_args
    from speechkit.steps.probe.loop import ProbeOptions

    given = {field: getattr(args, flag) for flag, field in FLAGS.items() if getattr(args, flag) is not None}
    for field in ("demands", "strategies"):
        if field in given:
            given[field] = tuple(given[field])
    return options_from_args(ProbeOptions, {**given, **endpoint_settings(args)}, FLAGS)


def run(args: argparse.Namespace) -> int:
    from speechkit.core.stage import Spec
    from speechkit.core.step import StepJob
    from speechkit.io.run_folder import RunFolder, level_folders
    from speechkit.metrics.bootstrap import RESAMPLES
    from speechkit.postrun import run_step_on_finished
    from speechkit.steps.probe import DEFAULT_BACKEND
    from speechkit.steps.probe.results import format_summary

    spec = Spec("probe", DEFAULT_BACKEND, probe_options(args))
    rates = {}
    for k, run in enumerate(level_folders(args.run)):
        started = time.perf_counter()
        meetings = tuple(args.meeting) if args.meeting else None
        job = StepJob(run.workspace(args.workspace), RESAMPLES, args.seed, meetings)
        document = run_step_on_finished(run, spec, job, args.cache_dir or args.run / "cache" / "llm")
        print(("\n" if k else "") + format_summary(document))
        print(f"wrote {run.file(RunFolder.PROBE)} ({time.perf_counter() - started:.1f} s)")
        for strategy, part in document["strategies"].items():
            rates.setdefault(strategy, {})[f"L{document['level']}"] = part["summary"]["finding_rate"]
    for strategy, levels in rates.items():
        if len(levels) > 1:
            print(f"\nfinding rate per level ({strategy}): " + ", ".join(
                f"{level} {'n/a' if rate is None else f'{rate:.1%}'}" for level, rate in levels.items()))
    return 0
