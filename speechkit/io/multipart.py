"""HTTP forms of type ``multipart/form-data`` (RFC 7578): one encoded for a request, and a
request's body read back into its parts as it arrives (python-multipart's streaming parser),
with bounds on their number and their headers.

What the OpenAI audio API sends and takes: text fields (a repeated field such as
``timestamp_granularities[]`` is a part per value) and a file part with its file name and type.
A file name is kept only as the client's label; nothing here touches the file system.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from speechkit.errors import FormatError

#: What a form's errors name (:class:`~speechkit.errors.FormatError`'s path).
FORM = "the request's form"
#: The most parts a form may have; the most headers of a part, and bytes of one header line.
MAX_PARTS = 1000
MAX_HEADERS = 8
MAX_HEADER_BYTES = 16 << 10


@dataclass(frozen=True)
class Part:
    """One part of a form: the field's ``name``, its ``value`` (bytes), and for a file the
    ``filename`` the client gave and its ``content_type``."""

    name: str
    value: bytes
    filename: str | None = None
    content_type: str = "text/plain"

    @property
    def text(self) -> str:
        """The value as UTF-8 text (bytes that are no UTF-8 replaced)."""
        return self.value.decode("utf-8", errors="replace")


def encode_form(parts: Iterable[Part]) -> tuple[bytes, str]:
    """The body of a ``multipart/form-data`` request holding ``parts``, and its Content-Type
    header (with a random boundary that no part holds)."""
    parts = list(parts)
    boundary = f"speechkit-{uuid.uuid4().hex}"
    while any(boundary.encode() in p.value for p in parts):
        boundary = f"speechkit-{uuid.uuid4().hex}"
    out = bytearray()
    for p in parts:
        disposition = f'form-data; name="{_quoted(p.name)}"'
        if p.filename is not None:
            disposition += f'; filename="{_quoted(p.filename)}"'
        out += f"--{boundary}\r\nContent-Disposition: {disposition}\r\n".encode()
        if p.filename is not None:
            out += f"Content-Type: {p.content_type}\r\n".encode()
        out += b"\r\n" + p.value + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return bytes(out), f"multipart/form-data; boundary={boundary}"


def _quoted(text: str) -> str:
    """``text`` fit for a quoted header parameter (RFC 7578 4.2: quotes, backslashes and line
    breaks percent-encoded, as browsers do)."""
    return text.replace("\\", "%5C").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def form_boundary(content_type: str) -> bytes:
    """The boundary of a ``multipart/form-data`` Content-Type header; raises :class:`FormatError`
    for another type or a missing or malformed boundary."""
    kind, params = parse_options_header(content_type)
    if kind != b"multipart/form-data":
        raise FormatError(FORM, f"expected a multipart/form-data body, got {kind.decode('latin-1')[:60] or 'none'}")
    boundary = params.get(b"boundary", b"")
    if not 1 <= len(boundary) <= 70 or not boundary.isascii():
        raise FormatError(FORM, "the multipart/form-data body has no usable boundary (1 to 70 ASCII characters)")
    return boundary


class FormReader:
    """A ``multipart/form-data`` body read chunk by chunk as it arrives (:meth:`write`), its parts
    then taken whole (:meth:`parts`). What it holds is the parts' values (a bytearray each, so a
    body that comes a byte at a time costs no more than one that comes at once) and at most
    :data:`MAX_HEADERS` header lines of :data:`MAX_HEADER_BYTES` of the part being read."""

    def __init__(self, content_type: str, max_parts: int = MAX_PARTS) -> None:
        self.max_parts = max_parts
        self._done: list[Part] = []
        self._headers: list[tuple[bytearray, bytearray]] = []
        self._part: tuple[str, str | None, str] = ("", None, "text/plain")
        self._value = bytearray()
        self._began = self._ended = False
        self._parser = MultipartParser(form_boundary(content_type), {
            "on_part_begin": self._begin, "on_header_begin": self._header,
            "on_header_field": lambda data, start, end: self._headers[-1][0].extend(data[start:end]),
            "on_header_value": lambda data, start, end: self._headers[-1][1].extend(data[start:end]),
            "on_headers_finished": self._headers_finished,
            "on_part_data": lambda data, start, end: self._value.extend(data[start:end]),
            "on_part_end": self._end_part, "on_end": self._end,
        }, max_header_count=MAX_HEADERS, max_header_size=MAX_HEADER_BYTES)

    def write(self, chunk: bytes) -> None:
        """Read the next ``chunk`` of the body. Raises :class:`FormatError` where the body is no
        such form: a malformed boundary line or header, a part without a name, more than
        ``max_parts`` parts, or headers over the bounds."""
        try:
            self._parser.write(chunk)
        except FormParserError as e:
            if not self._began:
                raise FormatError(FORM, "the body does not begin with the form's boundary") from None
            raise FormatError(FORM, f"the form is malformed: {e}") from None

    def parts(self) -> list[Part]:
        """The form's parts, in order, once the whole body is written; raises :class:`FormatError`
        when it ended before its closing boundary."""
        if not self._ended:
            raise FormatError(FORM, "the form has no closing boundary (the body is cut short)")
        return self._done

    def _begin(self) -> None:
        if len(self._done) >= self.max_parts:
            raise FormatError(FORM, f"the form has more than {self.max_parts} parts")
        self._began = True
        self._headers.clear()

    def _header(self) -> None:
        self._headers.append((bytearray(), bytearray()))

    def _headers_finished(self) -> None:
        headers = {bytes(field).lower(): value.decode("latin-1") for field, value in self._headers}
        disposition, params = parse_options_header(headers.get(b"content-disposition"))
        name = params.get(b"name", b"").decode("utf-8", errors="replace")
        if disposition != b"form-data" or not name:
            raise FormatError(FORM, "a part of the form is not a named form-data field")
        filename = params.get(b"filename")
        content_type = parse_options_header(headers.get(b"content-type"))[0].decode("latin-1")
        self._part = (name, None if filename is None else filename.decode("utf-8", errors="replace"),
                      content_type or "text/plain")
        self._value = bytearray()

    def _end_part(self) -> None:
        name, filename, content_type = self._part  # set by its headers, which come first
        self._done.append(Part(name, bytes(self._value), filename, content_type))
        self._value = bytearray()

    def _end(self) -> None:
        self._ended = True


def parse_form(body: bytes, content_type: str, max_parts: int = MAX_PARTS) -> list[Part]:
    """The parts of a whole ``multipart/form-data`` request ``body`` (``content_type``: its
    header), in order (:class:`FormReader` read at once). Raises :class:`FormatError`."""
    reader = FormReader(content_type, max_parts)
    reader.write(body)
    return reader.parts()
