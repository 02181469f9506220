"""faster-whisper recognition on the real recordings: accuracy, hot words in both paths, budgets."""
from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

import jiwer
import numpy as np
import pytest
from whisper_normalizer.english import EnglishTextNormalizer

from speechkit.core.audio import load_audio
from speechkit.errors import ModelNotAvailableError
from speechkit.stages import make_backend
from speechkit.stages.asr import Biasing
from speechkit.stages.asr.clips import plan_clips
from speechkit.stages.asr.prompt_budget import MAX_PROMPT_TOKENS
from speechkit.stages.asr.whisper import WhisperRecognizer

JFK = ("And so my fellow Americans, ask not what your country can do for you, "
       "ask what you can do for your country.")
STEREO = ["He began a confused complaint against the wizard, who had vanished behind the curtain on the left.",
          "The horizon seems extremely distant."]
normalise = EnglishTextNormalizer()


def wer(reference: str, segments: list) -> float:
    return jiwer.wer(normalise(reference), normalise(" ".join(s.text for s in segments)))


def said(term: str, text: str) -> bool:
    """``term`` is in ``text`` by the scoring rule (term recall: normalised whole-word match), so
    casing and punctuation, which differ between CPUs' int8 kernels ("ComfyUI" / "comfyUI"), do not count."""
    from speechkit.metrics.terms import term_recall
    return bool(term_recall([term], text).found)


@pytest.fixture(scope="module")
def tiny() -> dict[int, WhisperRecognizer]:
    """tiny.en, sequential (batch_size=1) and batched (8); both share one loaded model."""
    return {bs: make_backend("asr", "whisper", model="tiny.en", device="cpu", batch_size=bs) for bs in (1, 8)}


@pytest.fixture(scope="module")
def base() -> dict[int, WhisperRecognizer]:
    return {bs: make_backend("asr", "whisper", model="base", device="cpu", batch_size=bs) for bs in (1, 8)}


@pytest.fixture(scope="module")
def fw(realdata: Path) -> Path:
    return realdata / "faster-whisper"


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
@pytest.mark.parametrize("model", ["tiny", "base"])
def test_jfk_is_transcribed_exactly(request, fw: Path, model: str, batch_size: int) -> None:
    recognizer = request.getfixturevalue(model)[batch_size]
    segments = recognizer.transcribe(load_audio(fw / "jfk.flac"))
    # At most one of the 22 words wrong after the scoring normaliser: tiny.en and base get JFK
    # right on every int8 backend tried (oneDNN, MKL; GENERIC/AVX/AVX2/AVX-512), but a CPU's
    # kernels may still change one word; a real fault (wrong rate, channel, clipping) costs many.
    assert wer(JFK, segments) <= 1 / 22
    words = [w for s in segments for w in s.words]
    assert normalise(" ".join(w.text for w in words)) == normalise(" ".join(s.text for s in segments))
    assert 21 <= len(words) <= 23  # one timed word per spoken word (22), within that one error
    assert all(s.speaker == "" for s in segments)
    assert all(0.0 <= w.start <= w.end <= 11.0 and 0.0 <= w.confidence <= 1.0 for w in words)
    assert [w.start for w in words] == sorted(w.start for w in words)
    assert words[-1].text.strip(".").lower() == "country" and words[-1].end > 9.5


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
@pytest.mark.parametrize("model", ["tiny", "base"])
def test_hotword_appears_only_when_given(request, fw: Path, model: str, batch_size: int) -> None:
    recognizer = request.getfixturevalue(model)[batch_size]
    audio = load_audio(fw / "hotwords.mp3")
    plain = " ".join(s.text for s in recognizer.transcribe(audio))
    biased = " ".join(s.text for s in recognizer.transcribe(audio, biasing=Biasing(hotwords=["ComfyUI"])))
    assert not said("ComfyUI", plain)  # tiny.en: "comfy eye", base: "confu i"
    assert said("ComfyUI", biased)  # written "ComfyUI" or "comfyUI" depending on the CPU


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
def test_prompt_alone_also_biases(tiny, fw: Path, batch_size: int) -> None:
    segments = tiny[batch_size].transcribe(load_audio(fw / "hotwords.mp3"),
                                           biasing=Biasing(prompt="Notes about ComfyUI and its nodes."))
    assert said("ComfyUI", " ".join(s.text for s in segments))


