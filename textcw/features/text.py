"""Bag-of-words featurizers built on scikit-learn's ``CountVectorizer``.

- ``binary-bow``: 1 if a word occurs in the document, else 0 (the papers' main representation,
  JMLR 2012 section 7).
- ``bigram-counts``: counts of unigrams and bigrams (the Amazon sentiment features).

Both accept ``CountVectorizer`` parameters (``min_df``, ``max_features``, ``lowercase``, ...)
within the limits of :mod:`textcw.features.params` (no callables, no file input, a known
``token_pattern``, a bounded ``ngram_range``), checked when they are made and when they fit.
Bytes are decoded as UTF-8 with undecodable bytes replaced, so any file can be featurized.
Documents that are not text, and training documents without a single word, are refused with a
:class:`~textcw.errors.InputError` that says so (scikit-learn's own errors name neither the
document nor what to do).

``transform`` (of a fitted vocabulary) tokenises and looks terms up in compiled code
(:mod:`textcw.features.native`), and ``fit`` learns the vocabulary there too
(:func:`textcw.features.native.learn`: each new term numbered as scikit-learn's
``_count_vocab`` numbers it, then sorted and pruned by scikit-learn), both with exactly
scikit-learn's result. A pickle (a saved model) holds the fitted vocabulary as arrays
(:mod:`textcw.features.vocabulary`), which load without a Python object per word;
``vocabulary_`` is the usual dict.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer

from textcw._sklearn_compat import InvalidParameterError
from textcw.errors import InputError, ParameterError
from textcw.features import native
from textcw.features.params import check_text_params
from textcw.features.vocabulary import VocabularyTable, derived, is_packed, pack, remember
from textcw.untrusted import one_line

__all__ = ["NotTextError", "WordCounts", "bigram_counts", "binary_bow", "check_documents"]

_COMMON = {"dtype": np.float64, "decode_error": "replace"}


class NotTextError(InputError):
    """Documents that are not text, given to a text featurizer.

    ``found`` says what they are instead (``"numeric vectors"``, ``"dict"``), so that
    :func:`textcw.pipeline.train` can name the corpus and its own featurizer.
    """

    def __init__(self, message: str, found: str):
        super().__init__(message)
        self.found = found


def check_documents(X, name: str) -> None:
    """Raise :class:`InputError` unless ``X`` is a collection of ``str`` or ``bytes`` documents.

    Every document of a sequence is checked (a ``None`` or a number in the middle would
    otherwise fail deep in scikit-learn as ``'NoneType' object has no attribute 'lower'``);
    iterators are left alone, so that a stream of documents is not consumed.
    """
    if isinstance(X, (str, bytes)):
        raise NotTextError(f"{name} expects a list of documents, not a single string",
                           "a single string")
    if sp.issparse(X) or (isinstance(X, np.ndarray) and X.dtype.kind in "biufc"):
        raise NotTextError(f"{name} featurizes text; these documents are already numeric "
                           "vectors: use the corpus's default featurizer (e.g. precomputed or "
                           "pixels)", "numeric vectors")
    if isinstance(X, (Sequence, np.ndarray)):
        for i, doc in enumerate(X):
            if not isinstance(doc, (str, bytes)):
                kind = type(doc).__name__
                raise NotTextError(
                    f"{name} featurizes text (str or bytes documents), not {kind}: use the "
                    "corpus's default featurizer (e.g. precomputed for feature vectors), or give "
                    f"every document as text (document {i} is {kind})", f"{kind}, not text"
                )


class WordCounts(CountVectorizer):
    """scikit-learn's ``CountVectorizer`` that reports unusable input as textcw errors, and takes
    only the parameters :func:`~textcw.features.params.check_text_params` allows."""

    def validate_params(self) -> None:
        """Refuse unsafe or invalid parameters (:mod:`textcw.features.params`)."""
        check_text_params(self, "bag-of-words")

    def fit_transform(self, raw_documents, y=None):  # fit() calls this too
        self.validate_params()  # parameters may have been changed by set_params
        check_documents(raw_documents, "the bag-of-words featurizer")
        try:
            return super().fit_transform(raw_documents, y)
        except InvalidParameterError as exc:
            raise ParameterError(f"bag-of-words featurizer: {one_line(exc)}") from None
        except ValueError as exc:
            raise _explain(exc, raw_documents, self) from None
        except (AttributeError, TypeError) as exc:  # a non-text item in a stream of documents
            raise InputError(f"the bag-of-words featurizer featurizes text: {one_line(exc)}") from None

    def _count_vocab(self, raw_documents, fixed_vocab):
        """scikit-learn's counting of ``fit_transform`` and ``transform``; learning the
        vocabulary runs in the compiled kernels where ``transform`` does (module docstring), with
        scikit-learn's result: the same terms, numbered in the same order, and the same matrix,
        which scikit-learn then sorts and prunes (``min_df``, ``max_features``) as usual."""
        if fixed_vocab or not self._compiled(raw_documents):
            return super()._count_vocab(raw_documents, fixed_vocab)
        vocabulary, indptr, indices, counts = native.learn(self, raw_documents)
        if not vocabulary:  # no words: scikit-learn's own error, which _explain rewords
            return super()._count_vocab(raw_documents, fixed_vocab)
        return vocabulary, native.count_matrix(indptr, indices, counts, len(vocabulary), self.dtype)

    def _compiled(self, raw_documents) -> bool:
        """Whether the kernels featurize ``raw_documents`` (checked documents) with these settings."""
        if isinstance(raw_documents, native.TextBlock):
            return native.supports(self)
        return isinstance(raw_documents, (list, tuple, np.ndarray)) and native.supports(self) \
            and not native.small_before_kernels(raw_documents)

    def transform(self, raw_documents):
        if isinstance(raw_documents, native.TextBlock):
            raw_documents = raw_documents if native.supports(self) else list(raw_documents)
        else:
            check_documents(raw_documents, "the bag-of-words featurizer")
        try:
            if self._compiled(raw_documents):
                self._check_vocabulary()
                table = self._vocabulary_table()
                return native.transform(self, raw_documents,
                                        lambda block: native.lookup_block(block, self, table),
                                        super().transform)
            return super().transform(raw_documents)
        except NotFittedError:  # a programming error, not bad input: keep scikit-learn's message
            raise
        except (AttributeError, TypeError) as exc:
            raise InputError(f"the bag-of-words featurizer featurizes text: {one_line(exc)}") from None

    def _vocabulary_table(self) -> VocabularyTable:
        # One per fitted vocabulary, held with the dict it belongs to, so a refit (a new
        # vocabulary_) makes a new one. From a pickle it comes with the featurizer (the arrays
        # it was saved as, __setstate__); after fit it is packed from the dict once.
        cached = self.__dict__.get("_native_table")
        if cached is None or cached[0] is not self.vocabulary_:
            table = derived(self, "vocabulary_", self.vocabulary_, VocabularyTable.from_dict)
            cached = self.__dict__["_native_table"] = (self.vocabulary_, table)
        return cached[1]

    def __getstate__(self):
        """The pickled state: ``vocabulary_`` as arrays (:mod:`textcw.features.vocabulary`), so
        that the model loads at the speed of the disk, not of one Python object per word."""
        state = super().__getstate__()  # Python's default: the instance's own __dict__
        # The compiled table is derived from vocabulary_: it leaves the instance's attributes
        # too, as it always has (the feature cache compares the attributes a fitted featurizer
        # holds after pickling with those of one it restores, which never had one); its arrays
        # stay cached with the vocabulary (vocabulary.derived), so nothing is rebuilt.
        state.pop("_native_table", None)
        state = dict(state)  # a copy: the packed vocabulary is for the pickle, not the instance
        if "vocabulary_" in state:
            state["vocabulary_"] = pack(state["vocabulary_"])
        return state

    def __setstate__(self, state):
        table = None
        if is_packed(state.get("vocabulary_")):
            table = VocabularyTable.from_packed(state["vocabulary_"])
            state = {**state, "vocabulary_": table.to_dict()}  # the same keys, in the same order
        super().__setstate__(state)
        if table is not None:  # transform probes the loaded arrays: nothing is packed again
            remember(self, "vocabulary_", self.vocabulary_, table)


def _explain(exc: ValueError, docs, featurizer: CountVectorizer) -> Exception:
    message = one_line(exc)
    n = len(docs) if hasattr(docs, "__len__") else None
    if message.startswith("empty vocabulary"):
        if n == 0:
            return InputError("the bag-of-words featurizer got no training documents")
        counted = "the training documents" if n is None else \
            f"the {n} training document{'s' if n != 1 else ''}"
        return InputError(
            f"the bag-of-words featurizer found no words in {counted}: they are empty or hold only "
            "punctuation or one-character tokens (a word is two or more letters or digits); check "
            "that the files hold text, or set the featurizer's token_pattern parameter (e.g. "
            r"'(?u)\b\w+\b' keeps one-character words)"
        )
    if "max_df corresponds to < documents than min_df" in message:
        return ParameterError(
            f"bag-of-words featurizer: min_df={featurizer.min_df!r} and max_df="
            f"{featurizer.max_df!r} leave no room for any word in {n} training documents; lower "
            "min_df or raise max_df"
        )
    if message.startswith("After pruning, no terms remain"):
        return InputError(f"the bag-of-words featurizer kept no words: {message}")
    return InputError(f"the bag-of-words featurizer cannot featurize these documents: {message}")


def _tuples(params: dict) -> dict:
    # Parameters given on the command line arrive as JSON lists; scikit-learn wants tuples.
    return {k: tuple(v) if k == "ngram_range" and isinstance(v, list) else v for k, v in params.items()}


def binary_bow(**params) -> WordCounts:
    """Binary bag of words."""
    return WordCounts(**{**_COMMON, "binary": True, **_tuples(params)})


def bigram_counts(**params) -> WordCounts:
    """Unigram and bigram counts."""
    return WordCounts(**{**_COMMON, "ngram_range": (1, 2), **_tuples(params)})
