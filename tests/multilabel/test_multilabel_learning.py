"""MultiLabel: any binary learner one-vs-rest in one pass, calibrated per label, with thresholds
chosen on honest scores; label sets and indicator matrices; partial_fit; save/load."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification
from sklearn.multiclass import OneVsRestClassifier

import textcw
from textcw import persist
from textcw.errors import InputError, ParameterError
from textcw.learners.multilabel import MultiLabel
import textcw.learners.label_temperatures as label_temperatures_module
from textcw.learners.label_temperatures import inverse_temperatures, label_margins, label_temperatures
from textcw.learners.multilabel_targets import FALLBACK_THRESHOLD, as_indicator, f1_thresholds, micro_f1
from textcw.learners.temperature import as_logits, fit_inverse_temperature, normalized_scores, standardized_scores


def data(n=500, k=5, seed=0):
    X, Y = make_multilabel_classification(n_samples=n, n_features=40, n_classes=k, random_state=seed)
    assert Y.sum(axis=0).min() > n // 10 and (Y.sum(axis=0) < n).all()  # every label both ways
    return sp.csr_matrix(X.astype(float)), Y


def as_sets(Y):
    return [[f"t{j}" for j in np.flatnonzero(row)] for row in Y]


@pytest.mark.parametrize("name", ["scw1", "arow", "pa1", "perceptron", "pa2"])
def test_each_label_is_the_learners_own_fit_bit_for_bit(name):
    X, Y = data()
    learner = textcw.make_learner(name, n_epochs=3)
    model = MultiLabel(learner, record="first").fit(X, Y)
    reference = OneVsRestClassifier(learner).fit(X, Y)  # scikit-learn's one fit per label
    assert np.array_equal(model.decision_function(X), reference.decision_function(X))
    for label, est in enumerate(model.estimators_):
        own = clone(learner).fit(X, Y[:, label])
        assert np.array_equal(est.coef_, own.coef_)
        assert est.mistakes_ == own.mistakes_ and len(est.mistakes_) == 3
        assert est.n_updates_ == own.n_updates_


def test_partial_fit_batches_equal_one_unshuffled_pass():
    X, Y = data()
    learner = textcw.make_learner("arow", n_epochs=1, shuffle=False)
    fitted = MultiLabel(learner, chunk_size=7).fit(X, as_sets(Y))
    stream = MultiLabel(learner)
    for start in range(0, X.shape[0], 120):
        stream.partial_fit(X[start:start + 120], as_sets(Y[start:start + 120]),
                           classes=[f"t{j}" for j in range(Y.shape[1])])
    for a, b in zip(fitted.estimators_, stream.estimators_):
        assert np.array_equal(a.coef_, b.coef_)
    assert stream.n_honest_scores_ == X.shape[0]
    assert stream.classes_.tolist() == fitted.classes_.tolist() == [f"t{j}" for j in range(5)]


def test_label_sets_in_label_sets_out_and_indicator_in_indicator_out():
    X, Y = data()
    learner = textcw.make_learner("scw1", n_epochs=1)
    by_sets = MultiLabel(learner).fit(X, as_sets(Y))
    by_matrix = MultiLabel(learner).fit(X, Y)
    predicted = by_sets.predict(X[:20])
    rows = by_matrix.predict(X[:20])
    assert isinstance(predicted, list) and rows.shape == (20, 5)
    assert predicted == [tuple(f"t{j}" for j in np.flatnonzero(r)) for r in rows]
    assert by_matrix.classes_.tolist() == [0, 1, 2, 3, 4]
    assert np.array_equal(by_sets.thresholds_, by_matrix.thresholds_)
    assert 0.5 < by_sets.score(X, as_sets(Y)) == by_matrix.score(X, Y) <= 1.0


def test_probabilities_are_each_labels_temperature_on_its_own_margin():
    X, Y = data()
    model = MultiLabel(textcw.make_learner("arow", n_epochs=1)).fit(X[:400], Y[:400])
    assert model.record_ == "first"
    proba, scores = model.predict_proba(X[400:]), model.decision_function(X[400:])
    for label, (est, scaling) in enumerate(zip(model.estimators_, model.scalings_)):
        if scaling.margin == "standardized":
            z = standardized_scores(scores[:, label], est.margin_variance(X[400:]))
        else:
            z = normalized_scores(scores[:, label], np.full(100, np.linalg.norm(est.coef_)))
        assert np.allclose(proba[:, label], expit(scaling.inverse_temperature * z), rtol=0, atol=1e-15)
    expected = (proba > model.thresholds_).astype(int)
    assert np.array_equal(model.predict(X[400:]), expected)


def test_first_pass_scores_come_from_models_that_had_not_seen_the_document():
    X, Y = data(n=300)
    learner = textcw.make_learner("arow", n_epochs=1, shuffle=False)
    model = MultiLabel(learner, chunk_size=50).fit(X, Y)
    recorded = model.recorded_
    assert np.all(recorded["scores"][0] == 0.0)  # the first document is scored by an empty model
    # chunks 1, 1, 2, 4, ..., 32, then 50: documents 64..113 are scored by the model of 0..63
    before = MultiLabel(learner).fit(X[:64], Y[:64])
    assert np.allclose(recorded["scores"][64:114], before.decision_function(X[64:114]), rtol=1e-6, atol=0)
    variances = np.column_stack([m.margin_variance(X[64:114]) for m in before.estimators_])
    assert np.allclose(recorded["variances"][64:114], variances, rtol=1e-6, atol=0)  # stored as float32
    norms = [np.linalg.norm(m.coef_) for m in before.estimators_]
    assert np.allclose(recorded["norms"][64], norms, rtol=1e-6)


def test_cross_fit_is_the_default_for_several_epochs_and_leaves_the_final_models_alone():
    X, Y = data()
    learner = textcw.make_learner("scw1", n_epochs=2)
    model = MultiLabel(learner).fit(X, Y)
    assert model.record_ == "cross-fit" and model.record_f1_ == {}
    first = MultiLabel(learner, record="first").fit(X, Y)
    assert np.array_equal(model.decision_function(X), first.decision_function(X))
    assert model.n_honest_scores_ == X.shape[0]


def held_out_f1(learner, X, Y):
    """The two sources' held-out micro-F1 as the module docstring defines it, rebuilt from public
    fits: each half's models with their own first pass's cuts, and with cuts fitted to the other
    half's models' scores of their documents."""
    from sklearn.metrics import f1_score
    from sklearn.model_selection import KFold

    from textcw.learners.multilabel_scores import HonestScores

    n = X.shape[0]
    (a, b), (b2, a2) = KFold(2, shuffle=True, random_state=learner.random_state).split(np.zeros((n, 1)))
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    halves = {0: MultiLabel(learner, record="first").fit(X[a], Y[a]),
              1: MultiLabel(learner, record="first").fit(X[b], Y[b])}
    truth = np.vstack([Y[b], Y[a]])
    first = np.vstack([halves[0].predict_indicator(X[b]), halves[1].predict_indicator(X[a])])
    cross = []
    for mine, other, rows, scored in ((0, 1, a, b), (1, 0, b, a)):
        honest = HonestScores(len(rows), Y.shape[1], True)
        honest.score(halves[other].estimators_, X[rows], np.arange(len(rows)))
        probe = MultiLabel(learner).fit(X[rows], Y[rows])  # replaced below: only its shape is kept
        probe.estimators_ = halves[mine].estimators_
        probe.__dict__.pop("recorded_")
        probe._remember(honest.arrays(), Y[rows])
        probe._calibrate()
        cross.append(probe.predict_indicator(X[scored]))
    return {"first": f1_score(truth, first, average="micro"), "cross-fit": f1_score(truth, np.vstack(cross), average="micro")}


@pytest.mark.parametrize("seed", [0, 3])  # cross-fit wins on the first, the first pass on the second
def test_best_with_several_epochs_takes_the_source_whose_cuts_do_better_held_out(seed, tmp_path):
    X, Y = data(n=400, seed=seed)
    learner = textcw.make_learner("arow", n_epochs=3)
    model = MultiLabel(learner, record="best").fit(X, Y)
    expected = held_out_f1(learner, X, Y)
    assert model.record_f1_ == pytest.approx(expected, abs=1e-12)
    chosen = "first" if expected["first"] > expected["cross-fit"] else "cross-fit"
    assert model.record_ == chosen == ("cross-fit" if seed == 0 else "first")
    # the final models are the same whichever source won; the cuts are that source's own
    explicit = MultiLabel(learner, record=chosen).fit(X, Y)
    assert np.array_equal(model.decision_function(X), explicit.decision_function(X))
    assert np.array_equal(model.thresholds_, explicit.thresholds_)
    assert model.calibration_ == explicit.calibration_
    # one epoch: the first pass is the final model's own honest record, nothing is compared
    one = MultiLabel(textcw.make_learner("arow", n_epochs=1), record="best").fit(X, Y)
    assert one.record_ == "first" and one.record_f1_ == {}
    # saved and loaded, the choice and the comparison stay with the model
    loaded = persist.load(persist.save(model, tmp_path / "m.textcw-model"))
    assert loaded.record_ == model.record_ and loaded.record_f1_ == model.record_f1_


def test_f1_thresholds_exact_on_a_small_case():
    proba = np.array([[0.9, 0.2], [0.8, 0.2], [0.6, 0.1], [0.3, 0.1], [0.1, 0.05]])
    Y = np.array([[1, 0], [0, 0], [1, 0], [1, 0], [0, 0]])
    # label 0: cuts keep 1 doc (F1 2/4), 2 (2/5), 3 (4/6), 4 (6/7), 5 (6/8): best keeps 4 docs
    thresholds = f1_thresholds(proba, Y)
    assert thresholds[0] == pytest.approx(0.2)  # halfway between 0.3 (kept) and 0.1 (left out)
    assert thresholds[1] == FALLBACK_THRESHOLD  # no positive document
    tied = f1_thresholds(np.array([[0.7], [0.7], [0.2]]), np.array([[1], [0], [0]]))
    assert tied[0] == pytest.approx(0.45)  # the two 0.7s cannot be split


def test_f1_thresholds_match_brute_force():
    rng = np.random.default_rng(3)
    proba, Y = rng.random((200, 6)), (rng.random((200, 6)) < 0.2).astype(np.uint8)
    proba[:, :3] += 0.5 * Y[:, :3]  # three informative labels, three noise
    thresholds = f1_thresholds(proba, Y, fbr=0.0)
    for label in range(6):
        def f1(t):
            pred = proba[:, label] >= t
            tp = np.sum(pred & (Y[:, label] == 1))
            return 2 * tp / (pred.sum() + Y[:, label].sum())
        best = max(f1(t) for t in proba[:, label])
        if thresholds[label] == FALLBACK_THRESHOLD:  # only where keeping every document is best
            assert best == f1(proba[:, label].min())
        else:
            assert f1(thresholds[label]) == best
    # SCut.FBR: a best F1 below fbr falls back to 1/2
    assert f1_thresholds(proba, Y, fbr=1.0).tolist() == [FALLBACK_THRESHOLD] * 6


def test_label_temperatures_are_fit_inverse_temperature():
    """Every column's root is the one Brent's method gives for that label alone (to its 1e-12
    relative tolerance): noisy, separable, anti-correlated, constant and tiny columns together."""
    rng = np.random.default_rng(5)
    n = 500
    z = rng.normal(size=n)
    y = (z + rng.normal(size=n) > 0).astype(np.uint8)
    columns = [(z, y), (1e-3 * z, y), (3e4 * z, y), (z, (z > 0).astype(np.uint8)),  # separable: finite by Platt
               (-z, y), (np.zeros(n), y), (z, np.zeros(n, dtype=np.uint8)), (z, np.ones(n, dtype=np.uint8)),
               (np.abs(z) * np.where(y == 1, 1.0, -1.0) + 5.0, y)]
    Z = np.column_stack([c for c, _ in columns])
    Y = np.column_stack([t for _, t in columns])
    betas, losses = inverse_temperatures(Z, Y)
    for k, (column, labels) in enumerate(columns):
        assert betas[k] == pytest.approx(fit_inverse_temperature(as_logits(column), labels), rel=1e-11, abs=0), k
    assert betas[4] == betas[5] == 0.0  # no better than chance, no information
    for k, (column, labels) in enumerate(columns):
        sign = np.where(labels == 1, 1.0, -1.0)
        assert losses[k] == pytest.approx(-np.mean(np.log(expit(sign * betas[k] * column))), rel=1e-12), k
    assert losses[5] == pytest.approx(np.log(2.0))
    # blocks of labels give the same roots as one block (to the root's tolerance: numpy's sums of
    # a row may group its terms differently in a block of another shape)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(label_temperatures_module, "BLOCK_ELEMENTS", 2 * n)
        assert inverse_temperatures(Z, Y)[0] == pytest.approx(betas, rel=1e-11, abs=0)
    scalings = label_temperatures({"normalized": Z, "standardized": 2 * Z}, Y, "first")
    assert [s.margin for s in scalings] == ["normalized"] * Z.shape[1]  # equal fits: the first kind tried
    assert [s.inverse_temperature for s in scalings] == pytest.approx(betas.tolist(), rel=1e-9)
    assert [a.tolist() for a in inverse_temperatures(np.zeros((0, 3)), np.zeros((0, 3), dtype=np.uint8))] == [[0.0] * 3] * 2


def test_label_margins_match_one_label_helpers():
    rng = np.random.default_rng(2)
    scores, variances, norms = rng.normal(size=(6, 3)), rng.uniform(size=(6, 3)), rng.uniform(size=(6, 3))
    variances[0, 1], norms[2, 2] = 0.0, 0.0
    for k in range(3):
        assert np.array_equal(label_margins("standardized", scores, variances, norms)[:, k],
                              standardized_scores(scores[:, k], variances[:, k]))
        assert np.array_equal(label_margins("normalized", scores, variances, norms)[:, k],
                              normalized_scores(scores[:, k], norms[:, k]))
    assert np.array_equal(label_margins("raw", scores, None, norms), scores)


def test_fixed_threshold_and_save_load_round_trip(tmp_path):
    X, Y = data()
    model = MultiLabel(textcw.make_learner("arow", n_epochs=1), threshold=0.5).fit(X, as_sets(Y))
    assert model.thresholds_.tolist() == [0.5] * 5
    path = persist.save(model, tmp_path / "tags.textcw-model")
    loaded = persist.load(path)
    assert loaded.predict(X) == model.predict(X)
    assert np.array_equal(loaded.predict_proba(X), model.predict_proba(X))
    loaded.partial_fit(X[:50], as_sets(Y[:50]))  # a loaded model keeps learning
    assert loaded.n_honest_scores_ == X.shape[0] + 50


def test_bad_targets_and_streams_are_refused_in_one_line():
    X, Y = data(n=60)
    learner = textcw.make_learner("arow")
    with pytest.raises(InputError, match="single value, not a collection of labels"):
        MultiLabel(learner).fit(X, ["a"] * 60)
    with pytest.raises(InputError, match="not a 0/1 indicator matrix"):
        MultiLabel(learner).fit(X, Y * 2)
    with pytest.raises(InputError, match="59 label sets but X has 60"):
        MultiLabel(learner).fit(X, as_sets(Y)[:59])
    with pytest.raises(InputError, match="needs classes="):
        MultiLabel(learner).partial_fit(X, as_sets(Y))
    stream = MultiLabel(learner).partial_fit(X, as_sets(Y), classes=["t0", "t1", "t2", "t3", "t4"])
    with pytest.raises(InputError, match=r"labels \['new'\] are not among the model's 5 labels"):
        stream.partial_fit(X[:2], [["new"], ["t0"]])
    with pytest.raises(ParameterError, match="threshold must be"):
        MultiLabel(learner, threshold=1.5).fit(X, Y)
    with pytest.raises(ParameterError, match="'auto' hyperparameters"):
        MultiLabel(textcw.make_learner("scw1", C="auto")).fit(X, Y)
    with pytest.raises(ParameterError, match="needs a Gaussian learner"):
        MultiLabel(textcw.make_learner("pa1"), margin="standardized").fit(X, Y)


def test_as_indicator_keeps_declared_columns():
    indicator, classes, form = as_indicator([["b"], [], ["a", "b"]], 3, np.array(["a", "b", "c"]))
    assert form == "sets" and classes.tolist() == ["a", "b", "c"]
    assert indicator.tolist() == [[0, 1, 0], [0, 0, 0], [1, 1, 0]]


def test_micro_f1_is_scikit_learns_bit_for_bit():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(3)
    for density in (0.0, 0.05, 0.5):
        truth, predicted = rng.random((200, 7)) < density, rng.random((200, 7)) < 0.3
        for a, b in ((truth, predicted), (truth, truth), (predicted & False, predicted & False)):
            assert micro_f1(a, b) == f1_score(a, b, average="micro", zero_division=0)


def test_f1_thresholds_do_not_depend_on_the_order_of_the_documents():
    """Probabilities with many ties, in any row order: the same cuts, bit for bit (so the sort
    of each label's probabilities need not be stable)."""
    rng = np.random.default_rng(4)
    for trial in range(40):
        n, k, levels = int(rng.integers(2, 200)), int(rng.integers(1, 5)), int(rng.integers(1, 9))
        proba = rng.integers(0, levels + 1, size=(n, k)) / levels if levels > 1 else rng.random((n, k))
        Y = (rng.random((n, k)) < 0.3).astype(np.uint8)
        want = f1_thresholds(proba, Y)
        for _ in range(3):
            rows = rng.permutation(n)
            assert f1_thresholds(proba[rows], Y[rows]).tobytes() == want.tobytes(), trial
