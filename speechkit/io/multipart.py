"""HTTP forms of type ``multipart/form-data`` (RFC 7578): one encoded for a request, and a
request's body read back into its parts, with bounds on their number and their headers.

What the OpenAI audio API sends and takes: text fields (a repeated field such as
``timestamp_granularities[]`` is a part per value) and a file part with its file name and type.
A file name is kept only as the client's label; nothing here touches the file system.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from email.message import Message
from email.parser import HeaderParser
from email.utils import collapse_rfc2231_value

from speechkit.errors import FormatError

#: What a form's errors name (:class:`~speechkit.errors.FormatError`'s path).
FORM = "the request's form"
#: The most parts a form may have, and the most bytes of one part's headers.
MAX_PARTS = 1000
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


def form_boundary(content_type: str) -> str:
    """The boundary of a ``multipart/form-data`` Content-Type header; raises :class:`FormatError`
    for another type or a missing or malformed boundary."""
    header = Message()
    header["content-type"] = content_type
    if header.get_content_type() != "multipart/form-data":
        raise FormatError(FORM, f"expected a multipart/form-data body, got {header.get_content_type()}")
    boundary = header.get_param("boundary")
    if isinstance(boundary, tuple):
        boundary = collapse_rfc2231_value(boundary)
    if not isinstance(boundary, str) or not 1 <= len(boundary) <= 70 or not boundary.isascii():
        raise FormatError(FORM, "the multipart/form-data body has no usable boundary (1 to 70 ASCII characters)")
    return boundary


def parse_form(body: bytes, content_type: str, max_parts: int = MAX_PARTS) -> list[Part]:
    """The parts of a ``multipart/form-data`` request ``body`` (``content_type``: its header), in
    order. Raises :class:`FormatError` on a body that is not such a form: no boundary, no closing
    delimiter, a part without a name, more than ``max_parts`` parts, or headers over
    :data:`MAX_HEADER_BYTES`. Linear in the body's length."""
    delimiter = b"--" + form_boundary(content_type).encode()
    start = body.find(delimiter)
    if start < 0 or (start > 0 and body[start - 2:start] != b"\r\n"):
        raise FormatError(FORM, "the form holds no part (its boundary is not in the body)")
    pos = start + len(delimiter)
    parts: list[Part] = []
    while True:
        if body.startswith(b"--", pos):
            return parts
        line_end = body.find(b"\r\n", pos)
        if line_end < 0 or body[pos:line_end].strip(b" \t"):
            raise FormatError(FORM, "the form's boundary line is malformed")
        pos = line_end + 2
        end = _next_delimiter(body, delimiter, pos)
        if end < 0:
            raise FormatError(FORM, "the form has no closing boundary (the body is cut short)")
        if len(parts) >= max_parts:
            raise FormatError(FORM, f"the form has more than {max_parts} parts")
        parts.append(_part(body[pos:end]))
        pos = end + 2 + len(delimiter)


def _next_delimiter(body: bytes, delimiter: bytes, pos: int) -> int:
    """Where the line break before the next delimiter from ``pos`` is (-1: none): a CRLF, the
    delimiter, then ``--`` or spaces and tabs (at most 64) up to a CRLF; a mere occurrence of
    the boundary's text (``--b-not``) is part of the value."""
    mark = b"\r\n" + delimiter
    end = body.find(mark, pos)
    while end >= 0:
        after = end + len(mark)
        rest = body[after:after + 66]
        if rest.startswith(b"--") or rest.lstrip(b" \t").startswith(b"\r\n"):
            return end
        end = body.find(mark, end + 1)
    return -1


def _part(raw: bytes) -> Part:
    """One part from its bytes (headers, a blank line, the value)."""
    split = raw.find(b"\r\n\r\n") if not raw.startswith(b"\r\n") else -2
    if split == -1 or split > MAX_HEADER_BYTES:
        raise FormatError(FORM, "a part of the form has no end to its headers, or headers over "
                          f"{MAX_HEADER_BYTES:,} bytes")
    headers = HeaderParser().parsestr(raw[:max(split, 0)].decode("utf-8", errors="replace"))
    value = raw[split + 4:]
    name = _param(headers, "name")
    if headers.get_content_disposition() != "form-data" or not name:
        raise FormatError(FORM, "a part of the form is not a named form-data field")
    filename = _param(headers, "filename")
    return Part(name, value, filename, headers.get_content_type() if headers["content-type"] else "text/plain")


def _param(headers: Message, name: str) -> str | None:
    """A parameter of the part's Content-Disposition (None when absent)."""
    value = headers.get_param(name, header="content-disposition")
    if isinstance(value, tuple):
        value = collapse_rfc2231_value(value)
    return value if isinstance(value, str) else None
