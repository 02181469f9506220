"""The ``speechkit`` command: one module per subcommand, each with ``add_parser(subparsers)``.

Subcommand modules import heavy libraries (torch, faster-whisper) inside their handlers only,
so ``speechkit --help`` and ``speechkit score`` work on the light core install.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import sys
import threading

from speechkit import __version__
from speechkit.errors import SpeechkitError, shown_path

# Subcommand modules, in the order --help lists them.
COMMANDS = ("score", "synth", "importer", "export", "transcribe", "serve", "run", "recipe", "compare", "step", "judge",
            "qa", "align", "probe", "models", "llm", "doctor")


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


def _one_line(message: str) -> str:
    """An error message on one line, cut to a readable length; other control characters (a
    carriage return, a terminal escape from a tool's output) are shown escaped."""
    message = shown_path(" ".join(message.split("\n")))
    return message if len(message) <= 2000 else message[:1997] + "..."


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C (SIGINT) interrupts every command, even one started as a background job of a script,
        # which inherits SIGINT ignored; the run then ends as "interrupted", exit code 130
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return int(args.handler(args) or 0)
    except SpeechkitError as exc:
        print(f"speechkit {args.command}: error: {_one_line(str(exc))}", file=sys.stderr)
        return getattr(exc, "exit_code", 1)
    except BrokenPipeError:  # the reader of stdout went away (`speechkit score ... | head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a file problem no check foresaw: still `error: PATH: problem`, no traceback
        if args.verbose:
            raise
        where = f"{shown_path(exc.filename)}: " if exc.filename else ""
        print(f"speechkit {args.command}: error: {_one_line(where + (exc.strerror or str(exc)))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