@pytest.mark.decodes
def test_both_paths_give_the_decoder_the_same_prompt(tiny, fw: Path, monkeypatch) -> None:
    """faster-whisper 1.2.1: hot words and prompt reach get_prompt in both paths, same tokens."""
    model = tiny[1].model
    seen: list[list[int]] = []
    original = model.get_prompt

    def spy(tokenizer, previous_tokens, **kwargs):
        prompt = original(tokenizer, previous_tokens, **kwargs)
        seen.append(prompt[:prompt.index(tokenizer.sot)])  # <|startofprev|> hot words, prompt
        return prompt

    monkeypatch.setattr(model, "get_prompt", spy)
    biasing = Biasing(prompt="Notes about nodes.", hotwords=["ComfyUI", "Stable Diffusion"])
    audio = load_audio(fw / "hotwords.mp3")
    tiny[1].transcribe(audio, biasing=biasing)
    sequential = seen[:]
    seen.clear()
    tiny[8].transcribe(audio, biasing=biasing)
    assert sequential and seen and sequential[0] == seen[0]
    expected = model.hf_tokenizer.encode(" ComfyUI, Stable Diffusion Notes about nodes.",
                                         add_special_tokens=False).ids
    assert seen[0][1:] == expected


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
@pytest.mark.parametrize("channel", [0, 1])
def test_each_stereo_channel_alone(tiny, fw: Path, channel: int, batch_size: int) -> None:
    audio = load_audio(fw / "stereo_diarization.wav", channel=channel)
    segments = tiny[batch_size].transcribe(audio)
    # this channel's sentence, at most one word wrong (measured: none, on every int8 backend tried)
    assert round(wer(STEREO[channel], segments) * len(normalise(STEREO[channel]).split())) <= 1
    assert not said(("horizon", "wizard")[channel], " ".join(s.text for s in segments))  # nothing of the other


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
def test_speech_regions_limit_decoding(tiny, fw: Path, batch_size: int) -> None:
    audio = load_audio(fw / "jfk.flac")
    segments = tiny[batch_size].transcribe(audio, speech=[(0.0, 4.6)])
    words = [w for s in segments for w in s.words]
    text = normalise(" ".join(s.text for s in segments))
    assert text.startswith("and so my fellow americans")
    assert "country" not in text  # "country" is first said at ~6 s
    assert max(w.end for w in words) <= 4.7
    second = tiny[batch_size].transcribe(audio, speech=[(8.0, 11.0)])
    assert normalise(" ".join(s.text for s in second)).endswith("do for your country")
    assert min(w.start for s in second for w in s.words) >= 7.9  # times are absolute


@pytest.mark.decodes
def test_clips_decoded_one_by_one_get_their_own_seconds_of_a_long_recording(tiny, fw: Path, monkeypatch) -> None:
    """faster-whisper computes the features of all the audio it is given, so clips decoded one
    after another (the sequential path, and every re-decode) each get only their own stretch of
    the recording: JFK said twice, two and four minutes into a silent recording, comes back twice
    in recording time, and the decoder was given 30 s of audio each time (a clip's stretch is at
    least ``max_clip_s``), not 5 minutes."""
    jfk = load_audio(fw / "jfk.flac")
    audio = np.zeros(300 * 16000, dtype=np.float32)
    said_at = [(start, start + len(jfk) / 16000) for start in (120.0, 240.0)]
    for start, _ in said_at:
        audio[int(start * 16000):int(start * 16000) + len(jfk)] = jfk
    recognizer = tiny[1]
    given = []
    transcribe = recognizer.model.transcribe
    monkeypatch.setattr(recognizer.model, "transcribe", lambda part, **kw: given.append(len(part) / 16000) or
                        transcribe(part, **kw))
    windows = recognizer._decode_clips(audio, said_at, 0.0, {"initial_prompt": None, "hotwords": None})
    assert given == pytest.approx([30.0] * 2, abs=0.02)
    assert [w.clips for w in windows] == [[clip] for clip in said_at]
    for window, (start, end) in zip(windows, said_at):
        assert wer(JFK, window.segments) <= 1 / 22
        assert all(start <= w.start <= w.end <= end + 0.1 for s in window.segments for w in s.words)


@pytest.mark.parametrize("batch_size", [1, 8])
def test_nothing_to_decode(tiny, batch_size: int) -> None:
    recognizer = tiny[batch_size]
    assert recognizer.transcribe(np.zeros(0, dtype=np.float32)) == []
    assert recognizer.transcribe(np.zeros(16000 * 3, dtype=np.float32), speech=[]) == []
    assert recognizer.transcribe(np.zeros(16000 * 5, dtype=np.float32)) == []  # its VAD finds none
    with pytest.raises(ValueError, match="mono"):
        recognizer.transcribe(np.zeros((2, 16000), dtype=np.float32))


