"""Loop and hallucination control of the Whisper backend, on every path, on real recordings."""
from __future__ import annotations

from pathlib import Path

import pytest

from speechkit.core.audio import load_audio
from speechkit.stages import make_backend
from speechkit.stages.asr import Biasing, DecodeStats
from speechkit.stages.asr.loop_control import (
    LoopControl,
    Window,
    cleaned,
    missed_speech,
    outside_speech,
    repeated_run,
    word_tokens,
)
from speechkit.stages.asr.whisper import WhisperOptions
from speechkit.transcript import Segment, Word


def _words(text: str, start: float = 0.0, step: float = 0.5) -> list[Word]:
    return [Word(w, start + i * step, start + i * step + 0.4, 0.9) for i, w in enumerate(text.split())]


def test_repeated_words_and_ngrams_are_found():
    loop = word_tokens(_words("i'd go with idly, renata, renata, renata, renata, renata and"))
    assert repeated_run(loop) == (4, 1, 5)  # "renata" five times
    assert repeated_run(word_tokens(_words("we go with it go with it go with it today"))) == (1, 3, 3)
    for natural in ("no no I think so", "the the plan is fine", "and so my fellow Americans ask not what your "
                    "country can do for you ask what you can do for your country", "yeah yeah yeah ok"):
        assert repeated_run(word_tokens(_words(natural))) is None, natural
    assert repeated_run(word_tokens(_words("yeah yeah yeah yeah"))) == (0, 1, 4)  # four in a row is a loop


def test_words_outside_speech_regions():
    words = _words("a b c d e f", start=0.0, step=1.0)  # 0-0.4, 1-1.4, ..., 5-5.4
    assert outside_speech(words, [(0.0, 1.5), (4.5, 6.0)], pad_s=0.3) == [False, False, True, True, False, False]
    assert outside_speech(words, [], pad_s=0.3) == [True] * 6


def test_a_window_left_flagged_is_cleaned():
    options = WhisperOptions()
    words = _words("so renata renata renata renata renata then we stop", start=0.0, step=1.0)
    stray = _words("thank you", start=20.0)
    window = Window([(0.0, 25.0)], [Segment.from_words(words, ""), Segment.from_words(stray, "")])
    kept = cleaned(window, [(0.0, 10.0)], options)
    assert [w.text for s in kept.segments for w in s.words] == ["so", "renata", "then", "we", "stop"]


def test_speech_without_words_is_found():
    words = _words("a b c", start=1.0, step=0.5) + _words("d e", start=9.0, step=0.5)  # 1-2.4, 9-9.9
    speech = [(0.5, 12.0), (14.0, 14.5), (20.0, 23.0)]
    # 2.5-8.9 between the words, 10.0-12.0 after the last, the region at 20 s; not the 0.5 s at 14 s
    def gaps(min_s):
        return [(round(s, 6), round(e, 6)) for s, e in missed_speech(words, speech, min_s=min_s, pad_s=0.1)]
    assert gaps(2.0) == [(2.5, 8.9), (10.0, 12.0), (20.0, 23.0)]
    assert gaps(2.5) == [(2.5, 8.9), (20.0, 23.0)]
    assert missed_speech(words, speech, min_s=7.0, pad_s=0.1) == []
    assert missed_speech([], [(0.0, 1.0), (3.0, 6.0)], min_s=2.0, pad_s=0.1) == [(3.0, 6.0)]
    assert missed_speech(_words("x y z w", start=10.0), [(10.0, 12.0)], min_s=0.5, pad_s=0.1) == []


