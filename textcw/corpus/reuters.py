"""Reuters-21578, Distribution 1.0 (Lewis 1997), ModApte split: a stand-in for RCV1.

The CW papers use RCV1-v2 (Lewis et al. 2004), which is not freely redistributable; this older
Reuters collection is, and has the same kind of documents and topic codes. The loader reads the
22 SGML files ``reut2-0NN.sgm`` of ``reuters21578.tar.gz``. A document is
``<REUTERS TOPICS=.. LEWISSPLIT=..>`` with ``<TOPICS><D>code</D>...</TOPICS>`` and a
``<TEXT>`` holding ``<TITLE>`` and ``<BODY>``. The ModApte split keeps ``TOPICS="YES"``
documents, with ``LEWISSPLIT="TRAIN"`` (9,603) or ``"TEST"`` (3,299). A document's text is its
title and body (short "brief" items have only a title; "unprocessed" items, mostly tables, give
their raw text); SGML entities are decoded and the files are read as Latin-1 (one file has a
byte that is not UTF-8).

Tasks (see corpora/reuters/CARD.md for why these):

- ``reuters:r8`` (the default) and ``reuters:r52``: documents with exactly one topic. R8 keeps
  the topics of R10, the 10 topics with the most training documents (wheat and corn never
  occur alone, so 8 remain); R52 keeps the 52 topics with single-topic documents in both
  splits. These are the usual "R8"/"R52" multi-class sets; they stand in for the EMNLP 2009
  4-topic RCV1 task;
- binary pairs of neighbouring topics, like the papers' RCV1 industry pairs: a document belongs
  to a pair's task when it carries exactly one of the two topics (it may carry others):
  ``corporate`` (earn vs acq), ``money`` (money-fx vs interest), ``grain`` (wheat vs corn),
  ``softs`` (coffee vs sugar);
- ``reuters:modapte``: the standard multi-label task (a
  :class:`~textcw.corpus.multilabel_data.MultiLabelDataset`): the 90 topics with at least one training
  and one test document, and the documents carrying at least one of them, each with all of its
  topics among the 90 (Yang and Liu, "A re-examination of text categorization methods", SIGIR
  1999, section 4.1). This archive gives 7,770 training and 3,019 test documents; the count
  usually quoted for this split, 7,769 training documents, is one fewer (the test count and the
  90 topics agree).
"""

from __future__ import annotations

import functools
import html
import re
import tarfile
import zlib
from collections import Counter

import numpy as np

from textcw.corpus import cache
from textcw.corpus.base import check_split, check_task
from textcw.corpus.datahome import RemoteFile
from textcw.corpus.multilabel_data import make_multilabel_dataset
from textcw.corpus.sampling import make_dataset
from textcw.errors import DataError

__all__ = ["ARCHIVE", "PAIRS", "TASKS", "load", "modapte_topics", "parse_sgml", "read", "read_archive"]

_SGML_DIGESTS = {
    "reut2-000.sgm": "9ff9bb40624ef992a03f62aace12e697dca1087abfd9b4d06aa787a6ad3e0687",
    "reut2-001.sgm": "1528e7e82d110d88d0234eb9619eadb7f9fd805711971df05975b92277dfdf4d",
    "reut2-002.sgm": "99f18068d0518952987dedd78c622e5c2a584e357d264d3754696c815f3e6628",
    "reut2-003.sgm": "78a3a8d7e04bc9d42c4614d5d5c60a4293dbe3f708df6fb5a71d9ef31f4b3fa3",
    "reut2-004.sgm": "726342c19a65873330b412378cd6a3f0d512035f5223146ddd60930c62eb6ff0",
    "reut2-005.sgm": "d09de619b6dd2d047d5124681f6df90550abaf592020d1c1ce338ae9b91522e7",
    "reut2-006.sgm": "b5535c0d66b01f4976f84621a4a795afbc00d2c4bd0a1b7ae426df6630fb361d",
    "reut2-007.sgm": "aa706007ec84a03537a3921ca976d60e11b3f99e4b9e9b2d5c81dd384d2c2062",
    "reut2-008.sgm": "a3994583694a00b7c744097c1d7eabfcf90f2e6650cc21663e46828035a336cb",
    "reut2-009.sgm": "29995f606dd1a9bdf907eacc9d879846c716860d9d9141676979474aaea39c7d",
    "reut2-010.sgm": "996df6008089bd09fa5b28a4d2eb0ee5f7b9d4601cde566fed3926ac82960fa3",
    "reut2-011.sgm": "d3a2782015247d9c2bffb8926267827fdd449c70d619435ef01a25a1c56a53ca",
    "reut2-012.sgm": "da31035d483851f2aebce5b66d779e5e2c0ac9dcfe098596c6d544e81c5604ab",
    "reut2-013.sgm": "8f7700bc0455fac3fcc12377ced4807b7df8aba1f21ecad059b9cc2b1cf0b8be",
    "reut2-014.sgm": "ef936bd3e0f36cf722afa9a6957563549775af32e9e28b4f539c8737ceda83ab",
    "reut2-015.sgm": "6d3bcec73eff871b8a5403588af814c4e50a0de6bc25707480522ab836f74026",
    "reut2-016.sgm": "be2f03a185fff70131f3b4fdbd6229b7ee2be077eba9691eaa597c8cfbda8812",
    "reut2-017.sgm": "f370e610b4b1342e41a98e0c426a08541044bd1d7e539674f32372a6060b73b5",
    "reut2-018.sgm": "a5f971bf25448e915781962309e669359a35fbcaf3017a806eca0590897f209a",
    "reut2-019.sgm": "d3b07097fba2633d130b4914aceba671645985248943ce9e39c289315339dffb",
    "reut2-020.sgm": "f6ad1b724125c202566c63b35ea0b5ee23881f8b7ed47a32829d5af05d8e860d",
    "reut2-021.sgm": "3f5196d32869723c9042aa5756805b4e90360f1f45ea17f4594fa0e2b3630b18",
}

