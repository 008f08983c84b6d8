"""textcw.explain: the words behind a prediction (exact sums, the Gaussian deviations, hashed
words), the k best labels, and the precision@k metric."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import textcw
from textcw.errors import InputError, ParameterError
from textcw.evaluation.contract import Fold
from textcw.evaluation.measures import PrecisionAtK
from textcw.explain import explain, format_explanation, top_k
from textcw.testing import check_metric


def corpus(n_classes: int, n: int = 120, seed: int = 0):
    """Documents of class-specific words (``w<k>x<j>``), shared words and one word of the next
    class, so that the classes overlap a little."""
    rng = np.random.default_rng([seed, n_classes])
    own = [[f"w{k}x{j}" for j in range(8)] for k in range(n_classes)]
    shared = [f"s{j}" for j in range(10)]
    docs, labels = [], []
    for i in range(n):
        k = i % n_classes
        words = [*rng.choice(own[k], 3), *rng.choice(shared, 3), rng.choice(own[(k + 1) % n_classes])]
        docs.append(" ".join(words))
        labels.append(f"c{k}")
    return docs, labels


NEW_DOCS = ["w0x1 w0x1 s2 never-seen w1x3", "s1 s2 s3", "w1x0 w2x5 w2x5 s9 w0x7", "", "W0X2 w1x1, w1x2!"]


def fitted(featurizer: str, learner: str, n_classes: int, probability: str = "raw", featurizer_params=None, **params):
    docs, labels = corpus(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # calibration on few documents warns
        return textcw.make_pipeline(featurizer, learner, probability=probability,
                                    featurizer_params=featurizer_params, **params).fit(docs, labels)


def expected_margin(model, doc: str) -> float:
    """The score difference, from the pipeline's decision_function alone."""
    scores = np.asarray(model.decision_function([doc]), dtype=float).reshape(-1)
    if scores.shape[0] == 1:
        return abs(scores[0]) if scores[0] > 0 else -scores[0]
    best = np.sort(scores)[::-1]
    return best[0] - best[1]


def check_sums(model) -> None:
    for doc in NEW_DOCS:
        e = explain(model, doc, n=None)
        assert e.n_rest == 0 and e.rest == 0.0
        total = sum(t.contribution for t in e.terms) + e.intercept
        assert abs(total - e.margin) <= 1e-9 and abs(e.margin - expected_margin(model, doc)) <= 1e-9
        assert e.label == model.predict([doc])[0]
        short = explain(model, doc, n=2)  # the others are summed in rest
        assert abs(sum(t.contribution for t in short.terms) + short.rest + short.intercept - e.margin) <= 1e-9
        assert [t.column for t in short.terms] == [t.column for t in e.terms[:2]]
        magnitudes = [abs(t.contribution) for t in e.terms]
        assert magnitudes == sorted(magnitudes, reverse=True)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("featurizer", ["tfidf", "binary-bow", "bigram-counts", "hashing"])
def test_contributions_sum_to_the_score_difference_for_every_featurizer(featurizer, n_classes):
    check_sums(fitted(featurizer, "cw-stdev", n_classes, fit_intercept=True))


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize(("learner", "params"), [
    ("cw-var", {}), ("arow", {"covariance": "full"}), ("scw1", {}), ("cw-stdev", {"average": True}),
    ("pa1", {"fit_intercept": True}), ("perceptron", {}), ("sgd", {}), ("maxent", {}),
])
def test_contributions_sum_to_the_score_difference_for_every_learner(learner, params, n_classes):
    check_sums(fitted("binary-bow", learner, n_classes, **params))


def test_a_calibrated_model_explains_its_learners_raw_scores():
    model = fitted("tfidf", "arow", 3, probability="calibrated")
    assert hasattr(model, "probability_calibration_")
    check_sums(model)


def known_model(n_classes: int):
    """A binary-bow model whose weights and variances are set by hand."""
    model = fitted("binary-bow", "cw-var", n_classes)
    learner = model[-1]
    vocabulary = model[0].vocabulary_
    d = len(vocabulary)
    state = learner.state_dict()
    shape = (d,) if n_classes == 2 else (d, n_classes)
    mu, s = np.zeros(shape), np.full(shape, 0.25)
    return model, learner, vocabulary, state, mu, s