def test_speech_without_words_is_decoded_again_and_only_its_words_are_added():
    options = WhisperOptions(missed_speech_s=2.0)
    control = LoopControl(options)
    heard = [Segment.from_words(_words("so we start", start=0.0), "")]  # 0-1.4
    speech = [(0.0, 12.0)]
    asked = []

    def redecode(spans, temperature):
        asked.append((spans, temperature))
        (start, end), = spans
        # the decoding of the span alone: its words, and one beyond it that must not come back
        return [Window(list(spans), [Segment.from_words(_words("the budget is fine", start=start + 0.2)
                                                        + _words("extra", start=end + 0.5), "")], [-0.3])]
    segments = control.fill_missed(heard, speech, redecode)
    assert asked == [([(1.5, 12.0)], 0.0)]
    assert [w.text for s in segments for w in s.words] == ["so", "we", "start", "the", "budget", "is", "fine"]
    assert (control.stats.missed_spans, control.stats.missed_words) == (1, 4)
    # a decoding that is itself a loop goes through the loop control: decoded again at each sampling
    # temperature, and, looping at all of them, cleaned to its first copy
    looping, temperatures = LoopControl(options), []
    segments = looping.fill_missed(heard, speech, lambda spans, t: temperatures.append(t) or [Window(
        list(spans), [Segment.from_words(_words("okay okay okay okay okay", start=2.0), "")], [-0.3])])
    assert [w.text for s in segments for w in s.words] == ["so", "we", "start", "okay"]
    assert temperatures == list(options.temperatures)
    assert (looping.stats.missed_spans, looping.stats.cleaned, looping.stats.redecoded_fallback) == (1, 1, 5)
    off = LoopControl(WhisperOptions(missed_speech_s=0.0))
    assert off.fill_missed(heard, speech, lambda spans, t: pytest.fail("decoded again")) == heard
    # words that only repeat the words around the stretch into a loop are not added
    echo = LoopControl(options)
    hello = [Segment.from_words(_words("hello hello", start=0.0), ""), Segment.from_words(_words("i see", 9.0), "")]
    assert echo.fill_missed(hello, [(0.0, 10.5)], lambda spans, t: [Window(list(spans), [Segment.from_words(
        _words("hello hello", start=spans[0][0] + 0.2), "")], [-0.3])]) == hello
    assert (echo.stats.missed_spans, echo.stats.missed_words) == (1, 0)
    # speech of a window the loop control flagged (and decoded again) is left as it decided
    guarded = LoopControl(options)
    guarded.stats.flag(["repeat"], [(0.0, 12.0)])
    assert guarded.fill_missed(heard, speech, lambda spans, t: pytest.fail("decoded again")) == heard


def test_decode_stats_add_up_and_round_trip():
    a, b = DecodeStats(windows=3, redecoded_unbiased=1), DecodeStats(windows=2, cleaned=1)
    b.flag(["repeat", "compression"], [(1.0, 2.0)])
    a.add(b, offset=10.0)
    assert (a.windows, a.flagged_windows, a.cleaned, a.redecodes) == (5, 1, 1, 1)
    assert a.flagged == {"repeat": 1, "compression": 1} and a.flagged_spans == [(11.0, 12.0)]
    assert DecodeStats.from_dict(a.as_dict()) == a


