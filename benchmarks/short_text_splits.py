"""Fresh splits of a task: does a row's calibration gap repeat, or is it its split's?

``bench_short_text.py --splits 0,1,2``: every study runs once per seed, ``0`` being the task's own
split and any other seed a fresh stratified split of the task's pooled documents, with as many
test documents as the task's own test set (for newsgroups-subjects, whose own split is by date,
a fresh split is a random one: it measures the same documents without the shift in time). Then
:func:`summary_rows` gives, for every row with probabilities, the mean and standard deviation
over the splits of its accuracy, ECE and confidence minus accuracy, how many splits meet each
calibration goal (the mean probability within 1 point of the accuracy; the ECE at or below the
tuned LogisticRegression's of the same split, where that row was run), and the standard error
of confidence minus accuracy under perfect calibration (``sqrt(sum p (1 - p)) / n`` of the
predicted label's probabilities ``p``, the mean over the splits). A gap that keeps its sign and
size over fresh splits belongs to the learner and its calibration; one that comes and goes
within a few standard errors belongs to the split. A helper of that script, not run by itself.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse
from sklearn.model_selection import train_test_split

LOGISTIC = "LogisticRegression tuned"


def resplit(task, seed: int):
    """The task as it is for ``seed`` 0; otherwise its training and test documents pooled and
    split again (stratified, ``random_state=seed``) with the same number of test documents."""
    if seed == 0:
        return task
    if isinstance(task.X_train, list):  # documents
        X = task.X_train + list(task.X_test)
    elif scipy.sparse.issparse(task.X_train):
        X = scipy.sparse.vstack([task.X_train, task.X_test]).tocsr()
    else:
        X = np.vstack([task.X_train, task.X_test])
    y = np.concatenate([np.asarray(task.y_train), np.asarray(task.y_test)])
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=len(task.y_test), stratify=y,
                                                        random_state=seed)
    return dataclasses.replace(task, X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test)


def with_label_noise(task, rate: float, seed: int):
    """The task with each training label replaced, with probability ``rate``, by another label
    drawn uniformly (``textcw.evaluation.noise.corrupt_labels``, the noise of AROW's experiments:
    Crammer, Kulesza and Dredze, MLJ 2013, sections 5.3-5.4); the test labels stay clean, so
    the measured accuracy is the true one. ``rate`` 0 gives the task as it is."""
    if rate == 0:
        return task
    from textcw.evaluation.noise import corrupt_labels

    y = np.asarray(task.y_train)
    noisy, _ = corrupt_labels(y, rate, np.unique(y), np.random.RandomState(seed))
    return dataclasses.replace(task, y_train=noisy)


def _spread(values) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    return float(values.mean()), float(values.std(ddof=1)) if len(values) > 1 else 0.0


def summary_rows(reports: list[dict]) -> dict:
    """One row per label of every report (one report per split): its accuracy, and for a row
    with probabilities its calibration (the module docstring)."""
    labels = [label for label in reports[0] if all(label in r and "accuracy" in r[label] for r in reports)]
    rows = {}
    for label in labels:
        cells = [r[label] for r in reports]
        row = {"splits": len(cells)}
        row["accuracy_mean"], row["accuracy_sd"] = _spread([c["accuracy"] for c in cells])
        if all("confidence" in c for c in cells):
            gaps = np.array([c["confidence_minus_accuracy"] for c in cells])
            ece = np.array([c["expected_calibration_error"] for c in cells])
            row["ece_mean"] = float(ece.mean())
            row["gap_mean"], row["gap_sd"] = _spread(gaps)
            row["gap_standard_error"] = float(np.mean([c["confidence_standard_error"] for c in cells]))
            row["within_1_point"] = int(np.sum(np.abs(gaps) <= 0.01))
            if label != LOGISTIC and all(LOGISTIC in r for r in reports):
                theirs = np.array([r[LOGISTIC]["expected_calibration_error"] for r in reports])
                row["ece_at_or_below_logistic"] = int(np.sum(ece <= theirs))
        rows[label] = row
    return rows


def accuracy_goals(reports: list[dict]) -> dict:
    """Per split, the best ``textcw train`` row against the best tuned scikit-learn model, and
    ``scw1`` against LinearSVC at its defaults (points; where those rows were run)."""
    goals = {}
    ours = [label for label in reports[0] if label.endswith("textcw train")]
    tuned = [label for label in reports[0] if label.endswith(" tuned")]
    if ours and tuned:
        goals["best textcw train minus best tuned"] = [
            100 * (max(r[k]["accuracy"] for k in ours) - max(r[k]["accuracy"] for k in tuned)) for r in reports]
    if "scw1 textcw train" in reports[0] and "LinearSVC default" in reports[0]:
        goals["scw1 minus LinearSVC default"] = [
            100 * (r["scw1 textcw train"]["accuracy"] - r["LinearSVC default"]["accuracy"]) for r in reports]
    return goals


def summary_markdown(task: str, rows: dict, goals: dict) -> str:
    def cell(row, key, form):
        return form.format(row[key]) if key in row else "-"

    lines = [f"### {task}: over {next(iter(rows.values()))['splits'] if rows else 0} splits", "",
             "| model | accuracy (mean ± sd) | ECE (mean) | confidence - accuracy, points (mean ± sd) | "
             "its standard error (points) | splits within 1 point | splits with ECE <= tuned LogisticRegression's |",
             "|---|---|---|---|---|---|---|"]
    for label, r in rows.items():
        gap = f"{100 * r['gap_mean']:+.1f} ± {100 * r['gap_sd']:.1f}" if "gap_mean" in r else "-"
        lines.append(f"| {label} | {r['accuracy_mean']:.3f} ± {r['accuracy_sd']:.3f} | {cell(r, 'ece_mean', '{:.3f}')} | "
                     f"{gap} | {cell(r, 'gap_standard_error', '{:.2%}').rstrip('%')} | "
                     f"{cell(r, 'within_1_point', '{}')} | {cell(r, 'ece_at_or_below_logistic', '{}')} |")
    for name, points in goals.items():
        lines.append(f"\n{name} (points, per split): " + ", ".join(f"{p:+.1f}" for p in points))
    return "\n".join(lines)
