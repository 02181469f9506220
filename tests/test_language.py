"""Languages in the data model: tags validated, a workspace's and its meetings' languages agree."""
from __future__ import annotations

import subprocess
import sys

import pytest

from speechkit.errors import ManifestError
from speechkit.io.manifest import load_workspace, write_manifest
from speechkit.language import ENGLISH, parse_language
from tests.test_manifest import make_workspace


@pytest.mark.parametrize("code, languages, primaries, by_characters, whisper", [
    ("en", (), ("en",), False, "en"),
    ("en-GB", (), ("en",), False, "en"),
    ("zh-Hans-CN", (), ("zh",), True, "zh"),
    ("ja", (), ("ja",), True, "ja"),
    ("mixed", ("zh", "en"), ("zh", "en"), True, "zh"),
    ("mixed", ("ja", "zh", "en"), ("ja", "zh", "en"), True, None),
    ("mixed", ("de", "en"), ("de", "en"), False, "de"),
])
def test_tags_say_how_text_is_cut_and_what_whisper_is_told(code, languages, primaries, by_characters, whisper):
    spoken = parse_language(code, languages)
    assert spoken.primaries == primaries and spoken.by_characters == by_characters
    assert spoken.whisper_code == whisper and spoken.is_english == (primaries == ("en",))


@pytest.mark.parametrize("code, languages, problem", [
    ("klingon", (), "unknown language 'klingon'"),
    ("xx", (), "unknown language 'xx'"),
    ("zh_CN", (), "unknown language 'zh_CN'"),
    (7, (), "unknown language 7"),
    ("mixed", (), "needs two or more different languages"),
    ("mixed", ("zh", "zh-TW"), "needs two or more different languages"),
    ("mixed", ("zh", "qq"), "unknown language 'qq'"),
    ("zh", ("zh", "en"), "a list of languages goes with 'mixed'"),
])
def test_bad_tags_are_refused_with_the_reason(code, languages, problem):
    with pytest.raises(ValueError, match=problem):
        parse_language(code, languages)


def test_a_workspace_and_its_meetings_carry_their_languages_and_round_trip(tmp_path):
    meetings = [{"id": "m1", "date": "2026-03-02", "audio": "audio/m1.wav"},
                {"id": "m2", "date": "2026-03-03", "audio": "audio/m2.wav", "language": "zh"}]
    ws = load_workspace(make_workspace(tmp_path, language="mixed", languages=["zh", "en"], meetings=meetings))
    assert ws.language == parse_language("mixed", ["zh", "en"])
    assert [m.language.code for m in ws.meetings] == ["mixed", "zh"]
    (tmp_path / "workspace.yaml").unlink()
    write_manifest(ws)
    again = load_workspace(tmp_path)
    assert again.language == ws.language and again.meetings == ws.meetings


def test_an_english_workspace_names_no_language_and_is_english(tmp_path):
    ws = load_workspace(make_workspace(tmp_path))
    assert ws.language == ENGLISH and all(m.language == ENGLISH for m in ws.meetings)
    assert "language" not in (tmp_path / "workspace.yaml").read_text()


@pytest.mark.parametrize("overrides, pattern", [
    ({"language": "klingon"}, r"workspace.yaml: language: unknown language 'klingon'"),
    ({"languages": ["zh", "en"]}, r"languages: languages given without language: mixed"),
    ({"language": "zh", "meetings": [{"id": "m1", "date": "2026-03-02", "audio": "audio/m1.wav",
                                      "language": "ja"}]},
     r"meetings\[0\]\.language: ja is not a language of the workspace \(zh\)"),
    ({"meetings": [{"id": "m1", "date": "2026-03-02", "audio": "audio/m1.wav", "language": "ja"},
                   {"id": "m2", "date": "2026-03-03", "audio": "audio/m2.wav", "language": "en"}]},
     r"language: the meetings are in different languages and the workspace names none"),
])
def test_languages_that_disagree_name_the_field(tmp_path, overrides, pattern):
    with pytest.raises(ManifestError, match=pattern):
        load_workspace(make_workspace(tmp_path, **overrides))


def test_the_cli_says_one_line_for_an_unknown_language(tmp_path):
    root = make_workspace(tmp_path, language="zz-top")
    done = subprocess.run([sys.executable, "-m", "speechkit", "score", "--workspace", str(root), "--run",
                           str(tmp_path / "run")], capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert f"error: {root / 'workspace.yaml'}: language: unknown language 'zz-top'" in line
