"""Calibrated: temperature scaling of the learner's own pre-update scores."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.optimize
from scipy.special import softmax
from sklearn.base import clone
from sklearn.datasets import make_classification

import textcw
from sparse_data import random_sparse
from textcw.errors import InputError, ParameterError
from textcw.evaluation.metrics import classification_metrics
from textcw.learners.calibrated import Calibrated, fit_inverse_temperature, standardized_scores


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _labels(X, n_classes, seed):
    rng = np.random.default_rng(seed)
    scores = np.asarray(X @ rng.normal(size=(X.shape[1], n_classes))) + rng.normal(size=(X.shape[0], n_classes))
    return np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)


@pytest.mark.parametrize("name", ["cw-var", "cw-stdev", "arow", "scw2", "pa1", "sgd", "averaged-perceptron"])
@pytest.mark.parametrize("n_classes", [2, 5])
def test_argmax_of_predict_proba_is_predict_and_the_model_is_the_learners_fit(name, n_classes):
    X = random_sparse(300, 25, 0.3, seed=1, empty_rows=(3, 7))
    y = _labels(X, n_classes, seed=2)
    model = Calibrated(textcw.make_learner(name, n_epochs=2), chunk_size=50).fit(X, y)
    reference = textcw.make_learner(name, n_epochs=2).fit(X, y)
    if name == "sgd":  # its scaled weights are folded back at the end of every call: to rounding
        np.testing.assert_allclose(model.estimator_.coef_, reference.coef_, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(model.estimator_.coef_, reference.coef_)
        assert model.mistakes_ == reference.mistakes_
    assert 0 < model.temperature_ < np.inf
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[np.argmax(proba, axis=1)], model.predict(X))
    known = np.ones(X.shape[0], dtype=bool)
    known[[3, 7]] = False
    if name != "sgd":
        np.testing.assert_array_equal(model.predict(X)[known], reference.predict(X)[known])
    # The two empty training documents are held out empty by the cross-fit. Binary, both have
    # one label, and each predicts the other better than the zero score's 1/2: a document with
    # no known feature gets their estimate (textcw.learners.unknown_documents). With 5 labels
    # they differ, each is predicted worse by the other's estimate than by 1/5, and empty rows
    # keep the zero score: 1/K each and classes_[0], as predict gives.
    assert model.record_ == "cross-fit"
    if n_classes == 2:
        assert y[3] == y[7]
        q = np.asarray(model.scaling_.unknown)
        frequencies = np.bincount(y, minlength=2) / len(y)
        counts = np.bincount(y[[3, 7]], minlength=2)
        np.testing.assert_allclose(q, (counts + 2 * frequencies) / (2 + 2), rtol=1e-15)
        np.testing.assert_array_equal(proba[[3, 7]], [q, q])
        assert list(model.predict(X[[3, 7]])) == [y[3], y[3]]
    else:
        assert y[3] != y[7] and model.scaling_.unknown is None
        np.testing.assert_allclose(proba[[3, 7]], 1 / n_classes, rtol=1e-12)
        assert list(model.predict(X[[3, 7]])) == [model.classes_[0]] * 2


def _recorded_by_hand(name, X, y, chunk, standardized):
    """The first (unshuffled) pass, chunk by chunk (1, 1, 2, 4, ... documents, then ``chunk``),
    each chunk scored before it is learned."""
    model = textcw.make_learner(name, n_epochs=1, shuffle=False)
    scores, variances = [], []
    start, size, n_classes = 0, 1, len(np.unique(y))
    while start < X.shape[0]:
        part = X[start:start + size]
        if start == 0:
            shape = (part.shape[0],) if n_classes == 2 else (part.shape[0], n_classes)
            scores.append(np.zeros(shape))
            variances.append(np.zeros(shape))
        else:
            scores.append(model.decision_function(part))
            variances.append(model.margin_variance(part))
        model.partial_fit(part, y[start:start + size], classes=np.unique(y))
        size = size if start == 0 else min(2 * size, chunk)
        start += part.shape[0]
    z = np.concatenate(scores)
    return standardized_scores(z, np.concatenate(variances)) if standardized else z


def _platt_loss(logits, target):
    """Cross-entropy against Platt's targets, written out: a document of class c targets
    1 - eps on c and shares eps = 2 / (k (N_c + 2)) among the other labels; for two labels,
    (N_c + 1) / (N_c + 2) and 1 / (N_c + 2), Platt's own."""
    n, k = logits.shape
    counts = np.bincount(target, minlength=k)
    weights = np.empty((n, k))
    for i, c in enumerate(target):
        eps = 2.0 / (k * (counts[c] + 2))
        weights[i] = eps / (k - 1)
        weights[i, c] = 1.0 - eps
        if k == 2:
            assert weights[i, c] == pytest.approx((counts[c] + 1) / (counts[c] + 2), rel=1e-15)

    def loss(log_t):
        return -np.mean((weights * np.log(softmax(logits / np.exp(log_t), axis=1))).sum(axis=1))

    return loss