ARCHIVE = RemoteFile(
    max_bytes=9_000_000,  # a download stops here (canonical archive 8.2 MB, with a margin)
    corpus="reuters",
    filename="reuters21578.tar.gz",
    url="https://kdd.ics.uci.edu/databases/reuters21578/reuters21578.tar.gz",
    sha256=(
        # the canonical file set, repacked (see corpora/reuters/CARD.md)
        "2845267448220e92ffedabbf297d055c52b800c7834ec5ecfd536a13c9d451fb",
    ),
    # The canonical archive's own digest was never recorded; it is accepted by its SGML files.
    members=tuple(_SGML_DIGESTS.items()),
)

PAIRS = {
    "corporate": ("earn", "acq"),
    "money": ("money-fx", "interest"),
    "grain": ("wheat", "corn"),
    "softs": ("coffee", "sugar"),
}
TASKS = {
    "r8": "8 frequent topics (R10 less wheat, corn), single-topic documents (the default task)",
    "r52": "52 topics with single-topic documents in both splits",
    **{name: f"{a} vs {b}" for name, (a, b) in PAIRS.items()},
    "modapte": "multi-label: the 90 topics with training and test documents (7,770 / 3,019 documents)",
}

_DOC = re.compile(r"<REUTERS([^>]*)>(.*?)</REUTERS>", re.S)
_ATTR = re.compile(r'(\w+)="([^"]*)"')
_TOPICS = re.compile(r"<TOPICS>(.*?)</TOPICS>", re.S)
_D = re.compile(r"<D>(.*?)</D>", re.S)
_TITLE = re.compile(r"<TITLE>(.*?)</TITLE>", re.S)
_BODY = re.compile(r"<BODY>(.*?)</BODY>", re.S)
_TEXT = re.compile(r"<TEXT[^>]*>(.*?)</TEXT>", re.S)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # &#3; and friends: wire-service controls


def parse_sgml(text: str) -> list[tuple[str, list[str], str]]:
    """ModApte documents of one SGML file: ``[(split, topics, text), ...]``."""
    docs = []
    for attrs, body in _DOC.findall(text):
        attr = dict(_ATTR.findall(attrs))
        split = {"TRAIN": "train", "TEST": "test"}.get(attr.get("LEWISSPLIT", ""))
        if attr.get("TOPICS") != "YES" or split is None:
            continue
        topics_block = _TOPICS.search(body)
        topics = _D.findall(topics_block.group(1)) if topics_block else []
        parts = [m.group(1) for m in (_TITLE.search(body), _BODY.search(body)) if m]
        if not parts:  # TYPE="UNPROC": tables and the like, with no TITLE or BODY markup
            unprocessed = _TEXT.search(body)
            parts = [unprocessed.group(1)] if unprocessed else []
        clean = _CONTROL.sub(" ", html.unescape("\n".join(parts))).strip()
        docs.append((split, topics, clean))
    return docs


