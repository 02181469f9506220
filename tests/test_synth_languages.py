"""Synthetic workspaces in Chinese, Japanese and mixed: phrasing families, spoken numbers, readings,
gold notes and questions (from scripts, no audio), and one small rendered workspace per language
(character times, terms, voices)."""
from __future__ import annotations

import datetime as dt
import json
import re

import pytest

from speechkit import cjk
from speechkit.io.manifest import load_workspace
from speechkit.io.rttm import read_rttm
from speechkit.io.seglst import read_seglst
from speechkit.synth import SynthOptions, synthesize_workspace
from speechkit.synth.acts import ACTS, SPLITS
from speechkit.synth.families import LANGUAGE_FAMILIES
from speechkit.synth.ja import date_words, kana
from speechkit.synth.ja import number_words as ja_number
from speechkit.synth.languages import language
from speechkit.synth.notes import gold_notes
from speechkit.synth.questions import gold_questions
from speechkit.synth.script import write_script
from speechkit.synth.spoken import tts_words
from speechkit.synth.voices import espeak_runs
from speechkit.synth.zh import number_words as zh_number

PINYIN = re.compile(r"^[a-zv]+[1-5][,.?!]*$")
KANA = re.compile(r"^[\u3040-\u30ff]+[,.?!]*$")
_VALUE = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2, "〇": 0}
_UNIT = {"十": 10, "百": 100, "千": 1000}


def parse_numeral(text: str) -> int:
    """Chinese or Japanese numerals back to a number (written here, independently of the generator)."""
    total, section, digit = 0, 0, None
    for ch in text:
        if ch in _VALUE:
            digit = _VALUE[ch]
        elif ch in _UNIT:
            section += (1 if digit is None else digit) * _UNIT[ch]
            digit = None
        elif ch == "万":
            total += (section + (digit or 0)) * 10000
            section, digit = 0, None
        else:
            raise ValueError(ch)
    return total + section + (digit or 0)


def _script(code: str, languages: tuple[str, ...] = (), phrasing: str = "all", seed: int = 5, meetings: int = 3):
    options = SynthOptions(seed=seed, meetings=meetings, people=4, minutes=1.0, language=code, languages=languages,
                           phrasing=phrasing, check_voices=False)
    return write_script(options, [v.id for v in options.spoken_language.voices])


@pytest.mark.parametrize("code", ["zh", "ja"])
def test_every_act_has_families_in_both_splits_written_in_the_language(code):
    table = LANGUAGE_FAMILIES[code]
    for act in ACTS:
        splits = {s: [f for f in table[act] if f.split == s] for s in SPLITS}
        assert all(len(fams) >= 4 for fams in splits.values()), (code, act)
        # each split has a family a 1:1 (host and one other person) can say, absent people aside
        assert all(any(f.roles <= {"host", "who", "absent"} for f in fams) for fams in splits.values()), act
    texts = [re.sub(r"\{\w+\}|\[[^\]]+\]", "", template) for fams in table.values() for f in fams
             for role, template in f.lines if role]
    assert all(cjk.has_cjk(t) and not re.search(r"[A-Za-z]", t) for t in texts)
    with_kana = sum(re.search(r"[\u3040-\u30ff]", t) is not None for t in texts)
    assert with_kana == 0 if code == "zh" else with_kana > 0.95 * len(texts)


@pytest.mark.parametrize("n", [0, 7, 10, 15, 20, 110, 250, 1005, 1200, 2050, 2500, 4800, 10050, 18000, 45000,
                               120000, 250000, 99999999])
def test_numbers_said_in_chinese_and_japanese_read_back(n):
    assert parse_numeral(zh_number(n)) == n
    assert parse_numeral("".join(w for w, _ in ja_number(n)).replace("零", "〇")) == n


