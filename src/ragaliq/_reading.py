"""Reading input files within bounds: regular files only, a size limit, lines of a limited length.

``dataset: /dev/zero`` would otherwise be read until memory runs out, a FIFO would block the run
forever, and a folder would fail with an ``IsADirectoryError`` traceback. Every input file is
opened without blocking, checked to be a regular file, and refused above its size limit before a
byte is read; the limit is enforced while reading too, for files that grow.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from ragaliq.errors import RagaliqError

__all__ = [
    "Readable",
    "TooLong",
    "decode_utf8",
    "describe_size",
    "numbered_lines",
    "open_regular",
    "read_regular",
]

_CHUNK = 1024 * 1024
_LINE_END = re.compile(rb"\r\n|\r|\n")


def describe_size(size: int) -> str:
    """A byte count for a message: ``64 MiB``, ``1.5 GiB``, ``812 bytes``."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor:
            return f"{size / factor:.3g} {unit}"
    return f"{size:,} bytes"


@contextmanager
def open_regular(
    path: Path,
    *,
    limit: int,
    error: type[RagaliqError],
    missing: str,
    too_big: str,
) -> Iterator[Readable]:
    """Open ``path`` for reading in binary, if it is a regular file of at most ``limit`` bytes.

    Args:
        path: The file.
        limit: The largest size accepted, in bytes.
        error: The exception to raise (``DatasetError``, ``ConfigError`` ...).
        missing: How to fix a missing file, for the message.
        too_big: How to fix a file over the limit, for the message.

    Raises:
        RagaliqError: of type ``error``: the file is missing, unreadable, a folder, a device, a
            FIFO or a socket, or larger than ``limit``.
    """
    name = str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # a FIFO must not block the open
    try:
        fd = os.open(path, flags)
    except FileNotFoundError as exc:
        raise error(f"{name}: not found; {missing}") from exc
    except IsADirectoryError as exc:
        raise error(f"{name}: is a folder; name a file") from exc
    except OSError as exc:
        raise error(f"{name}: cannot be read ({exc.strerror or type(exc).__name__})") from exc
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{name}: is a folder; name a file")
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{name}: is not a regular file (a device, a pipe or a socket), so it is not "
                "read; name a file"
            )
        if info.st_size > limit:
            raise error(
                f"{name}: {describe_size(info.st_size)} is over the limit of "
                f"{describe_size(limit)}; {too_big}"
            )
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as handle:
        yield _Bounded(handle, limit=limit, name=name, error=error, too_big=too_big)


class _Bounded:
    """A binary file that raises once more than ``limit`` bytes have been read from it."""

    def __init__(
        self, handle: Readable, *, limit: int, name: str, error: type[RagaliqError], too_big: str
    ) -> None:
        self._handle = handle
        self._left = limit
        self._limit = limit
        self._name = name
        self._error = error
        self._too_big = too_big

    def read(self, size: int = -1) -> bytes:
        if size < 0:  # in chunks: a buffer of the whole limit would be allocated up front
            parts = []
            while chunk := self.read(_CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        data = self._handle.read(min(size, self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise self._error(
                f"{self._name}: grew past the limit of {describe_size(self._limit)} while being "
                f"read; {self._too_big}"
            )
        return data


def read_regular(
    path: Path,
    *,
    limit: int,
    error: type[RagaliqError],
    missing: str,
    too_big: str,
) -> bytes:
    """The whole of a regular file of at most ``limit`` bytes (see :func:`open_regular`)."""
    with open_regular(path, limit=limit, error=error, missing=missing, too_big=too_big) as handle:
        return handle.read()


def decode_utf8(data: bytes, *, name: str, error: type[RagaliqError], offset: int = 0) -> str:
    """UTF-8 text (a leading byte order mark dropped when ``offset`` is 0), or a clear error.

    Raises:
        RagaliqError: of type ``error``, naming the line and the offset of the first bad byte.
    """
    try:
        return data.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise error(
            f"{name}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{offset + exc.start}); re-save the file as UTF-8"
        ) from exc


class Readable(Protocol):
    """A binary file, as far as reading goes."""

    def read(self, size: int = -1, /) -> bytes:
        """Up to ``size`` bytes (all that is left when negative); empty at the end."""
        ...


class TooLong:
    """Stands for a line longer than the limit, which was skipped without being kept."""

    __slots__ = ()


TOO_LONG = TooLong()


def numbered_lines(
    handle: Readable, *, name: str, max_line_bytes: int, error: type[RagaliqError]
) -> Iterator[tuple[int, str | TooLong]]:
    """Each line of a UTF-8 file with its number, read in chunks; memory stays bounded.

    Lines end at a line feed, a carriage return or both (not at U+2028 and its kin, which are
    valid inside JSON strings). A line longer than ``max_line_bytes`` is skipped and stands as
    :data:`TOO_LONG`.

    Raises:
        RagaliqError: of type ``error`` on the first byte that is not UTF-8, with its line.
    """
    number = 0
    offset = 0  # of the start of `pending` in the file
    pending = b""
    skipping = False  # inside a line that is too long
    swallow_lf = False  # a skipped line ended with CR at a chunk's end: a LF may follow
    while True:
        chunk = handle.read(_CHUNK)
        eof = not chunk
        if swallow_lf and chunk:
            swallow_lf = False
            if chunk.startswith(b"\n"):
                chunk, offset = chunk[1:], offset + 1
        if skipping:
            found = _LINE_END.search(chunk)
            if found is None:
                offset += len(chunk)
                if eof:
                    return
                continue
            skipping = False
            swallow_lf = found.group() == b"\r" and found.end() == len(chunk)
            offset += found.end()
            chunk = chunk[found.end() :]
        data = pending + chunk
        start = 0
        for found in _LINE_END.finditer(data):
            if not eof and found.group() == b"\r" and found.end() == len(data):
                break  # a CR at the end of the chunk may be the first half of CR LF
            number += 1
            yield (
                number,
                _line(
                    data[start : found.start()],
                    number=number,
                    offset=offset + start,
                    limit=max_line_bytes,
                    name=name,
                    error=error,
                ),
            )
            start = found.end()
        offset += start
        pending = data[start:]
        if eof:
            if pending:
                number += 1
                yield (
                    number,
                    _line(
                        pending,
                        number=number,
                        offset=offset,
                        limit=max_line_bytes,
                        name=name,
                        error=error,
                    ),
                )
            return
        ended_by_cr = pending.endswith(b"\r")
        if len(pending) - ended_by_cr > max_line_bytes:
            number += 1
            yield number, TOO_LONG
            offset += len(pending)
            pending = b""
            # A held CR ends the line (a LF may follow in the next chunk); else skip to its end.
            swallow_lf, skipping = ended_by_cr, not ended_by_cr


def _line(
    data: bytes,
    *,
    number: int,
    offset: int,
    limit: int,
    name: str,
    error: type[RagaliqError],
) -> str | TooLong:
    if len(data) > limit:
        return TOO_LONG
    return _decode_line(data, name=name, number=number, offset=offset, error=error)


def _decode_line(
    data: bytes, *, name: str, number: int, offset: int, error: type[RagaliqError]
) -> str:
    try:
        return data.decode("utf-8-sig" if offset == 0 else "utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            f"{name}:{number}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset "
            f"{offset + exc.start}); re-save the file as UTF-8"
        ) from exc
