"""Draws docs/figures/gaussian-over-weights.{png,svg}: the Gaussian a CW learner keeps over its
weights, and how its variances shrink as examples arrive.

The data is textcw's ``synthetic`` task (NIPS 2008 section 5): two informative coordinates
from a Gaussian rotated by 45 degrees and 18 noise coordinates. ``cw-stdev`` with
``covariance="full"`` learns it one example at a time (``partial_fit``, unshuffled), and the
figure shows

- left: the one-standard-deviation ellipse of ``N(mu, Sigma)`` over the two informative weights
  after 0, 5, 20, 100 and 1,000 examples, with its centre ``mu``;
- right: every weight's variance ``Sigma_jj`` against the examples seen (log scales), the two
  informative weights apart from the 18 noise weights.

Run from the repository root: ``python docs/figures/gaussian_over_weights.py`` (needs the
``plot`` extra). Deterministic: the corpus and the learner are seeded.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import textcw
from textcw.evaluation.plot import legend_beside, require_matplotlib, save_figure

OUT = Path(__file__).resolve().parent
SNAPSHOTS = (0, 5, 20, 100, 1000)


def trajectory(n_examples: int = 1000):
    """``(mu, Sigma)`` after each of the first ``n_examples`` training examples."""
    train = textcw.load_corpus("synthetic", split="train")
    featurizer = textcw.make_featurizer("precomputed")
    X = featurizer.fit_transform(train.data[:n_examples])
    y = np.asarray(train.labels[:n_examples])
    classes = sorted(set(train.labels))
    learner = textcw.make_learner("cw-stdev", covariance="full")
    d = X.shape[1]
    means, covariances = [np.zeros(d)], [np.eye(d) * learner.a]
    for i in range(n_examples):
        learner.partial_fit(X[i], y[i:i + 1], classes=classes)
        means.append(learner.coef_.ravel().copy())
        covariances.append(np.array(learner.covariance_).reshape(d, d).copy())
    return np.array(means), np.array(covariances)


def ellipse(mean, cov, n: int = 200):
    """Points of the one-standard-deviation contour of ``N(mean, cov)`` in two dimensions."""
    values, vectors = np.linalg.eigh(cov)
    angle = np.linspace(0, 2 * np.pi, n)
    circle = np.stack([np.cos(angle), np.sin(angle)])
    return (vectors @ (np.sqrt(values)[:, None] * circle)).T + mean


def draw(means, covariances, path) -> Path:
    """The two panels, written to ``path`` (PNG or SVG by its suffix)."""
    plt = require_matplotlib()
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4))
    for n in SNAPSHOTS:
        points = ellipse(means[n, :2], covariances[n, :2, :2])
        line, = left.plot(points[:, 0], points[:, 1], label=f"after {n:,} examples")
        left.plot(*means[n, :2], marker="o", color=line.get_color())
    left.set_xlabel("weight of informative feature 1")
    left.set_ylabel("weight of informative feature 2")
    left.set_title("N(mu, Sigma) over two weights: 1-sd ellipse and mean")
    left.set_aspect("equal", adjustable="datalim")
    left.grid(alpha=0.3)
    legend_beside(left)
    seen = np.arange(1, len(means))
    variances = np.diagonal(covariances, axis1=1, axis2=2)[1:]
    right.loglog(seen, variances[:, 2:], color="tab:grey", alpha=0.5, linewidth=0.8)
    right.loglog(seen, variances[:, 0], color="tab:red", label="informative 1")
    right.loglog(seen, variances[:, 1], color="tab:blue", label="informative 2")
    right.plot([], [], color="tab:grey", label="18 noise features")
    right.set_xlabel("examples seen")
    right.set_ylabel("variance of the weight, Sigma_jj")
    right.set_title("the variances shrink as examples arrive")
    right.grid(alpha=0.3, which="both")
    legend_beside(right)
    return save_figure(fig, path)


def main() -> list[Path]:
    means, covariances = trajectory(max(SNAPSHOTS))
    return [draw(means, covariances, OUT / f"gaussian-over-weights.{fmt}") for fmt in ("png", "svg")]


if __name__ == "__main__":
    for path in main():
        print(path)
