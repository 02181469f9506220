"""speechkit serve: an OpenAI-compatible transcription server over a recipe (:mod:`speechkit.serve`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from speechkit.cli.transcribe import _count


def add_parser(sub: argparse._SubParsersAction) -> None:
    from speechkit.cli.run import add_set_option

    p = sub.add_parser("serve", help="an OpenAI-compatible transcription server over a recipe",
                       description="Serve a recipe's cascade at /v1/audio/transcriptions, as OpenAI's audio API "
                                   "does (response formats json, text, verbose_json, srt, vtt, diarized_json; "
                                   "known_speaker_names[] with known_speaker_references[] name speakers), and "
                                   "list it at /v1/models. The first line printed is the URL it listens on "
                                   "(the base URL clients give). Each request runs the cascade on its audio "
                                   "with the context of level 1 plus its prompt and known speakers. Ctrl-C stops it.")
    p.add_argument("--recipe", default="whisper", help="the recipe served (default whisper, the shipped default)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 opens it to the network)")
    p.add_argument("--port", type=_count(0, 65535), default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--served-model-name", action="append", default=[], metavar="NAME",
                   help="a model name the server answers to (repeatable; default: the recipe's name)")
    p.add_argument("--max-upload-mb", type=_count(1, 4096), default=64,
                   help="most megabytes of a request: audio and reference clips (default 64)")
    p.add_argument("--request-timeout", type=_count(1, 86_400), default=600, metavar="SECONDS",
                   help="most seconds from a request's arrival to its answer (default 600)")
    p.add_argument("--cache-dir", type=Path,
                   help="stage cache folder: results of audio sent before are reused (default: none kept)")
    p.add_argument("--request-log", type=Path, metavar="FILE",
                   help="append each transcription request's form (text fields, file sizes) to FILE as a JSON line")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), help="override the recipe's device")
    add_set_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from speechkit.devices import resolve_device
    from speechkit.io.atomic import check_output_file, check_output_folder
    from speechkit.llm.run import probe_endpoints
    from speechkit.preflight import check_models
    from speechkit.recipe import load_recipe, parse_settings
    from speechkit.serve import ApiServer, ServeOptions, TranscriptionService

    recipe = load_recipe(args.recipe).with_overrides(device=args.device)
    recipe = recipe.with_settings(parse_settings(args.settings), runs_steps=False)
    check_models(recipe)
    resolve_device(recipe.device)
    probe_endpoints(recipe)
    if args.cache_dir is not None:
        check_output_folder(args.cache_dir)
    if args.request_log is not None:
        check_output_file(args.request_log)
    options = ServeOptions(max_upload_bytes=args.max_upload_mb << 20, request_timeout_s=float(args.request_timeout))
    service = TranscriptionService(recipe, tuple(dict.fromkeys(args.served_model_name)), options, args.cache_dir,
                                   args.request_log)
    try:
        server = ApiServer(service, args.host, args.port)
    except OSError as e:
        service.close()
        from speechkit.errors import SpeechkitError
        raise SpeechkitError(f"{args.host}:{args.port}: cannot listen: {e.strerror or e}") from None
    print(server.url, flush=True)
    print(f"serving recipe {recipe.name} as {', '.join(service.names)} (Ctrl-C stops)", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        service.close()
    return 0
