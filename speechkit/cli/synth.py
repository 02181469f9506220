"""``speechkit synth``: generate a synthetic workspace (docs/synth.md)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from speechkit.synth import SynthOptions
    from speechkit.workspace import Workspace

#: speechkit.synth.acts.PHRASINGS (not imported here: building the parser loads no generator).
PHRASINGS = ("tuned", "held-out", "all")
#: speechkit.synth.language.CODES (not imported here either).
LANGUAGES = ("en", "zh", "ja", "mixed")


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "synth", help="generate a synthetic workspace with an exact latent state",
        description="Generate a synthetic workspace: people, projects, jargon, meetings with offline TTS audio, "
                    "exact references, enrollments and artifacts. Same options and seed give the same bytes.")
    p.add_argument("--out", required=True, help="folder to write the workspace into (created if missing)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--meetings", type=int, default=6, help="number of meetings (default 6)")
    p.add_argument("--people", type=int, default=6, help="number of people, 2-10, one distinct voice each (default 6)")
    p.add_argument("--minutes", type=_minutes, default=1.5, metavar="X|PRESET",
                   help="target length of each meeting in minutes, more than 0 and at most 30, or a preset: "
                        "'paper' follows the OSynth paper's meeting lengths (stand-ups 12, reviews 20, 1:1s 16; "
                        "docs/synth.md) (default 1.5)")
    p.add_argument("--difficulty", choices=("clean", "mixed", "hard"), default="mixed",
                   help="acoustics: clean close-talk mixes, hard (reverberant room, noise, remote participants "
                        "over a codec) or mixed, alternating (default mixed)")
    p.add_argument("--projects", type=int, default=3, help="number of projects, 1-5 (default 3)")
    p.add_argument("--phrasing", choices=PHRASINGS, default="all",
                   help="phrasing families the dialogue acts are written with: the tuned ones, the held-out ones "
                        "(which no rule-based component may be developed on) or all (default all)")
    p.add_argument("--language", choices=LANGUAGES, default="en",
                   help="what the meetings are spoken in: English, Chinese (Mandarin), Japanese, or mixed: Chinese or "
                        "Japanese turns with English jargon, tickers and numbers (default en; docs/synth.md)")
    p.add_argument("--languages", type=_codes, default=(), metavar="BASE,en",
                   help="with --language mixed: the two languages, zh,en or ja,en (default zh,en)")
    p.add_argument("--name", help="workspace name (default synth-SEED)")
    p.add_argument("--no-voice-check", action="store_true",
                   help="skip measuring voice similarity with Resemblyzer (faster; no similarity figures in metadata)")
    p.add_argument("--paraphrase", action="store_true",
                   help="rewrite each turn through the LLM the environment names ($SPEECHKIT_LLM_BASE_URL and "
                        "$SPEECHKIT_LLM_MODEL, else the local server), keeping a rewrite only if every name, term, "
                        "number, day and option survives as written and none is added; counts in truth/state.json")
    p.add_argument("--llm-failures", choices=("fail", "allow"), default="fail",
                   help="with --paraphrase: stop at an unreachable endpoint or a failed request (fail, default), "
                        "or keep the template turn of every failed request and count it (allow)")
    p.set_defaults(handler=run)


def _minutes(text: str) -> float | str:
    from speechkit.synth.options import LENGTH_PRESETS, MAX_MINUTES

    if text in LENGTH_PRESETS:
        return text
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= MAX_MINUTES:
        raise argparse.ArgumentTypeError(f"expected minutes more than 0 and at most {MAX_MINUTES:g}, or a preset "
                                         f"({', '.join(LENGTH_PRESETS)}), got {text[:40]!r}")
    return value


def synthesize_into(out: str, options: SynthOptions, progress: Callable[[str], None]) -> Workspace:
    """:func:`speechkit.synth.synthesize_workspace` into ``out``, checked first; a folder this
    call created is removed again when the synthesis fails (an unreachable --paraphrase
    endpoint, Ctrl-C): a failed synth leaves nothing behind."""
    from speechkit.io.atomic import check_output_folder
    from speechkit.synth import synthesize_workspace

    check_output_folder(out)
    created = not os.path.lexists(out)
    try:
        return synthesize_workspace(out, options, progress=progress)
    except BaseException:
        if created:
            shutil.rmtree(out, ignore_errors=True)
        raise


def _codes(text: str) -> tuple[str, ...]:
    return tuple(c.strip() for c in text.split(",") if c.strip())


def run(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from speechkit.errors import SpeechkitError
    from speechkit.io.jsonfile import read_json
    from speechkit.io.names import id_problem
    from speechkit.synth import SynthOptions
    from speechkit.synth.paraphrase import ParaphraseOptions

    if args.meetings < 1 or not 2 <= args.people <= 10 or not 1 <= args.projects <= 5:
        raise SpeechkitError("--meetings must be >= 1, --people 2-10 and --projects 1-5")
    if args.name is not None and id_problem(args.name):
        raise SpeechkitError(f"--name: {id_problem(args.name)}")
    from speechkit.synth.languages import language

    try:
        language(args.language, args.languages)
    except ValueError as e:
        raise SpeechkitError(f"--language/--languages: {e}") from None
    if args.paraphrase and args.language != "en":
        raise SpeechkitError("--paraphrase rewrites English turns only; leave it out with --language "
                             f"{args.language}")
    options = SynthOptions(seed=args.seed, meetings=args.meetings, people=args.people, minutes=args.minutes,
                           difficulty=args.difficulty, projects=args.projects, name=args.name,
                           check_voices=not args.no_voice_check, phrasing=args.phrasing,
                           language=args.language, languages=args.languages,
                           paraphrase=ParaphraseOptions(failures=args.llm_failures) if args.paraphrase else None)
    steps = args.meetings + 1 + (0 if args.no_voice_check else 1)
    with tqdm(total=steps, desc="synth", unit="step", file=sys.stderr) as bar:
        def progress(step: str) -> None:
            bar.set_postfix_str(step)
            bar.update(1)

        ws = synthesize_into(args.out, options, progress)
    print(f"wrote workspace {ws.name!r}: {len(ws.people)} people, {len(ws.meetings)} meetings, "
          f"{len(ws.artifacts)} artifacts -> {ws.manifest_path}")
    if args.paraphrase:
        c = read_json(ws.root / ws.metadata["truth"])["paraphrase"]["total"]
        print(f"paraphrase: {c['kept']} of {c['turns']} turns rewritten; template kept for {c['unchanged']} "
              f"unchanged, {c['dropped']} that dropped an entity, {c['invented']} that added one, "
              f"{c['drifted']} that said something else, {c['failed']} failed requests")
    return 0
