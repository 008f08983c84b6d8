"""The plugin as users meet it: through the entry point, and training on USPS."""

from __future__ import annotations

import numpy as np
import pytest
from textcw.pipeline import train
from textcw.plugins import default_registries
from textcw.testing import check_plugin, parametrize_with_checks, plugin_components

import textcw_pixels.plugin
from pixels_fixtures import data_home  # noqa: F401 (pytest fixtures)


def halves(n: int, seed: int) -> tuple[list[np.ndarray], list[str]]:
    """16 x 16 images with ink scattered in the top or in the bottom half: two learnable classes."""
    rng = np.random.default_rng(seed)
    images, labels = [], []
    for k in range(n):
        image = -np.ones((16, 16))
        rows = rng.integers(0, 8, 20) + (8 if k % 2 else 0)
        image[rows, rng.integers(0, 16, 20)] = rng.uniform(0, 1, 20)
        images.append(image.ravel())
        labels.append("bottom" if k % 2 else "top")
    return images, labels


def test_registered_through_the_entry_point():
    regs = default_registries()
    assert regs.featurizers.get("pixel-pairs").provider == "textcw-pixels"
    entry = regs.corpora.get("usps")
    assert entry.provider == "textcw-pixels" and entry.featurizer == "pixels"
    assert set(entry.tasks) == {"all", "0v9", "1v2", "3v4", "5v6", "7v8"}
    assert set(entry.task_patterns) == {"AvB", "Avall"}


def test_passes_the_plugin_checks():
    """Registration and installation; the featurizers are checked one check at a time below."""
    check_plugin(textcw_pixels.plugin, distribution="textcw-pixels", check_components=False)


IMAGES = halves(30, 0)


# Each registered featurizer, built by name as users build it: one test per check.
@parametrize_with_checks(plugin_components(textcw_pixels.plugin,
                                           featurizer_data={"pixels": IMAGES, "pixel-pairs": IMAGES}))
def test_featurizers_pass_the_kit_checks(component, check):
    check(component)


@pytest.mark.corpus
def test_usps_0v9_with_pixel_pairs_matches_the_paper(data_home, monkeypatch):
    monkeypatch.setenv("TEXTCW_OFFLINE", "1")
    result = train("usps:0v9", "cw-var", featurizer="pixel-pairs")
    assert (result.n_train, result.n_test, result.n_features) == (1838, 536, 32896)
    # JMLR 2012 Table 3: 0.56% error for every CW variant on USPS 0 vs 9
    assert 1 - result.accuracy < 0.02
