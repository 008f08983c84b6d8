"""RCV1-v2 in the LYRL2004 distribution (Lewis, Yang, Rose, Li, JMLR 5, 2004).

Read from the files of the paper's online appendices, as published:

- token files ``lyrl2004_tokens_train.dat.gz`` and ``lyrl2004_tokens_test_pt{0,1,2,3}.dat.gz``
  (appendix 12): every document is ``.I <docid>``, a line ``.W``, then its tokens (lower-cased,
  stop-worded, stemmed) over one or more lines, and a blank line;
- ``rcv1-v2.topics.qrels.gz`` (appendix 8) and ``rcv1-v2.industries.qrels.gz`` (appendix 9):
  one ``<category> <docid> 1`` line per label of a document.

The papers' tasks (JMLR 2012 section 7.2; EMNLP 2009 section 6.1):

- binary pairs of neighbouring industries, a balanced seeded sample of 2,000 documents that carry
  exactly one of the two codes: ``insurance`` (Life I82002 vs Non-Life I82003), ``business``
  (Banking I81000 vs Financial I83000), ``retail`` (Specialist Stores I65400 vs Mixed Retail
  I65600);
- ``topics`` (the default): the four top-level topics CCAT, ECAT, GCAT, MCAT, a seeded sample of
  4,000 documents that carry exactly one of them (not balanced, as in EMNLP 2009).

The samples are drawn from the whole collection (all five token files) and split 80/20 by class
with the same seed. The files are large (about 180 MB gzipped) and we never had a copy to hash,
so textcw does not download them: put them in ``<data home>/rcv1/`` yourself.
"""

from __future__ import annotations

import functools
import gzip
import os
import zlib

import numpy as np

from textcw.corpus.base import check_split, check_task
from textcw.corpus.datahome import RemoteFile, fetch
from textcw.corpus.sampling import balanced_sample, make_dataset, random_sample, seeded_split
from textcw.errors import DataError, InputError

__all__ = [
    "APPENDIX", "HOMEPAGE", "INDUSTRY_QRELS", "PAIRS", "PAIR_SAMPLE", "TASKS", "TOKEN_FILES", "TOPICS",
    "TOPIC_QRELS", "TOPIC_SAMPLE", "load", "read_qrels", "read_tokens"
]

APPENDIX = "https://jmlr.org/papers/volume5/lewis04a/"
HOMEPAGE = APPENDIX + "lyrl2004_rcv1v2_README.htm"


def _remote(folder: str, filename: str) -> RemoteFile:
    # No digest was ever recorded for these files: they are read if present, never downloaded.
    return RemoteFile(corpus="rcv1", filename=filename, url=APPENDIX + f"{folder}/{filename}",
                      sha256=(), homepage=HOMEPAGE)


TOKEN_FILES = tuple(
    _remote("a12-token-files", f"lyrl2004_tokens_{part}.dat.gz")
    for part in ("train", "test_pt0", "test_pt1", "test_pt2", "test_pt3")
)
TOPIC_QRELS = _remote("a08-topic-qrels", "rcv1-v2.topics.qrels.gz")
INDUSTRY_QRELS = _remote("a09-industry-qrels", "rcv1-v2.industries.qrels.gz")

PAIRS = {
    "insurance": ("I82002", "I82003"),
    "business": ("I81000", "I83000"),
    "retail": ("I65400", "I65600"),
}
TOPICS = ("CCAT", "ECAT", "GCAT", "MCAT")
PAIR_SAMPLE, TOPIC_SAMPLE = 2000, 4000
TASKS = {
    "topics": "4 top-level topics CCAT, ECAT, GCAT, MCAT (the default task)",
    "insurance": "Life (I82002) vs Non-Life (I82003) insurance",
    "business": "Banking (I81000) vs Financial (I83000) services",
    "retail": "Specialist Stores (I65400) vs Mixed Retail (I65600)",
}