@pytest.mark.parametrize("margin", ["raw", "standardized"])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_temperature_minimises_the_log_loss_of_the_recorded_scores(margin, n_classes):
    X = random_sparse(400, 30, 0.25, seed=3)
    y = _labels(X, n_classes, seed=4)
    model = Calibrated(textcw.make_learner("arow", n_epochs=1, shuffle=False), margin=margin,
                       chunk_size=40).fit(X, y)
    assert model.margin_ == margin
    z = _recorded_by_hand("arow", X, y, 40, margin == "standardized")
    logits = np.column_stack([np.zeros_like(z), z]) if z.ndim == 1 else z
    target = np.searchsorted(np.unique(y), y)

    def log_loss(log_t):
        p = softmax(logits / np.exp(log_t), axis=1)
        return -np.mean(np.log(p[np.arange(len(y)), target]))

    best = scipy.optimize.minimize_scalar(_platt_loss(logits, target), bounds=(-12, 12), method="bounded",
                                          options={"xatol": 1e-10})
    assert model.temperature_ == pytest.approx(np.exp(best.x), rel=1e-6)
    # the reported log-loss is the plain one (against the labels) at the fitted temperature
    assert model.recorded_log_loss_[margin] == pytest.approx(log_loss(best.x), rel=1e-9)
    assert model.n_honest_scores_ == 399  # every document but the first, scored before learning


def test_auto_keeps_the_margin_with_the_lower_recorded_log_loss():
    X = random_sparse(300, 20, 0.3, seed=5)
    y = _labels(X, 3, seed=6)
    auto = Calibrated(textcw.make_learner("cw-stdev")).fit(X, y)
    assert set(auto.recorded_log_loss_) == {"normalized", "standardized"}
    assert auto.margin_ == min(auto.recorded_log_loss_, key=auto.recorded_log_loss_.get)
    first_order = Calibrated(textcw.make_learner("pa1")).fit(X, y)
    assert first_order.margin_ == "normalized" and set(first_order.recorded_log_loss_) == {"normalized"}
    raw = Calibrated(textcw.make_learner("pa1"), margin="raw").fit(X, y)
    assert raw.margin_ == "raw" and set(raw.recorded_log_loss_) == {"raw"}


def test_normalized_scores_are_the_scores_over_the_scoring_model_s_weight_length():
    """Each recorded score is divided by the length of the weights of the model that gave it
    (cross-fitting: the half that scored the document), and the final model's scores by its own."""
    X = random_sparse(400, 30, 0.3, seed=2)
    y = _labels(X, 3, seed=3)
    model = Calibrated(textcw.make_learner("pa1", n_epochs=3), margin="normalized").fit(X, y)
    assert model.record_ == "cross-fit" and model.margin_ == "normalized"
    w = model.estimator_
    length = np.sqrt(np.sum(w.coef_ ** 2) + np.sum(np.asarray(w.intercept_) ** 2))
    expected = softmax(model.inverse_temperature_ * w.decision_function(X) / length, axis=1)
    np.testing.assert_allclose(model.predict_proba(X), expected, rtol=1e-12)
    np.testing.assert_array_equal(model.classes_[model.predict_proba(X).argmax(axis=1)], model.predict(X))


