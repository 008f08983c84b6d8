"""20 Newsgroups, "bydate" version (Lang 1995; Rennie's bydate split).

Read straight from ``20news-bydate.tar.gz``: ``20news-bydate-{train,test}/<group>/<id>``, one
raw Usenet message (headers and body) per file, decoded as Latin-1 (the messages predate UTF-8).
Documents come in a seeded random order (``order_seed``), since the archive groups them by
class and online learners see them in the order given.

Tasks: ``newsgroups`` (20-way), and the binary pairs of the CW papers (JMLR 2012, section 7):
``comp`` (ibm.pc vs mac hardware), ``sci`` (electronics vs med), ``talk`` (guns vs mideast).
"""

from __future__ import annotations

import functools
import io
import tarfile
import zlib
from pathlib import Path

import numpy as np

from textcw.corpus import cache
from textcw.corpus.base import Dataset, check_split, check_task
from textcw.corpus.datahome import RemoteFile
from textcw.errors import DataError

__all__ = ["ARCHIVE", "MAX_TAR_BYTES", "PAIRS", "TASKS", "load", "read"]

ARCHIVE = RemoteFile(
    max_bytes=16_000_000,  # a download stops here (canonical archive 14.5 MB, with a margin)
    corpus="newsgroups",
    filename="20news-bydate.tar.gz",
    url="http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz",
    sha256=(
        # canonical archive (the digest scikit-learn's fetcher pins)
        "8f1b2514ca22a5ade8fbb9cfa5727df95fa587f4c87b786e15c759fa66d95610",
        # byte-identical messages, repacked (see corpora/newsgroups/CARD.md)
        "686dacde500903768d2b7f98d06eb66c91aa3a761c44712cec4e7b200602c2d0",
    ),
)

PAIRS = {
    "comp": ("comp.sys.ibm.pc.hardware", "comp.sys.mac.hardware"),
    "sci": ("sci.electronics", "sci.med"),
    "talk": ("talk.politics.guns", "talk.politics.mideast"),
}
TASKS = {
    "all": "20-way topic classification (the default task)",
    **{name: f"{a} vs {b}" for name, (a, b) in PAIRS.items()},
}


#: The most bytes the archive may decompress to (the canonical one: 50.3 MB of tar).
MAX_TAR_BYTES = 256 << 20


@functools.lru_cache(maxsize=2)
def _read_archive(path: str) -> dict[str, list[tuple[str, int, str]]]:
    """``split -> [(group, message id, text), ...]`` sorted by group and id.

    The archive is decompressed into memory first (:func:`_gunzip`) and read by ``tarfile`` from
    there: reading its 18,846 members through ``tarfile``'s gzip stream costs a Python-level
    buffered read per 512-byte header, about twice the time of one decompression plus the same
    walk over bytes already in memory.
    """
    out: dict[str, list] = {"train": [], "test": []}
    try:
        with tarfile.open(fileobj=io.BytesIO(_gunzip(path)), mode="r:") as tar:
            for member in tar:
                if not member.isfile():
                    continue
                parts = member.name.split("/")
                if len(parts) != 3 or "" in parts or "." in parts:  # not plain: as pathlib reads it
                    parts = Path(member.name).parts
                if len(parts) != 3 or not parts[0].startswith("20news-bydate-"):
                    continue
                split = parts[0].removeprefix("20news-bydate-")
                if split not in out:
                    continue
                raw = tar.extractfile(member).read()
                out[split].append((parts[1], _message_id(parts[2]), raw.decode("latin-1")))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    for split, docs in out.items():
        if not docs:
            raise DataError(f"{path} holds no 20news-bydate-{split}/<group>/<id> messages")
        docs.sort(key=lambda d: (d[0], d[1]))
    return out


