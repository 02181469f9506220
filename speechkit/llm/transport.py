"""One HTTP exchange with a deadline on the whole of it and a bound on the bytes of its answer."""
from __future__ import annotations

import http.client
import socket
import threading
import urllib.parse
from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """An HTTP answer: status, reason phrase, ``Retry-After`` header ("" when absent) and body."""

    status: int
    phrase: str
    retry_after: str
    body: bytes


class ReplyTooLarge(Exception):
    """The answer's body is longer than the exchange's ``max_bytes``."""


def exchange(method: str, url: str, body: bytes | None, headers: dict[str, str], timeout_s: float,
             max_bytes: int) -> Reply:
    """Send ``method`` ``url`` with ``body``; the answer.

    The whole exchange (connecting, sending, the headers and the body) must end within
    ``timeout_s``: a watchdog shuts the socket down at the deadline, so a server that sends a
    byte now and then cannot hold the request longer (a socket timeout alone bounds only each
    read). At most ``max_bytes`` of the body are read: a longer one (declared or sent) raises
    :class:`ReplyTooLarge` without being read further. Raises TimeoutError past the deadline,
    OSError or HTTPException on other failures.
    """
    parts = urllib.parse.urlsplit(url)
    connection_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = connection_class(parts.hostname, parts.port, timeout=timeout_s)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = connection.sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        if response.length is not None and response.length > max_bytes:
            raise ReplyTooLarge(f"the server announced an answer of {response.length:,} bytes; "
                                f"at most {max_bytes:,} are read for this request")
        data = response.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise ReplyTooLarge(f"the answer is longer than {max_bytes:,} bytes, the most read for this request")
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout_s:g} s")
        return Reply(response.status, response.reason, response.getheader("Retry-After", "") or "", data)
    except (OSError, http.client.HTTPException):
        if expired.is_set():
            raise TimeoutError(f"no complete answer within {timeout_s:g} s") from None
        raise
    finally:
        watchdog.cancel()
        connection.close()
