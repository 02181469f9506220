"""``speechkit score``: score a run folder against a workspace, or one hypothesis file against a reference."""
from __future__ import annotations

import argparse
import gc
from collections.abc import Callable
from pathlib import Path

from speechkit.errors import SpeechkitError

EPILOG = """\
modes:
  speechkit score --workspace WS --run RUN_DIR [--out scores.json]
      RUN_DIR holds one SegLST file per meeting, <meeting_id>.json (or <meeting_id>.seglst.json);
      DER/JER score <meeting_id>.rttm beside it (a run's speaker turns); a meeting without one
      has DER/JER n/a, unless --der-from-segments scores its transcript segments as turns.
      Its notes and answers lie as in a run folder (the layout a system of your own writes:
      docs/systems.md). References come from the workspace manifest; scores.json goes to
      RUN_DIR/scores.json unless --out says otherwise.
  speechkit score --ref FILE --hyp FILE [--session ID] [--out scores.json]
      Any supported format (.stm, .rttm, .ctm, .json SegLST). Metrics that need what a format
      lacks (RTTM: words; CTM: speakers; STM/RTTM/CTM hypotheses: speaker names) are reported
      as n/a with the reason: DER/JER need a hypothesis of speaker turns (.rttm; the segments of
      a transcript only with --der-from-segments), named-speaker accuracy and consistency a
      hypothesis that names someone (SegLST speaker_name). Writes scores.json only with --out.

metrics (docs/scores-schema.md): WER, number recall, technical-term recall, cross-meeting
speaker-identity consistency, named-speaker accuracy, DER, JER, cpWER, tcpWER; and the meeting
notes (the run folder's notes of each meeting, docs/architecture.md "The run folder") against the
workspace's gold notes: assignee accuracy, action-item precision/recall/F1, decision recall,
summary fact recall, entity precision and number recall; aggregates are micro over meetings with
95% bootstrap CIs over meetings.
"""


MAX_COLLAR_S = 3600.0


