"""The ``speechkit`` command: one module per subcommand, each with ``add_parser(subparsers)``.

Subcommand modules import heavy libraries (torch, faster-whisper) inside their handlers only,
so ``speechkit --help`` and ``speechkit score`` work on the light core install.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

from speechkit import __version__
from speechkit.errors import SpeechkitError

# Subcommand modules, in the order --help lists them.
COMMANDS = ("score", "synth", "transcribe", "run", "recipe", "models", "doctor", "bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="speechkit",
        description="Run open-source speech cascades over meeting audio and score them.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'speechkit COMMAND --help' for the options of a command.")
    parser.add_argument("--version", action="version", version=f"speechkit {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"speechkit.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("speechkit.cli."):
                continue  # subcommand not built yet
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except SpeechkitError as exc:
        print(f"speechkit {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
