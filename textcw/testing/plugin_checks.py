"""The plugin check: a plugin registers cleanly beside the built-ins and everything it adds works.

:func:`check_plugin` runs the registration checks and then the checks of every component the
plugin registers (learners, featurizers, metrics and evaluation designs); :func:`plugin_components`
gives those components for :func:`~textcw.testing.parametrize_with_checks`, so that each of their
checks is its own test.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterator, Mapping

import pluggy

from textcw.cli import build_app
from textcw.errors import DuplicateNameError
from textcw.hookspecs import PROJECT
from textcw.learners.base import OnlineLinearClassifier
from textcw.pipeline import make_featurizer, make_learner
from textcw.plugins import broken_plugins, build_registries, get_plugin_manager, use_registries
from textcw.registry import KINDS
from textcw.testing.evaluation_checks import design_under_test, metric_under_test
from textcw.testing.featurizer_checks import featurizer_under_test
from textcw.testing.learner_checks import learner_under_test
from textcw.testing.runner import Check, Component, UsageError, fail

__all__ = ["check_plugin", "plugin_components"]

# What users type: no whitespace, no ":" (it separates a corpus from its task, a component from
# its options), no "," (it separates names in a list), no leading "-" (it would read as a
# command-line option); "@" is typed as is in a shell (textcw's metric "precision@k").
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+@-]*$")


def _isolated_managers(plugin) -> tuple[pluggy.PluginManager, pluggy.PluginManager]:
    """``(with the plugin, without it)``: the built-ins, plus ``plugin`` for the first."""
    base_pm = get_plugin_manager(entry_points=False)
    if base_pm.is_registered(plugin):  # a built-in module: compare against the others
        base_pm.unregister(plugin)
        return get_plugin_manager(entry_points=False), base_pm
    try:
        return get_plugin_manager(entry_points=False, extra=[plugin]), base_pm
    except pluggy.PluginValidationError as exc:
        fail(f"pluggy refused it: {exc}; a hook function's arguments must be named as "
             "in textcw.hookspecs (e.g. register_learners(register))")


def _own_names(regs, base) -> dict[str, list[str]]:
    """``{kind: sorted names}`` that ``regs`` holds and ``base`` does not."""
    return {kind: sorted(set(regs[kind].names()) - set(base[kind].names())) for kind in KINDS}


# The kinds whose components the kit checks, and what it calls one of each.
CHECKED_KINDS = {"learners": "learner", "featurizers": "featurizer", "metrics": "metric", "evaluators": "design"}


def _check_arguments(own: dict[str, list[str]], expected_failures: Mapping | None,
                     evaluation_options: Mapping | None) -> None:
    """Refuse (UsageError) names that the plugin does not register, before any check runs."""
    checked = {n for kind in CHECKED_KINDS for n in own[kind]}
    stray = sorted(set(expected_failures or {}) - checked)
    if stray:
        raise UsageError(f"expected_failures names {stray}, which the plugin does not register")
    evaluation = set(own["metrics"]) | set(own["evaluators"])
    stray = sorted(set(evaluation_options or {}) - evaluation)
    if stray:
        raise UsageError(f"evaluation_options names {stray}, which are not metrics or designs the plugin "
                         f"registers ({', '.join(sorted(evaluation)) or 'none'})")
    for n, options in (evaluation_options or {}).items():
        if not isinstance(options, Mapping):
            raise UsageError(f"evaluation_options[{n!r}] is {options!r}; give a dict of the options it is "
                             "built with, e.g. {'costs': 'costs.csv'}")
        reserved = sorted({"name", "expected_failures"} & set(options))
        if reserved:
            raise UsageError(f"evaluation_options[{n!r}] sets {reserved}, which the kit sets itself; "
                             "use expected_failures= for the checks that must fail")


def _evaluation_component(kind: str, n: str, factory, options: Mapping, expected: Mapping | None) -> Component:
    """A metric or design registered as ``n``, built from its registered factory with ``options``."""
    declared = getattr(factory, "options", None)
    if isinstance(declared, Mapping):
        missing = sorted(k for k, option in declared.items()
                         if getattr(option, "required", False) and k not in options)
        if missing:
            raise UsageError(f"{CHECKED_KINDS[kind]} {n!r} requires the option(s) {', '.join(missing)}: give them "
                             f"as evaluation_options={{{n!r}: {{{missing[0]!r}: ...}}}}")
    under_test = metric_under_test if kind == "metrics" else design_under_test
    return under_test(factory, name=repr(n), expected_failures=expected, **options)


def _made(regs, make, name: str):
    """``make(name)`` (:func:`~textcw.pipeline.make_learner` or ``make_featurizer``) with the
    plugin's isolated registries in use, not whatever else the process has installed."""
    with use_registries(regs):
        return make(name)


