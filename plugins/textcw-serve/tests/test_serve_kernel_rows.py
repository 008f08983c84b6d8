"""A batch featurized by ``hashing`` is scored from the featurizer's own kernel rows
(model_ops.featurize_for_scoring), with the results of the matrix path bit for bit, and every
model those rows do not fit gets the matrix as before."""

from __future__ import annotations

import numpy as np
import pytest
import textcw
from textcw.errors import InputError
from textcw.features.native import KernelRows

from textcw_serve import model_ops, scoring
from textcw_serve.model_ops import featurize, featurize_for_scoring, score

from test_serve_scoring import WORDS, documents, fitted

# with documents the kernels do not read (non-ASCII: scikit-learn's rows, put in place), an
# empty one and one of unknown words
EXTRA = ["", "unknownword", "café orbit naïve rocket", "Σ doctor ß nurse fever"]


def assert_same_scored(a, b):
    assert a.predicted.tolist() == b.predicted.tolist()
    for name in ("scores", "proba", "variances"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), name


@pytest.mark.parametrize("learner", ["cw-stdev", "arow", "scw1", "pa1"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_kernel_rows_give_the_matrix_path_s_results_bit_for_bit(learner, n_classes):
    probability = "calibrated" if n_classes == 3 else "raw"
    model = fitted(learner, n_classes, probability, fit_intercept=n_classes == 2)
    docs = documents(40, list(WORDS)[:n_classes], seed=5)[0] + EXTRA
    rows = featurize_for_scoring(model, docs)
    assert isinstance(rows, KernelRows)  # the path under test
    X = featurize(model, docs)
    assert_same_scored(score(model, rows), score(model, X))
    assert_same_scored(score(model, rows, variances=True), score(model, X, variances=True))


def test_the_kernel_reads_the_rows_without_a_matrix(monkeypatch):
    model = fitted("cw-stdev", 3, "calibrated")
    rows = featurize_for_scoring(model, documents(8, list(WORDS), seed=2)[0])
    monkeypatch.setattr(KernelRows, "matrix", lambda self: pytest.fail("a matrix was built"))
    monkeypatch.setattr(scoring, "as_kernel_csr", lambda *a, **k: pytest.fail("the rows were checked again"))
    assert score(model, rows).proba.shape == (8, 3)


def test_rows_of_another_width_are_refused_as_a_matrix_is():
    model = fitted("cw-stdev", 3, "raw")
    rows = featurize_for_scoring(model, ["orbit rocket"])
    wide = KernelRows(rows.indptr, rows.indices, rows.data, (1, rows.shape[1] + 1))
    with pytest.raises(InputError, match="features but the model was fitted with"):
        scoring.scores_and_variances(model.steps[-1][1], wide, variances=False)


@pytest.mark.parametrize("params", [{"covariance": "full"}, {"average": True}])
def test_learners_scored_their_own_way_get_the_matrix(params):
    model = fitted("arow", 3, "raw", **params)
    docs = documents(10, list(WORDS), seed=3)[0] + EXTRA
    assert_same_scored(score(model, featurize_for_scoring(model, docs)), score(model, featurize(model, docs)))


def test_a_learner_with_its_own_scoring_is_asked_with_the_matrix(monkeypatch):
    model = fitted("cw-stdev", 2, "raw")
    learner = model.steps[-1][1]
    seen = []
    own = type(learner).decision_function
    monkeypatch.setattr(type(learner), "decision_function", lambda self, X: seen.append(type(X)) or own(self, X) + 1.0)
    got = score(model, featurize_for_scoring(model, ["orbit rocket", "doctor nurse"]))
    assert seen and KernelRows not in seen
    assert got.scores.tolist() == (own(learner, featurize(model, ["orbit rocket", "doctor nurse"])) + 1.0).tolist()


def test_other_featurizers_give_their_matrix():
    model = textcw.make_pipeline("binary-bow", "arow", n_epochs=1).fit(*documents(30, list(WORDS)))
    X = featurize_for_scoring(model, ["orbit rocket"])
    assert not isinstance(X, KernelRows) and X.shape == (1, len(model.steps[0][1].vocabulary_))


def test_the_service_predicts_from_the_rows(tmp_path):
    from textcw_serve.startup import open_service

    model = fitted("cw-stdev", 3, "calibrated")
    path = textcw.save(model, tmp_path / "m.textcw-model")
    service = open_service(path)
    docs = documents(12, list(WORDS), seed=9)[0] + EXTRA
    version, scored = service.scored(docs)
    assert version == 0
    assert_same_scored(scored, model_ops.score(service.model, featurize(service.model, docs)))
    assert np.array_equal(scored.predicted, service.model.predict(docs))


def test_hashed_tfidf_is_scored_on_its_weighted_rows():
    # hashed-tfidf hashes as hashing does, then weighs each count by its idf and each row to unit
    # length: the kernel's raw counts would give other scores and probabilities
    docs, labels = documents(60, list(WORDS))
    model = textcw.make_pipeline("hashed-tfidf", "cw-stdev", n_epochs=1).fit(docs, labels)
    asked = documents(10, list(WORDS), seed=4)[0] + EXTRA
    X = featurize_for_scoring(model, asked)
    assert not isinstance(X, KernelRows)
    got = score(model, X)
    np.testing.assert_allclose(got.proba, model.predict_proba(asked), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.scores, model.decision_function(asked), rtol=0, atol=1e-12)
    assert list(got.predicted) == list(model.predict(asked))