@pytest.fixture(scope="module")
def sample(realdata: Path):
    return load_audio(realdata / "pyannote-sample" / "sample.wav")


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
@pytest.mark.parametrize("biased", [False, True])
def test_words_outside_speech_are_redecoded_on_the_speech_alone(sample, batch_size, biased, monkeypatch):
    """Speech regions with a 12 s gap that holds real speech. Sequential decoding joins the two
    regions into one clip that spans the gap, so Whisper writes words there; the window is flagged
    and decoded again without biasing, on the speech regions alone, and keeps no word outside
    them. Batched decoding never decodes the gap (each region its own clip, packed end to end):
    nothing to flag or decode again, and no word outside the regions either."""
    recognizer = make_backend("asr", "whisper", model="tiny.en", device="cpu", batch_size=batch_size,
                                 temperatures=[0.0, 0.5])
    calls = []
    original = recognizer._decode_clips
    monkeypatch.setattr(recognizer, "_decode_clips", lambda audio, clips, t, biased, *a: calls.append(
        (clips, t, biased)) or original(audio, clips, t, biased, *a))
    speech = [(0.5, 8.0), (20.0, 30.0)]
    segments = recognizer.transcribe(sample, speech=speech,
                                     biasing=Biasing(hotwords=["Chicago"]) if biased else None)
    stats = segments.stats
    if batch_size == 1:
        assert stats.windows == 1 and stats.flagged_windows == 1 and stats.redecoded_unbiased == 1
        assert stats.flagged_spans == [(0.5, 30.0)]
        redecodes = calls[1:]
        assert all(b == {"initial_prompt": None, "hotwords": None} for _, _, b in redecodes)
        if not biased:  # (with a prompt, the sequential decoder also loops on "Hello." here: flagged as a repeat)
            assert stats.flagged.get("outside_speech") == 1
            assert redecodes[0][:2] == ([(0.5, 8.0), (20.0, 30.0)], 0.0)  # the speech alone, gap left out
    else:
        assert stats.windows == 1 and stats.flagged.get("outside_speech") is None
    words = [w for s in segments for w in s.words]
    assert words and not any(outside_speech(words, speech, recognizer.options.speech_pad_s))
    assert any(w.start >= 20.0 for w in words) and any(w.end <= 8.5 for w in words)


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
def test_repeated_words_flag_a_window_on_every_path(sample, batch_size):
    """sample.wav opens with "Hello. Hello.": with a loop threshold of two copies the window is
    flagged as a repeat and what comes out has no two equal words in a row."""
    strict = make_backend("asr", "whisper", model="tiny.en", device="cpu", batch_size=batch_size,
                             temperatures=[0.0, 0.5], loop_repeats=2, loop_min_words=2)
    segments = strict.transcribe(sample, speech=[(0.0, 12.0)])
    assert segments.stats.flagged.get("repeat") == 1
    assert segments.stats.redecoded_fallback == 1
    tokens = word_tokens([w for s in segments for w in s.words])
    assert tokens and repeated_run(tokens, 6, 2, 2) is None
    # With the default thresholds, whether tiny.en loops on this window depends on the CPU (on some
    # it writes "Hello." five times); on every CPU a flagged window is decoded again, and what
    # comes out holds no run the default thresholds call a loop.
    plain = make_backend("asr", "whisper", model="tiny.en", device="cpu", batch_size=batch_size)
    segments = plain.transcribe(sample, speech=[(0.0, 12.0)])
    stats, o = segments.stats, plain.options
    assert stats.windows == 1 and stats.redecodes >= stats.flagged_windows
    tokens = word_tokens([w for s in segments for w in s.words])
    assert tokens and repeated_run(tokens, o.loop_max_ngram, o.loop_repeats, o.loop_min_words) is None


@pytest.mark.decodes
@pytest.mark.parametrize("batch_size", [1, 8])
def test_quiet_speech_skipped_in_a_window_is_decoded_on_its_own(realdata: Path, sample, batch_size):
    """JFK at full level, then the sample call 26 dB quieter, as one speech region: tiny.en writes
    JFK's words and skips the quiet call; decoded on its own, the call is heard."""
    import numpy as np
    jfk = load_audio(realdata / "faster-whisper" / "jfk.flac")
    audio = np.concatenate([jfk, sample[int(6.4 * 16000):22 * 16000] * 0.05]).astype(np.float32)
    speech = [(0.0, len(audio) / 16000)]
    after_jfk = len(jfk) / 16000 + 0.5
    options = dict(model="tiny.en", device="cpu", batch_size=batch_size)
    skipped = make_backend("asr", "whisper", missed_speech_s=0.0, **options).transcribe(audio, speech=speech)
    assert not [w for s in skipped for w in s.words if w.start > after_jfk]  # the failure this fixes
    heard = make_backend("asr", "whisper", **options).transcribe(audio, speech=speech)
    late = word_tokens([w for s in heard for w in s.words if w.start > after_jfk])
    assert heard.stats.missed_spans == 1 and heard.stats.missed_words == len(late) >= 15
    assert {"jersey", "chicago"} & set(late) or {"diane", "sheila"} & set(late)
    assert word_tokens([w for s in heard for w in s.words if w.start <= after_jfk]) == \
        word_tokens([w for s in skipped for w in s.words])  # JFK's words as they were


def test_loop_options_are_validated():
    from speechkit.core.options import OptionError
    from speechkit.stages import parse_stage
    spec = parse_stage("asr", {"backend": "whisper", "seed": 7, "loop_repeats": 4, "temperatures": [0.0, 0.3]})
    assert spec.options.seed == 7 and spec.options.temperatures == (0.0, 0.3)
    for bad in ({"loop_repeats": 1}, {"temperatures": [0.5, 0.2]}, {"outside_speech_words": -1}, {"seed": -1},
                {"loop_repeat": 3}, {"missed_speech_s": -1}):
        with pytest.raises(OptionError):
            parse_stage("asr", {"backend": "whisper", **bad})