def _components(regs, own: dict[str, list[str]], featurizer_data: dict | None, min_accuracy: float,
                expected_failures: dict[str, dict[str, str]] | None,
                evaluation_options: Mapping[str, Mapping] | None = None) -> Iterator[Component]:
    """The plugin's learners, featurizers, metrics and designs, built by name as users build them."""
    _check_arguments(own, expected_failures, evaluation_options)
    expected = dict(expected_failures or {})
    for n in own["learners"]:
        yield learner_under_test(lambda n=n: _made(regs, make_learner, n), name=repr(n),
                                 min_accuracy=min_accuracy, expected_failures=expected.get(n))
    for n in own["featurizers"]:
        docs, labels = (featurizer_data or {}).get(n, (None, None))
        yield featurizer_under_test(lambda n=n: _made(regs, make_featurizer, n), docs, labels,
                                    name=repr(n), min_accuracy=min_accuracy,
                                    expected_failures=expected.get(n))
    for kind in ("metrics", "evaluators"):
        for n in own[kind]:
            yield _evaluation_component(kind, n, regs[kind].get(n).factory,
                                        (evaluation_options or {}).get(n, {}), expected.get(n))


def plugin_components(plugin, *, featurizer_data: dict | None = None, min_accuracy: float = 0.8,
                      expected_failures: dict[str, dict[str, str]] | None = None,
                      evaluation_options: dict[str, dict] | None = None) -> list[Component]:
    """The learners, featurizers, metrics and evaluation designs ``plugin`` registers, as the
    checks take them.

    The plugin is registered in isolation (the built-ins plus this plugin) and each component
    is built by its registered name, as :func:`check_plugin` does: learners and featurizers
    through :func:`textcw.make_learner` / :func:`textcw.make_featurizer`, metrics and designs
    from their registered factories with :func:`~textcw.testing.metric_under_test` /
    :func:`~textcw.testing.design_under_test`; the parameters are those of :func:`check_plugin`.
    Meant for :func:`~textcw.testing.parametrize_with_checks`::

        @parametrize_with_checks(plugin_components(
            my_package.plugin, evaluation_options={"cost-error": {"costs": "costs.csv"}}))
        def test_components(component, check):
            check(component)

    Raises
    ------
    AssertionError
        The plugin cannot be registered (pluggy refuses it, or a name clashes);
        :func:`check_plugin` says more.
    ValueError
        ``expected_failures`` or ``evaluation_options`` names a component the plugin does not
        register, or a metric or design has a required option that ``evaluation_options`` does
        not give.
    """
    pm, base_pm = _isolated_managers(plugin)
    try:
        regs = build_registries(pm)
    except DuplicateNameError as exc:
        fail(f"a name clashes: {exc}")
    own = _own_names(regs, build_registries(base_pm))
    return list(_components(regs, own, featurizer_data, min_accuracy, expected_failures, evaluation_options))


def _command_names(app) -> set[str]:
    names = set()
    for info in app.registered_commands:
        names.add(info.name or info.callback.__name__.lower().replace("_", "-"))
    for info in app.registered_groups:
        name = info.name or getattr(getattr(info.typer_instance, "info", None), "name", None)
        if name:
            names.add(name)
    return names