def test_normalized_margin_corrects_the_scale_of_half_trained_models():
    """An online learner's weights grow with the documents it learns (on sparse text, with every
    new word), so a temperature fitted to the raw scores of half-size models is too large for
    the final model, whose probabilities come out over-confident; normalizing each model's
    scores by its weight length removes most of that. The recorded log-loss of the two is nearly
    equal, so it could not have chosen between them."""
    train = textcw.load_corpus("synthetic-text:6000:10", split="train")
    test = textcw.load_corpus("synthetic-text:6000:10", split="test")
    featurizer = textcw.make_featurizer("tfidf")
    X, Xt = featurizer.fit_transform(train.data), featurizer.transform(test.data)
    y, yt = np.asarray(train.labels), np.asarray(test.labels)
    found = {}
    for margin in ("raw", "normalized"):
        model = Calibrated(textcw.make_learner("scw1", eta=0.85, C=0.1), margin=margin).fit(X, y)
        proba = model.predict_proba(Xt)
        metrics = classification_metrics(yt, model.predict(Xt), proba, model.classes_)
        found[margin] = (metrics["expected_calibration_error"], proba.max(axis=1).mean(),
                         metrics["accuracy"], model.recorded_log_loss_[margin])
    (raw_ece, raw_confidence, accuracy, raw_loss), normalized = found["raw"], found["normalized"]
    assert raw_confidence > accuracy + 0.04  # over-confident
    assert normalized[0] < raw_ece / 2
    assert abs(normalized[3] - raw_loss) < 1e-3 * raw_loss


def test_a_classifier_without_weights_keeps_the_raw_margin():
    from sklearn.svm import SVC  # decision_function, but no coef_ with an RBF kernel

    X, y = make_classification(300, 8, random_state=0)
    with pytest.raises(ParameterError, match="margin='normalized' needs a linear learner with coef_"):
        Calibrated(SVC(kernel="rbf"), margin="normalized", record="cross-fit").fit(X, y)
    auto = Calibrated(SVC(kernel="rbf"), record="cross-fit").fit(X, y)
    assert auto.margin_ == "raw" and set(auto.recorded_log_loss_) == {"raw"}


def test_calibration_lowers_ece_where_the_raw_probabilities_are_miscalibrated():
    """AROW with a large r keeps large variances: its Gaussian probabilities are nearly uniform
    (under-confident) while it predicts well; the calibrated ones are far closer to the truth."""
    X, y = make_classification(4000, 40, n_informative=20, n_classes=5, n_clusters_per_class=1,
                               flip_y=0.05, random_state=0)
    train, test = slice(0, 3000), slice(3000, None)
    learner = textcw.make_learner("arow", r=100.0)
    raw = Calibrated(learner, probability="raw").fit(X[train], y[train])
    calibrated = clone(raw).set_params(probability="calibrated").fit(X[train], y[train])
    np.testing.assert_array_equal(raw.predict_proba(X[test]), raw.estimator_.predict_proba(X[test]))
    before = classification_metrics(y[test], raw.predict(X[test]), raw.predict_proba(X[test]), raw.classes_)
    after = classification_metrics(y[test], calibrated.predict(X[test]), calibrated.predict_proba(X[test]),
                                   calibrated.classes_)
    assert before["expected_calibration_error"] > 0.25
    assert after["expected_calibration_error"] < before["expected_calibration_error"] / 3
    assert after["log_loss"] < before["log_loss"]
    assert after["brier_score"] < before["brier_score"]
    assert after["accuracy"] == before["accuracy"]


def test_inverse_temperature_edge_cases():
    target = np.array([0, 1, 0, 1])
    # scores that carry no information: probabilities 1/K (an infinite temperature)
    assert fit_inverse_temperature(np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]), target) == 0.0
    assert fit_inverse_temperature(np.zeros((4, 2)), target) == 0.0
    # every score on the right side: the plain log-loss has no minimum; the search stops where
    # its derivative underflows to 0, the probabilities being 0 and 1 in float64 there
    separable = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 0.0], [0.0, 3.0]])
    beta = fit_inverse_temperature(separable, target, smoothing=False)
    assert 0 < beta <= 1e6 / 3.0
    np.testing.assert_array_equal(softmax(beta * separable, axis=1)[np.arange(4), target], 1.0)
    # Platt's targets (2 documents a class: 3/4 and 1/4) have a finite minimum, where the
    # derivative of the loss is 0
    beta = fit_inverse_temperature(separable, target)
    best = scipy.optimize.minimize_scalar(_platt_loss(separable, target), bounds=(-12, 12), method="bounded",
                                          options={"xatol": 1e-12})
    assert beta == pytest.approx(np.exp(-best.x), rel=1e-6)
    assert 0.5 < softmax(beta * separable, axis=1)[0, 0] < 0.9


