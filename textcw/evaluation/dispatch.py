"""Build registered evaluation components by name and run them: what ``textcw evaluate`` does.

Components are written as learners are, ``NAME[:KEY=VALUE...]`` (``cv:folds=5``,
``cost-error:costs=costs.csv``); values are read as JSON when they parse. The class a name is
registered with declares its options (:mod:`textcw.evaluation.contract`): any other is a
:class:`~textcw.errors.ParameterError` with the nearest declared name, before any work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from textcw.errors import ParameterError, PluginError, TextcwError, UnknownNameError
from textcw.evaluation.contract import Comparison, Design, Metric, check_metrics, check_options
from textcw.evaluation.specs import LearnerSpec, split_list

__all__ = ["build", "build_all", "run_evaluation"]

BASES = {"evaluators": Design, "metrics": Metric, "comparisons": Comparison}
SINGULAR = {"evaluators": "design", "metrics": "metric", "comparisons": "comparison"}


def build(kind: str, text: str, named: Mapping[str, Any] | None = None) -> tuple[str, Any]:
    """``(name, component)`` for ``NAME[:KEY=VALUE...]`` registered under ``kind``
    (``evaluators``, ``metrics`` or ``comparisons``).

    ``named`` are options given by name elsewhere (``textcw evaluate --folds 5`` is
    ``{"folds": 5}``); one the component does not declare is refused, naming ``--OPTION``.
    """
    from textcw.plugins import current_registries

    what = SINGULAR[kind]
    spec = LearnerSpec.parse(text)
    registry = current_registries()[kind]
    if spec.name not in registry:
        raise UnknownNameError(what, spec.name, registry.names())  # "design", as --design says
    entry = registry.get(spec.name)
    factory = entry.factory
    declared = getattr(factory, "options", None)
    if not isinstance(declared, Mapping):
        raise PluginError(f"{entry.provider} registered {what} {spec.name!r} as {factory!r}, which declares no "
                          f"options mapping; register a subclass of textcw.evaluation.contract.{BASES[kind].__name__}")
    label = f"{what} {spec.name!r}"
    for key in named or {}:
        if key not in declared:
            raise ParameterError(f"--{key} does not apply to {label} (its options: "
                                 f"{', '.join(declared) or 'none'}); leave it out or choose another {what}")
        if key in spec.params:
            raise ParameterError(f"{label}: {key} is given twice (--{key} and {spec.name}:{key}=...); give it once")
    params = {**spec.params, **(named or {})}
    check_options(label, declared, params)  # the clear message, before the component's own __init__
    try:
        component = factory(**params)
    except TextcwError:
        raise
    except Exception as exc:  # e.g. an option file a plugin's component cannot read
        raise ParameterError(f"{label} cannot be built with {params}: {type(exc).__name__}: {exc}") from None
    if not isinstance(component, BASES[kind]):
        raise PluginError(f"{entry.provider} registered {what} {spec.name!r}, which built a "
                          f"{type(component).__name__}, not a textcw.evaluation.contract.{BASES[kind].__name__}")
    return spec.name, component


def build_all(kind: str, text: str) -> dict[str, Any]:
    """``{name: component}`` of a comma-separated list (``error,macro-f1``); a name twice is an error."""
    built: dict[str, Any] = {}
    option = {"evaluators": "--design", "metrics": "--metric", "comparisons": "--compare"}[kind]
    for item in split_list(text, option):
        name, component = build(kind, item)
        if name in built:
            raise ParameterError(f"{SINGULAR[kind]} {name!r} is listed twice; list it once")
        built[name] = component
    return built


def resolve_baseline(comparisons: Mapping[str, Comparison], baseline: str | None,
                     learners: Sequence[LearnerSpec]) -> str | None:
    """The learner the comparisons compare against: ``baseline``, else the first learner when a
    comparison needs one; a baseline that no comparison uses is refused rather than ignored."""
    needed = [name for name, c in comparisons.items() if c.needs_baseline]
    if baseline is not None and not needed:
        raise ParameterError(f"--baseline is the reference of a comparison such as mcnemar or bootstrap; "
                             f"add one to --compare ({', '.join(comparisons) or 'none'} take no baseline)")
    if needed and baseline is None and learners:
        return learners[0].label
    return baseline


def run_evaluation(design: Design, tasks: Sequence, learners: Sequence, *, metrics: Mapping[str, Metric],
                   comparisons: Mapping[str, Comparison], baseline: str | None = None, design_name: str = "",
                   **hooks: Any):
    """Run ``design`` with ``metrics``, then each comparison on the first metric.

    Returns the design's :class:`~textcw.evaluation.suite.SuiteReport` with ``compared`` set,
    McNemar's marks and the ranks only where asked for, and the other comparisons' verdicts.
    """
    if not metrics:
        raise ParameterError("an evaluation needs at least one metric (--metric error)")
    check_metrics(f"design {design_name!r}" if design_name else type(design).__name__, design, metrics)
    primary = next(iter(metrics))
    for name, comparison in comparisons.items():
        if comparison.marks_table and metrics[primary].per_class:
            raise ParameterError(f"--compare {name} marks the table of the first metric, and {primary!r} gives one "
                                 f"number per class; put a metric with one number first (e.g. --metric error,{primary})")
    report = design.run(tasks, learners, metrics=metrics, baseline=baseline, **hooks)
    report.design = design_name
    report.compared = list(comparisons)
    # the design's own tables (a timing design's seconds) stay; the comparisons' are redone
    report.comparisons, report.ranks = [], {}
    report.verdicts = {name: v for name, v in report.verdicts.items() if name not in comparisons}
    for name, comparison in comparisons.items():
        try:
            verdict = comparison(report, metric=primary, baseline=baseline)
        except TextcwError:
            raise
        except Exception as exc:  # a plugin's comparison: reported in one line, not a traceback
            raise PluginError(f"comparison {name!r} failed ({type(exc).__name__}: {exc})") from None
        if verdict is not None:
            report.verdicts[name] = verdict
    return report
