"""Bounded reading of JSON and JSON-lines inputs, plain or gzip-compressed.

A hostile or careless input fails fast with one message naming the file (and line) instead of
filling memory or hanging: only regular files are opened (:func:`speechkit.io._lines.check_input`),
at most :data:`~speechkit.io._lines.MAX_INPUT_BYTES` are read, after decompression (a small gzip
that inflates to gigabytes is refused at the limit, never inflated whole), a JSON-lines line may
hold at most :data:`MAX_LINE_BYTES`, values nested too deeply, numbers that are not finite
(``NaN``, ``Infinity``, ``1e999``), integers of more than :data:`MAX_INT_DIGITS` digits, a key
given twice in one object (never a silent last-one-wins) and strings holding a lone surrogate
(``"\\ud800"``: no UTF-8 writer can write it back) are errors.
"""
from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from speechkit.errors import FormatError
from speechkit.io._lines import MAX_INPUT_BYTES, check_input, open_input

#: The longest line of a JSON-lines file (one Lhotse cut with its supervisions and alignments).
MAX_LINE_BYTES = 32 << 20
#: The most digits of an integer in a JSON input (int64 has 19).
MAX_INT_DIGITS = 20
_BLOCK = 1 << 20
_GZIP_MAGIC = b"\x1f\x8b"
#: A JSON escape of a UTF-16 surrogate: only such an escape can put a lone one into a string.
_SURROGATE_ESCAPE = r"\\u[dD][89a-fA-F]"
_ESCAPES = {str: re.compile(_SURROGATE_ESCAPE), bytes: re.compile(_SURROGATE_ESCAPE.encode())}
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Refused(ValueError):
    """A value the reader refuses (a number too long or not finite, a key given twice)."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is not finite")
    return value


def _constant(text: str) -> float:
    raise _Refused(f"{text} is not a finite number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Refused(f"duplicate key {key[:80]!r} in an object")
    return out


def _lone_surrogate(value: Any) -> str | None:
    """The first string (key or value) of ``value`` that holds a lone surrogate, or None."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return item
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


def parse_json(text: str | bytes, path: str | Path, line: int | None = None, strict: bool = True) -> Any:
    """JSON ``text`` (read from ``path``, at ``line`` of a JSON-lines file), or a FormatError naming it;
    ``strict`` False lets strings hold control characters (a raw newline), as :func:`json.loads`'s does."""
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant,
                           object_pairs_hook=_object, strict=strict)
    except json.JSONDecodeError as exc:
        raise FormatError(path, f"invalid JSON: {exc.msg}", line=line if line is not None else exc.lineno) from None
    except _Refused as exc:
        raise FormatError(path, f"invalid JSON: {exc}", line=line) from None
    except RecursionError:
        raise FormatError(path, "invalid JSON: values nested too deeply", line=line) from None
    except (UnicodeDecodeError, ValueError) as exc:  # bytes that are not UTF-8; int() limits
        raise FormatError(path, f"invalid JSON: {exc}", line=line) from None
    if _ESCAPES[type(text)].search(text) and (bad := _lone_surrogate(value)) is not None:
        raise FormatError(path, f"invalid JSON: a string holds a lone surrogate (not a character): {bad[:80]!r}",
                          line=line)
    return value


def _blocks(path: str | Path, limit: int = MAX_INPUT_BYTES) -> Iterator[bytes]:
    """The file's bytes in blocks, inflated when it is gzip-compressed; at most ``limit``."""
    total = 0
    with open_input(path) as raw:
        compressed = raw.peek(2)[:2] == _GZIP_MAGIC if hasattr(raw, "peek") else False
        stream: IO[bytes] = gzip.GzipFile(fileobj=raw) if compressed else raw
        try:
            while block := stream.read(_BLOCK):
                total += len(block)
                if total > limit:
                    raise FormatError(path, f"holds more than {limit >> 20} MiB"
                                            f"{' once decompressed' if compressed else ''}, the limit for "
                                            f"{'an input file' if limit == MAX_INPUT_BYTES else 'this kind of file'}"
                                            f"{' (a decompression bomb?)' if compressed else ''}")
                yield block
        except (OSError, EOFError, zlib.error) as exc:
            raise FormatError(path, f"cannot read{' the gzip data' if compressed else ''}: "
                                    f"{getattr(exc, 'strerror', None) or exc or type(exc).__name__}") from None


def read_json(path: str | Path, max_bytes: int = MAX_INPUT_BYTES) -> Any:
    """The JSON document in ``path`` (gzip-compressed or not), bounded as the module docstring says;
    ``max_bytes``: a lower size limit for a kind of file whose documents are small."""
    check_input(path)
    return parse_json(b"".join(_blocks(path, max_bytes)), path)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each non-blank line of a JSON-lines file (gzip-compressed or not)."""
    check_input(path)
    number, pending = 1, b""
    for block in _blocks(path):
        lines = (pending + block).split(b"\n")
        pending = lines.pop()
        if len(pending) > MAX_LINE_BYTES:
            raise FormatError(path, f"a line longer than {MAX_LINE_BYTES >> 20} MiB", line=number + len(lines))
        for line in lines:
            if line.strip():
                if len(line) > MAX_LINE_BYTES:
                    raise FormatError(path, f"a line longer than {MAX_LINE_BYTES >> 20} MiB", line=number)
                yield number, parse_json(line, path, number)
            number += 1
    if pending.strip():
        yield number, parse_json(pending, path, number)
