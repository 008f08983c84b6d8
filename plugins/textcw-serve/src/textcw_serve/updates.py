"""How the service featurizes and applies ``/learn`` requests, a group at a time.

An update is what one ``learner.partial_fit(featurizer.transform(documents), labels)`` call per
``/learn`` request does, in the order of the update log: exactly what an offline
``partial_fit`` over the same requests does, so the two give the same arrays bit for bit. A
group of requests is featurized with one featurizer call (:func:`featurize_each`, for a
row-wise featurizer) and applied with one
:meth:`~textcw.learners.base.OnlineLinearClassifier.partial_fit_each` call
(:func:`apply_group`), which is those ``partial_fit`` calls bit for bit, with each request's
own mistakes and updates, and the learner's checks paid once per group.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.pipeline import Pipeline

from textcw.learners.multilabel import MultiLabel

from textcw_serve import model_ops
from textcw_serve.model_ops import learner_of
from textcw_serve.tagsets import learn_tags


def featurize_each(model: Pipeline, requests: list[list[str]], *, together: bool) -> list:
    """The feature matrix of each request's documents, or the exception featurizing them
    raised. ``together`` (a :func:`~textcw_serve.model_ops.row_wise` featurizer): one featurizer
    call for all of them, each request given its own rows (:class:`Rows`); its fixed cost (about
    0.1 ms) is most of a short request's.
    If that call fails (a document the featurizer cannot read), each request is featurized
    alone, so that only those that fail fail."""
    if together and len(requests) > 1:
        try:
            X = model_ops.featurize(model, [doc for documents in requests for doc in documents]).tocsr()
        except Exception:  # noqa: BLE001 - found out below, one request at a time
            X = None
        if X is not None and X.shape[0] == sum(map(len, requests)):
            out, start = [], 0
            for documents in requests:
                out.append(Rows(X, start, start + len(documents)))
                start += len(documents)
            return out
    out = []
    for documents in requests:
        try:
            X = model_ops.featurize(model, documents)
            X = X if sp.issparse(X) and X.format == "csr" else sp.csr_matrix(X)
            out.append(Rows(X, 0, X.shape[0]))
        except Exception as exc:  # noqa: BLE001 - this request's answer (422, or 500 for a bug)
            out.append(exc)
    return out


@dataclass(frozen=True)
class Rows:
    """Rows ``start:stop`` of the CSR ``matrix``: a request's rows of its group's featurized
    matrix, without the copy a slice makes (``matrix[start:stop]``, 60 us, about what featurizing
    the group costs); :func:`stack_rows` makes the matrix a group learns from."""

    matrix: sp.csr_matrix
    start: int
    stop: int

    @property
    def shape(self) -> tuple[int, int]:
        return self.stop - self.start, self.matrix.shape[1]

    @property
    def columns(self) -> np.ndarray:
        """The column of each non-zero: the state rows learning these rows touches."""
        return self.matrix.indices[self.matrix.indptr[self.start]:self.matrix.indptr[self.stop]]


@dataclass
class UpdateOutcome:
    mistakes: int
    changes: int


def apply_update(model: Pipeline, X, labels: list) -> UpdateOutcome:
    """One online pass over ``(X, labels)`` in order: one ``partial_fit`` call. For a multi-label
    model ``labels`` are tag sets (:func:`textcw_serve.tagsets.learn_tags`: a mistake is a
    predicted tag set other than the given one, and every document changes the model)."""
    learner = learner_of(model)
    if isinstance(learner, MultiLabel):
        return UpdateOutcome(learn_tags(learner, X, labels), X.shape[0])
    learner.partial_fit(X, labels)
    # partial_fit appends this call's counts (OnlineLinearClassifier); other learners have none
    mistakes = learner.mistakes_[-1] if getattr(learner, "mistakes_", None) else 0
    changes = learner.n_updates_[-1] if getattr(learner, "n_updates_", None) else X.shape[0]
    return UpdateOutcome(int(mistakes), int(changes))


def apply_group(model: Pipeline, parts: list, labels: list[list]) -> tuple[list[UpdateOutcome], Exception | None]:
    """:func:`apply_update` of each ``(parts[i], labels[i])`` in order, with one
    ``partial_fit_each`` call (:meth:`textcw.learners.base.OnlineLinearClassifier.partial_fit_each`:
    the same arrays and per-call counts as one ``partial_fit`` per request, bit for bit, its
    checks paid once). The outcomes of the requests applied, and the exception that stopped the
    rest (``None`` when all were): a request the learner refused is not applied, and neither is
    any after it."""
    learner = learner_of(model)
    if not parts:
        return [], None
    if len(parts) == 1 or not callable(getattr(learner, "partial_fit_each", None)):
        outcomes = []
        for X, y in zip(parts, labels):
            try:
                outcomes.append(apply_update(model, stack_rows([X]), y))
            except Exception as exc:  # noqa: BLE001 - the caller stops learning at this request
                return outcomes, exc
        return outcomes, None
    before = len(learner.mistakes_)
    try:
        learner.partial_fit_each(stack_rows(parts), [v for y in labels for v in y], [X.shape[0] for X in parts])
        error = None
    except Exception as exc:  # noqa: BLE001 - the blocks before the failing one were applied
        error = exc
    done = len(learner.mistakes_) - before  # one entry per request applied
    outcomes = [UpdateOutcome(int(m), int(u)) for m, u in zip(learner.mistakes_[before:], learner.n_updates_[before:])]
    return outcomes[:done], error


def stack_rows(parts: list):
    """The rows of ``parts`` (:class:`Rows`, or CSR matrices) one under the other, as
    ``scipy.sparse.vstack`` stacks them: the group's own matrix when the parts are its rows in
    order (the usual group, featurized in one call), else their arrays concatenated."""
    rows = [p if isinstance(p, Rows) else Rows(p.tocsr(), 0, p.shape[0]) for p in parts]
    first = rows[0].matrix
    if all(r.matrix is first for r in rows) and all(a.stop == b.start for a, b in zip(rows, rows[1:])):
        if rows[0].start == 0 and rows[-1].stop == first.shape[0]:
            return first
        return first[rows[0].start:rows[-1].stop]
    starts = [int(r.matrix.indptr[r.start]) for r in rows]
    ends = [int(r.matrix.indptr[r.stop]) for r in rows]
    offsets = np.cumsum([0] + [e - s for s, e in zip(starts, ends)])
    indptr = np.concatenate([[0]] + [r.matrix.indptr[r.start + 1:r.stop + 1] - s + o
                                     for r, s, o in zip(rows, starts, offsets)])
    indices = np.concatenate([r.matrix.indices[s:e] for r, s, e in zip(rows, starts, ends)])
    data = np.concatenate([r.matrix.data[s:e] for r, s, e in zip(rows, starts, ends)])
    return sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, first.shape[1]))


def learn_reply(counters, documents: int, outcome: UpdateOutcome, unseen: int | None) -> dict:
    """The ``/learn`` reply of an update just applied (``counters``: the service's, after it)."""
    c = counters
    reply = {"seq": c.seq, "documents": documents, "mistakes": outcome.mistakes, "updates": outcome.changes,
             "changed": outcome.changes > 0, "update_count": c.seq, "documents_seen": c.documents,
             "online_error": c.mistakes / c.documents if c.documents else None, "unseen_tokens": unseen,
             "warning": None}
    if unseen:
        reply["warning"] = (f"{unseen} term{'s' if unseen > 1 else ''} of these documents "
                            f"{'are' if unseen > 1 else 'is'} not in the model's fixed vocabulary and "
                            f"{'were' if unseen > 1 else 'was'} dropped: the model cannot learn new words; "
                            "train it with --featurizer hashed-tfidf to learn them")
    return reply
