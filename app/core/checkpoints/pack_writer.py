"""The first snapshot of a large project written directly: one pack, its index, a git index.

``git update-index`` checks files in one at a time on one core and spends most of a first
snapshot deflating (and hashing twice, with git's slower collision-detecting SHA-1). Here,
worker threads read, hash and append the files to one pack (OpenSSL's SHA-1, zlib and file
I/O release the GIL), then the pack's ``.idx`` is written next to it, and a version-2 git
index holding every file's stat data, so the next ``git status`` trusts the stat data exactly
as after ``git update-index``. The trees go into the pack too: ``git write-tree`` then finds
them all present and writes nothing.

Formats, from git's Documentation/gitformat-pack.txt and gitformat-index.txt: a pack is
``PACK``, version 2, the object count, then per object a type-and-size header and the
zlib-deflated content, then the SHA-1 of everything before; its ``.idx`` (version 2) is a
fan-out table, the sorted object ids, each object's CRC-32 (of its bytes in the pack), the
offsets, the pack's checksum and its own.

The pack is stored with ``STORED_LEVEL`` (no compression by default): deflating costs several
times what reading and hashing do. :meth:`ShadowRepo.collect_garbage` recompresses it later.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import struct
import threading
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

__all__ = ["STORED_LEVEL", "PackedFile", "index_bytes", "write_pack"]

STORED_LEVEL = 0  # zlib level of the first snapshot's pack (recompressed by the next gc)

_OBJ_TREE = 2
_OBJ_BLOB = 3
_CHUNK_FILES = 32  # files per task
_MODE_FILE = 0o100644
_MODE_EXECUTABLE = 0o100755
_MODE_SYMLINK = 0o120000
_U32 = 0xFFFFFFFF
_ZLIB_STORED_HEADER = b"\x78\x01"  # deflate, 32 KiB window, "fastest" (a multiple of 31)
_STORED_BLOCK = 0xFFFF  # the largest stored deflate block
_IOV_MAX = 512  # buffers per pwritev call, well below any system's IOV_MAX


@dataclass(frozen=True, slots=True)
class PackedFile:
    """A file stored in the pack: what its git index entry needs."""

    path: bytes
    oid: bytes  # 20 bytes
    mode: int
    st: os.stat_result


def _object_header(kind: int, size: int) -> bytes:
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_dev, a.st_size, a.st_mtime_ns, a.st_ctime_ns, a.st_mode) == \
        (b.st_ino, b.st_dev, b.st_size, b.st_mtime_ns, b.st_ctime_ns, b.st_mode)


_buffers = threading.local()  # each worker reads into one buffer: no fresh pages per file


def _buffer(size: int) -> bytearray:
    buffer: bytearray | None = getattr(_buffers, "buffer", None)
    if buffer is None or len(buffer) < size:
        buffer = _buffers.buffer = bytearray(max(size, 1 << 20))
    return buffer


def _read(full: bytes, max_bytes: int) -> tuple[bytes | memoryview, int, os.stat_result] | None:
    """(content, git mode, stat data) of a regular file or symlink, or None when git should
    handle it: gone, changed while read, something else, or larger than ``max_bytes``.

    A file's content is a view of this thread's buffer, valid until its next read."""
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(full)
            return (target, _MODE_SYMLINK, st) if _same_file(st, os.lstat(full)) else None
        if not stat.S_ISREG(st.st_mode) or st.st_size > max_bytes:
            return None
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) |
                     getattr(os, "O_NONBLOCK", 0))
        try:
            # the file stat-ed above, unchanged until read: lstat and fstat (after reading)
            # agree, or git handles it (then also a file replaced or grown meanwhile)
            view = memoryview(_buffer(st.st_size))[:st.st_size]
            size = 0
            while size < st.st_size and (n := os.readv(fd, [view[size:]])):
                size += n
            if size != st.st_size or not _same_file(st, os.fstat(fd)):
                return None
        finally:
            os.close(fd)
    except OSError:
        return None
    return view[:size], _MODE_EXECUTABLE if st.st_mode & 0o100 else _MODE_FILE, st


def _deflated(data: bytes | memoryview, level: int) -> list[bytes | memoryview]:
    """``data`` as a zlib stream, in pieces; level 0 as stored blocks without copying data."""
    if level:
        return [zlib.compress(data, level)]
    view = memoryview(data)
    pieces: list[bytes | memoryview] = [_ZLIB_STORED_HEADER]
    for start in range(0, max(len(data), 1), _STORED_BLOCK):
        block = view[start:start + _STORED_BLOCK]
        final = start + _STORED_BLOCK >= len(data)
        pieces += [struct.pack("<BHH", final, len(block), len(block) ^ 0xFFFF), block]
    pieces.append(struct.pack(">I", zlib.adler32(data)))
    return pieces


def _write_at(fd: int, pieces: Sequence[bytes | memoryview], offset: int) -> None:
    for start in range(0, len(pieces), _IOV_MAX):
        group = pieces[start:start + _IOV_MAX]
        size = sum(len(piece) for piece in group)
        written = os.pwritev(fd, group, offset) if hasattr(os, "pwritev") else 0
        if written < size:  # a short write (or no pwritev): the rest in one piece
            rest = b"".join(group)[written:]
            while rest:
                n = os.pwrite(fd, rest, offset + written)
                written += n
                rest = rest[n:]
        offset += size


class _Pack:
    """Objects appended to an open pack file from several threads, each one once."""

    def __init__(self, fd: int, level: int):
        self.fd = fd
        self.level = level
        self.end = 12  # after the header, written last
        self.objects: dict[bytes, tuple[int, int]] = {}  # oid -> (offset, CRC-32)
        self._lock = threading.Lock()

    def add(self, kind: int, data: bytes | memoryview) -> bytes:
        """Append an object (unless present) and return its id."""
        digest = hashlib.sha1(b"%s %d\0" % (_KIND_NAMES[kind], len(data)),
                              usedforsecurity=False)
        digest.update(data)
        oid = digest.digest()
        if oid in self.objects:
            return oid
        pieces = [_object_header(kind, len(data)), *_deflated(data, self.level)]
        crc = 0
        for piece in pieces:
            crc = zlib.crc32(piece, crc)
        size = sum(len(piece) for piece in pieces)
        with self._lock:
            if oid in self.objects:
                return oid
            offset = self.end
            self.end += size
            self.objects[oid] = (offset, crc)
        _write_at(self.fd, pieces, offset)
        return oid

    def add_files(self, root: bytes, paths: Sequence[bytes],
                  max_bytes: int) -> tuple[list[PackedFile], list[bytes]]:
        stored: list[PackedFile] = []
        left: list[bytes] = []
        for path in paths:
            read = _read(os.path.join(root, path), max_bytes)
            if read is None:
                left.append(path)
            else:
                data, mode, st = read
                stored.append(PackedFile(path, self.add(_OBJ_BLOB, data), mode, st))
        return stored, left


_KIND_NAMES = {_OBJ_TREE: b"tree", _OBJ_BLOB: b"blob"}


def write_pack(root: bytes, paths: Sequence[bytes], pack_dir: Path, *, workers: int,
               max_bytes: int, level: int = STORED_LEVEL) -> tuple[list[PackedFile],
                                                                  list[bytes]]:
    """Store the files ``paths`` (relative to ``root``) and their trees as a new pack in
    ``pack_dir``.

    Returns the files stored, and the paths left for git (see :func:`_read`). The pack
    becomes visible (its ``.idx`` renamed into place last) only when complete.
    """
    if not hasattr(os, "pwrite") or not hasattr(os, "readv"):
        raise OSError("positioned file I/O is not available here")  # the caller uses git
    tag = f"{os.getpid()}_{threading.get_ident()}"
    tmp_pack = pack_dir / f"tmp_pack_tebiki_{tag}"
    tmp_idx = pack_dir / f"tmp_idx_tebiki_{tag}"
    stored: list[PackedFile] = []
    left: list[bytes] = []
    try:
        fd = os.open(tmp_pack, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o444)
        with os.fdopen(fd, "r+b") as file:
            pack = _Pack(fd, level)
            chunks = [paths[i:i + _CHUNK_FILES] for i in range(0, len(paths), _CHUNK_FILES)]
            with ThreadPoolExecutor(max_workers=workers,
                                    thread_name_prefix="checkpoint-pack") as pool:
                for done, not_done in pool.map(
                        lambda chunk: pack.add_files(root, chunk, max_bytes), chunks):
                    stored += done
                    left += not_done
            with contextlib.suppress(ValueError):  # git's write-tree says what is wrong
                _add_trees(pack, stored)
            os.pwrite(fd, b"PACK" + struct.pack(">II", 2, len(pack.objects)), 0)
            digest = hashlib.sha1(usedforsecurity=False)
            file.seek(0)
            while block := file.read(1 << 20):
                digest.update(block)
            checksum = digest.digest()
            os.pwrite(fd, checksum, pack.end)
        with open(tmp_idx, "wb") as idx:
            idx.write(_pack_index(pack.objects, checksum))
        os.chmod(tmp_idx, 0o444)
        name = f"pack-{checksum.hex()}"
        os.replace(tmp_pack, pack_dir / f"{name}.pack")
        os.replace(tmp_idx, pack_dir / f"{name}.idx")
    finally:
        tmp_pack.unlink(missing_ok=True)
        tmp_idx.unlink(missing_ok=True)
    return stored, left


def _add_trees(pack: _Pack, files: Sequence[PackedFile]) -> bytes:
    """Add the trees holding ``files`` to ``pack`` (as ``git write-tree`` would make them)
    and return the root tree's id."""
    root: dict[bytes, object] = {}
    for f in files:
        *folders, name = f.path.split(b"/")
        node = root
        for folder in folders:
            child = node.setdefault(folder, {})
            if not isinstance(child, dict):
                raise ValueError(f"{f.path!r} is below a file")
            node = child
        node[name] = f

    def tree(node: dict[bytes, object]) -> bytes:
        entries: list[tuple[bytes, bytes]] = []
        for name, item in node.items():
            if isinstance(item, dict):
                entries.append((name + b"/", b"40000 " + name + b"\0" + tree(item)))
            else:
                assert isinstance(item, PackedFile)
                entries.append((name, b"%o %s\0%s" % (item.mode, name, item.oid)))
        entries.sort()  # git orders a folder as if its name ended with "/"
        return pack.add(_OBJ_TREE, b"".join(e for _, e in entries))

    return tree(root)