def test_biasing_is_budgeted_to_the_prompt_limit(tiny, caplog) -> None:
    recognizer = tiny[1]
    terms = ["ComfyUI", "Kubernetes"] + [f"term number {i}" for i in range(100)]
    prompt = " ".join(f"sentence {i} of the agenda." for i in range(200))
    with caplog.at_level(logging.WARNING, logger="speechkit.stages.asr.prompt_budget"):
        fitted_prompt, hotwords = recognizer.fit_biasing(Biasing(prompt=prompt, hotwords=terms))
    kept = hotwords.split(", ")
    assert kept == terms[:len(kept)] and 2 < len(kept) < len(terms)  # priority order, tail dropped
    total = recognizer.count_tokens(hotwords) + (recognizer.count_tokens(fitted_prompt) if fitted_prompt else 0)
    assert total <= MAX_PROMPT_TOKENS
    assert "dropped" in caplog.text and terms[-1] in caplog.text
    # a prompt alone keeps its end, as much as fits
    short = WhisperRecognizer(model="tiny.en", device="cpu", prompt_token_budget=40)
    assert short.model is recognizer.model  # loaded once per process
    fitted, none = short.fit_biasing(Biasing(prompt=prompt))
    assert none is None and prompt.endswith(fitted)
    assert 30 <= short.count_tokens(fitted) <= 40
    assert recognizer.fit_biasing(Biasing()) == (None, None)


def test_clip_plan_packs_regions_and_cuts_long_ones_at_pauses() -> None:
    rng = np.random.default_rng(0)
    audio = rng.normal(0, 0.1, 16000 * 80).astype(np.float32)
    audio[int(35.0 * 16000):int(35.3 * 16000)] = 0.0  # a pause inside a 70 s region
    regions = [(1.0, 3.0), (4.0, 9.0), (9.5, 79.0)]
    clips = plan_clips(audio, regions, max_clip_s=30.0, join_neighbours=True)
    assert clips[0] == (1.0, 9.0)  # neighbours share a clip
    assert clips[1] == pytest.approx((9.5, 35.0))  # cut at the pause, not at 39.5
    assert all(e - s <= 30.0 for s, e in clips)
    assert clips[-1][1] == 79.0
    assert all(a[1] == b[0] for a, b in zip(clips[1:], clips[2:]))  # the long region is covered
    # for batched decoding each region is a clip: the pauses between regions are not decoded
    apart = plan_clips(audio, regions, max_clip_s=30.0)
    assert apart[:2] == [(1.0, 3.0), (4.0, 9.0)] and apart[2:] == clips[1:]
    assert plan_clips(audio, [(1.0, 3.0), (3.0, 5.0)], max_clip_s=30.0) == [(1.0, 5.0)]  # touching: no pause


@pytest.mark.decodes
def test_batched_windows_hold_no_pause_between_speech_regions(tiny, realdata: Path, monkeypatch) -> None:
    """Two speech regions 20 s apart: the batched decoder gets their samples end to end (one
    window of 8 s, not 28 s), and each word keeps its time in the recording."""
    import faster_whisper
    audio = load_audio(realdata / "faster-whisper" / "jfk.flac")
    gap = np.zeros(16000 * 20, dtype=np.float32)
    both = np.concatenate([audio[:16000 * 4], gap, audio[16000 * 4:16000 * 8]])
    seen: list[float] = []
    transcribe = faster_whisper.BatchedInferencePipeline.transcribe

    def spy(self, joined, *args, **kwargs):
        seen.append(len(joined) / 16000)
        return transcribe(self, joined, *args, **kwargs)

    monkeypatch.setattr(faster_whisper.BatchedInferencePipeline, "transcribe", spy)
    segments = tiny[8].transcribe(both, [(0.0, 4.0), (24.0, 28.0)])
    assert seen == [pytest.approx(8.0)]
    words = [w for s in segments for w in s.words]
    assert words[0].start < 1.0 and words[-1].end > 24.0
    assert not [w for w in words if 4.2 < w.start < 23.8]  # nothing in the pause


