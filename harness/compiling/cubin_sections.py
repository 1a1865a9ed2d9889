"""Whether two cubins (or hsacos) hold the same machine code, when their bytes differ only in their debug
information.

Under ``-lineinfo`` (Triton's default) ptxas writes, for each ``.file`` of the PTX, the source file's
modification time and size into ``.debug_line`` when that file exists on disk at assembly time. So the
same PTX, assembled with the same flags by the same ptxas, gives another byte sequence once the kernel's
``.py`` has been checked out again (a fresh CI clone) or is gone (a Triton cache written by another
checkout). The file's path counts too: a checkout in another folder (another runner's build directory, a
run's ``--out`` where Inductor's modules are written) changes the line table, the padding of the PTX text a
cubin embeds (``.nv_debug_ptx_txt``, its ``.file`` lines taken out), and on AMD the DWARF strings that name
the compile directory (``.debug_str``). The code, its resource sections and its symbols are the same; only
the debug information changes. Re-run figures are accepted for such a pair, and for no other difference.

The same question between two runs (a night against the night before, each from a fresh checkout with cold
caches, on two runners) is :func:`code_digest`: a digest of a binary without its debug information, recorded
beside its sha256, so that ``harness compare`` does not call every binary of a night changed.

A minimal ELF64 little-endian section reader: a cubin (and an hsaco) is a plain ELF file, and this is the one
question asked.
"""

from __future__ import annotations

import hashlib
import struct

#: the source-line table and its relocations (ptxas: the files' times and sizes; both vendors: their paths)
LINE_TABLE = frozenset({".debug_line", ".rela.debug_line"})
#: DWARF's other sections: on AMD ``.debug_str`` names the compile directory, and ``.debug_info`` points into it
#: by offset; on NVIDIA ``.debug_frame``. NVIDIA's SASS-to-PTX line map with them. Debug information all
DEBUG_PREFIXES = (".debug_", ".rela.debug_", ".nv_debug_line_sass", ".rela.nv_debug_line_sass")
#: the PTX text a cubin embeds: compared line by line, without the blank lines the ``.file`` paths' length leaves
PTX_TEXT = ".nv_debug_ptx_txt"

_SHT_NOBITS = 8


def sections(data: bytes) -> dict[str, tuple[int, int, int, bytes]]:
    """Each section's (type, flags, size, contents) by name; NOBITS sections have no contents.

    Raises ValueError for anything that is not a little-endian ELF64 file."""
    if data[:4] != b"\x7fELF" or len(data) < 0x40 or data[4] != 2 or data[5] != 1:
        raise ValueError("not a little-endian ELF64 file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names_at = headers[shstrndx][4]
    out: dict[str, tuple[int, int, int, bytes]] = {}
    for name_off, kind, flags, _addr, offset, size, *_rest in headers:
        start = names_at + name_off
        name = data[start : data.index(b"\0", start)].decode("ascii", errors="replace")
        out[name] = (kind, flags, size, b"" if kind == _SHT_NOBITS else data[offset : offset + size])
    return out


def _header(data: bytes) -> bytes:
    """The ELF header without the fields that move when a section changes size (the program and section
    header offsets)."""
    return data[:0x20] + data[0x30:0x40]


def is_debug(name: str) -> bool:
    """Whether section ``name`` is debug information (:data:`LINE_TABLE`, :data:`DEBUG_PREFIXES`)."""
    return name in LINE_TABLE or name.startswith(DEBUG_PREFIXES)


def code_digest(data: bytes) -> str | None:
    """sha256 over the ELF header (without its offsets) and every section but the debug information, by name (the
    embedded PTX text by its non-blank lines); None for bytes that are not a little-endian ELF64 file."""
    try:
        found = sections(data)
    except (ValueError, struct.error, IndexError):
        return None
    digest = hashlib.sha256(_header(data))
    for name in sorted(found):
        if is_debug(name):
            continue
        kind, flags, size, contents = found[name]
        if name == PTX_TEXT:
            contents = b"\0".join(line for line in contents.split(b"\0") if line.strip())
            size = len(contents)
        digest.update(f"{name}\0{kind}\0{flags}\0{size}\0{len(contents)}\0".encode())
        digest.update(contents)
    return digest.hexdigest()


def same_code(a: bytes, b: bytes) -> bool:
    """True when ``a`` and ``b`` are ELF files with the same header and the same sections, byte for byte, except
    their debug information (:func:`is_debug`, and the blank lines of the embedded PTX text)."""
    digest = code_digest(a)
    return digest is not None and digest == code_digest(b)