def read_qrels(path: str, codes: tuple[str, ...]) -> dict[int, set[str]]:
    """``docid -> {codes}`` for the lines of ``path`` whose category is in ``codes``."""
    wanted = set(codes)
    labels: dict[int, set[str]] = {}
    try:
        with gzip.open(path, "rt", encoding="ascii", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                fields = line.split()
                if not fields:
                    continue
                if len(fields) != 3 or not fields[1].isdigit():
                    raise DataError(f"{path}, line {number}: expected '<category> <docid> 1', "
                                    f"got {line.strip()[:60]!r}")
                if fields[0] in wanted:
                    labels.setdefault(int(fields[1]), set()).add(fields[0])
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    return labels


def read_tokens(path: str, wanted: set[int]) -> dict[int, str]:
    """``docid -> tokens`` of the documents of one token file whose id is in ``wanted``."""
    found: dict[int, str] = {}
    docid, tokens, keep = None, [], False
    try:
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                if line.startswith(".I"):
                    if keep:
                        found[docid] = " ".join(tokens)
                    field = line[2:].strip()
                    if not field.isdigit():
                        raise DataError(f"{path}, line {number}: expected '.I <docid>', got "
                                        f"{line.strip()[:60]!r}")
                    docid, tokens = int(field), []
                    keep = docid in wanted
                elif line.rstrip("\r\n") == ".W" or not line.strip():
                    continue
                elif docid is None:
                    raise DataError(f"{path}, line {number}: text before the first '.I <docid>'; "
                                    "is this an LYRL2004 token file?")
                elif keep:
                    tokens.append(line.strip())
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    if keep:
        found[docid] = " ".join(tokens)
    return found


def _stamp(path: str) -> tuple[str, int, int]:
    stat = os.stat(path)
    return path, stat.st_size, stat.st_mtime_ns


def _locate(remotes: tuple[RemoteFile, ...], download: bool) -> tuple[tuple[str, int, int], ...]:
    """``(path, size, mtime)`` of each file; one error naming every missing file."""
    missing = [r for r in remotes if not r.path.is_file()]
    if len(missing) > 1:
        raise DataError(
            f"RCV1 files {', '.join(r.filename for r in missing)} not found in "
            f"{missing[0].path.parent}; textcw has no pinned digest for them, so it does not "
            f"download them: get them from {HOMEPAGE} and put them there, or set TEXTCW_DATA to "
            "the folder that holds rcv1/"
        )
    return tuple(_stamp(str(fetch(r, download=download))) for r in remotes)


@functools.lru_cache(maxsize=2)
def _sample(task: str, sample_size: int, seed: int, qrels_file: tuple,
            token_files: tuple) -> tuple[list[str], np.ndarray, list[str]]:
    """The task's sampled documents (in docid order), their class indices and class names.

    ``qrels_file`` and ``token_files`` are ``(path, size, mtime)``, so a changed file is reread.
    """
    names = list(PAIRS[task]) if task in PAIRS else list(TOPICS)
    labels = read_qrels(qrels_file[0], tuple(names))
    docids = np.array(sorted(d for d, codes in labels.items() if len(codes) == 1), dtype=np.int64)
    if len(docids) == 0:
        raise DataError(f"{qrels_file[0]} lists no document with exactly one of {', '.join(names)}")
    target = np.array([names.index(next(iter(labels[d]))) for d in docids], dtype=np.int64)
    if task in PAIRS:
        chosen = balanced_sample(target, sample_size, seed, names)
    else:  # at most sample_size documents, in their natural proportions
        chosen = random_sample(len(docids), sample_size, seed)
    docids, target = docids[chosen], target[chosen]
    wanted = set(docids.tolist())
    texts: dict[int, str] = {}
    for path, _, _ in token_files:
        texts.update(read_tokens(path, wanted))
    missing = wanted - texts.keys()
    if missing:
        raise DataError(
            f"{len(missing)} sampled documents (e.g. docid {min(missing)}) are in none of the token "
            f"files in {os.path.dirname(token_files[0][0])}; are all five files complete?"
        )
    return [texts[d] for d in docids.tolist()], target, names


def load(task: str | None = None, split: str = "train", *, sample_size: int | None = None,
         seed: int = 0, order_seed: int = 0, test_size: float = 0.2, download: bool = True):
    """Load an RCV1 task (see the module docstring).

    Parameters
    ----------
    sample_size : int or None
        Documents in the task's seeded sample; by default the papers' 2,000 (pairs) or 4,000
        (``topics``). ``0`` or less is an error; pass a larger number for more data.
    seed : int
        Seed of the sample and of the train/test split.
    """
    check_task("rcv1", task, TASKS)
    check_split(split)
    task = task or "topics"
    if sample_size is None:
        sample_size = PAIR_SAMPLE if task in PAIRS else TOPIC_SAMPLE
    if sample_size <= 0:
        raise InputError(f"sample_size must be positive; got {sample_size}")
    # Every file is located before the long read, so a missing one is reported at once.
    token_files = _locate(TOKEN_FILES, download)
    (qrels_file,) = _locate((INDUSTRY_QRELS if task in PAIRS else TOPIC_QRELS,), download)
    texts, target, names = _sample(task, sample_size, seed, qrels_file, token_files)
    part = seeded_split(target, split, seed, test_size, names)
    return make_dataset([texts[i] for i in part], target[part], names, name=f"rcv1:{task}",
                        split=split, order_seed=order_seed)