def test_hand_set_binary_weights_give_exact_terms_and_deviations():
    model, learner, vocab, state, mu, s = known_model(2)
    mu[vocab["w0x1"]], mu[vocab["w1x1"]], mu[vocab["s1"]] = -2.0, 0.5, 0.25  # c1 is classes_[1]
    s[vocab["w0x1"]], s[vocab["w1x1"]], s[vocab["s1"]] = 0.04, 0.09, 0.16
    learner.load_state_dict({**state, "arrays": {"mu": mu, "s": s}})
    e = explain(model, "w1x1 s1 w1x1")  # score +0.75: c1, against the threshold
    assert (e.label, e.runner_up, e.binary) == ("c1", "c0", True)
    assert [(t.words, t.value, t.contribution, t.sd) for t in e.terms] == [
        (("w1x1",), 1.0, 0.5, pytest.approx(0.3, abs=1e-15)), (("s1",), 1.0, 0.25, pytest.approx(0.4, abs=1e-15))]
    assert e.margin == 0.75 and e.margin_sd == pytest.approx(0.5, abs=1e-15) and e.intercept_sd == 0.0
    e = explain(model, "w0x1 s1")  # score -1.75: c0, and the terms are signed towards it
    assert (e.label, e.margin) == ("c0", 1.75)
    assert [(t.name, t.contribution) for t in e.terms] == [("w0x1", 2.0), ("s1", -0.25)]
    lines = format_explanation(e)
    assert lines[0] == "  why c0, not c1: margin over the threshold 0 +1.7500  sd 0.4472"
    assert lines[1:] == ["      +2.0000  sd 0.2000  w0x1", "      -0.2500  sd 0.4000  s1"]


def test_hand_set_multiclass_weights_give_exact_terms_and_deviations():
    model, learner, vocab, state, mu, s = known_model(3)
    mu[vocab["w2x3"]] = [0.0, 1.0, 3.0]  # c2 first, c1 the runner-up: w2x3 adds 2.0
    mu[vocab["s4"]] = [0.5, 1.5, 0.0]  # -1.5 against c2
    s[vocab["w2x3"]] = [9.0, 0.16, 0.09]
    learner.load_state_dict({**state, "arrays": {"mu": mu, "s": s}})
    e = explain(model, "s4 w2x3 zzz")
    assert (e.label, e.runner_up, e.binary, e.margin) == ("c2", "c1", False, 0.5)
    assert [(t.name, t.contribution) for t in e.terms] == [("w2x3", 2.0), ("s4", -1.5)]
    assert e.terms[0].sd == pytest.approx(0.5, abs=1e-15)  # sqrt(0.09 + 0.16): c0's variance is left out
    assert e.terms[1].sd == pytest.approx(np.sqrt(0.5), abs=1e-15)
    assert e.margin_sd == pytest.approx(np.sqrt(0.75), abs=1e-15)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_deviations_are_the_diagonal_variances_of_the_two_labels(n_classes):
    model = fitted("tfidf", "arow", n_classes, fit_intercept=True)
    learner = model[-1]
    doc = NEW_DOCS[2]
    e = explain(model, doc, n=None)
    x = model[0].transform([doc]).toarray()[0]
    classes = list(learner.classes_)
    blocks = [0] if n_classes == 2 else [classes.index(e.label), classes.index(e.runner_up)]
    for t in e.terms:
        assert t.value == x[t.column]
        variance = sum(learner.sigma_[b, t.column] for b in blocks)
        assert t.sd == pytest.approx(abs(x[t.column]) * np.sqrt(variance), rel=1e-12)
    # diagonal covariance: the margin's variance is the terms' plus the intercept's
    assert e.margin_sd ** 2 == pytest.approx(sum(t.sd ** 2 for t in e.terms) + e.intercept_sd ** 2, rel=1e-12)
    assert e.intercept_sd > 0


def test_first_order_learners_have_no_deviations():
    e = explain(fitted("binary-bow", "pa1", 3), NEW_DOCS[0])
    assert e.margin_sd is None and all(t.sd is None for t in e.terms)
    assert "sd" not in "\n".join(format_explanation(e))


def test_hashed_columns_show_the_words_of_the_document_that_fell_in_them():
    model = fitted("hashing", "arow", 2, featurizer_params={"n_features": 16})
    doc = " ".join(f"w0x{j} w1x{j} s{j}" for j in range(7))  # 21 words in 16 columns: some share one
    e = explain(model, doc, n=None)
    featurizer = model[0]
    assert {w for t in e.terms for w in t.words} == set(doc.split())
    for t in e.terms:
        assert t.words and "feature" not in t.name
        for word in t.words:  # each word, featurized alone, lands in that column
            assert list(featurizer.transform([word]).indices) == [t.column]
    shared = [t for t in e.terms if len(t.words) > 1]
    assert shared and all(t.name == "/".join(t.words) for t in shared)


def test_words_are_the_featurizers_tokens_ngrams_included():
    e = explain(fitted("bigram-counts", "arow", 2), "w0x1 s2 w0x1", n=None)
    assert {t.name for t in e.terms} <= {"w0x1", "s2", "w0x1 s2", "s2 w0x1"}
    assert {"w0x1", "s2"} <= {t.name for t in e.terms}
    assert next(t for t in e.terms if t.name == "w0x1").value == 2.0


