"""Every textcw hook: the reference for plugin authors.

A plugin is a module (or object) with functions decorated by :data:`textcw.hookimpl` whose names
are the hooks below. Third-party plugins are found through the entry-point group ``textcw``::

    [project.entry-points.textcw]
    my_plugin = "my_package.plugin"

Each registration hook receives a ``register`` callable::

    register(name, factory, summary="one line for `textcw list`", **fields)

``fields`` are keyword-only and typed per kind (:class:`textcw.registry.LearnerEntry`,
:class:`textcw.registry.CorpusEntry`; featurizers, evaluators, metrics and comparisons take none:
the evaluation components declare their contract on their class), and each hook's ``register``
is annotated with the protocol of its kind (:class:`RegisterLearner`, :class:`RegisterCorpus`,
:class:`Register`), so a type checker sees the same fields: a keyword the kind
does not have is a :class:`textcw.errors.PluginError` naming the plugin, never a value silently
ignored. ``name`` is what users type; registering a name another plugin already registered is an error
that names both plugins. ``factory`` is the callable itself or a ``"package.module:attribute"``
reference to it, which textcw imports the first time the component is built: a plugin that
names its factories adds nothing to the start-up of every command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

import pluggy

PROJECT = "textcw"

hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

Factory = Callable[..., Any] | str  # the callable, or a "package.module:attribute" reference to it


class Register(Protocol):
    """The ``register`` of the featurizer, evaluator, metric and comparison hooks: no fields."""

    def __call__(self, name: str, factory: Factory, summary: str = "") -> None: ...


class RegisterLearner(Protocol):
    """The ``register`` of :func:`register_learners` (the fields of :class:`textcw.registry.LearnerEntry`)."""

    def __call__(self, name: str, factory: Factory, summary: str = "", *, online: bool = False) -> None: ...


class RegisterCorpus(Protocol):
    """The ``register`` of :func:`register_corpora` (the fields of :class:`textcw.registry.CorpusEntry`)."""

    def __call__(self, name: str, factory: Factory, summary: str = "", *, tasks: Mapping[str, str] = ...,
                 featurizer: str = ..., task_check: Callable[[str], Any] | None = None,
                 task_patterns: Mapping[str, str] = ..., takes_path: bool = False, takes_download: bool = False,
                 stream: Callable[..., Any] | None = None, size: Callable[..., int] | None = None) -> None: ...


@hookspec
def register_learners(register: RegisterLearner) -> None:
    """Register learners (online or batch classifiers).

    Parameters
    ----------
    register : callable
        ``register(name, factory, summary="", *, online=False)``.
        ``factory(**params)`` must return an unfitted scikit-learn classifier: ``fit``, ``predict`` and ``get_params``/``set_params``, and
        ideally ``partial_fit``, ``decision_function`` and ``predict_proba``. Subclassing
        :class:`textcw.learners.base.OnlineLinearClassifier` gives all of these plus epochs,
        shuffling and online mistake counting; a subclass supplies only its update. The
        ``tune`` evaluator's grids, and what ``textcw train`` self-tunes, are declared on the
        class (its ``tuning``: :class:`textcw.learners.selftune.Axis`); without them only the
        number of passes is tuned.

    Other Parameters
    ----------------
    online : bool
        Declare that the learner has ``partial_fit`` and that its ``fit`` takes
        ``progress(done, total)`` (true of every subclass of ``OnlineLinearClassifier``):
        ``textcw train`` then shows progress and, like :func:`textcw.make_pipeline`, calibrates
        its ``predict_proba`` by default (:func:`textcw.pipeline.resolve_probability`), and
        ``textcw evaluate --plot`` draws its cumulative mistakes. A learner registered without
        it is treated as a batch classifier: none of these.

    Notes
    -----
    Parameter values arrive as Python objects (from ``textcw train --param KEY=VALUE`` they are
    parsed as JSON when possible, else kept as strings). Raise
    :class:`textcw.errors.ParameterError` naming the parameter and its allowed range for a bad
    value.
    """


@hookspec
def register_featurizers(register: Register) -> None:
    """Register featurizers (documents -> feature matrix).

    Parameters
    ----------
    register : callable
        ``register(name, factory, summary="")``. ``factory(**params)`` returns an unfitted
        scikit-learn transformer whose ``transform`` returns a ``scipy.sparse`` CSR matrix
        (or a 2-d array) with a fixed number of columns after ``fit``.
    """


@hookspec
def register_corpora(register: RegisterCorpus) -> None:
    """Register corpora and their tasks.

    Parameters
    ----------
    register : callable
        ``register(name, factory, summary="", *, tasks={task: summary, ...}, ...)``.
        ``factory(task=None, split="train", **options)`` returns a
        :class:`textcw.corpus.base.Dataset` (``data``, ``target``, ``target_names``).
        ``task=None`` is the corpus's default task. Users name a task as ``corpus:task``.

    Other Parameters
    ----------------
    featurizer : str, optional
        The featurizer used when the user names none (default ``tfidf``, sublinear TF-IDF at unit length); corpora that
        ship feature vectors name ``precomputed``.
    task_check : callable, optional
        ``task_check(task) -> bool`` for corpora whose task names are patterns (``usps:AvB``,
        ``folder:PATH``): a name outside ``tasks`` is accepted when it returns ``True`` and
        refused as unknown when it returns ``False``; it may instead raise a textcw error that
        says what is wrong with the name. Any other return value (``None``) is an error.
    task_patterns : dict, optional
        ``{pattern: summary}`` describing those names for ``textcw list corpora``.
    takes_path : bool, optional
        The task names a file path (``folder:PATH``), which may hold a comma, so ``textcw
        evaluate --corpus`` does not split the path at its commas.
    takes_download : bool, optional
        ``factory`` takes ``download=False`` (local files only, a textcw error when they are
        absent), so ``textcw list corpora`` loads each task to show its sizes.
    stream : callable, optional
        ``stream(task=, split=, *, start=0, stop=None, chunk_size=...)`` yields documents
        ``[start, stop)`` as consecutive ``Dataset`` chunks without loading the whole split, so
        shard workers and ``textcw train --stream`` read only their part.
    size : callable, optional
        ``size(task=, split=) -> int``: the number of documents, without reading them.
    """


@hookspec
def register_evaluators(register: Register) -> None:
    """Register evaluation designs: what ``textcw evaluate --design NAME`` runs.

    Parameters
    ----------
    register : callable
        ``register(name, factory, summary="")``. ``factory(**options)`` returns a
        :class:`textcw.evaluation.contract.Design` (usually ``factory`` is the class itself).
        A design runs tasks x learners and returns a table of per-fold results
        (:class:`textcw.evaluation.suite.SuiteReport`); it declares its options in its
        ``options`` class attribute, and ``textcw evaluate`` refuses any other (exit 2).
        Subclass :class:`textcw.evaluation.contract.SplitDesign` and write only
        ``splits(task, seed)`` for a design that differs from cross-validation by how it
        splits the documents. The built-ins are ``cv``, ``holdout`` and ``noise``.
    """


@hookspec
def register_metrics(register: Register) -> None:
    """Register metrics: what ``textcw evaluate --metric NAME`` computes on every fold.

    Parameters
    ----------
    register : callable
        ``register(name, factory, summary="")``. ``factory(**options)`` returns a
        :class:`textcw.evaluation.contract.Metric`: ``metric(fold) -> float`` or, for a
        per-class metric, ``{class: float}``. The class declares what it reads of the fold
        (``needs``: ``labels``, ``scores``, ``proba``), so decision scores and probabilities
        are computed only when a chosen metric needs them, and whether lower or higher is
        better (``better``).
    """


@hookspec
def register_comparisons(register: Register) -> None:
    """Register comparisons: what ``textcw evaluate --compare NAME`` concludes from the table.

    Parameters
    ----------
    register : callable
        ``register(name, factory, summary="")``. ``factory(**options)`` returns a
        :class:`textcw.evaluation.contract.Comparison`: ``comparison(report, metric=,
        baseline=)`` returns a :class:`textcw.evaluation.contract.Verdict` (a table textcw
        prints and writes into the JSON report) or ``None`` when it marks the metric's own
        table (``mcnemar``'s significance marks, ``rank``'s mean-rank row).
    """


@hookspec
def register_commands(app: Any) -> None:
    """Add sub-commands to the ``textcw`` command line.

    Parameters
    ----------
    app : typer.Typer
        The root application; add commands with ``@app.command()`` or sub-apps with
        ``app.add_typer``. Keep command bodies to parsing and printing: put the work in
        library functions so it can be called from Python too.
    """


@hookspec
def provide_client() -> Any:
    """Return the module of a Python client of a textcw service, which :mod:`textcw.client` hands
    out to users.

    The module defines ``Client``, ``ServiceError`` and ``ServiceUnavailableError``; import it
    inside the hook (``from my_plugin import client; return client``), so that it is loaded only
    when a user asks for the client. At most one installed plugin may provide one (``textcw-serve``
    does).

    Returns
    -------
    module or None
        The client module, or ``None`` to provide none.
    """
