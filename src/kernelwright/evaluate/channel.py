"""Framed messages over a connected Unix stream socket, the harness's only wire between processes.

    frame   := header_len:u64 payload_len:u64 header payload
    header  := UTF-8 JSON object (at most ``MAX_HEADER`` bytes)
    payload := raw bytes (tensors serialised by :mod:`~kernelwright.evaluate.transport`)

The judge talks to a candidate's process through one of these, and the parent to the judge
through another. Every receive has a deadline and a size limit: a peer that stops answering, sends
garbage or floods the socket ends the conversation with a :class:`ChannelError`, never a hang or
an unbounded allocation. A frame may carry file descriptors (SCM_RIGHTS): the parent hands a
candidate's socket to the judge that way, so the judge and the candidate talk directly, and on
the CPU the judge hands the candidate the shared memory of its input buffers.
"""

from __future__ import annotations

import json
import os
import select
import socket
import struct
import time
from collections.abc import Sequence
from typing import Any

_PREFIX = struct.Struct(">QQ")
MAX_HEADER = 4 << 20
MAX_FDS = 256  # descriptors one frame may carry


class ChannelError(Exception):
    """The conversation cannot go on (base class)."""


class ChannelClosed(ChannelError):
    """The peer closed its end (it exited or died)."""


class ChannelTimeout(ChannelError):
    """The peer did not answer before the deadline."""


class ProtocolError(ChannelError):
    """The peer sent something that is not a well-formed frame."""


class Channel:
    """One end of a conversation; not thread-safe (one request, one reply at a time)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.setblocking(True)
        # Bytes of a frame not yet complete: a deadline may pass in the middle of one, and the
        # next ``recv`` must go on from there, not from the middle of a frame.
        self._pending = bytearray()
        self._fds: list[int] = []  # descriptors received and not yet taken

    @classmethod
    def from_fd(cls, fd: int) -> Channel:
        """Wrap an inherited socket descriptor."""
        return cls(socket.socket(fileno=fd))

    def fileno(self) -> int:
        """The socket's descriptor (for ``select``)."""
        return self.sock.fileno()

    def close(self) -> None:
        """Close this end and any descriptors received and not taken (idempotent)."""
        self.close_fds()
        try:
            self.sock.close()
        except OSError:
            pass

    # -- sending ---------------------------------------------------------------------------

    def send(self, header: dict[str, Any], payload: bytes = b"", fds: Sequence[int] = ()) -> None:
        """Send one frame, with ``fds`` attached. Raises ChannelClosed when the peer is gone."""
        data = json.dumps(header, separators=(",", ":")).encode()
        head = _PREFIX.pack(len(data), len(payload)) + data
        try:
            if fds:
                sent = socket.send_fds(self.sock, [head], list(fds))
                if sent < len(head):
                    self.sock.sendall(head[sent:])
            else:
                self.sock.sendall(head)
            if payload:
                self.sock.sendall(payload)
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise ChannelClosed(f"the peer is gone ({exc})") from None

    def take_fds(self, n: int) -> list[int]:
        """The next ``n`` descriptors received (ProtocolError if fewer came)."""
        if len(self._fds) < n:
            raise ProtocolError(f"expected {n} file descriptor(s), got {len(self._fds)}")
        taken, self._fds = self._fds[:n], self._fds[n:]
        return taken

    def close_fds(self) -> None:
        """Close descriptors received and never taken."""
        for fd in self._fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self._fds = []

    # -- receiving -------------------------------------------------------------------------

    def recv(
        self, deadline: float | None = None, max_payload: int = 1 << 30, spin_s: float = 0.0
    ) -> tuple[dict[str, Any], bytes]:
        """The next frame: ``(header, payload)``.

        Args:
            deadline: ``time.monotonic()`` value after which ChannelTimeout is raised (what was
                read of a frame so far is kept for the next call).
            max_payload: frames announcing a larger payload are refused (ProtocolError).
            spin_s: poll without sleeping for up to this long before blocking, where the frame
                is due soon and on someone's clock: a thread woken from a sleep of a few
                milliseconds (its core idle meanwhile) can take a fraction of one to run again.
        """
        self._fill(_PREFIX.size, deadline, spin_s)
        header_len, payload_len = _PREFIX.unpack(bytes(self._pending[: _PREFIX.size]))
        if header_len > MAX_HEADER:
            raise ProtocolError(f"a header of {header_len} bytes exceeds {MAX_HEADER}")
        if payload_len > max_payload:
            raise ProtocolError(f"a payload of {payload_len} bytes exceeds {max_payload}")
        total = _PREFIX.size + header_len + payload_len
        self._fill(total, deadline)
        frame = bytes(self._pending[:total])
        del self._pending[:total]
        header = _parse_header(frame[_PREFIX.size : _PREFIX.size + header_len])
        return header, frame[_PREFIX.size + header_len :]

    def _fill(self, n: int, deadline: float | None, spin_s: float = 0.0) -> None:
        """Read until at least ``n`` bytes are pending, never past the frame being read: a
        caller may wait on the socket itself (``select`` on :meth:`fileno`) for the next frame,
        which a read of whatever had arrived would have taken out of the socket already."""
        while len(self._pending) < n:
            _wait_readable(self.sock, deadline, spin_s)
            try:
                chunk, fds, _flags, _addr = socket.recv_fds(
                    self.sock, min(n - len(self._pending), 1 << 24), MAX_FDS)
            except (ConnectionResetError, OSError) as exc:
                raise ChannelClosed(f"the peer is gone ({exc})") from None
            self._fds.extend(fds)
            if len(self._fds) > MAX_FDS:
                self.close_fds()
                raise ProtocolError("too many file descriptors")
            if not chunk:
                raise ChannelClosed("the peer closed the connection")
            self._pending += chunk


def pair() -> tuple[socket.socket, socket.socket]:
    """A connected pair of Unix stream sockets (both inheritable by children that need them)."""
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return a, b


def _wait_readable(sock: socket.socket, deadline: float | None, spin_s: float = 0.0) -> None:
    """Return once ``sock`` has something to read: polling without sleeping for the first
    ``spin_s`` seconds, then sleeping until ``deadline`` (ChannelTimeout past it)."""
    spin_until = time.monotonic() + spin_s
    while True:
        now = time.monotonic()
        timeout = None if deadline is None else deadline - now
        if timeout is not None and timeout <= 0:
            raise ChannelTimeout("no answer before the deadline")
        if now < spin_until:
            timeout = 0.0
        try:
            ready, _, _ = select.select([sock], [], [], timeout)
        except InterruptedError:
            continue
        except (OSError, ValueError) as exc:
            raise ChannelClosed(f"the connection is unusable ({exc})") from None
        if ready:
            return


def _parse_header(data: bytes) -> dict[str, Any]:
    try:
        header = json.loads(data.decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"a header that is not JSON ({exc})") from None
    if not isinstance(header, dict):
        raise ProtocolError(f"a header that is a {type(header).__name__}, not an object")
    return header
