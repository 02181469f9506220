"""speechkit transcribe: the cascade on a single recording, with optional enrollments and hot words."""
from __future__ import annotations

import argparse
from pathlib import Path


def _enrollment(text: str) -> tuple[str, Path]:
    name, sep, clip = text.partition("=")
    if not sep or not name.strip() or not clip.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=CLIP, got {text!r}")
    return name.strip(), Path(clip.strip())


def _count(low: int, high: int):
    """An argparse type: a whole number from ``low`` to ``high``."""
    def parse(text: str) -> int:
        text = text.strip()
        if not (text.isascii() and text.isdigit()) or len(text) > 6 or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"expected a whole number from {low} to {high}, got {text[:40]!r}")
        return int(text)
    return parse


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("transcribe", help="speaker-attributed transcript of one recording",
                       description="Run VAD, ASR, diarization and (with --enroll) speaker identification "
                                   "on one recording; write the speaker-attributed transcript as SegLST (.json) and "
                                   "STM, the speaker turns (who spoke when, from diarization) as RTTM, into OUT, "
                                   "and print the transcript.")
    p.add_argument("audio", type=Path, help="audio file (wav, flac, mp3, m4a, ogg, ...)")
    p.add_argument("--out", "-o", type=Path, required=True,
                   help="folder for NAME.json/.rttm/.stm; NAME, also the session id inside them, is the audio "
                        "file's name without extension, each run of spaces replaced by _ ('my meeting.flac' -> "
                        "my_meeting)")
    p.add_argument("--recipe", default="whisper",
                   help="recipe giving the stages and their options (default whisper); its context level "
                        "does not apply: the context is what --enroll, --hotwords and --prompt give")
    p.add_argument("--model", help="ASR model (registry name or path; default: the recipe's)")
    p.add_argument("--enroll", type=_enrollment, action="append", default=[], metavar="NAME=CLIP",
                   help="voice enrollment: name a speaker from a clip of their voice (repeatable)")
    p.add_argument("--hotwords", nargs="+", default=[], metavar="WORD", help="words and phrases to favour")
    p.add_argument("--prompt", help="text to prime the recognizer with (Whisper initial prompt)")
    p.add_argument("--channel", type=_count(0, 1023), help="use only this channel (0-based) instead of the mono mix")
    p.add_argument("--speakers", type=_count(1, 100), help="number of speakers, if known, 1-100 (default: estimated)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override the recipe's device")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.stages.asr import Biasing
    from speechkit.cascade import Cascade
    from speechkit.context import MeetingContext
    from speechkit.devices import resolve_device
    from speechkit.errors import AudioError
    from speechkit.io import write_transcripts
    from speechkit.io.atomic import check_output_folder, check_target, refuse_inputs
    from speechkit.io.names import session_token
    from speechkit.recipe import load_recipe

    # Everything that can be checked is checked before the models run.
    stem = session_token(args.audio.stem)
    outputs = [args.out / f"{stem}.{ext}" for ext in ("json", "rttm", "stm")]
    check_output_folder(args.out)
    inputs = {"the audio file": args.audio, **{f"the enrollment clip of {name}": clip for name, clip in args.enroll}}
    for path in outputs:
        check_target(path)
        refuse_inputs(path, inputs)
    recipe = load_recipe(args.recipe).with_overrides(model=args.model, device=args.device)
    resolve_device(recipe.device)
    context = MeetingContext(biasing=Biasing(prompt=args.prompt, hotwords=list(args.hotwords)),
                             enrollments={name: [clip] for name, clip in args.enroll})
    for name, clip in args.enroll:
        if not clip.is_file():
            raise AudioError(clip, f"enrollment clip for {name!r} not found")
    result = Cascade(recipe).run(args.audio, context, session_id=stem, num_speakers=args.speakers,
                                 channel=args.channel)
    for path in outputs:  # the RTTM holds the speaker turns, the others the words
        write_transcripts(path, [result.speaker_turns if path.suffix == ".rttm" else result.transcript])
    for seg in result.transcript.segments:
        who = seg.speaker_name or seg.speaker or "?"
        print(f"[{seg.start:7.2f} - {seg.end:7.2f}] {who}: {seg.text}")
    print(f"wrote {args.out}/{stem}.json, .rttm, .stm")
    return 0
