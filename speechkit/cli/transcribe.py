"""speechkit transcribe: the cascade on a single recording, with optional enrollments and hot words."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from speechkit.io.run_folder import TRANSCRIPT


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


#: --output-format choices, each the file's extension (json is SegLST); by default the three that score.
OUTPUT_FORMATS = ("json", "rttm", "stm", "txt", "srt", "vtt")
DEFAULT_FORMATS = ("json", "rttm", "stm")
#: Where the outputs go without --out: this folder / the audio's NAME.
DEFAULT_OUT = Path(TRANSCRIPT.folder)


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.run import add_set_option

    p = sub.add_parser("transcribe", help="speaker-attributed transcript of one recording",
                       description="Run VAD, ASR, diarization and (with --enroll) speaker identification "
                                   "on one recording; write the speaker-attributed transcript (SegLST .json, "
                                   "STM, and on request plain text, SRT and WebVTT subtitles) and the speaker "
                                   "turns (who spoke when, from diarization) as RTTM into OUT, and print the "
                                   "transcript. The options below set the recipe's stage options and are "
                                   "checked as a recipe's are.")
    p.add_argument("audio", type=Path, help="audio file (wav, flac, mp3, m4a, ogg, ...)")
    p.add_argument("--out", "-o", type=Path,
                   help="folder for NAME.json/.rttm/.stm/...; default ./transcripts/NAME/. NAME, also the "
                        "session id inside them, is the audio file's name without extension, each run of "
                        "spaces replaced by _ ('my meeting.flac' -> my_meeting)")
    p.add_argument("--output-format", "-f", nargs="+", choices=OUTPUT_FORMATS, metavar="FORMAT",
                   help=f"what to write: {', '.join(OUTPUT_FORMATS)} (json is SegLST, rttm the speaker turns; "
                        f"several allowed; default: {' '.join(DEFAULT_FORMATS)})")
    p.add_argument("--recipe", default="whisper",
                   help="recipe giving the stages and their options (default whisper); its context level "
                        "does not apply: the context is what --enroll, --hotwords and --prompt give")
    p.add_argument("--model", help="ASR model (registry name or path; default: the recipe's)")
    p.add_argument("--language", help="spoken language code (asr.language; default: the recipe's, en; "
                                      "auto detects it)")
    p.add_argument("--compute-type", help="CTranslate2 compute type (asr.compute_type: int8, float16, ...; "
                                          "default: float16 on a GPU, int8 on a CPU)")
    p.add_argument("--batch-size", type=_count(1, 100_000), help="windows decoded at once (asr.batch_size)")
    p.add_argument("--beam-size", type=_count(1, 100_000), help="beam width (asr.beam_size)")
    p.add_argument("--speakers", type=_count(1, 100), help="number of speakers, if known, 1-100 (default: estimated)")
    p.add_argument("--min-speakers", type=_count(1, 100_000),
                   help="fewest speakers the estimate may give (diarize.min_speakers)")
    p.add_argument("--max-speakers", type=_count(1, 100_000),
                   help="most speakers the estimate may give (diarize.max_speakers)")
    p.add_argument("--enroll", type=_enrollment, action="append", default=[], metavar="NAME=CLIP",
                   help="voice enrollment: name a speaker from a clip of their voice (repeatable)")
    p.add_argument("--hotwords", nargs="+", default=[], metavar="WORD", help="words and phrases to favour")
    p.add_argument("--prompt", help="text to prime the recognizer with (Whisper initial prompt)")
    p.add_argument("--channel", type=_count(0, 1023), help="use only this channel (0-based) instead of the mono mix")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override the recipe's device")
    add_set_option(p)
    p.set_defaults(handler=run)


#: The options that set a recipe option: flag -> (its argparse name, the recipe option it sets).
STAGE_OPTIONS = {"--language": ("language", "asr.language"), "--compute-type": ("compute_type", "asr.compute_type"),
                 "--batch-size": ("batch_size", "asr.batch_size"), "--beam-size": ("beam_size", "asr.beam_size"),
                 "--min-speakers": ("min_speakers", "diarize.min_speakers"),
                 "--max-speakers": ("max_speakers", "diarize.max_speakers")}


def recipe_settings(args: argparse.Namespace) -> list[tuple[str, dict[str, Any]]]:
    """The recipe options the command line sets, each with the flag that set it (named in an
    error): the named options given, then ``--set`` (which wins). ``--language auto`` is None."""
    from speechkit.recipe import parse_settings

    out = []
    for flag, (name, key) in STAGE_OPTIONS.items():
        value = getattr(args, name)
        if value is not None:
            out.append((flag, {key: None if key == "asr.language" and value == "auto" else value}))
    return out + [("--set", parse_settings(args.settings))]


def check_speaker_counts(args: argparse.Namespace) -> None:
    """``--speakers`` within the bounds ``--min-speakers`` and ``--max-speakers`` give, where given
    beside it (the bounds alone are checked as the recipe's options are)."""
    from speechkit.recipe import RecipeError

    low, high = args.min_speakers, args.max_speakers
    if args.speakers is None or (low is None and high is None):
        return
    if args.speakers < (low or 1) or (high is not None and args.speakers > high):
        bounds = " and ".join(f"{flag} {value}" for flag, value in (("--min-speakers", low), ("--max-speakers", high))
                              if value is not None)
        raise RecipeError("--speakers", f"{args.speakers} speakers contradicts {bounds}")


def run(args: argparse.Namespace) -> int:
    from speechkit.cascade import Cascade
    from speechkit.devices import resolve_device
    from speechkit.errors import AudioError
    from speechkit.io import write_transcripts
    from speechkit.io.atomic import check_output_folder, check_target, refuse_inputs
    from speechkit.io.names import session_token
    from speechkit.io.subtitles import RENDERERS, write_subtitles
    from speechkit.meeting_context import Biasing, MeetingContext
    from speechkit.preflight import check_models
    from speechkit.recipe import load_recipe

    # Everything that can be checked is checked before the models run.
    check_speaker_counts(args)
    stem = session_token(args.audio.stem)
    out = args.out if args.out is not None else DEFAULT_OUT / stem
    formats = list(dict.fromkeys(args.output_format or DEFAULT_FORMATS))
    outputs = [out / f"{stem}.{ext}" for ext in formats]
    check_output_folder(out)
    inputs = {"the audio file": args.audio, **{f"the enrollment clip of {name}": clip for name, clip in args.enroll}}
    for path in outputs:
        check_target(path)
        refuse_inputs(path, inputs)
    recipe = load_recipe(args.recipe).with_overrides(model=args.model, device=args.device)
    for flag, settings in recipe_settings(args):
        recipe = recipe.with_settings(settings, source=flag, runs_steps=False)
    if "asr" in recipe.stages and hasattr(recipe.stages["asr"].options, "progress") and sys.stderr.isatty():
        recipe = recipe.with_settings({"asr.progress": True})
    check_models(recipe)  # every model is here: fail before torch loads or audio is read
    resolve_device(recipe.device)
    context = MeetingContext(biasing=Biasing(prompt=args.prompt, hotwords=list(args.hotwords)),
                             enrollments={name: [clip] for name, clip in args.enroll})
    for name, clip in args.enroll:
        if not clip.is_file():
            raise AudioError(clip, f"enrollment clip for {name!r} not found")
    result = Cascade(recipe).run(args.audio, context, session_id=stem, num_speakers=args.speakers,
                                 channel=args.channel)
    for path in outputs:  # the RTTM holds the speaker turns, the others the words
        if path.suffix[1:] in RENDERERS:
            write_subtitles(path, result.transcript)
        else:
            write_transcripts(path, [result.speaker_turns if path.suffix == ".rttm" else result.transcript])
    for seg in result.transcript.segments:
        who = seg.speaker_name or seg.speaker or "?"
        print(f"[{seg.start:7.2f} - {seg.end:7.2f}] {who}: {seg.text}")
    print(f"wrote {out}/{stem}.{', .'.join(formats)}")
    return 0
