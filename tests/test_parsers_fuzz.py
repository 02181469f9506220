"""Property-based tests: arbitrary input never crashes a parser with anything but its documented error."""
from __future__ import annotations

import string
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from speechkit.errors import FormatError, ManifestError
from speechkit.io import read_transcripts
from speechkit.io.manifest import load_workspace
from speechkit.io.seglst import parse_seglst


@pytest.fixture(autouse=True, scope="module")
def _hide_speechbrain_lazy_proxies():
    """Hypothesis scans every module in sys.modules for constants; speechbrain leaves lazy proxies
    there whose attribute access raises ImportError when an optional backend (k2, flair) is absent.
    Hide them from the scan while these tests run, then put them back."""
    hidden = {name: mod for name, mod in sys.modules.items()
              if type(mod).__name__ in ("LazyModule", "DeprecatedModuleRedirect")}
    for name in hidden:
        del sys.modules[name]
    yield
    sys.modules.update(hidden)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Text that looks like the line formats: tokens of numbers, words and markers, sometimes garbage.
token = st.one_of(st.sampled_from(["SPEAKER", "1", "0.5", "-1", "nan", "inf", "<NA>", "A", "x", ";;", "#",
                                   "1e309", "<o,f0,male>", "ignore_time_segment_in_scoring"]),
                  st.text(alphabet=string.printable, max_size=6))
line = st.lists(token, max_size=12).map(" ".join)
document = st.one_of(st.lists(line, max_size=8).map("\n".join), st.text(max_size=200))


@FUZZ
@given(text=document, ext=st.sampled_from(["rttm", "stm", "ctm"]))
def test_line_formats_raise_only_format_error(tmp_path, text, ext):
    path = tmp_path / f"f.{ext}"
    path.write_bytes(text.encode("utf-8", errors="replace"))
    try:
        transcripts = read_transcripts(path)
    except FormatError as exc:
        assert str(path) in str(exc)
        return
    for t in transcripts.values():
        assert all(s.end >= s.start >= 0 for s in t.segments)


json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(
        st.sampled_from(["session_id", "speaker", "start_time", "end_time", "words", "word_times",
                         "speaker_name", "word", "start", "end", "confidence"]), inner, max_size=6)),
    max_leaves=20)


@FUZZ
@given(value=json_value)
def test_seglst_raises_only_format_error(value):
    import json
    try:
        parse_seglst(json.dumps(value), "x.json")
    except FormatError as exc:
        assert "x.json" in str(exc)


manifest_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
              st.sampled_from(["p1", "m1", "a.wav", "../x", "/etc/passwd", "2026-01-01", "email"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(
        st.sampled_from(["format", "name", "people", "terms", "meetings", "artifacts", "id", "date", "audio",
                         "attendees", "numbers", "jargon", "kind", "path", "meeting", "nicknames",
                         "enrollment", "reference"]), inner, max_size=6)),
    max_leaves=25)


@FUZZ
@given(value=manifest_value)
def test_manifest_raises_only_manifest_error(tmp_path, value):
    (tmp_path / "a.wav").write_bytes(b"RIFF")
    (tmp_path / "workspace.yaml").write_text(yaml.safe_dump(value))
    try:
        load_workspace(tmp_path)
    except ManifestError as exc:
        assert "workspace.yaml" in str(exc)
