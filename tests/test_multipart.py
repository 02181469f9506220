"""multipart/form-data forms (issue 38; read with python-multipart since issue 48): what the api
ASR backend sends and ``speechkit serve`` reads, whole or as it arrives in chunks of any size."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from speechkit.errors import FormatError
from speechkit.io.multipart import MAX_HEADER_BYTES, MAX_HEADERS, FormReader, Part, encode_form, parse_form

names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
parts = st.lists(st.builds(Part, names, st.binary(max_size=200), st.none() | names), max_size=6)


def quoted(name: str) -> str:
    return name.replace("\\", "%5C").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


@settings(max_examples=200, deadline=None)
@given(parts, st.integers(1, 64))
def test_a_form_reads_back_as_it_was_sent_whole_or_in_chunks(sent, chunk):
    body, content_type = encode_form(sent)
    expected = [(quoted(p.name), p.value, p.filename and quoted(p.filename)) for p in sent]
    assert [(p.name, p.value, p.filename) for p in parse_form(body, content_type)] == expected
    reader = FormReader(content_type)
    for start in range(0, len(body), chunk):
        reader.write(body[start:start + chunk])
    assert [(p.name, p.value, p.filename) for p in reader.parts()] == expected


def test_what_a_client_sends_is_read_with_its_types_and_quirks():
    body = (b"--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.flac\"\r\n"
            b"Content-Type: audio/flac\r\n\r\nfLaC\r\n--XyZ-not\r\n--XyZ\r\n"
            b"content-disposition: form-data; name=\"timestamp_granularities[]\"\r\n\r\nword\r\n--XyZ--\r\nepilogue")
    file, field = parse_form(body, 'multipart/form-data; boundary="XyZ"')
    assert (file.name, file.filename, file.content_type, file.value) == ("file", "a b.flac", "audio/flac",
                                                                         b"fLaC\r\n--XyZ-not")
    assert (field.name, field.text, field.filename, field.content_type) == (
        "timestamp_granularities[]", "word", None, "text/plain")
    windows = (b'--b\r\nContent-Disposition: form-data; name="file"; filename="C:\\\\Users\\\\x\\\\a.wav"'
               b"\r\n\r\n\r\n--b--")
    assert parse_form(windows, "multipart/form-data; boundary=b")[0].filename == "a.wav"  # a label, no path


@pytest.mark.parametrize(("body", "content_type", "problem"), [
    (b"--b\r\n\r\nx\r\n--b--", "application/json", "expected a multipart/form-data body"),
    (b"--b\r\n\r\nx\r\n--b--", "", "expected a multipart/form-data body, got none"),
    (b"--b\r\n\r\nx\r\n--b--", "multipart/form-data", "no usable boundary"),
    (b"--b\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=" + "b" * 71, "no usable boundary"),
    (b"no parts here", "multipart/form-data; boundary=b", "does not begin with the form's boundary"),
    (b"preamble\r\n--b\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=b", "does not begin with"),
    (b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\ncut short", "multipart/form-data; boundary=b",
     "no closing boundary"),
    (b"", "multipart/form-data; boundary=b", "no closing boundary"),
    (b"--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=b", "not a named"),
    (b"--b\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=b",
     "not a named"),
    (b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\nX: " + b"y" * MAX_HEADER_BYTES + b"\r\n\r\n\r\n--b--",
     "multipart/form-data; boundary=b", "Maximum header size exceeded"),
    (b"--b\r\n" + b"X: y\r\n" * (MAX_HEADERS + 1) + b"\r\n\r\n--b--", "multipart/form-data; boundary=b",
     "Maximum header count exceeded"),
    (b"--b\r\nno colon here\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=b", "invalid character"),
    (b"--bjunk\r\n\r\nx\r\n--b--", "multipart/form-data; boundary=b", "does not begin with the form's boundary"),
])
def test_a_body_that_is_no_form_is_refused_with_what_is_wrong(body, content_type, problem):
    with pytest.raises(FormatError, match=problem):
        parse_form(body, content_type)


def test_a_form_with_too_many_parts_is_refused():
    body, content_type = encode_form([Part("a", b"1")] * 11)
    assert len(parse_form(body, content_type, max_parts=11)) == 11
    with pytest.raises(FormatError, match="more than 10 parts"):
        parse_form(body, content_type, max_parts=10)