def test_what_cannot_be_explained_is_refused():
    with pytest.raises(InputError, match="not coef_ . x \\+ intercept_"):
        explain(fitted("binary-bow", "sop", 2), NEW_DOCS[0])
    with pytest.raises(InputError, match="keeps no weight per feature"):
        explain(fitted("binary-bow", "nb", 3), NEW_DOCS[0])
    model = fitted("binary-bow", "pa1", 2)
    with pytest.raises(InputError, match="fitted pipeline"):
        explain(model[-1], NEW_DOCS[0])
    with pytest.raises(InputError, match="one document as text"):
        explain(model, NEW_DOCS)
    with pytest.raises(ParameterError, match="n=-1 is invalid"):
        explain(model, NEW_DOCS[0], n=-1)


@pytest.mark.parametrize("n_classes", [2, 4])
def test_top_k_ranks_by_score_first_label_is_predict(n_classes):
    model = fitted("tfidf", "cw-stdev", n_classes, probability="calibrated")
    k = n_classes
    ranked = top_k(model, NEW_DOCS, k)
    classes = list(model.classes_)
    assert ranked.labels.shape == (len(NEW_DOCS), k)
    assert list(ranked.labels[:, 0]) == list(model.predict(NEW_DOCS))
    proba = model.predict_proba(NEW_DOCS)
    for i, labels in enumerate(ranked.labels):
        assert sorted(labels) == classes
        assert list(ranked.probabilities[i]) == [proba[i, classes.index(c)] for c in labels]
        assert list(ranked.scores[i]) == sorted(ranked.scores[i], reverse=True)
        assert list(ranked.probabilities[i]) == sorted(ranked.probabilities[i], reverse=True)  # calibrated: same order
    assert (top_k(model, NEW_DOCS, 1).labels == ranked.labels[:, :1]).all()


def test_top_k_without_probabilities_and_out_of_range():
    model = fitted("binary-bow", "pa1", 3)
    ranked = top_k(model, ["w2x1 w2x2"], 2)
    assert ranked.probabilities is None and ranked.labels[0, 0] == "c2"
    for k in (0, 4, True, 1.5):
        with pytest.raises(ParameterError, match="this model has 3 labels; give k from 1 to 3"):
            top_k(model, NEW_DOCS, k)


def fold(scores, truth, classes=("a", "b", "c", "d")):
    classes = np.asarray(classes, dtype=object)
    scores = np.asarray(scores, dtype=float)
    predicted = classes[np.argmax(scores, axis=1)] if scores.ndim == 2 else classes[(scores > 0).astype(int)]
    return Fold(np.asarray(truth, dtype=object), predicted, classes, scores)


def test_precision_at_k_counts_the_true_label_among_the_k_best():
    scores = [[0.9, 0.5, 0.1, 0.0],   # a > b > c > d
              [0.1, 0.2, 0.3, 0.4],   # d > c > b > a
              [0.5, 0.5, 0.2, 0.1],   # a = b (a first, as predict) > c > d
              [0.0, 0.3, 0.2, 0.1]]   # b > c > d > a
    truth = ["b", "a", "b", "e"]      # ranks 2, 4, 2, unseen
    assert [PrecisionAtK(k=k)(fold(scores, truth)) for k in (1, 2, 3, 4)] == [0.0, 0.5, 0.5, 0.75]
    binary = fold([0.5, -0.2, 0.0], ["b", "b", "a"], classes=("a", "b"))
    assert PrecisionAtK(k=1)(binary) == pytest.approx(2 / 3)  # the accuracy; a score of 0 is "a"
    assert PrecisionAtK(k=2)(binary) == 1.0  # every label is in the top 2 of 2
    with pytest.raises(ParameterError):
        PrecisionAtK(k=0)


def test_precision_at_k_keeps_the_metric_contract():
    check_metric(PrecisionAtK, k=2, n_classes=(3, 4))
    check_metric(PrecisionAtK, k=1, n_classes=(2, 3))


def test_precision_at_k_is_registered():
    from textcw.evaluation.dispatch import build

    name, metric = build("metrics", "precision@k:k=2")
    assert name == "precision@k" and isinstance(metric, PrecisionAtK) and metric.settings == {"k": 2}


def test_the_features_then_the_words_give_the_same_explanation():
    # the service weighs the features while it holds the model and names the words after
    from textcw.explain import explain_features, with_words

    model = fitted("tfidf", "arow", 3)
    doc = corpus(3)[0][5]
    row = model[0].transform([doc])
    plain = explain_features(model, row, 4)
    assert all(t.words == () for t in plain.terms) and len(plain.terms) == 4
    assert with_words(plain, model[0], doc) == explain(model, doc, n=4)
    assert all(t.words for t in explain(model, doc, n=4).terms)
    with pytest.raises(InputError, match="one document's features \\(one row\\); got 2 rows"):
        explain_features(model, model[0].transform([doc, doc]))
