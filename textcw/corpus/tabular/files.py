"""A table's file read as bytes and lines: standard input (read once per process, bounded), a
regular file opened by path, the stamp that tells whether a file changed, and :class:`Position`,
where a row starts, from which :class:`_Lines` reads the decoded lines again in blocks.
"""

from __future__ import annotations

import codecs
import functools
import io
import itertools
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass

from textcw.corpus.tabular import limits
from textcw.errors import DataError, InputError
from textcw.untrusted import safe_text

__all__ = ["Position"]


@dataclass(frozen=True)
class Position:
    """Where a row starts: byte ``offset`` (a row number for Parquet), its ``line`` (1-based, for
    messages) and its ``row`` number (from 0, after the header)."""

    offset: int
    line: int
    row: int


@functools.lru_cache(maxsize=1)
def _stdin_bytes() -> bytes:
    """Standard input, read once per process (a table is read more than once), bounded."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("standard input is closed; give a file instead of -")
    data = stream.read(limits.MAX_STDIN_BYTES + 1)
    if len(data) > limits.MAX_STDIN_BYTES:
        raise InputError(f"standard input holds more than {limits.MAX_STDIN_BYTES:,} bytes, which are read "
                         "whole; save it to a file and give its path (with --stream for large files)")
    return data


def _name(path: str) -> str:
    return "standard input" if path == "-" else safe_text(path, limit=None)


def _open(path: str, once: bool = False):
    """A binary file object of ``path`` (``-``: standard input, whole in memory unless it is read
    ``once`` front to back); a regular file is required, so that it can be read again (a pipe or
    a device could block or give other bytes)."""
    if path == "-" and once:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise InputError("standard input is closed; give a file instead of -")
        return stream
    if path == "-":
        return io.BytesIO(_stdin_bytes())
    try:
        info = os.stat(path)
    except OSError as exc:
        raise DataError(f"cannot read {_name(path)}: {exc.strerror or exc}; check the path") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{_name(path)} is not a regular file; give a file (or - for standard input)")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise DataError(f"cannot read {_name(path)}: {exc.strerror or exc}; check its permissions") from None


def _stamp(path: str) -> tuple:
    if path == "-":
        data = _stdin_bytes()  # read once per process; a test may give another (bytes cache their hash)
        return ("-", len(data), hash(data))
    try:
        info = os.stat(path)
    except OSError:
        return (path, None)
    return (os.path.abspath(path), info.st_size, info.st_mtime_ns, info.st_ino)


class _Lines:
    """The decoded lines of a binary file from ``position``, read in blocks, with the byte offset
    at which any line (by its number) starts. Lines keep their line breaks (the csv module
    needs them inside quoted fields). A line that is not in the encoding is decoded with
    replacement characters and its number recorded in ``bad``."""

    def __init__(self, fh, position: Position, encoding: str, name: str):
        self.fh, self.encoding, self.name = fh, encoding, name
        if position.offset:  # standard input read once is never sought
            fh.seek(position.offset)
        self.next_offset = position.offset
        self.next_line = position.line  # number of the next line to be read
        self.block_offset, self.block_line, self.block_parts, self.block_ends = position.offset, position.line, [], None
        self.bad: dict[int, str] = {}
        self.at_start = position.offset == 0

    def _blocks(self) -> Iterator[list[str]]:
        pending = b""
        while True:
            data = self.fh.read(max(limits.BLOCK_BYTES, len(pending)))
            raw, pending = pending + data, b""
            if data:  # a block ends after a line break (\r\n, \n or \r, never half a \r\n)
                end = len(raw) - 1 if raw.endswith(b"\r") else len(raw)
                cut = max(raw.rfind(b"\n", 0, end), raw.rfind(b"\r", 0, end)) + 1
                raw, pending = raw[:cut], raw[cut:]
                if len(pending) > limits.MAX_LINE:
                    line = self.next_line + len(raw.splitlines())
                    raise DataError(f"{self.name} line {line}: a line longer than "
                                    f"{limits.MAX_LINE:,} bytes; is this a {self.encoding} text file of rows?")
                if not raw:
                    continue
            if not raw:
                return
            if self.at_start and raw.startswith(codecs.BOM_UTF8) and self.encoding == "utf-8":
                raw = raw[len(codecs.BOM_UTF8):]
                self.next_offset += len(codecs.BOM_UTF8)
            self.at_start = False
            parts = raw.splitlines(keepends=True)
            self.block_offset, self.block_line, self.block_parts, self.block_ends = \
                self.next_offset, self.next_line, parts, None
            self.next_offset += len(raw)
            self.next_line += len(parts)
            try:
                yield [p.decode(self.encoding) for p in parts]
            except UnicodeDecodeError:
                yield [self._decode(p, self.block_line + k) for k, p in enumerate(parts)]

    def _decode(self, part: bytes, line: int) -> str:
        try:
            return part.decode(self.encoding)
        except UnicodeDecodeError as exc:
            self.bad[line] = (f"byte 0x{part[exc.start]:02x} at column {exc.start + 1} is not "
                              f"{self.encoding} text")
            return part.decode(self.encoding, errors="replace")

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(self._blocks())

    def position_of(self, line: int, row: int) -> Position:
        """Where line number ``line`` starts (a line of the current block, or the next block)."""
        k = line - self.block_line
        if k >= len(self.block_parts):
            return Position(self.next_offset, self.next_line, row)
        if self.block_ends is None:
            self.block_ends = [0, *itertools.accumulate(map(len, self.block_parts))]
        return Position(self.block_offset + self.block_ends[k], line, row)

    def problem(self, first: int, last: int) -> str | None:
        """The encoding problem of lines ``first`` to ``last``, if any."""
        if self.bad:
            for line in range(first, last + 1):
                if line in self.bad:
                    return self.bad[line] + (f" (line {line})" if line != first else "")
        return None
