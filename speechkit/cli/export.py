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
    inputs = kinds.add_parser(
        "inputs", help="what a context level gives each meeting, for a meeting system of your own",
        description="Write OUT/<meeting>/ for each meeting in calendar order (OUT/meetings.txt lists them): "
                    "inputs.json (the audio, the CONTEXT block and its parts, roster names, voice enrollments, "
                    "vocabulary, speaker count, the questions asked; at L2 and L3 the earlier meetings), "
                    "context.txt (the CONTEXT block) and, at L2 and L3, earlier/ (the system's own outputs for "
                    "the earlier meetings, read from --outputs). Run the system as `PROGRAM OUT/<meeting> "
                    "OUTPUTS`, then `speechkit score --workspace WS --run OUTPUTS`; docs/systems.md.")
    inputs.add_argument("workspace", metavar="WS", type=Path, help="workspace folder (with workspace.yaml)")
    inputs.add_argument("--level", "-L", type=int, choices=(1, 2, 3), required=True, help="context level")
    inputs.add_argument("out", metavar="OUT", type=Path, help="folder for the inputs (created if missing)")
    inputs.add_argument("--outputs", metavar="DIR", type=Path,
                        help="L2 and L3: the folder the system writes its outputs into; a meeting's inputs are "
                             "written once the earlier meetings' outputs are there")
    inputs.add_argument("--meeting", metavar="ID", help="write this meeting's inputs only")
    inputs.add_argument("--recipe", default="command",
                        help="the recipe whose context budgets apply (default: command, what `speechkit recipe "
                             "--asr command` runs)")
    inputs.set_defaults(handler=run_inputs)
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


def run_inputs(args: argparse.Namespace) -> int:
    from speechkit.io.atomic import check_output_folder
    from speechkit.io.manifest import load_workspace
    from speechkit.recipe import load_recipe
    from speechkit.system_inputs import MEETINGS, export_inputs

    budget = load_recipe(args.recipe).context
    ws = load_workspace(args.workspace)
    check_output_folder(args.out)
    done = export_inputs(ws, args.level, args.out, budget, args.outputs, args.meeting)
    print(f"exported the L{args.level} inputs of {len(done.written)} meeting(s) -> {args.out} "
          f"({args.out / MEETINGS} lists them in calendar order)")
    if done.waiting:
        print(f"waiting for the system's outputs of {done.waiting_for} (in --outputs): {', '.join(done.waiting)}")
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