def test_separable_data_keeps_probabilities_off_0_and_1():
    """Two well-separated clusters: every honest score is on the right side. The temperature
    stays finite and a test document near the boundary gets a probability near 1/2, where the
    plain maximum likelihood gave an inverse temperature in the thousands and 1e-200."""
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(2.0, 0.3, (60, 5)), rng.normal(-2.0, 0.3, (60, 5))])
    y = np.repeat([1, 0], 60)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 119 honest scores: no warning
        model = Calibrated(textcw.make_learner("arow", n_epochs=1)).fit(X, y)
    assert model.record_ == "first" and model.n_honest_scores_ == 119
    near = np.full((1, 5), 0.1)  # deep inside the margin of the training documents
    margin = model.decision_function(near)[0]
    typical = np.median(np.abs(model.decision_function(X)))
    assert 0 < margin < typical / 10
    p = model.predict_proba(near)[0, 1]
    assert 0.5 < p < 0.75
    # the typical document: as sure as 119 documents allow, not 1 - 1e-200
    p_typical = model.predict_proba(X[:60])[:, 1]
    assert np.all(p_typical < 1.0) and np.median(p_typical) > 0.95


def test_tiny_data_warns_and_still_calibrates():
    """Twenty documents: the recorded pass scores 19 of them (chunks of 1, 1, 2, 4, ...), the
    temperature is finite, and fit says the probabilities rest on too few honest scores."""
    from textcw.learners.temperature import CalibrationWarning

    X = random_sparse(20, 10, 0.5, seed=11)
    y = _labels(X, 2, seed=12)
    with pytest.warns(CalibrationWarning, match=r"^Calibrated: the temperature rests on 19 honest scores"):
        model = Calibrated(textcw.make_learner("cw-stdev", n_epochs=1)).fit(X, y)
    assert model.n_honest_scores_ == 19 and 0 < model.inverse_temperature_ < np.inf
    proba = model.predict_proba(X)
    assert proba.min() > 1e-6 and proba.max() < 1 - 1e-6


def test_clone_and_get_params_round_trip():
    model = Calibrated(textcw.make_learner("arow", r=2.0), margin="raw", record="last", chunk_size=64)
    params = model.get_params(deep=True)
    assert params["learner__r"] == 2.0 and params["record"] == "last" and params["chunk_size"] == 64
    copy = clone(model)
    assert copy.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    assert copy.learner.get_params() == model.learner.get_params()
    X = random_sparse(200, 10, 0.4, seed=1)
    y = _labels(X, 2, seed=2)
    fitted = model.fit(X, y)
    refitted = clone(fitted).fit(X, y)
    assert refitted.temperature_ == fitted.temperature_
    np.testing.assert_array_equal(refitted.predict_proba(X), fitted.predict_proba(X))


def test_bad_input_is_a_clear_error():
    X = random_sparse(60, 8, 0.5, seed=1)
    y = _labels(X, 2, seed=2)
    with pytest.raises(ParameterError, match="margin='standardized' needs a Gaussian learner"):
        Calibrated(textcw.make_learner("pa1"), margin="standardized").fit(X, y)
    with pytest.raises(ParameterError, match="chunk_size=0 is invalid"):
        Calibrated(textcw.make_learner("arow"), chunk_size=0).fit(X, y)
    with pytest.raises(ParameterError, match="record='middle' is invalid"):
        Calibrated(textcw.make_learner("arow"), record="middle").fit(X, y)
    with pytest.raises(ParameterError, match="probability='raw' needs a learner with its own"):
        Calibrated(textcw.make_learner("pa1"), probability="raw").fit(X, y).predict_proba(X)
    with pytest.raises(ParameterError, match="classifier with decision_function"):
        Calibrated("arow").fit(X, y)
    with pytest.raises(ParameterError, match="online learner with partial_fit"):
        Calibrated("arow", record="first").fit(X, y)
    with pytest.raises(InputError):
        Calibrated(textcw.make_learner("arow")).fit(X, y[:10])
    with pytest.raises(InputError, match="expecting 8 features"):
        Calibrated(textcw.make_learner("arow")).fit(X, y).predict_proba(X[:, :3])


