"""``speechkit import``: real corpora to workspaces (Lhotse manifests, a folder of recordings).

See docs/real-corpora.md. Both subcommands build the workspace in a temporary folder beside
``--out`` and rename it at the end: a failed import writes no workspace.
"""
from __future__ import annotations

import argparse
from pathlib import Path


def _channel(value: str) -> int | None:
    if value == "mix":
        return None
    try:
        index = int(value)
    except ValueError:
        index = -1
    if index < 0:
        raise argparse.ArgumentTypeError(f"expected 'mix' or a channel index >= 0, got {value!r}")
    return index


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", "-o", type=Path, required=True,
                   help="workspace folder to create (must be new or empty)")
    p.add_argument("--name", help="workspace name (default: the series key, else the folder name)")
    p.add_argument("--channel", type=_channel, default=None, metavar="mix|N",
                   help="keep the mix of all channels (default) or channel N (0-based) of every recording")
    p.add_argument("--people", type=Path, metavar="CSV",
                   help="people CSV: id,name[,nicknames][,role][,enrollments] (';' separates several values)")
    terms = p.add_mutually_exclusive_group()
    terms.add_argument("--terms", type=Path, metavar="FILE",
                       help="term list: YAML with numbers/jargon, or one term per line (default: derive from "
                            "the references: rare words and numbers spoken in at least two meetings)")
    terms.add_argument("--no-terms", action="store_true", help="no term list (number/term recall n/a)")
    e = p.add_argument_group("enrollments cut from a meeting of the series")
    e.add_argument("--enroll-from", metavar="MEETING",
                   help="cut each person's solo speech from this meeting ('first': the first of the series) "
                        "as their enrollment; the meeting becomes enrollment-only (not run, not scored)")
    e.add_argument("--enroll-min-seconds", type=float, metavar="S", default=3.0,
                   help="enroll a person only with at least this much solo speech (default 3)")
    e.add_argument("--enroll-max-seconds", type=float, metavar="S", default=30.0,
                   help="at most this much per person (default 30)")
    e.add_argument("--enroll-min-piece", type=float, metavar="S", default=0.5,
                   help="ignore solo stretches shorter than this, in seconds (default 0.5)")


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("import", help="import a real corpus (Lhotse manifests, a folder) as a workspace",
                       description="Import real meetings as a workspace. See docs/real-corpora.md.")
    kinds = p.add_subparsers(dest="source", metavar="SOURCE", required=True)
    lh = kinds.add_parser(
        "lhotse", help="Lhotse RecordingSet + SupervisionSet manifests, or a CutSet",
        description="One meeting per recording; references from the supervisions (speaker turns; words "
                    "when they have text, word times when they carry a word alignment); people from the "
                    "speaker ids. --series groups recordings into series by a pattern over their ids "
                    "(preset 'ami': ES2002a..d -> ES2002); one series is imported per workspace.")
    lh.add_argument("--recordings", type=Path, nargs="+", default=[], metavar="FILE",
                    help="RecordingSet manifest(s) (e.g. ami-ihm-mix_recordings_train.jsonl.gz)")
    lh.add_argument("--supervisions", type=Path, nargs="+", default=[], metavar="FILE",
                    help="SupervisionSet manifest(s)")
    lh.add_argument("--cuts", type=Path, nargs="+", default=[], metavar="FILE",
                    help="CutSet manifest(s), instead of or besides recordings and supervisions")
    lh.add_argument("--series", metavar="REGEX",
                    help="pattern over recording ids whose first group is the series key ('ami' = "
                         r"'^([A-Z]{2}\d{4})[a-z]$'); ids it does not match are left out")
    lh.add_argument("--select", metavar="KEY", help="the series to import when the pattern finds several")
    lh.add_argument("--order", choices=("id", "date"), default="id",
                    help="calendar order by recording id (default) or by the cuts' custom 'date'")
    lh.add_argument("--allow-url", action="store_true",
                    help="read recordings whose audio source is a URL (downloaded by lhotse); without it only "
                         "audio files are read, and other source types (command, memory, ...) never are")
    _common(lh)
    lh.set_defaults(handler=run_lhotse)
    fo = kinds.add_parser(
        "folder", help="a folder of recordings with STM / SegLST / RTTM references and a people CSV",
        description="Audio files plus references matched by session id (= audio file name without "
                    "extension): STM or SegLST JSON for words, RTTM for speaker turns. A people.csv in the "
                    "folder (or --people) names the speakers. Meetings are ordered by id.")
    fo.add_argument("folder", type=Path, help="the folder to import")
    _common(fo)
    fo.set_defaults(handler=run_folder)


def _options(args: argparse.Namespace) -> dict:
    from speechkit.corpora.enroll import EnrollmentOptions
    from speechkit.corpora.terms import read_terms

    enrollment = None
    if args.enroll_from:
        enrollment = EnrollmentOptions(args.enroll_from, args.enroll_min_seconds, args.enroll_max_seconds,
                                       args.enroll_min_piece)
    return {"terms": read_terms(args.terms) if args.terms else None, "derive": not args.no_terms,
            "enrollment": enrollment, "channel": args.channel, "name": args.name}


def _report(ws) -> int:
    scored = len(ws.scored_meetings)
    terms = ws.metadata.get("terms", {}).get("source", "none")
    print(f"wrote workspace {ws.name!r}: {len(ws.people)} people, {scored} meeting(s) to run and score"
          + (f", {len(ws.meetings) - scored} enrollment-only" if scored < len(ws.meetings) else "")
          + f"; terms: {len(ws.terms.numbers)} numbers, {len(ws.terms.jargon)} jargon ({terms}) -> {ws.manifest_path}")
    enrollment = ws.metadata.get("enrollment")
    if enrollment:
        print(f"enrollments cut from {enrollment['meeting']}: {', '.join(enrollment['persons']) or 'nobody'}")
        for pid, why in enrollment["not_enrolled"].items():
            print(f"  not enrolled: {pid}: {why}")
    left_out = ws.metadata.get("import", {}).get("series", {}).get("left_out")
    if left_out:
        print(f"left out {len(left_out)} recording(s) of other series or not matching --series")
    return 0


def run_lhotse(args: argparse.Namespace) -> int:
    from speechkit.corpora.from_lhotse import import_lhotse
    from speechkit.corpora.people import read_people
    from speechkit.errors import SpeechkitError

    if not args.cuts and not (args.recordings and args.supervisions):
        raise SpeechkitError("give --recordings and --supervisions, or --cuts")
    try:
        ws = import_lhotse(args.out, recordings=args.recordings, supervisions=args.supervisions, cuts=args.cuts,
                           series=args.series, select=args.select, order=args.order, allow_url=args.allow_url,
                           people=read_people(args.people) if args.people else (), **_options(args))
    except OSError as exc:
        raise SpeechkitError(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    return _report(ws)


def run_folder(args: argparse.Namespace) -> int:
    from speechkit.corpora.folder import import_folder
    from speechkit.errors import SpeechkitError

    try:
        ws = import_folder(args.folder, args.out, people=args.people, **_options(args))
    except OSError as exc:
        raise SpeechkitError(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    return _report(ws)
