"""``speechkit export``: a workspace (synthetic ones included) or a run to other toolkits' formats."""
from __future__ import annotations

import argparse
from pathlib import Path

#: The single-file formats: what the file is for, and what it holds of a workspace and of a run.
FILE_FORMATS = {
    "seglst": ("SegLST JSON (meeteval: cpWER, tcpWER)",
               "the reference transcripts (speaker = person id), or the run's transcripts (<meeting>.json)"),
    "rttm": ("RTTM (pyannote.metrics, md-eval: DER)",
             "the reference speaker turns DER scores, or the run's speaker turns (<meeting>.rttm, its "
             "diarization; never turns made from transcript segments)"),
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.corpora.to_scoring_files import SUFFIXES

    p = sub.add_parser("export", help="export a workspace as Lhotse manifests, or its references or a run's "
                                      "hypotheses as SegLST or RTTM",
                       description="Export a workspace or a run to another toolkit's formats.")
    kinds = p.add_subparsers(dest="target", metavar="FORMAT", required=True)
    lh = kinds.add_parser(
        "lhotse", help="recordings, supervisions and cuts manifests (.jsonl.gz)",
        description="Write OUT/recordings.jsonl.gz, supervisions.jsonl.gz and cuts.jsonl.gz: one recording and "
                    "one cut per meeting (audio by absolute path; the cut's custom field holds date, title, "
                    "kind), one supervision per reference segment (speaker = person id, text, word alignment "
                    "when the reference has word times). `speechkit import lhotse --cuts OUT/cuts.jsonl.gz` "
                    "gives the workspace back.")
    lh.add_argument("--workspace", "-w", type=Path, required=True, help="workspace folder (with workspace.yaml)")
    lh.add_argument("--out", "-o", type=Path, required=True, help="folder for the manifests (created if missing)")
    lh.set_defaults(handler=run_lhotse)
    for fmt, (what, holds) in FILE_FORMATS.items():
        ref, hyp = f"OUT/reference{SUFFIXES[fmt]}", f"OUT/hypothesis{SUFFIXES[fmt]}"
        f = kinds.add_parser(
            fmt, help=f"a workspace's references or a run's hypotheses as one {what} file",
            description=f"Write a workspace's references ({ref}) or a run's hypotheses ({hyp}) as one {what} "
                        f"file holding every meeting as a session: {holds}. `speechkit score --ref {ref} --hyp "
                        f"{hyp}` scores one against the other.")
        source = f.add_mutually_exclusive_group(required=True)
        source.add_argument("--workspace", "-w", type=Path,
                            help="workspace folder (with workspace.yaml): its references")
        source.add_argument("--run", "-r", type=Path,
                            help="run folder (its transcripts/, or a folder of hypotheses as `score --run` takes)")
        f.add_argument("--out", "-o", type=Path, required=True, help="folder for the file (created if missing)")
        f.set_defaults(handler=run_file_export, target_format=fmt)


def run_lhotse(args: argparse.Namespace) -> int:
    from speechkit.corpora.to_lhotse import export_lhotse
    from speechkit.errors import SpeechkitError
    from speechkit.io.manifest import load_workspace

    ws = load_workspace(args.workspace)
    try:
        written = export_lhotse(ws, args.out)
    except OSError as exc:
        raise SpeechkitError(f"{exc.filename or args.out}: {exc.strerror or exc}") from None
    print(f"exported {ws.name!r} ({len(ws.meetings)} meetings) -> " + ", ".join(str(p) for p in written.values()))
    return 0


def run_file_export(args: argparse.Namespace) -> int:
    from speechkit.corpora.to_scoring_files import SUFFIXES, run_hypotheses, workspace_references, write_export
    from speechkit.io.atomic import check_output_folder
    from speechkit.io.manifest import load_workspace

    fmt = args.target_format
    check_output_folder(args.out)
    if args.workspace is not None:
        export, name = workspace_references(load_workspace(args.workspace), fmt), "reference"
    else:
        export, name = run_hypotheses(args.run, fmt), "hypothesis"
    target = args.out / f"{name}{SUFFIXES[fmt]}"
    write_export(export, fmt, target)
    print(f"exported {len(export.transcripts)} session(s) -> {target}")
    for meeting, reason in export.left_out.items():
        print(f"left out {meeting}: {reason}")
    return 0