def _canonical(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def check_plugin(plugin, *, distribution: str | None = None, check_components: bool = True,
                 featurizer_data: dict | None = None, min_accuracy: float = 0.8,
                 expected_failures: dict[str, dict[str, str]] | None = None,
                 evaluation_options: dict[str, dict] | None = None) -> None:
    """Check a plugin: it registers cleanly beside the built-ins and everything it adds works.

    The plugin is registered into an isolated plugin manager (the built-ins plus this plugin,
    no other installed plugin). Then:

    - registration succeeds, every hook it implements is a textcw hook (a misspelt hook name
      would otherwise be silently ignored), and it implements at least one;
    - building the registries succeeds: no name clashes with a built-in, every factory is
      callable, and building twice gives the same names (registration has no side effects);
    - it adds at least one learner, featurizer, corpus, evaluator or command; every name is
      something a user can type (no whitespace, no ``:``) and has a one-line summary; corpus
      tasks are a ``{task: summary}`` mapping; commands do not clash with textcw's own;
    - every learner it adds passes :func:`check_learner` and every featurizer
      :func:`check_featurizer`, built by name through :func:`textcw.make_learner` /
      :func:`textcw.make_featurizer` as users build them; every metric it adds passes
      :func:`~textcw.testing.check_metric` and every evaluation design
      :func:`~textcw.testing.check_design`, built from its registered factory (with
      ``evaluation_options``);
    - a learner that subclasses :class:`~textcw.learners.base.OnlineLinearClassifier` is
      registered with ``online=True``, and one registered so has ``partial_fit``;
    - with ``distribution``: that installed distribution declares the plugin in the entry-point
      group ``textcw``, and with all installed plugins loaded its names show that distribution
      as their provider (what ``textcw list`` prints).

    Parameters
    ----------
    plugin : module or object
        The plugin, as its entry point loads it (e.g. ``my_package.plugin``).
    distribution : str, optional
        The installed distribution that should provide it (e.g. ``"textcw-example"``).
    check_components : bool, default True
        Run :func:`check_learner` / :func:`check_featurizer` / :func:`check_metric` /
        :func:`check_design` on each registered entry.
    featurizer_data : dict, optional
        ``{featurizer name: (documents, labels)}`` for featurizers of non-text documents.
    min_accuracy : float, default 0.8
        Passed on to the component checks (the held-out accuracy they require).
    evaluation_options : dict, optional
        ``{metric or design name: options}``: what each is built with (a metric's required
        ``costs=`` file, a design's ``rounds=2`` to keep the check short), plus the kit's own
        keywords: ``n_classes`` for a metric (the class counts of the folds it is checked on,
        ``(2,)`` for a two-class cost matrix), ``task`` and ``learners`` for a design. A metric
        or design with a required option that is not given here is a ``ValueError``.
    expected_failures : dict, optional
        ``{component name: {check name: reason}}``: the outer keys are names the plugin
        registers (another name is a ``ValueError``), the inner dicts are the
        ``expected_failures`` of :func:`~textcw.testing.check_learner`,
        :func:`~textcw.testing.check_featurizer`, :func:`~textcw.testing.check_metric` or
        :func:`~textcw.testing.check_design` (strict: a listed check must fail). The
        registration checks (``registers_in_isolation``, ``registrations_are_clean``,
        ``components_pass_their_checks``, ``online_learners_are_declared``,
        ``is_installed_as_distribution``) cannot be listed.

    Raises
    ------
    AssertionError
        Naming the plugin, the property that failed and how to fix it.
    """
    checks = _PluginChecks(plugin, distribution=distribution, check_components=check_components,
                           featurizer_data=featurizer_data, min_accuracy=min_accuracy,
                           expected_failures=expected_failures, evaluation_options=evaluation_options)
    steps = (checks.registers_in_isolation, checks.registrations_are_clean, checks.components_pass_their_checks,
             checks.online_learners_are_declared, checks.is_installed_as_distribution)
    Component("plugin", f"{getattr(plugin, '__name__', None) or plugin!r}", None,
              tuple(Check(step.__name__, lambda _, step=step: step()) for step in steps)).check_all()


class _PluginChecks:
    """The registration checks of :func:`check_plugin`, one method each, in the order they run;
    each check keeps what the next ones need (the plugin managers, the registries, its names)."""

    def __init__(self, plugin, *, distribution: str | None, check_components: bool, featurizer_data: dict | None,
                 min_accuracy: float, expected_failures: dict | None, evaluation_options: dict | None):
        self.plugin, self.distribution, self.check_components = plugin, distribution, check_components
        self.featurizer_data, self.min_accuracy = featurizer_data, min_accuracy
        self.expected_failures, self.evaluation_options = expected_failures, evaluation_options
        self.pm = self.base_pm = self.regs = self.own = None

    def registers_in_isolation(self) -> None:
        """It registers beside the built-ins, implements at least one hook, and only textcw's hooks."""
        pm, base_pm = _isolated_managers(self.plugin)
        if not pm.get_hookcallers(self.plugin):
            fail("it implements no textcw hook; decorate its hook functions with "
                 "@textcw.hookimpl and name them after the hooks in textcw.hookspecs")
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            hooks = sorted(n for n in dir(pm.hook) if not n.startswith("_")
                           and getattr(getattr(pm.hook, n), "spec", None) is not None)
            fail(f"{exc}; textcw's hooks are: {', '.join(hooks)}")
        self.pm, self.base_pm = pm, base_pm

    def registrations_are_clean(self) -> None:
        """The registries build, twice alike; it adds something, each name typeable and summarised."""
        pm = self.pm
        try:
            regs = build_registries(pm)
        except DuplicateNameError as exc:
            fail(f"a name clashes: {exc}")
        try:
            again = build_registries(pm)
        except DuplicateNameError as exc:
            fail(f"registering a second time fails ({exc}); keep registration free of global state")
        base = build_registries(self.base_pm)
        for kind in KINDS:
            if set(again[kind].names()) != set(regs[kind].names()):
                fail(f"building the registries twice gives different {kind}; registration "
                     "must not depend on global state")
        own = _own_names(regs, base)
        commands = _plugin_commands(pm, self.plugin)
        if not any(own.values()) and not commands:
            fail("it registers nothing (no learner, featurizer, corpus, evaluator or command)")
        for kind, names in own.items():
            for n in names:
                _check_entry(regs[kind], kind, n)
        if commands:
            builtin = _command_names(build_app(self.base_pm))
            clash = sorted(builtin & commands)
            if clash:
                fail(f"its command(s) {clash} clash with textcw's own commands")
        self.regs, self.own = regs, own

    def components_pass_their_checks(self) -> None:
        """Every learner, featurizer, metric and design it adds passes its own checks."""
        if not self.check_components:
            return
        for component in _components(self.regs, self.own, self.featurizer_data, self.min_accuracy,
                                     self.expected_failures, self.evaluation_options):
            component.check_all()

    def online_learners_are_declared(self) -> None:
        """A learner is registered with ``online=True`` exactly when it learns one document at a time."""
        # A subclass of OnlineLinearClassifier registered without online=True still trains, but
        # textcw train shows it no progress and leaves its probabilities uncalibrated, and
        # evaluate --plot draws no mistake curve: nothing fails, so say it here.

        regs = self.regs
        for n in self.own.get("learners", []):
            entry = regs.learners.get(n)
            learner = _made(regs, make_learner, n)
            if isinstance(learner, OnlineLinearClassifier) and not entry.online:
                fail(f"learner {n!r} is an OnlineLinearClassifier registered without online=True: "
                     "textcw train would neither show its progress nor calibrate its "
                     "probabilities; pass online=True to register")
            if entry.online and not callable(getattr(learner, "partial_fit", None)):
                fail(f"learner {n!r} is registered with online=True but has no partial_fit; "
                     "declare online=True only for learners that learn one document at a time")

    def is_installed_as_distribution(self) -> None:
        """With ``distribution``: it declares the plugin, and provides its names once installed."""
        distribution = self.distribution
        if distribution is None:
            return
        try:
            dist = importlib.metadata.distribution(distribution)
        except importlib.metadata.PackageNotFoundError:
            fail(f"distribution {distribution!r} is not installed (pip install it first)")
        points = [ep for ep in dist.entry_points if ep.group == PROJECT]
        if not points:
            fail(f"distribution {distribution!r} declares no entry point in group {PROJECT!r}; "
                 f"add [project.entry-points.{PROJECT}] to its pyproject.toml")
        module = getattr(self.plugin, "__name__", None)
        if module not in {ep.value.split(":")[0].strip() for ep in points}:
            fail(f"the {PROJECT!r} entry points of {distribution!r} "
                 f"({', '.join(f'{ep.name} = {ep.value}' for ep in points)}) do not point to "
                 f"{module!r}")
        self._provided_by(dist)

    def _provided_by(self, dist) -> None:
        """With every installed plugin loaded, each of its names is provided by ``dist``."""
        pm = get_plugin_manager(entry_points=True)
        regs = build_registries(pm)
        want = _canonical(dist.metadata["Name"])
        # A plugin textcw skipped as broken has nothing registered: say why, not "unknown name".
        for broken in broken_plugins(pm):
            if _canonical(broken.distribution or "") == want:
                fail(f"installed, textcw skips it as broken: {broken.reason}")
        for kind, names in self.own.items():
            for n in names:
                provider = regs[kind].get(n).provider
                if _canonical(provider) != want:
                    fail(f"with installed plugins loaded, {regs[kind].singular} {n!r} is provided "
                         f"by {provider!r}, not {dist.metadata['Name']!r}")


def _check_entry(registry, kind: str, n: str) -> None:
    """The entry ``n`` of ``registry`` (of ``kind``) has a typeable name, a summary and, for a
    corpus, a ``{task: summary}`` dict of typeable task names."""
    entry = registry.get(n)
    if not _NAME.match(n):
        fail(f"{registry.singular} name {n!r} is not something users can type: use "
             "letters, digits, '.', '_', '+', '@' and '-' (no spaces, no ':')")
    if not entry.summary:
        fail(f"{registry.singular} {n!r} has no summary; `textcw list {kind}` "
             "shows it: pass summary='one line' to register")
    if kind == "corpora":
        tasks = entry.tasks
        if not isinstance(tasks, dict) or not all(
                isinstance(t, str) and _NAME.match(t) and isinstance(s, str)
                for t, s in tasks.items()):
            fail(f"corpus {n!r}: tasks must be a {{task name: one-line summary}} dict "
                 f"with typeable names; got {tasks!r}")


def _plugin_commands(pm, plugin) -> set[str]:
    """The command names ``plugin``'s ``register_commands`` adds to an empty application."""
    impls = [i for i in pm.hook.register_commands.get_hookimpls() if i.plugin is plugin]
    if not impls:
        return set()
    import typer

    app = typer.Typer()
    for impl in impls:
        impl.function(app=app)
    names = _command_names(app)
    if not names:
        fail("its register_commands hook adds no command")
    return names
