"""``speechkit align``: question-answer pairs a run's transcripts yield, aligned with the gold ones (M3FinMeeting)."""
from __future__ import annotations

import argparse
import time
from pathlib import Path

EPILOG = """\
RUN is a run folder (run.json and transcripts/), or the folder of `speechkit recipe --level all`,
whose level folders l1, l2, l3 are each aligned. Per meeting, a language model lists the
question-answer pairs the run's own transcript answers (a JSON schema, at most --max-pairs); the
questions are aligned with the workspace's gold questions (meetings/<id>/questions.json), and the
run's summary sentences with the gold summary's (meetings/<id>/notes.json): two units align at a
sentence-embedding cosine of at least --threshold (0.75), many-to-many; precision = aligned
predicted / predicted, recall = aligned gold / gold, F1. Writes RUN/qa_pairs.json (per meeting and
over the run: the counts summed) and prints the figures (docs/qa.md). The endpoint and model:
--base-url/--model, else SPEECHKIT_LLM_BASE_URL/SPEECHKIT_LLM_MODEL, else the local server on the
packaged model (docs/llm.md); answers are cached (RUN/cache/llm).

examples:
  speechkit align runs/whisper-demo/l3
  SPEECHKIT_LLM_BASE_URL=http://gpu-box:8000/v1 SPEECHKIT_LLM_MODEL=Qwen/Qwen2.5-7B-Instruct speechkit align runs/x
"""

#: Flag -> PairsOptions field.
FLAGS = {"max_pairs": "max_pairs", "threshold": "threshold", "transcript_bytes": "transcript_bytes"}


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.llm_options import add_endpoint_options

    p = sub.add_parser("align", help="QA-pair and summary alignment of a run against the gold questions (LLM)",
                       description="Extract the question-answer pairs of each meeting from a run's transcript "
                                   "with a language model and align them, and the run's summaries, with the "
                                   "workspace's gold questions and summaries (precision, recall, F1).",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", type=Path, metavar="RUN", help="a run folder, or a --level all folder (l1, l2, l3)")
    p.add_argument("--workspace", "-w", type=Path, help="the workspace (default: the one RUN/run.json names)")
    p.add_argument("--max-pairs", type=int, metavar="N", help="most pairs asked per meeting (default 10)")
    p.add_argument("--threshold", type=float, help="similarity at which two units align (default 0.75)")
    p.add_argument("--transcript-bytes", type=int, metavar="N",
                   help="most UTF-8 bytes of each transcript in the prompt (default 6000)")
    add_endpoint_options(p, "fail (default): an unavailable endpoint or a failed request stops with an error "
                            "and writes nothing; allow: go on, the meetings without pairs say why")
    p.set_defaults(handler=run)


def _figures(alignment: dict | None) -> str:
    if alignment is None:
        return "n/a"
    shown = {k: "n/a" if alignment[k] is None else f"{alignment[k]:.3f}" for k in ("precision", "recall", "f1")}
    return (f"P {shown['precision']}  R {shown['recall']}  F1 {shown['f1']}  "
            f"({alignment['aligned_predicted']}/{alignment['predicted']} predicted, "
            f"{alignment['aligned_gold']}/{alignment['gold']} gold aligned)")


def run(args: argparse.Namespace) -> int:
    from speechkit.cli.llm_options import endpoint_settings, options_from_args
    from speechkit.core.stage import Spec
    from speechkit.core.step import StepJob
    from speechkit.io.run_folder import RunFolder, level_folders
    from speechkit.metrics.bootstrap import RESAMPLES, SEED
    from speechkit.postrun import run_step_on_finished
    from speechkit.steps.align import DEFAULT_BACKEND, PairsOptions

    given = {field: getattr(args, flag) for flag, field in FLAGS.items() if getattr(args, flag) is not None}
    spec = Spec("align", DEFAULT_BACKEND, options_from_args(PairsOptions, {**given, **endpoint_settings(args)}, FLAGS))
    for k, run in enumerate(level_folders(args.run)):
        started = time.perf_counter()
        job = StepJob(run.workspace(args.workspace), RESAMPLES, SEED)
        document = run_step_on_finished(run, spec, job, args.cache_dir or run.llm_cache)
        folder = run.root
        print(("\n" if k else "") + f"{folder} (similarity {document['similarity']}, "
              f"threshold {document['options']['threshold']:g}, model {document['endpoint']['model']})")
        print(f"  QA pairs   {_figures(document['run']['qa_pairs'])}")
        print(f"  summary    {_figures(document['run']['summary'])}")
        for mid, m in document["meetings"].items():
            if m["reason"]:
                print(f"  {mid}: {m['reason']}")
        print(f"wrote {run.file(RunFolder.PAIRS)} ({time.perf_counter() - started:.1f} s)")
    return 0
