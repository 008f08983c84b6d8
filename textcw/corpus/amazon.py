"""Multi-domain sentiment data, "processed_acl" version (Blitzer, Dredze, Pereira, ACL 2007).

Read from ``processed_acl.tar.gz``: ``processed_acl/<domain>/{positive,negative}.review``, one
review per line as ``feature:count`` tokens (unigrams and bigrams, bigram words joined by
``_``), the last token ``#label#:positive`` or ``#label#:negative``. The features were
extracted by the authors, so each review comes as a dict ``feature -> count`` for the
``precomputed`` featurizer (the papers' representation: uni/bigram counts, JMLR 2012 section
7.3). The unlabeled reviews of the archive are not read.

Tasks (no official split: a seeded 80/20 split, stratified by class):

- ``amazon:books``, ``:dvd``, ``:electronics``, ``:kitchen``: positive vs negative, all 2,000
  reviews of the domain (1,000 each), as in JMLR 2012.
- ``amazon:domains`` (the default): which of the 4 domains a review is from (EMNLP 2009 and
  AROW 2013 use the same task over 3 and 7 domains).
- ``amazon:books-vs-dvd`` and the other 5 pairs: domain classification between two domains
  (AROW 2013 section 5.3).
"""

from __future__ import annotations

import functools
import itertools
import tarfile
import zlib

import numpy as np

from textcw.corpus.base import check_split, check_task
from textcw.corpus.datahome import RemoteFile, fetch
from textcw.corpus.sampling import make_dataset, seeded_split
from textcw.errors import DataError

__all__ = ["ARCHIVE", "DOMAINS", "PAIRS", "SENTIMENTS", "TASKS", "load", "parse_line", "read_archive"]

DOMAINS = ("books", "dvd", "electronics", "kitchen")
SENTIMENTS = ("negative", "positive")

# sha256 of the labeled review files, the members that hold the data
_REVIEW_DIGESTS = {
    ("books", "negative"): "42e4d7e63f429e396de0db87b814f8c6a4b4948d34c94524725b0fe2944a0ff4",
    ("books", "positive"): "d27a35a59e99b2c2d56731cad8d63870f8a3b9063a70bf8c18862e0a107cdd02",
    ("dvd", "negative"): "9f0c977cf863f361f1f9961dc9e8c2b88630902da3eb5fd880146445144c355d",
    ("dvd", "positive"): "7e3a2655f9afd141bba569d0df6a4444f6bfa3c28daf243f21125c757940b563",
    ("electronics", "negative"): "497d95c1ce079d2db672f9d2efa9cc02ba4ebd2a525f7b2495233305def11616",
    ("electronics", "positive"): "38d0ee5fd4147cfaff427b7f8c1ea9aacbb1fd383d51676288b7af5947fe039f",
    ("kitchen", "negative"): "674510d22f8f0b27790d323ef8633408777e92c122e801ee4ba02bb001d1d798",
    ("kitchen", "positive"): "30fd84894433ee9dd7f7aa3da6f858811104e364528719be2d77372295c7d3b3",
}

ARCHIVE = RemoteFile(
    max_bytes=21_000_000,  # a download stops here (canonical archive about 19 MB, with a margin)
    corpus="amazon",
    filename="processed_acl.tar.gz",
    url="https://www.cs.jhu.edu/~mdredze/datasets/sentiment/processed_acl.tar.gz",
    sha256=(
        # the labeled reviews repacked without the unlabeled ones (see corpora/amazon/CARD.md)
        "0e54ad7c2bba6210bcb20eb0027f1390e282e498d467be43a47a2e040a8979b3",
    ),
    # The canonical archive's own digest was never recorded; it is accepted by its members.
    members=tuple((f"processed_acl/{domain}/{sentiment}.review", digest)
                  for (domain, sentiment), digest in _REVIEW_DIGESTS.items()),
)

PAIRS = {f"{a}-vs-{b}": (a, b) for a, b in itertools.combinations(DOMAINS, 2)}
TASKS = {
    "domains": "which of 4 domains a review is from (the default task)",
    **{d: f"positive vs negative {d} reviews" for d in DOMAINS},
    **{name: f"domain classification: {a} vs {b}" for name, (a, b) in PAIRS.items()},
}


def parse_line(line: str, where: str) -> tuple[dict[str, int], str]:
    """``"great_book:2 ... #label#:positive"`` -> ``({"great_book": 2, ...}, "positive")``."""
    features: dict[str, int] = {}
    label = None
    for token in line.split():
        name, sep, value = token.rpartition(":")
        if name == "#label#":
            label = value
            continue
        if not sep or not name or not value.isdigit():
            raise DataError(f"{where}: token {token[:60]!r} is not feature:count")
        features[name] = features.get(name, 0) + int(value)
    if label not in SENTIMENTS:
        raise DataError(f"{where}: no #label#:positive or #label#:negative token")
    return features, label


@functools.lru_cache(maxsize=1)
def read_archive(path: str) -> dict[tuple[str, str], list[dict[str, int]]]:
    """``(domain, sentiment) -> [features of each review]`` in file order."""
    out: dict[tuple[str, str], list] = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if (not member.isfile() or len(parts) != 3 or parts[1] not in DOMAINS
                        or parts[2] not in {f"{s}.review" for s in SENTIMENTS}):
                    continue
                sentiment = parts[2].removesuffix(".review")
                text = tar.extractfile(member).read().decode("utf-8", errors="replace")
                reviews = []
                for number, line in enumerate(text.splitlines(), start=1):
                    if not line.strip():
                        continue
                    features, label = parse_line(line, f"{member.name}, line {number}")
                    if label != sentiment:
                        raise DataError(f"{member.name}, line {number}: labelled {label}")
                    reviews.append(features)
                out[(parts[1], sentiment)] = reviews
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    missing = [f"{d}/{s}.review" for d in DOMAINS for s in SENTIMENTS if (d, s) not in out]
    if missing:
        raise DataError(f"{path} lacks processed_acl/{missing[0]} (and {len(missing) - 1} more)")
    return out


def load(task: str | None = None, split: str = "train", *, seed: int = 0, order_seed: int = 0,
         test_size: float = 0.2, download: bool = True):
    """Load an Amazon task (see the module docstring); ``seed`` fixes the train/test split."""
    check_task("amazon", task, TASKS)
    check_split(split)
    task = task or "domains"
    reviews = read_archive(str(fetch(ARCHIVE, download=download)))
    if task in DOMAINS:
        names = list(SENTIMENTS)
        groups = [reviews[(task, s)] for s in SENTIMENTS]
    else:
        names = list(PAIRS.get(task, DOMAINS))
        groups = [reviews[(d, "negative")] + reviews[(d, "positive")] for d in names]
    data = [doc for group in groups for doc in group]
    target = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    part = seeded_split(target, split, seed, test_size, names)
    return make_dataset([data[i] for i in part], target[part], names, name=f"amazon:{task}",
                        split=split, order_seed=order_seed)