def _pack_index(objects: dict[bytes, tuple[int, int]], pack_checksum: bytes) -> bytes:
    oids = sorted(objects)
    fanout = [0] * 256
    for oid in oids:
        fanout[oid[0]] += 1
    total = 0
    for n in range(256):
        total += fanout[n]
        fanout[n] = total
    small: list[int] = []
    large: list[int] = []
    for oid in oids:
        offset = objects[oid][0]
        if offset < 0x80000000:
            small.append(offset)
        else:
            small.append(0x80000000 | len(large))
            large.append(offset)
    body = b"".join((
        b"\377tOc", struct.pack(">I", 2), struct.pack(">256I", *fanout), b"".join(oids),
        struct.pack(f">{len(oids)}I", *(objects[o][1] for o in oids)),
        struct.pack(f">{len(small)}I", *small), struct.pack(f">{len(large)}Q", *large),
        pack_checksum))
    return body + hashlib.sha1(body, usedforsecurity=False).digest()


def index_bytes(files: Sequence[PackedFile]) -> bytes:
    """A version-2 git index of ``files`` (sorted by path, as git sorts), stat data included.

    Each field as git stores it: 32-bit, truncated; the flags hold the name's length (0xFFF
    for a longer name) and stage 0; 1 to 8 NULs pad each entry to a multiple of 8 bytes.
    """
    entries = []
    for f in sorted(files, key=lambda f: f.path):
        st = f.st
        head = struct.pack(
            ">10I20sH",
            (st.st_ctime_ns // 1_000_000_000) & _U32, st.st_ctime_ns % 1_000_000_000,
            (st.st_mtime_ns // 1_000_000_000) & _U32, st.st_mtime_ns % 1_000_000_000,
            st.st_dev & _U32, st.st_ino & _U32, f.mode, st.st_uid & _U32, st.st_gid & _U32,
            st.st_size & _U32, f.oid, min(len(f.path), 0xFFF))
        entries.append(head + f.path + b"\0" * (8 - (62 + len(f.path)) % 8))
    body = b"DIRC" + struct.pack(">II", 2, len(entries)) + b"".join(entries)
    return body + hashlib.sha1(body, usedforsecurity=False).digest()