@functools.lru_cache(maxsize=1)
def read_archive(path: str) -> dict[str, list[tuple[list[str], str]]]:
    """``split -> [(topics, text), ...]`` of the ModApte documents, in archive order."""
    out: dict[str, list] = {"train": [], "test": []}
    seen = 0
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                name = member.name.rsplit("/", 1)[-1]
                if not (member.isfile() and name.startswith("reut2-") and name.endswith(".sgm")):
                    continue
                seen += 1
                text = tar.extractfile(member).read().decode("latin-1")
                for split, topics, body in parse_sgml(text):
                    out[split].append((topics, body))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    if seen == 0 or not out["train"] or not out["test"]:
        raise DataError(f"{path} holds no Reuters-21578 reut2-*.sgm files with ModApte documents")
    return out


def _encode(parsed: dict) -> tuple[dict, dict]:
    """The parsed archive as plain arrays and JSON (see :mod:`textcw.corpus.cache`)."""
    arrays = {}
    for split, docs in parsed.items():
        arrays.update({f"{split}_{k}": a for k, a in cache.pack_texts([t for _, t in docs]).items()})
    return arrays, {"topics": {split: [topics for topics, _ in docs] for split, docs in parsed.items()}}


def _decode(arrays: dict, meta: dict) -> dict:
    out = {}
    for split, topics in meta["topics"].items():
        texts = cache.unpack_texts(arrays, f"{split}_")
        if len(texts) != len(topics):
            raise ValueError(f"the {split} topics and texts differ in length")
        out[split] = list(zip(topics, texts))
    return out


def read(remote: RemoteFile | None = None, *, download: bool = True) -> dict:
    """The parsed archive (:func:`read_archive`), from the corpus cache when it holds it."""
    return cache.cached_parse(remote or ARCHIVE, "reuters-modapte-1", read_archive, _encode, _decode,
                              download=download)


def _single_topic_classes(docs: dict, task: str) -> list[str]:
    single = {s: Counter(t[0] for t, _ in docs[s] if len(t) == 1) for s in docs}
    if task == "r8":
        # R10: the 10 topics with the most training documents; wheat and corn never occur
        # alone, so 8 remain (Debole and Sebastiani 2005; Cardoso-Cachopo 2007).
        frequency = Counter(t for topics, _ in docs["train"] for t in topics)
        r10 = [t for t, _ in sorted(frequency.items(), key=lambda kv: (-kv[1], kv[0]))[:10]]
        return sorted(t for t in r10 if single["train"][t] > 0)
    return sorted(t for t in single["train"] if single["test"][t] > 0)


@cache.sources(ARCHIVE)
def load(task: str | None = None, split: str = "train", *, order_seed: int = 0,
         download: bool = True):
    """Load a Reuters-21578 task (see the module docstring) from the ModApte ``split``."""
    check_task("reuters", task, TASKS)
    check_split(split)
    task = task or "r8"
    docs = read(ARCHIVE, download=download)
    if task == "modapte":
        return _modapte(docs, split, order_seed)
    if task in PAIRS:
        names = list(PAIRS[task])
        chosen = [(names.index(hit[0]), text) for topics, text in docs[split]
                  if len(hit := [t for t in names if t in topics]) == 1]
    else:
        names = _single_topic_classes(docs, task)
        index = {t: k for k, t in enumerate(names)}
        chosen = [(index[topics[0]], text) for topics, text in docs[split]
                  if len(topics) == 1 and topics[0] in index]
    target = np.array([k for k, _ in chosen], dtype=np.int64)
    return make_dataset([text for _, text in chosen], target, names, name=f"reuters:{task}",
                        split=split, order_seed=order_seed,
                        info={"modapte_documents": len(docs[split])})


def modapte_topics(docs: dict) -> list[str]:
    """The 90 topics of the multi-label ModApte task: those of at least one training and one test
    document (sorted)."""
    seen = {s: {t for topics, _ in docs[s] for t in topics} for s in ("train", "test")}
    return sorted(seen["train"] & seen["test"])


def _modapte(docs: dict, split: str, order_seed: int):
    names = modapte_topics(docs)
    known = set(names)
    chosen = [(sorted(set(topics) & known), text) for topics, text in docs[split] if known.intersection(topics)]
    return make_multilabel_dataset([text for _, text in chosen], [topics for topics, _ in chosen], names,
                                   name="reuters:modapte", split=split, order_seed=order_seed,
                                   info={"modapte_documents": len(docs[split])})
