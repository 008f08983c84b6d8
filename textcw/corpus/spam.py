"""ECML/PKDD 2006 Discovery Challenge spam data, task A (Bickel 2006).

Three users' labeled evaluation inboxes, ``task_a_u0{0,1,2}_eval_lab.tf``: 2,500 emails each,
1,250 spam and 1,250 not, one email per line as ``label id:count ...`` (svmlight format, word
ids from 1, label ``1`` spam, ``-1`` ham). The challenge distributed bag-of-words vectors only,
so the documents come as CSR rows for the ``precomputed`` featurizer.

Tasks ``spam:u00``, ``spam:u01``, ``spam:u02``: spam vs ham for one user. As in JMLR 2012
(section 7.4) each task is a seeded sample of 2,000 emails, here balanced (1,000 of each),
split 80/20 by class with the same seed (there is no official split).
"""

from __future__ import annotations

import functools

import numpy as np

from textcw.corpus import cache
from textcw.corpus.base import check_split, check_task
from textcw.corpus.datahome import RemoteFile
from textcw.corpus.sampling import balanced_sample, make_dataset, seeded_split, take
from textcw.corpus.svmlight import read_svmlight
from textcw.errors import DataError, InputError

__all__ = ["FILES", "HOMEPAGE", "LABELS", "SAMPLE_SIZE", "TASKS", "USERS", "load", "read", "read_user"]

HOMEPAGE = "http://www.ecmlpkdd2006.org/challenge.html"
USERS = ("u00", "u01", "u02")
SAMPLE_SIZE = 2000
LABELS = ["ham", "spam"]  # file labels -1 and 1

FILES = {
    user: RemoteFile(corpus="spam", filename=f"task_a_{user}_eval_lab.tf", url=None,
                     sha256=digests, homepage=HOMEPAGE)
    for user, digests in {
        # the files as distributed (LF line ends), then the same bytes with CRLF line ends
        "u00": ("b067310a31af5f551efd2a26adc3f9c487fbeb20fc3322116924edde2f265088",
                "b97e154b7858e848e296b86aad79dbfd4c89795bb9dd362222ce2680d5a29189"),
        "u01": ("094636b62ea46b02fb4744200f40b65e3ad11134e1c59ef2bae5ef807c7e4ef4",
                "d76322ac822fd8df35cdfb1b93875f5318f98e20d62081a236a8122b81c2d8e3"),
        "u02": ("b63c35f64a9fcdeb6bd26503520f5f081f7356ffdf2876b91575c4c4fe456f07",
                "91979255b420049dbb454560b1edbda36de8482b04ad5405981824d83ee58826"),
    }.items()
}
TASKS = {user: f"spam vs ham in user {user[1:]}'s inbox (task A)" for user in USERS}


@functools.lru_cache(maxsize=3)
def read_user(path: str):
    """``(X, target)`` of one inbox: CSR counts and 0 = ham, 1 = spam."""
    [(X, y)] = read_svmlight([path], zero_based=False)
    if not set(np.unique(y)) <= {-1.0, 1.0}:
        raise DataError(f"{path} has labels other than 1 (spam) and -1 (ham); is it a task A file?")
    return X, (y > 0).astype(np.int64)


def _encode(parsed) -> tuple[dict, dict]:
    """One inbox as plain arrays (see :mod:`textcw.corpus.cache`): its CSR matrix and labels."""
    X, target = parsed
    return {"data": X.data, "indices": X.indices, "indptr": X.indptr, "target": target}, \
        {"shape": list(X.shape)}


def _decode(arrays: dict, meta: dict):
    import scipy.sparse as sp

    n_rows, n_columns = meta["shape"]
    indptr, indices, target = arrays["indptr"], arrays["indices"], arrays["target"]
    if len(indptr) != n_rows + 1 or len(target) != n_rows or len(indices) != len(arrays["data"]) \
            or (len(indices) and not 0 <= indices.min() <= indices.max() < n_columns):
        raise ValueError("the matrix arrays do not fit its shape")
    X = sp.csr_matrix((arrays["data"], indices, indptr), shape=(n_rows, n_columns))
    # scipy may narrow the index arrays; the kernels compile one version per index type, so the
    # parsed matrix's own types are put back
    X.indices, X.indptr = indices, indptr
    X.check_format(full_check=True)  # offsets in order and within the data
    return X, target


def read(remote: RemoteFile, *, download: bool = True):
    """``(X, target)`` of one inbox (:func:`read_user` of ``remote``, one of :data:`FILES`), from
    the corpus cache when it holds it."""
    return cache.cached_parse(remote, "spam-task-a-1", read_user, _encode, _decode, download=download)


def load(task: str | None = None, split: str = "train", *, sample_size: int | None = SAMPLE_SIZE,
         seed: int = 0, order_seed: int = 0, test_size: float = 0.2,
         download: bool = True):
    """Load ``spam:u00`` (or ``u01``, ``u02``).

    Parameters
    ----------
    sample_size : int or None
        Size of the balanced seeded sample (``None``: all 2,500 emails).
    seed : int
        Seed of the sample and of the train/test split.
    """
    if task is None:
        raise InputError("spam has one task per user: choose spam:u00, spam:u01 or spam:u02")
    check_task("spam", task, TASKS)
    check_split(split)
    X, target = read(FILES[task], download=download)
    chosen = (np.arange(len(target)) if sample_size is None
              else balanced_sample(target, sample_size, seed, LABELS))
    X, target = take(X, chosen), target[chosen]
    part = seeded_split(target, split, seed, test_size, LABELS)
    return make_dataset(take(X, part), target[part], LABELS, name=f"spam:{task}", split=split,
                        order_seed=order_seed, info={"n_features": X.shape[1]})
