"""One HTTP exchange with a deadline on the whole of it."""
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


def exchange(method: str, url: str, body: bytes | None, headers: dict[str, str], timeout_s: float) -> Reply:
    """Send ``method`` ``url`` with ``body``; the answer.

    The whole exchange (connecting, sending, the headers and the body) must end within
    ``timeout_s``: a watchdog shuts the socket down at the deadline, so a server that sends a
    byte now and then cannot hold the request longer (a socket timeout alone bounds only each
    read). Raises TimeoutError past the deadline, OSError or HTTPException on other failures.
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
        data = response.read()
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
