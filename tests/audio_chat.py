"""A local audio-in chat stand-in for the tests of the chat backends and the API stacks' recipes.

It serves OpenAI-style chat completions on 127.0.0.1 (:class:`llm_helpers.Endpoint`) over a
workspace whose recordings are 16 kHz 16-bit files, and finds each clip a request carries in
them, sample for sample:

- a transcription request (the ``chat`` ASR backend's) is answered from the meeting's reference:
  its segments in the clip, their speakers as ``Speaker N`` in order of first appearance;
- a speaker-identification request (the ``chat`` identify backend's) by the reference speaker
  whose turn starts where the target clip does (or at most :data:`LEAD_S` after its first
  sound), answered as "It is FIRSTNAME." (the backend's first-name fallback reads it), or as
  ``{"name": FULL NAME}`` where the request asks for JSON;
  ``unknown`` when that person is not among the enrollments;
- a correction request (the ``llm`` corrector's ``rewrite`` mode) by its turns, unchanged;
- a notes request (the ``llm`` notes backend's) by fixed notes whose action item goes to the
  first speaker of its transcript.

Every request is logged (:attr:`AudioChat.log`): its kind, model, text parts and audio parts.
:func:`demo_subset` copies the demo workspace with a few of its meetings, for end-to-end runs.
"""
from __future__ import annotations

import base64
import io
import json
import shutil
import threading
import wave
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from llm_helpers import Endpoint, completion, turns_of

from speechkit.core.audio import SAMPLE_RATE, encode_audio, load_audio
from speechkit.io.manifest import load_workspace
from speechkit.io.seglst import read_seglst

#: Samples of a clip matched against the recordings.
KEY = 48
#: How long before its reference turn a target clip's first sound may start (s).
LEAD_S = 0.5
DEMO = Path(__file__).resolve().parents[1] / "workspaces" / "demo"


def demo_subset(root: Path, meetings: tuple[str, ...]) -> Path:
    """The demo workspace copied to ``root`` with only ``meetings`` (and the artifacts of no
    other meeting)."""
    shutil.copytree(DEMO, root)
    manifest = yaml.safe_load((root / "workspace.yaml").read_text())
    manifest["meetings"] = [m for m in manifest["meetings"] if m["id"] in meetings]
    manifest["artifacts"] = [a for a in manifest["artifacts"] if a.get("meeting") in (None, *meetings)]
    (root / "workspace.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def pcm(audio: np.ndarray) -> np.ndarray:
    """``audio`` as the 16-bit samples a request's WAV holds."""
    data = encode_audio(audio)
    with wave.open(io.BytesIO(data)) as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2")


def clip_samples(part: dict[str, Any]) -> np.ndarray:
    """The 16-bit samples of an ``input_audio`` part."""
    with wave.open(io.BytesIO(base64.b64decode(part["input_audio"]["data"]))) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (SAMPLE_RATE, 1, 2)
        return np.frombuffer(w.readframes(w.getnframes()), "<i2")


class AudioChat:
    """The stand-in over ``workspace`` (see the module docstring), serving ``models``."""

    def __init__(self, workspace: Path, models: list[str]) -> None:
        ws = load_workspace(workspace)
        self.names = {p.id: p.name for p in ws.people}
        self.recordings = {m.id: pcm(load_audio(m.audio)) for m in ws.meetings}
        self.references = {m.id: next(iter(read_seglst(m.reference).values())) for m in ws.meetings}
        self.log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.endpoint = Endpoint(self.answer, models=models)
        self.url = self.endpoint.url

    def close(self) -> None:
        self.endpoint.close()

    def kinds(self) -> list[str]:
        """The kind of every request so far, in order."""
        return [entry["kind"] for entry in self.log]

    def locate(self, samples: np.ndarray) -> tuple[str, float]:
        """The meeting whose recording holds ``samples`` and where they start (s)."""
        loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > 64)
        first = int(loud[0]) if loud.size else 0
        key = samples[first:first + KEY]
        for mid, recording in self.recordings.items():
            candidates = np.flatnonzero(recording == key[0])
            for k in range(1, len(key)):
                candidates = candidates[candidates + k < len(recording)]
                candidates = candidates[recording[candidates + k] == key[k]]
            if candidates.size:
                return mid, (int(candidates[0]) - first) / SAMPLE_RATE
        raise AssertionError("a clip that is in no recording of the workspace")

    def answer(self, request: dict, call: int) -> tuple[int, str, float]:
        messages = request["messages"]
        parts = [p for m in messages for p in (m["content"] if isinstance(m["content"], list)
                                                else [{"type": "text", "text": m["content"]}])]
        texts = [p["text"] for p in parts if p["type"] == "text"]
        clips = [clip_samples(p) for p in parts if p["type"] == "input_audio"]
        text = "\n".join(texts)
        if "Enrollment -- " in text:
            kind, content = "identify", self.identify(clips[-1], texts, "response_format" in request)
        elif clips:
            kind, content = "transcribe", self.transcribe(clips[0])
        elif "Turns:\n" in text:
            kind, content = "correct", json.dumps(turns_of(request))
        else:
            kind, content = "notes", self.notes(messages[-1]["content"])
        with self._lock:
            self.log.append({"kind": kind, "model": request["model"], "texts": texts, "audio": len(clips),
                             "response_format": request.get("response_format"),
                             "max_tokens": request.get("max_tokens"),
                             "max_completion_tokens": request.get("max_completion_tokens")})
        reply = json.loads(completion(content))
        reply["model"] = request["model"]
        return 200, json.dumps(reply), 0.0

    def transcribe(self, clip: np.ndarray) -> str:
        mid, offset = self.locate(clip)
        end = offset + len(clip) / SAMPLE_RATE
        labels: dict[str, str] = {}
        rows = []
        for seg in self.references[mid].segments:
            if offset <= (seg.start + seg.end) / 2 < end:
                label = labels.setdefault(seg.speaker, f"Speaker {len(labels) + 1}")
                rows.append({"speaker": label, "start": round(max(seg.start - offset, 0.0), 3),
                             "end": round(min(seg.end, end) - offset, 3), "text": seg.text})
        return json.dumps({"segments": rows})

    def identify(self, target: np.ndarray, texts: list[str], as_json: bool) -> str:
        mid, at = self.locate(target)
        # the speaker whose turn starts there (another may be speaking over it); the clip's first
        # sound may come a little before its reference turn starts
        speaking = [s for s in self.references[mid].segments if s.start < at + LEAD_S and at + 0.05 < s.end]
        speaker = min(speaking, key=lambda s: abs(s.start - at)).speaker if speaking else None
        name = self.names.get(speaker or "")
        enrolled = [t.removeprefix("Enrollment -- ").removesuffix(":") for t in texts if t.startswith("Enrollment -- ")]
        if name not in enrolled:
            return json.dumps({"name": "unknown"}) if as_json else "unknown"
        return json.dumps({"name": name}) if as_json else f"It is {name.split()[0]}."

    @staticmethod
    def notes(user: str) -> str:
        lines = user.split("TRANSCRIPT", 1)[1].splitlines()[1:]
        first = next((line.split("] ", 1)[1].split(":", 1)[0] for line in lines if "] " in line), "")
        return json.dumps({"summary": "The team went through the plan.",
                           "action_items": [{"assignee": first, "description": "send the plan", "due": ""}],
                           "decisions": [], "outline": ["the plan"]})

