"""``speechkit export``: a workspace (synthetic ones included) to other toolkits' formats."""
from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="export a workspace as Lhotse manifests",
                       description="Export a workspace to another toolkit's formats.")
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
