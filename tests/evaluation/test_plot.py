"""The figures: PNG and SVG files, legends beside the curves, the whole probability axis, and
every learner asked for in a reliability diagram."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from textcw.errors import InputError  # noqa: E402
from textcw.evaluation import plot  # noqa: E402
from textcw.evaluation.calibration import calibration_report, plot_calibration  # noqa: E402
from textcw.evaluation.suite import run_suite  # noqa: E402

CURVES = {f"learner-{k}": [80.0 + k + 0.5 * p for p in range(6)] for k in range(8)}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def drawn(monkeypatch):
    """Every figure saved during the test, inspected before it is closed: ``[(path, fig facts)]``."""
    seen = []
    save = plot.save_figure

    def recording_save(fig, path):
        fig.tight_layout()  # as save_figure does, then draw, so that extents are final
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        axes = []
        for ax in fig.axes:
            legend = ax.get_legend()
            axes.append({
                "xlim": ax.get_xlim(), "ylim": ax.get_ylim(), "lines": len(ax.get_lines()), "xlabel": ax.get_xlabel(),
                "box": ax.get_window_extent(renderer),
                "legend": None if legend is None else (legend.get_window_extent(renderer),
                                                       [t.get_text() for t in legend.get_texts()]),
            })
        seen.append((path, {"axes": axes, "texts": [t.get_text() for t in fig.texts]}))
        return save(fig, path)

    monkeypatch.setattr(plot, "save_figure", recording_save)
    return seen


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_a_learning_curve_is_written_in_the_format_its_suffix_names(tmp_path, suffix):
    path = plot.plot_learning_curves(CURVES, tmp_path / f"curve{suffix}", title="eight learners")
    content = path.read_bytes()
    if suffix == ".png":
        assert content[:8] == PNG_MAGIC
    else:
        text = content.decode("utf-8")
        assert text.lstrip().startswith("<?xml") and "<svg" in text and text.rstrip().endswith("</svg>")
        # every learner is named in the file (matplotlib writes text as glyph paths with the string
        # in a comment)
        assert all(label in text for label in CURVES)


def test_an_unknown_figure_format_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"cannot write a figure as curve\.jpg: the suffix must be one of "
                                         r"\.png, \.svg"):
        plot.plot_learning_curves(CURVES, tmp_path / "curve.jpg")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("draw", ["curves", "online", "noise"])
def test_the_legend_stands_beside_the_axes_and_hides_no_line(tmp_path, drawn, draw):
    from textcw.evaluation.online import OnlineCurve

    if draw == "curves":
        plot.plot_learning_curves(CURVES, tmp_path / "f.png")
    elif draw == "online":
        plot.plot_online([OnlineCurve(learner=name, positions=[1, 2, 3], mistakes=[1, 1, 2])
                          for name in CURVES], tmp_path / "f.png")
    else:
        plot.plot_noise([0.0, 0.1, 0.2], {name: [5.0, 6.0, 7.0] for name in CURVES}, tmp_path / "f.png")
    (_, facts), = drawn
    ax, = facts["axes"]
    legend_box, labels = ax["legend"]
    assert labels == list(CURVES)
    assert legend_box.x0 >= ax["box"].x1  # entirely to the right of the plotting area
    from matplotlib.image import imread

    height, width, _ = imread(tmp_path / "f.png").shape
    assert width >= legend_box.x1 * 0.99  # and inside the saved image, not cut off


def test_reliability_shows_the_whole_probability_axis_and_every_learner(tmp_path, drawn):
    rng = np.random.default_rng(0)
    confident = rng.uniform(0.9, 1.0, 50)  # every document in the top bin: a single point
    series = {"cw-var": (rng.uniform(0.5, 1.0, 200), rng.random(200) < 0.8),
              "arow": (confident, np.ones(50, dtype=bool))}
    path = plot.plot_reliability(series, tmp_path / "r.svg", title="t", without=["pa1", "perceptron"])
    assert path.read_text(encoding="utf-8").rstrip().endswith("</svg>")
    (_, facts), = drawn
    top, bottom = facts["axes"]
    assert top["xlim"] == bottom["xlim"] == (0.0, 1.0)
    assert top["ylim"] == (0.0, 1.02)
    assert top["legend"][1] == ["perfectly calibrated", "cw-var", "arow"]
    assert top["lines"] == 3  # the diagonal and one line per learner, the one-point learner included
    assert facts["texts"] == ["no probabilities: pa1, perceptron"]
    # the probabilities drawn are named: the learner's own, not the calibrated ones train saves
    assert bottom["xlabel"] == ("probability of the predicted label\n(the learner's own predict_proba; "
                                "models saved by textcw train are calibrated)")


def test_reliability_without_any_probabilities_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"no learner with probabilities .* \(no probabilities: pa1\)"):
        plot.plot_reliability({}, tmp_path / "r.png", without=["pa1"])


def test_calibration_panels_show_the_whole_probability_axis(tmp_path, drawn):
    classes = np.array(["a", "b", "c"])
    proba = np.array([[0.5, 0.3, 0.2], [0.2, 0.7, 0.1], [0.1, 0.1, 0.8], [0.4, 0.35, 0.25]])
    report = calibration_report(proba, np.array(["a", "b", "c", "b"]), classes, learner="cw-var")
    path = plot_calibration([report], tmp_path / "c.svg", title="toy")
    assert "<svg" in path.read_text(encoding="utf-8")
    (_, facts), = drawn
    entropy, counts, shares, diagram = facts["axes"]
    assert counts["xlim"] == shares["xlim"] == diagram["xlim"] == (0.0, 1.0)
    assert diagram["legend"][0].x0 >= diagram["box"].x1


def test_suite_figures_in_every_format_asked_for_with_every_learner(regs, tmp_path):
    report = run_suite(["toy:binary"], ["perceptron", "cw-var"], folds=2, curves=True, probabilities=True)
    written = plot.suite_figures(report, tmp_path, formats=("png", "svg"))
    assert sorted(p.name for p in written) == sorted(p.name for p in tmp_path.iterdir()) == [
        "curve-toy_binary.png", "curve-toy_binary.svg", "reliability-toy_binary.png", "reliability-toy_binary.svg"]
    svg = (tmp_path / "reliability-toy_binary.svg").read_text(encoding="utf-8")
    assert "cw-var" in svg and "no probabilities: perceptron" in svg
    assert [p.suffix for p in plot.suite_figures(report, tmp_path / "png")] == [".png", ".png"]
    with pytest.raises(InputError, match="suffix must be one of"):
        plot.suite_figures(report, tmp_path, formats=("pdf",))