def test_unknown_model_says_how_to_get_one(monkeypatch, tmp_path: Path) -> None:
    import huggingface_hub.constants
    monkeypatch.setenv("SPEECHKIT_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    with pytest.raises(ModelNotAvailableError, match="speechkit models fetch whisper-large-v3"):
        WhisperRecognizer(model="large-v3", device="cpu")


@pytest.mark.decodes
def test_a_looping_batched_window_is_decoded_again_sequentially(tiny, realdata: Path, monkeypatch) -> None:
    """Windows whose text compresses too well (a repetition loop) go through the sequential decoder.

    With the threshold near 0 (the least it may be) every window counts as looping: it is decoded
    again without the prompt at temperature 0, then at the sampling temperatures; still flagged,
    it keeps the unbiased decoding at temperature 0 (here: real speech, nothing to collapse),
    mapped back to the right times.
    """
    from speechkit.stages.asr.loop_control import compression_ratio
    assert compression_ratio("I'd be like, " * 30) > 2.4 > compression_ratio("And so my fellow Americans, ask not.")
    audio = load_audio(realdata / "pyannote-sample" / "sample.wav")
    speech = [(6.5, 18.0), (18.0, 30.0)]
    batched = tiny[8]
    calls = []
    original = batched._decode_clips
    monkeypatch.setattr(batched, "_decode_clips", lambda audio, clips, t, biased, *a: calls.append(
        (clips, t, biased["initial_prompt"])) or original(audio, clips, t, biased, *a))
    # Whether a CPU's kernels make tiny.en loop on a window is not this test's business: on every
    # CPU a window is decoded again exactly when it is flagged (clean text is never flagged:
    # test_loops checks the detector on JFK's words).
    stats = batched.transcribe(load_audio(realdata / "faster-whisper" / "jfk.flac")).stats
    assert stats.windows == 1 and (calls != []) == (stats.flagged_windows == 1)
    calls.clear()
    # sample.wav opens with "Hello. Hello. Oh, hello.": with some CPUs' int8 kernels tiny.en writes
    # "Hello." five times, a real repeat that is caught. So here: decoded again exactly when flagged.
    recognition = batched.transcribe(audio, speech=speech)
    assert recognition and recognition.stats.windows == 1
    assert (calls != []) == (recognition.stats.flagged_windows == 1)
    calls.clear()
    monkeypatch.setattr(batched, "options", replace(batched.options, compression_ratio_threshold=0.01,
                                                    temperatures=(0.0, 0.5)))
    redone = batched.transcribe(audio, speech=speech, biasing=Biasing(prompt="A call about the weather."))
    assert calls == [([(6.5, 30.0)], 0.0, None), ([(6.5, 30.0)], 0.5, None)]  # the one clip of both regions
    assert redone.stats.cleaned == 1
    sequential = make_backend("asr", "whisper", model="tiny.en", device="cpu", batch_size=1, temperatures=[0.0])
    expected = sequential.transcribe(audio, speech=[(6.5, 30.0)])
    assert [w.text for s in redone for w in s.words] == [w.text for s in expected for w in s.words]
    assert all(6.4 <= w.start <= w.end <= 30.1 for s in redone for w in s.words)


def test_word_pieces_whisper_writes_without_a_space_join_the_word_before() -> None:
    """faster-whisper splits "$45,000" into " $45" and ",000" (a piece without a leading space):
    the piece joins the word before it, as the decoded text has it, so "$45,000" is one word
    (two would be two WER errors: "$45" and "000"); punctuation-only words are still dropped."""
    from faster_whisper.transcribe import Segment as FwSegment
    from faster_whisper.transcribe import Word as FwWord

    from speechkit.stages.asr.whisper import spoken_words
    pieces = [(" The", 0.0, 0.2, 0.9), (" cost", 0.2, 0.5, 0.8), (" is", 0.5, 0.6, 0.9), (" $45", 0.6, 1.0, 0.7),
              (",000.", 1.0, 1.4, 0.6), (" -", 1.4, 1.5, 0.2), (" pacs", 1.5, 1.8, 0.9), (".002", 1.8, 2.2, 0.5)]
    decoded = FwSegment(id=0, seek=0, start=0.0, end=2.2, text="".join(p[0] for p in pieces), tokens=[],
                        avg_logprob=-0.3, compression_ratio=1.0, no_speech_prob=0.0, temperature=0.0,
                        words=[FwWord(start=s, end=e, word=w, probability=p) for w, s, e, p in pieces])
    words = spoken_words(decoded)
    assert [w.text for w in words] == ["The", "cost", "is", "$45,000.", "pacs.002"]
    joined = words[3]
    assert (joined.start, joined.end, joined.confidence) == (0.6, 1.4, 0.6)  # first start, last end, lower p
    from speechkit.metrics.normalize import normalize
    assert normalize(" ".join(w.text for w in words)) == normalize(decoded.text.replace(" -", ""))
