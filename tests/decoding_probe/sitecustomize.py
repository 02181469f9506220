"""Test-only probe: note every Whisper decode (faster-whisper's encoder call) in a log file.

The tests put this folder first on ``PYTHONPATH`` (``tests/conftest.py``), so every Python process
they start, speechkit's command line and servers included, imports it at start-up; with
``$SPEECHKIT_TEST_DECODE_LOG`` set, each call of ``faster_whisper.WhisperModel.encode`` (the
sequential and the batched decoder both start there) appends a line to that file. The test run
reads the file's growth around each test: a test that decoded audio with a real model must be
marked ``decodes``, so that ``make test-isa`` runs it again on another instruction set.
"""
from __future__ import annotations

import os
import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder

LOG_VARIABLE = "SPEECHKIT_TEST_DECODE_LOG"
_TARGET = "faster_whisper.transcribe"


def note_decode() -> None:
    """Append one line (the process and the test pytest says is running) to the log, if one is set."""
    path = os.environ.get(LOG_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {os.environ.get('PYTEST_CURRENT_TEST', '')}\n")


def _patch(module) -> None:
    model = module.WhisperModel
    if getattr(model.encode, "_noted", False):
        return
    encode = model.encode

    def noted_encode(self, features):
        note_decode()
        return encode(self, features)

    noted_encode._noted = True
    model.encode = noted_encode


class _PatchOnImport(MetaPathFinder):
    """Patches faster-whisper's decoder module right after it is first imported."""

    def find_spec(self, name: str, path=None, target=None) -> ModuleSpec | None:
        if name != _TARGET:
            return None
        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module) -> None:
            exec_module(module)
            _patch(module)

        spec.loader.exec_module = exec_and_patch
        return spec


def install() -> None:
    """Note decodes from now on in this process (idempotent)."""
    if _TARGET in sys.modules:
        _patch(sys.modules[_TARGET])
    elif not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())


if os.environ.get(LOG_VARIABLE):
    install()
