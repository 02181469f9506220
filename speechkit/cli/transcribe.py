"""speechkit transcribe: the cascade on a single recording, with optional enrollments and hot words."""
from __future__ import annotations

import argparse
from pathlib import Path


def _enrollment(text: str) -> tuple[str, Path]:
    name, sep, clip = text.partition("=")
    if not sep or not name.strip() or not clip.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=CLIP, got {text!r}")
    return name.strip(), Path(clip.strip())


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcribe", help="speaker-attributed transcript of one recording",
                       description="Run VAD, ASR, diarization and (with --enroll) speaker identification "
                                   "on one recording; write SegLST (.json), RTTM and STM into OUT and print "
                                   "the transcript.")
    p.add_argument("audio", type=Path, help="audio file (wav, flac, mp3, m4a, ogg, ...)")
    p.add_argument("--out", "-o", type=Path, required=True, help="folder for <name>.json/.rttm/.stm")
    p.add_argument("--recipe", default="l1", help="recipe giving the stages and their options (default l1)")
    p.add_argument("--model", help="ASR model (registry name or path; default: the recipe's)")
    p.add_argument("--enroll", type=_enrollment, action="append", default=[], metavar="NAME=CLIP",
                   help="voice enrollment: name a speaker from a clip of their voice (repeatable)")
    p.add_argument("--hotwords", nargs="+", default=[], metavar="WORD", help="words and phrases to favour")
    p.add_argument("--prompt", help="text to prime the recognizer with (Whisper initial prompt)")
    p.add_argument("--channel", type=int, help="use only this channel (0-based) instead of the mono mix")
    p.add_argument("--speakers", type=int, help="number of speakers, if known (default: estimated)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override the recipe's device")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.asr import Biasing
    from speechkit.cascade import Cascade
    from speechkit.context import MeetingContext
    from speechkit.io import write_transcripts
    from speechkit.recipe import load_recipe

    recipe = load_recipe(args.recipe).with_overrides(model=args.model, device=args.device)
    context = MeetingContext(level=1, biasing=Biasing(prompt=args.prompt, hotwords=list(args.hotwords)),
                             enrollments={name: [clip] for name, clip in args.enroll})
    for name, clip in args.enroll:
        if not clip.is_file():
            raise SystemExit(f"speechkit transcribe: error: enrollment clip for {name!r} not found: {clip}")
    result = Cascade(recipe).run(args.audio, context, num_speakers=args.speakers, channel=args.channel)
    stem = args.audio.stem
    for ext in ("json", "rttm", "stm"):
        write_transcripts(args.out / f"{stem}.{ext}", [result.transcript])
    for seg in result.transcript.segments:
        who = seg.speaker_name or seg.speaker or "?"
        print(f"[{seg.start:7.2f} - {seg.end:7.2f}] {who}: {seg.text}")
    print(f"wrote {args.out}/{stem}.json, .rttm, .stm")
    return 0
