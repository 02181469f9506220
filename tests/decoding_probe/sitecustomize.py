"""Test-only probe: note every Whisper decode (faster-whisper's encoder call) in a log file.

The tests put this folder first on ``PYTHONPATH`` (``tests/conftest.py``), so every Python process
they start, speechkit's command line and servers included, imports it at start-up; with
``$SPEECHKIT_TEST_DECODE_LOG`` set, each call of ``faster_whisper.WhisperModel.encode`` (the
sequential and the batched decoder both start there) appends a line to that file. The test run
reads the file's growth around each test: a test that decoded audio with a real model must be
marked ``decodes``, so that ``make test-isa`` runs it again on another instruction set.

A test that finds its transcripts in a stage cache another test filled decodes only when it runs
first, so the probe also notes, in the log's ``.entries`` file, each cache entry a decode produced
(:class:`speechkit.cache.StageCache`), and counts a later hit on one as a decode: which tests are
found does not depend on the order they run in.
"""
from __future__ import annotations

import os
import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder

LOG_VARIABLE = "SPEECHKIT_TEST_DECODE_LOG"
#: Decodes noted in this process (cache hits on decoded entries included).
_noted = 0


def note_decode() -> None:
    """Append one line (the process and the test pytest says is running) to the log, if one is set."""
    global _noted
    _noted += 1
    path = os.environ.get(LOG_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{os.getpid()} {os.environ.get('PYTEST_CURRENT_TEST', '')}\n")


def _decoded_entries() -> str | None:
    path = os.environ.get(LOG_VARIABLE)
    return path + ".entries" if path else None


def _patch_whisper(module) -> None:
    model = module.WhisperModel
    if getattr(model.encode, "_noted", False):
        return
    encode = model.encode

    def noted_encode(self, features):
        note_decode()
        return encode(self, features)

    noted_encode._noted = True
    model.encode = noted_encode


def _patch_cache(module) -> None:
    cache = module.StageCache
    if getattr(cache.get_or_compute, "_noted", False):
        return
    get_or_compute = cache.get_or_compute

    def noted_get_or_compute(self, stage, key, compute):
        entries = _decoded_entries()
        if self.root is None or entries is None:
            return get_or_compute(self, stage, key, compute)
        entry = str((self.root / stage / f"{key}.json").resolve())
        decoded = os.path.isfile(entries) and entry in open(entries, encoding="utf-8").read().splitlines()
        if decoded and os.path.isfile(entry):
            note_decode()  # a cold cache would decode here
        before = _noted

        def watched():
            value = compute()
            if _noted > before:
                with open(entries, "a", encoding="utf-8") as out:
                    out.write(entry + "\n")
            return value
        return get_or_compute(self, stage, key, watched)

    noted_get_or_compute._noted = True
    cache.get_or_compute = noted_get_or_compute


#: Module -> what patches it right after it is imported.
_TARGETS = {"faster_whisper.transcribe": _patch_whisper, "speechkit.cache": _patch_cache}


class _PatchOnImport(MetaPathFinder):
    """Patches faster-whisper's decoder module and speechkit's stage cache right after they are imported."""

    def find_spec(self, name: str, path=None, target=None) -> ModuleSpec | None:
        if name not in _TARGETS:
            return None
        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def exec_and_patch(module) -> None:
            exec_module(module)
            _TARGETS[name](module)

        spec.loader.exec_module = exec_and_patch
        return spec


def install() -> None:
    """Note decodes from now on in this process (idempotent)."""
    for name, patch in _TARGETS.items():
        if name in sys.modules:
            patch(sys.modules[name])
    if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())


if os.environ.get(LOG_VARIABLE):
    install()