@pytest.mark.parametrize("name, n_classes", [("cw-stdev", 4), ("arow", 2), ("pa1", 3)])
def test_cross_fit_temperature_is_the_maximum_likelihood_on_out_of_fold_scores(name, n_classes):
    """The final model is the learner's own fit; the temperature is fitted to the scores each
    half-size clone gives the half it did not learn (a stratified, shuffled 2-fold split)."""
    from sklearn.model_selection import StratifiedKFold

    X = random_sparse(500, 30, 0.25, seed=7)
    y = _labels(X, n_classes, seed=8)
    learner = textcw.make_learner(name, n_epochs=3, random_state=5)
    model = Calibrated(learner, margin="raw").fit(X, y)
    assert model.record_ == "cross-fit" and model.scaling_.record == "cross-fit"
    reference = clone(learner).fit(X, y)
    np.testing.assert_array_equal(model.estimator_.coef_, reference.coef_)
    assert model.mistakes_ == reference.mistakes_
    labels = np.unique(y)
    z = np.zeros((len(y),) if n_classes == 2 else (len(y), n_classes))
    for fitted_on, scored in StratifiedKFold(2, shuffle=True, random_state=5).split(X, y):
        z[scored] = clone(learner).fit(X[fitted_on], y[fitted_on]).decision_function(X[scored])
    logits = np.column_stack([np.zeros_like(z), z]) if z.ndim == 1 else z
    target = np.searchsorted(labels, y)

    def log_loss(log_t):
        p = softmax(logits / np.exp(log_t), axis=1)
        return -np.mean(np.log(p[np.arange(len(y)), target]))

    best = scipy.optimize.minimize_scalar(_platt_loss(logits, target), bounds=(-12, 12), method="bounded",
                                          options={"xatol": 1e-10})
    assert model.temperature_ == pytest.approx(np.exp(best.x), rel=1e-6)
    assert model.recorded_log_loss_["raw"] == pytest.approx(log_loss(best.x), rel=1e-9)
    proba = model.predict_proba(X)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], reference.predict(X))


@pytest.mark.parametrize("name, params", [("scw2", {"eta": "auto", "C": "auto"}), ("cw-var", {"eta": "auto"})])
def test_self_tuned_halves_are_trained_with_the_values_the_final_fit_chose(name, params):
    """The halves take the final model's tuned_params_ instead of tuning their own: the
    temperature is the one fitted to the out-of-fold scores of such halves."""
    from sklearn.model_selection import StratifiedKFold

    X = random_sparse(400, 30, 0.25, seed=21)
    y = _labels(X, 3, seed=22)
    learner = textcw.make_learner(name, n_epochs=3, random_state=5, **params)
    model = Calibrated(learner, margin="raw").fit(X, y)
    tuned = model.estimator_.tuned_params_
    assert set(tuned) == set(params)
    fixed = clone(learner).set_params(**tuned)
    z = np.zeros((len(y), 3))
    retuned_values = []
    for fitted_on, scored in StratifiedKFold(2, shuffle=True, random_state=5).split(X, y):
        half = clone(fixed).fit(X[fitted_on], y[fitted_on])
        assert not hasattr(half, "tuned_params_")  # nothing left to tune
        z[scored] = half.decision_function(X[scored])
        retuned_values.append(clone(learner).fit(X[fitted_on], y[fitted_on]).tuned_params_)
    target = np.searchsorted(np.unique(y), y)
    best = scipy.optimize.minimize_scalar(_platt_loss(z, target), bounds=(-12, 12), method="bounded",
                                          options={"xatol": 1e-10})
    assert model.temperature_ == pytest.approx(np.exp(best.x), rel=1e-6)
    np.testing.assert_array_equal(model.estimator_.coef_, clone(learner).fit(X, y).coef_)
    # the case is not trivial: a half tuning alone chooses other values
    assert any(values != tuned for values in retuned_values), (tuned, retuned_values)