def _collar(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= MAX_COLLAR_S:
        raise argparse.ArgumentTypeError(f"expected a number of seconds from 0 to {MAX_COLLAR_S:g}, "
                                         f"got {text[:40]!r}")
    return value


def add_bootstrap_options(p: argparse.ArgumentParser) -> None:
    """``--seed`` and ``--resamples`` of the bootstrap CIs (score and compare share them)."""
    from speechkit.metrics.bootstrap import MAX_RESAMPLES, MAX_SEED, RESAMPLES, SEED

    p.add_argument("--seed", metavar="N", type=bounded_int(MAX_SEED), default=SEED,
                   help=f"seed of the bootstrap resampling, 0 to 2^63-1 (default {SEED})")
    p.add_argument("--resamples", metavar="N", type=bounded_int(MAX_RESAMPLES), default=RESAMPLES,
                   help=f"bootstrap resamples over meetings, 0 to {MAX_RESAMPLES} (default {RESAMPLES}; 0: no CI)")


def bounded_int(top: int) -> Callable[[str], int]:
    """An argparse type: a whole number from 0 to ``top`` (bounded so memory and numpy stay in range)."""
    def parse(text: str) -> int:
        text = text.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 20 or int(text) > top:
            raise argparse.ArgumentTypeError(f"expected a whole number from 0 to {top}, got {text[:40]!r}")
        return int(text)
    return parse


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    from speechkit.metrics.cpwer import TCP_COLLAR
    from speechkit.metrics.diarization import COLLAR

    p = subparsers.add_parser(
        "score", help="score hypotheses against references; print a table and write scores.json",
        description="Score transcripts: per meeting and aggregated over meetings with 95% bootstrap CIs.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ws = p.add_argument_group("workspace mode")
    ws.add_argument("--workspace", metavar="WS", type=Path,
                    help="workspace folder (or its workspace.yaml) holding the references")
    ws.add_argument("--run", metavar="RUN_DIR", type=Path,
                    help="folder of hypotheses, one SegLST file <meeting_id>.json per meeting")
    pair = p.add_argument_group("single pair mode")
    pair.add_argument("--ref", metavar="FILE", type=Path, help="reference transcript (.stm, .rttm, .ctm, .json)")
    pair.add_argument("--hyp", metavar="FILE", type=Path, help="hypothesis transcript (.stm, .rttm, .ctm, .json)")
    pair.add_argument("--session", metavar="ID",
                      help="score only this session id of the files (default: every reference session)")
    p.add_argument("--out", metavar="FILE", type=Path,
                   help="where to write scores.json (default: RUN_DIR/scores.json in workspace mode; "
                        "not written in single pair mode unless given)")
    p.add_argument("--collar", metavar="S", type=_collar, default=COLLAR,
                   help=f"DER/JER collar in seconds on EACH side of reference boundaries (default {COLLAR})")
    p.add_argument("--uem", metavar="FILE", type=Path,
                   help="NIST UEM file (<file> <channel> <start> <end> per line): DER/JER score only inside "
                        "each meeting's regions (default: from its first to its last turn); every scored "
                        "meeting must be listed")
    p.add_argument("--der-from-segments", action="store_true",
                   help="score DER/JER of a hypothesis without speaker turns (no RTTM) on its transcript "
                        "segments, which cut turns where words stop (default: DER/JER n/a for it)")
    p.add_argument("--exclude-backchannels", action="store_true",
                   help="leave the reference's backchannels (segments marked \"backchannel\": true) and the "
                        "hypothesis words that transcribe them out of WER and the other word metrics")
    p.add_argument("--tcp-collar", metavar="S", type=_collar, default=TCP_COLLAR,
                   help=f"tcpWER collar in seconds (default {TCP_COLLAR:g})")
    add_bootstrap_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Score, print the table to stdout and write scores.json."""
    # Scoring builds millions of small objects (the aligned word pairs) that live until the end:
    # collecting young objects every 700 allocations (Python's default) took about 30% of the time
    # of a 100,000-line STM. This process only scores, so collect as mypy's command line does.
    gc.set_threshold(200_000, 30, 30)
    from speechkit.io.run_folder import RunFolder
    from speechkit.io.uem import read_uem
    from speechkit.metrics.bootstrap import MIN_MEETINGS
    from speechkit.scoring import ScoreOptions, format_table, score_files, score_workspace

    options = ScoreOptions(collar=args.collar, tcp_collar=args.tcp_collar, resamples=args.resamples, seed=args.seed,
                           uem=read_uem(args.uem) if args.uem is not None else None,
                           der_from_segments=args.der_from_segments,
                           exclude_backchannels=args.exclude_backchannels)
    workspace_mode = args.workspace is not None or args.run is not None
    pair_mode = args.ref is not None or args.hyp is not None
    if workspace_mode == pair_mode:
        raise SpeechkitError("give either --workspace and --run, or --ref and --hyp")
    if workspace_mode:
        if args.workspace is None or args.run is None:
            raise SpeechkitError("workspace mode needs both --workspace and --run")
        if args.session is not None:
            raise SpeechkitError("--session applies to --ref/--hyp only")
        out = args.out or RunFolder(args.run).scores
        scores = score_workspace(args.workspace, args.run, options, out=out)
    else:
        if args.ref is None or args.hyp is None:
            raise SpeechkitError("single pair mode needs both --ref and --hyp")
        out = args.out
        scores = score_files(args.ref, args.hyp, args.session, options, out=out)
    print(format_table(scores))
    meetings = len(scores["meetings"])
    if args.resamples and meetings < MIN_MEETINGS:
        print(f"n={meetings} meeting(s) < {MIN_MEETINGS}: CIs over so few meetings are too narrow to mean much")
    if out is not None:
        print(f"\nwrote {out}")
    return 0
