"""Enron email foldering (Klimt and Yang 2004; Bekkerman, McCallum, Huang 2004).

Read from the CMU release of the Enron corpus, ``enron_mail_20150507.tar.gz``: a tree
``maildir/<user>/<folder>[/<sub-folder>...]/<n>.``, one raw RFC 822 message per file.

Tasks ``enron:farmer-d`` (Enron A) and ``enron:kaminski-v`` (Enron B), as in EMNLP 2009
section 6.1 and AROW 2013 section 5.4: sort a user's emails into their folders, using the 10
largest folders after dropping the non-archival ones that Bekkerman et al. removed ("all
documents", "calendar", "contacts", "deleted items", "discussion threads", "inbox", "notes
inbox", "sent", "sent items", "sent mail"). A sub-folder counts for its top-level folder. The
papers used 3,000 emails per user, not balanced: a seeded sample of 3,000 (all, if fewer) is
split 80/20 by class with the same seed.

A document is the message's Subject, From, To and Cc headers and its text body. The other
headers are dropped: ``X-Folder`` and ``X-FileName`` name the folder (the label itself), and
dates and ids only identify the message. Bytes are decoded as UTF-8, or as Latin-1 when they
are not valid UTF-8. The archive (about 423 MB) has no published digest we could check, so
textcw does not download it: put it in ``<data home>/enron/`` yourself.
"""

from __future__ import annotations

import email
import email.policy
import functools
import os
import tarfile
import zlib
from collections import Counter

import numpy as np

from textcw.corpus.base import check_split, check_task
from textcw.corpus.datahome import RemoteFile, fetch
from textcw.corpus.sampling import make_dataset, random_sample, seeded_split
from textcw.errors import DataError, InputError

__all__ = [
    "ARCHIVE", "KEPT_HEADERS", "NON_ARCHIVAL", "N_FOLDERS", "SAMPLE_SIZE", "TASKS", "USERS",
    "folder_key", "largest_folders", "load", "message_text", "read_archive"
]

ARCHIVE = RemoteFile(
    corpus="enron",
    filename="enron_mail_20150507.tar.gz",
    url="https://www.cs.cmu.edu/~enron/enron_mail_20150507.tar.gz",
    sha256=(),  # never recorded: read if present, never downloaded
    homepage="https://www.cs.cmu.edu/~enron/",
)
USERS = ("farmer-d", "kaminski-v")
TASKS = {
    "farmer-d": "farmer-d's emails into his 10 largest archival folders (Enron A)",
    "kaminski-v": "kaminski-v's emails into his 10 largest archival folders (Enron B)",
}
N_FOLDERS = 10
SAMPLE_SIZE = 3000
NON_ARCHIVAL = frozenset({
    "all documents", "calendar", "contacts", "deleted items", "discussion threads", "inbox",
    "notes inbox", "sent", "sent items", "sent mail",
})
KEPT_HEADERS = ("Subject", "From", "To", "Cc")


def folder_key(name: str) -> str:
    """``"_sent_mail"`` -> ``"sent mail"``: how folder names are compared with NON_ARCHIVAL."""
    return name.strip("_").replace("_", " ").lower()


def message_text(raw: bytes) -> str:
    """The kept headers and the text body of one raw message."""
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        decoded = raw.decode("latin-1")
    msg = email.message_from_string(decoded, policy=email.policy.compat32)
    lines = [f"{h}: {msg[h]}" for h in KEPT_HEADERS if msg[h]]
    parts = msg.walk() if msg.is_multipart() else [msg]
    for part in parts:
        if part.get_content_maintype() == "text" and not part.is_multipart():
            payload = part.get_payload()
            lines.append(payload if isinstance(payload, str) else "")
    return "\n".join(lines)


@functools.lru_cache(maxsize=1)
def read_archive(path: str, stamp: tuple) -> dict[str, dict[str, list[str]]]:
    """``user -> top-level folder -> [message texts]`` for the users of :data:`USERS`."""
    out: dict[str, dict[str, list[str]]] = {u: {} for u in USERS}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                parts = member.name.removeprefix("./").split("/")
                # maildir/<user>/<folder>/.../<file>; files right under the user are no folder's
                if (not member.isfile() or len(parts) < 4 or parts[0] != "maildir"
                        or parts[1] not in out):
                    continue
                raw = tar.extractfile(member).read()
                out[parts[1]].setdefault(parts[2], []).append(message_text(raw))
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    for user, folders in out.items():
        if not folders:
            raise DataError(f"{path} has no maildir/{user}/<folder>/<message> files; is it the "
                            "CMU Enron maildir archive?")
    return out


def largest_folders(folders: dict[str, list], n: int = N_FOLDERS) -> list[str]:
    """The ``n`` largest archival folders, largest first (ties by name)."""
    sizes = Counter({name: len(docs) for name, docs in folders.items()
                     if folder_key(name) not in NON_ARCHIVAL})
    return [name for name, _ in sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


def load(task: str | None = None, split: str = "train", *, sample_size: int | None = SAMPLE_SIZE,
         seed: int = 0, order_seed: int = 0, test_size: float = 0.2, download: bool = True):
    """Load ``enron:farmer-d`` or ``enron:kaminski-v`` (see the module docstring).

    Parameters
    ----------
    sample_size : int or None
        At most this many emails (``None``: all of the 10 folders).
    seed : int
        Seed of the sample and of the train/test split.
    """
    if task is None:
        raise InputError("enron has one task per user: choose enron:farmer-d or enron:kaminski-v")
    check_task("enron", task, TASKS)
    check_split(split)
    path = str(fetch(ARCHIVE, download=download))
    stat = os.stat(path)
    folders = read_archive(path, (stat.st_size, stat.st_mtime_ns))[task]
    names = largest_folders(folders)
    if len(names) < 2:
        raise DataError(f"{path}: {task} has {len(names)} archival folder(s); a task needs two")
    data = [doc for name in names for doc in folders[name]]
    target = np.repeat(np.arange(len(names)), [len(folders[name]) for name in names])
    chosen = random_sample(len(target), sample_size, seed)
    data, target = [data[i] for i in chosen], target[chosen]
    part = seeded_split(target, split, seed, test_size, names)
    return make_dataset([data[i] for i in part], target[part], names, name=f"enron:{task}",
                        split=split, order_seed=order_seed,
                        info={"folder_sizes": {name: len(folders[name]) for name in names}})