def test_spoken_forms_of_numbers_and_dates():
    assert zh_number(2500) == "两千五百" and zh_number(45000) == "四万五千" and zh_number(15) == "十五"
    assert zh_number(1005) == "一千零五" and zh_number(120) == "一百二十"
    assert ja_number(2500) == [("二千", "にせん"), ("五百", "ごひゃく")]
    assert [s for _, s in ja_number(3800)] == ["さんぜん", "はっぴゃく"]
    assert [s for _, s in ja_number(600)] == ["ろっぴゃく"]
    assert date_words(dt.date(2026, 3, 8)) == [("三月", "さんがつ"), ("八日", "ようか")]
    assert [s for _, s in date_words(dt.date(2026, 4, 20))] == ["しがつ", "はつか"]
    assert [s for _, s in date_words(dt.date(2026, 9, 17))] == ["くがつ", "じゅうしちにち"]
    zh, ja = language("zh"), language("ja")
    term = zh.number_term("money", 45000, "合同金额", "")
    assert (term.canonical, term.spoken, term.tts.split()[0]) == ("45,000元", "四 万 五 千 元", "si4")
    assert ja.number_term("percent", 35, "エラー率", "").canonical == "3.5%"
    for lang in (zh, ja):
        for measure, value in (("date", dt.date(2026, 5, 31)), ("count", 2500), ("money", 120000), ("ticket", 4976),
                               ("percent", 7), ("ms", 150)):
            made = lang.number_term(measure, value, "t", "")
            assert lang.value_of(made) == value and len(made.spoken.split()) == len(made.tts.split())
    mixed = language("mixed", ("zh", "en"))
    assert mixed.number_term("money", 45000, "t", "").spoken == "forty five thousand dollars"
    assert mixed.number_term("date", dt.date(2026, 3, 8), "t", "").canonical == "3月8日"


def test_readings_are_what_the_voices_can_say():
    """Every TTS word of a Chinese script is a pinyin syllable or English; of a Japanese one kana
    (no kanji left for espeak-ng to spell out) or English; mixed turns switch to English runs."""
    for code, native in (("zh", PINYIN), ("ja", KANA)):
        script = _script(code)
        said = [w for turns in script.turns.values() for t in turns for w in tts_words(t.pieces)]
        assert all(native.match(w) or re.fullmatch(r"[A-Za-z][\w.'\-]*[,.?!]*", w) for w in said), \
            [w for w in said if not native.match(w)][:5]
        assert sum(bool(native.match(w)) for w in said) > 0.95 * len(said)
    assert [r for _, r in kana("それは")] == ["それわ"]
    mixed = _script("mixed", ("ja", "en"))
    terms = [p for turns in mixed.turns.values() for t in turns for p in t.pieces if p.term]
    assert terms and all(re.fullmatch(r"[\x00-\x7f]+", p.canonical) for p in terms if not p.term.endswith("日"))
    runs = espeak_runs(["かとう", "さん", "ee-bit-dah", "わ", "tee-ess-el-ay"], "ja+m3")
    assert runs == [("ja+m3", 0, 2), ("en-us+m3", 2, 3), ("ja+m3", 3, 4), ("en-us+m3", 4, 5)]
    assert espeak_runs(["wo3", "men5", "Kafka"], "cmn-latn-pinyin+f2") == [("cmn-latn-pinyin+f2", 0, 2),
                                                                          ("en-us+f2", 2, 3)]
    assert espeak_runs(["the", "word"], "en-us+m3") == [("en-us+m3", 0, 2)]