def _gunzip(path: str) -> bytes:
    """The decompressed bytes of the gzip file ``path``, at most :data:`MAX_TAR_BYTES` of them
    (a damaged or substituted file cannot ask for more memory than that)."""
    with open(path, "rb") as fh:
        packed = fh.read(MAX_TAR_BYTES + 1)  # bounded before it is read: compressed is never larger
    if len(packed) > MAX_TAR_BYTES:
        raise DataError(f"cannot read {path}: it is larger than {MAX_TAR_BYTES:,} bytes, far more than the "
                        "20 Newsgroups archive; delete it and download it again")
    parts, size = [], 0
    while packed:  # a gzip file may hold several members, one after the other (as gzip reads it)
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # gzip framing
        parts.append(inflate.decompress(packed, MAX_TAR_BYTES + 1 - size))
        size += len(parts[-1])
        if size > MAX_TAR_BYTES:
            raise DataError(f"cannot read {path}: it decompresses to more than {MAX_TAR_BYTES:,} bytes, "
                            "far more than 20 Newsgroups; delete it and download it again")
        if not inflate.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")
        packed = inflate.unused_data.lstrip(b"\0")  # zero padding after the last one, as gzip skips it
    return b"".join(parts)


def _encode(parsed: dict) -> tuple[dict, dict]:
    """The parsed archive as plain arrays (see :mod:`textcw.corpus.cache`)."""
    arrays, groups = {}, sorted({g for docs in parsed.values() for g, _, _ in docs})
    index = {g: k for k, g in enumerate(groups)}
    for split, docs in parsed.items():
        arrays[f"{split}_group"] = np.array([index[g] for g, _, _ in docs], dtype=np.int64)
        arrays[f"{split}_id"] = np.array([i for _, i, _ in docs], dtype=np.int64)
        packed = cache.pack_texts([t for _, _, t in docs])
        arrays.update({f"{split}_{name}": a for name, a in packed.items()})
    return arrays, {"groups": groups, "splits": list(parsed)}


def _decode(arrays: dict, meta: dict) -> dict:
    groups = meta["groups"]
    out = {}
    for split in meta["splits"]:
        texts = cache.unpack_texts(arrays, f"{split}_")
        group, ids = arrays[f"{split}_group"].tolist(), arrays[f"{split}_id"].tolist()
        if not len(group) == len(ids) == len(texts):
            raise ValueError(f"the {split} columns differ in length")
        out[split] = [(groups[g], i, t) for g, i, t in zip(group, ids, texts)]
    return out


def read(remote: RemoteFile = ARCHIVE, *, download: bool = True) -> dict:
    """The parsed archive (:func:`_read_archive`), from the corpus cache when it holds it."""
    return cache.cached_parse(remote, "newsgroups-bydate-1", _read_archive, _encode, _decode,
                              download=download)


def _message_id(name: str) -> int:
    return int(name) if name.isdigit() else -1


@cache.sources(ARCHIVE)
def load(task: str | None = None, split: str = "train", *, order_seed: int = 0,
         download: bool = True) -> Dataset:
    """Load a newsgroups task.

    Parameters
    ----------
    task : {None, "all", "comp", "sci", "talk"}
        ``None`` or ``"all"`` is the 20-way task.
    split : {"train", "test"}
        The bydate split.
    order_seed : int
        Seed of the document order.
    """
    check_task("newsgroups", task, TASKS)
    check_split(split)
    docs = read(ARCHIVE, download=download)[split]
    groups = sorted({g for g, _, _ in docs}) if task in (None, "all") else list(PAIRS[task])
    index = {g: k for k, g in enumerate(groups)}
    chosen = [(index[g], text) for g, _, text in docs if g in index]
    order = np.random.RandomState(order_seed).permutation(len(chosen))
    return Dataset(
        data=[chosen[i][1] for i in order],
        target=np.array([chosen[i][0] for i in order], dtype=np.int64),
        target_names=groups,
        name="newsgroups" if task in (None, "all") else f"newsgroups:{task}",
        split=split,
    )
