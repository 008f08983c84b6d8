"""``--plot-format`` of ``textcw evaluate`` and ``textcw reproduce``: SVG files that parse as SVG,
PNG by default, both when asked for, and clear errors for a bad value."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from cli_run import one_line_error, run

pytest.importorskip("matplotlib")

SVG = "{http://www.w3.org/2000/svg}"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# two learners, one with probabilities (cw-var) and one without (perceptron); synthetic text
# needs no corpus file
EVALUATE = ["evaluate", "--corpus", "synthetic-text:300", "--learner", "perceptron,cw-var", "--folds", "2"]
STEMS = ["curve-synthetic-text_300", "online-synthetic-text_300", "reliability-synthetic-text_300"]


def x_extent(group) -> tuple[float, float]:
    """The horizontal extent of the first path drawn in an SVG group (an axes' or a legend's
    background patch)."""
    path = next(group.iter(f"{SVG}path"))
    xs = [float(x) for x, _ in re.findall(r"(-?[\d.]+) (-?[\d.]+)", path.get("d"))]
    return min(xs), max(xs)


def check_svg(path) -> ET.Element:
    """``path`` parses as XML with an ``<svg>`` root, and every legend in it stands to the right
    of its axes and inside the drawing."""
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    width = float(root.get("viewBox").split()[2])
    axes = [g for g in root.iter(f"{SVG}g") if (g.get("id") or "").startswith("axes_")]
    with_legend = [(ax, legend) for ax in axes for legend in ax
                   if (legend.get("id") or "").startswith("legend_")]
    assert with_legend, f"{path.name} has no legend"
    for ax, legend in with_legend:
        _, axes_right = x_extent(ax)
        legend_left, legend_right = x_extent(legend)
        assert axes_right < legend_left and legend_right <= width, (path.name, ax.get("id"))
    return root


def test_svg_figures_are_written_and_parse_as_svg(capsys, tmp_path):
    code, _, err = run(capsys, *EVALUATE, "--plot", tmp_path, "--plot-format", "svg")
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{stem}.svg" for stem in STEMS]
    for stem in STEMS:
        check_svg(tmp_path / f"{stem}.svg")
        assert f"wrote {tmp_path / stem}.svg" in err
    # matplotlib writes each text as glyphs with the string in a comment beside them: the
    # reliability diagram names the learner with probabilities in its legend and the one without
    # under the figure
    reliability = (tmp_path / "reliability-synthetic-text_300.svg").read_text(encoding="utf-8")
    assert "<!-- cw-var -->" in reliability and "<!-- no probabilities: perceptron -->" in reliability


def test_png_is_the_default(capsys, tmp_path):
    code, _, err = run(capsys, *EVALUATE, "--plot", tmp_path)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{stem}.png" for stem in STEMS]
    assert all((tmp_path / f"{stem}.png").read_bytes()[:8] == PNG_MAGIC for stem in STEMS)


@pytest.mark.parametrize("formats", [["svg,png"], ["svg", "png"], [" PNG , svg", "png"]])
def test_both_formats_repeated_or_comma_separated(capsys, tmp_path, formats):
    options = [item for fmt in formats for item in ("--plot-format", fmt)]
    code, _, err = run(capsys, *EVALUATE, "--plot", tmp_path, *options)
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{s}.{f}" for s in STEMS for f in ("png", "svg"))


@pytest.mark.parametrize("command", [EVALUATE, ["reproduce", "nips-synthetic", "--quick"]])
@pytest.mark.parametrize("value", ["pdf", "png,", "svg,jpg"])
def test_a_bad_format_is_a_usage_error_naming_the_choices(capsys, tmp_path, command, value):
    code, out, err = run(capsys, *command, "--plot", tmp_path / "fig", "--plot-format", value)
    assert code == 2 and out == ""
    bad = value.split(",")[-1]
    message = " ".join(line.strip("│ ") for line in err.splitlines())  # typer's boxed usage error
    assert f"Invalid value for '--plot-format': '{bad}' is not one of 'png', 'svg'" in message
    assert not (tmp_path / "fig").exists()  # refused before anything ran


@pytest.mark.parametrize("command", [EVALUATE, ["reproduce", "nips-synthetic", "--quick"]])
def test_a_format_without_plot_is_refused(capsys, command):
    code, out, err = run(capsys, *command, "--plot-format", "svg")
    assert code == 2 and out == ""
    assert one_line_error(err) == "error: --plot-format sets the format of the --plot figures; give --plot DIR too"


def test_reproduce_writes_its_figures_as_svg(capsys, tmp_path):
    code, out, err = run(capsys, "reproduce", "nips-synthetic", "--quick", "--plot", tmp_path, "--plot-format", "svg")
    assert "quick run in" in out and code in (0, 1), err  # 1: a check against the paper failed
    assert [p.name for p in tmp_path.iterdir()] == ["nips-synthetic-mistakes.svg"]
    check_svg(tmp_path / "nips-synthetic-mistakes.svg")