def test_auto_record_is_progressive_validation_for_one_plain_epoch_else_cross_fit():
    X = random_sparse(300, 20, 0.3, seed=9)
    y = _labels(X, 3, seed=10)
    one = Calibrated(textcw.make_learner("arow", n_epochs=1)).fit(X, y)
    assert one.record_ == "first"
    reference = textcw.make_learner("arow", n_epochs=1).fit(X, y)
    # the recorded pass counts per chunk; the model keeps one count per pass, as fit's does
    assert one.estimator_.mistakes_ == reference.mistakes_ and one.estimator_.n_updates_ == reference.n_updates_
    assert Calibrated(textcw.make_learner("arow", n_epochs=2)).fit(X, y).record_ == "cross-fit"
    tuned = Calibrated(textcw.make_learner("cw-stdev", n_epochs=1, eta="auto")).fit(X, y)
    assert tuned.record_ == "cross-fit"  # "auto" values: fit's own choice, not a chunked re-tuning
    np.testing.assert_array_equal(tuned.estimator_.coef_,
                                  textcw.make_learner("cw-stdev", n_epochs=1, eta="auto").fit(X, y).coef_)
    single = y.copy()
    single[0] = 7  # a label with one document cannot be on both sides of a 2-fold split
    assert Calibrated(textcw.make_learner("arow")).fit(X, single).record_ == "first"
    with pytest.raises(ParameterError, match="every label needs at least 2 documents"):
        Calibrated(textcw.make_learner("arow"), record="cross-fit").fit(X, single)
    with pytest.raises(ParameterError, match="learns in one batch"):
        Calibrated(textcw.make_learner("maxent")).fit(X, single)


@pytest.mark.parametrize("name", ["cw-stdev", "pa1"])
def test_first_pass_curve_counts_every_document_of_fits_first_pass(name):
    from textcw.learners.online_curve import first_pass_curve

    X = random_sparse(237, 15, 0.3, seed=11)
    y = _labels(X, 3, seed=12)
    learner = textcw.make_learner(name, n_epochs=3, random_state=4, **({"eta": "auto"} if name == "cw-stdev" else {}))
    fitted = clone(learner).fit(X, y)
    curve = first_pass_curve(learner, fitted, X, y, points=10)
    assert curve["documents"] == np.linspace(0, 237, 11).round().astype(int)[1:].tolist()
    assert curve["mistakes"][-1] == fitted.mistakes_[0]
    # document by document, in fit's first order, with the chosen values: the running count
    order = np.random.RandomState(4).permutation(237)
    one = textcw.make_learner(name, n_epochs=1, **dict(getattr(fitted, "tuned_params_", {})))
    running = np.cumsum([one.partial_fit(X[[i]], y[[i]], classes=np.unique(y)).mistakes_[-1] for i in order])
    assert curve["mistakes"] == running[np.asarray(curve["documents"]) - 1].tolist()
    assert first_pass_curve(textcw.make_learner("maxent"), textcw.make_learner("maxent").fit(X, y), X, y) is None


def test_temperature_scaling_round_trips_as_plain_data():
    from textcw.learners.temperature import TemperatureScaling

    scaling = TemperatureScaling("standardized", 0.0, "cross-fit", {"raw": 1.0, "standardized": 0.9})
    data = scaling.to_dict()
    assert data["temperature"] is None and data["inverse_temperature"] == 0.0  # JSON has no inf
    assert TemperatureScaling.from_dict(data) == scaling
    with pytest.raises(ParameterError, match="inverse_temperature must be a finite number"):
        TemperatureScaling.from_dict({**data, "inverse_temperature": -1.0})
    with pytest.raises(ParameterError, match="margin must be one of"):
        TemperatureScaling.from_dict({**data, "margin": "sideways"})