@pytest.mark.parametrize("code,languages", [("zh", ()), ("ja", ()), ("mixed", ("zh", "en"))])
def test_gold_notes_and_questions_are_in_the_meetings_language(code, languages):
    script = _script(code, languages)
    truth = script.state.to_dict()
    assert truth["language"] == code
    numbers = [n.canonical for p in script.state.projects for n in p.numbers]
    found = 0
    for plan in script.state.meetings:
        said = [p.term for t in script.turns[plan.id] for p in t.pieces if p.term in numbers]
        notes = gold_notes(truth, plan.id, said)
        questions = gold_questions(truth, plan.id, said).questions
        assert cjk.has_cjk(notes.summary) and "Decided on" not in notes.summary and " with " not in notes.summary
        for q in questions:
            assert cjk.has_cjk(q.question) and not re.search(r"\b(Who|What|When)\b", q.question), q.question
        weekdays = language(code, languages).pools.weekdays
        for item in notes.action_items:
            assert item.description in notes.summary and item.due in weekdays and item.due in notes.summary
        found += len(questions)
    assert found


def test_the_phrasings_of_one_seed_share_the_latent_people_and_keep_to_their_split():
    tuned, held = _script("zh", phrasing="tuned"), _script("zh", phrasing="held-out")
    assert [p.name for p in tuned.state.people] == [p.name for p in held.state.people]
    assert {a.split for a in tuned.state.acts} == {"tuned"} and {a.split for a in held.state.acts} == {"held-out"}


def test_bad_language_options_are_refused_in_one_line(capsys, tmp_path):
    from speechkit.cli import main

    for argv in (["--language", "mixed", "--languages", "fr,en"], ["--language", "zh", "--languages", "zh,en"],
                 ["--language", "ja", "--paraphrase"]):
        assert main(["synth", "--out", str(tmp_path / "ws"), *argv]) != 0
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "error: " in err[0], err
    assert not (tmp_path / "ws").exists()


# --- rendered workspaces -----------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["zh", "ja"])
def rendered(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(f"synth-{request.param}") / "ws"
    synthesize_workspace(out, SynthOptions(seed=3, meetings=1, people=3, minutes=0.2, language=request.param,
                                           check_voices=True))
    return request.param, out


def test_character_times_are_inside_their_turns_and_in_order(rendered):
    code, root = rendered
    ws = load_workspace(root)
    m = ws.meetings[0]
    ref = next(iter(read_seglst(m.reference).values()))
    turns = next(iter(read_rttm(m.rttm).values())).segments
    tokens = 0
    for seg in ref.segments:
        times = [(w.start, w.end) for w in seg.words]
        assert all(s < e for s, e in times) and all(a[1] <= b[0] + 1e-3 for a, b in zip(times, times[1:]))
        assert any(t.speaker == seg.speaker and t.start - 1e-3 <= times[0][0] and times[-1][1] <= t.end + 1e-3
                   for t in turns)
        for w in seg.words:
            assert len(w.text) == 1 or not cjk.has_cjk(w.text), w.text  # a CJK character is a token
        tokens += len(seg.words)
    assert tokens > 20
    canonical = "".join(s.text for s in next(iter(read_seglst(m.canonical).values())).segments)
    assert all(t in canonical for t in (*m.terms.jargon, *m.terms.numbers)) and (m.terms.jargon or m.terms.numbers)
    verbatim = "".join(s.text.replace(" ", "") for s in ref.segments)
    assert all(t.replace(" ", "") in verbatim for t in m.terms.jargon)


def test_voices_are_distinct_and_the_truth_says_the_language(rendered):
    code, root = rendered
    ws = load_workspace(root)
    similarity = ws.metadata["voice_similarity"]
    assert similarity["separable"] and similarity["cross_max"] < similarity["within_min"] - 0.1
    assert len({ws.metadata["voices"][p.id]["name"] for p in ws.people}) == len(ws.people)
    truth = json.loads((root / "truth" / "state.json").read_text(encoding="utf-8"))
    assert truth["language"] == code and all(cjk.has_cjk(t) for t in truth["enrollment_texts"].values())
    assert f"--language {code}" in ws.metadata["regenerate"]
    assert ws.language.code == code and all(m.language == ws.language for m in ws.meetings)
    notes = json.loads((root / "meetings" / ws.meetings[0].id / "notes.json").read_text(encoding="utf-8"))
    assert cjk.has_cjk(notes["summary"])
