"""``speechkit compare``: paired comparison of runs of one workspace (deltas with paired bootstrap CIs)."""
from __future__ import annotations

import argparse
from pathlib import Path

EPILOG = """\
Each RUN is a run folder (what `speechkit run` or `speechkit recipe` wrote; it holds scores.json)
or a scores.json file. The first run is the baseline: every other run's aggregate minus the
baseline's, per metric, with a 95% paired bootstrap CI over meetings (both runs scored on the same
resample of meetings); `*` marks a delta whose CI excludes 0, over at least --min-meetings
meetings (fewer: no significance is claimed, and the reason is printed). Runs of different workspaces, of
different meetings or scored against different references are refused. Method:
docs/scores-schema.md, "Paired comparisons".

examples:
  speechkit compare runs/whisper-demo/l1 runs/whisper-demo/l2 runs/whisper-demo/l3
  speechkit compare runs/tiny runs/base --out runs/tiny-vs-base --per-meeting wer,der,term_recall
"""


def _metrics(text: str) -> tuple[str, ...]:
    from speechkit.scoring.catalogue import catalogue
    known = catalogue().table_order
    names = tuple(m.strip() for m in text.split(",") if m.strip())
    unknown = [m for m in names if m not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown metric {', '.join(unknown) or '(none)'}; "
                                         f"expected some of {', '.join(known)}")
    return names


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.score import add_bootstrap_options, bounded_int
    from speechkit.metrics.bootstrap import MAX_MIN_MEETINGS, MIN_MEETINGS

    p = sub.add_parser("compare", help="paired comparison of runs of one workspace (deltas with CIs)",
                       description="Compare runs of one workspace (two ASR backends, two models, two context "
                                   "levels ...): aggregates, paired deltas against the first run with 95% "
                                   "paired bootstrap CIs over meetings, and per-meeting values.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN", help="run folders or scores.json files (2 or more)")
    p.add_argument("--out", "-o", type=Path, help="write comparison.md, .html, .json and .png into this folder")
    p.add_argument("--metrics", type=_metrics, help="metrics to compare, comma-separated (default: all)")
    p.add_argument("--per-meeting", type=_metrics, default=("wer", "der"),
                   help="metrics of the per-meeting tables, comma-separated (default: wer,der)")
    add_bootstrap_options(p)
    p.add_argument("--min-meetings", metavar="N", type=bounded_int(MAX_MIN_MEETINGS), default=MIN_MEETINGS,
                   help=f"fewest meetings over which a delta is called significant, 0 to {MAX_MIN_MEETINGS} "
                        f"(default {MIN_MEETINGS})")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.compare import CompareError, compare, load_run
    from speechkit.report.comparison import comparison_markdown, write_comparison
    from speechkit.scoring.catalogue import catalogue

    if len(args.runs) < 2:
        raise CompareError(args.runs[0], "give at least two runs to compare")
    metrics = args.metrics or catalogue().table_order
    comparison = compare([load_run(path) for path in args.runs], metrics, args.resamples, args.seed,
                         args.min_meetings)
    print(comparison_markdown(comparison, args.per_meeting), end="")
    if args.out:
        from speechkit.io.atomic import check_output_folder
        check_output_folder(args.out)
        args.out.mkdir(parents=True, exist_ok=True)
        write_comparison(args.out, comparison, title="speechkit compare", per_meeting=args.per_meeting)
        print(f"wrote {args.out}/comparison.md, comparison.html, comparison.json")
    return 0
