"""Building the plugin manager and the registries it fills, and the registries in use.

Nothing happens at import: :func:`get_plugin_manager` builds a fresh manager (tests build
isolated ones), and :func:`default_registries` builds the process-wide registries on first use.
The parts: :mod:`~textcw.plugins.manager` (loading, checking, reporting),
:mod:`~textcw.plugins.registration` (the registries), :mod:`~textcw.plugins.commands` (the
command line), :mod:`~textcw.plugins.index` and :mod:`~textcw.plugins.lazy` (importing installed
plugins on first use); every public name is importable from here.

The registries in use
---------------------
Every function that turns a name into a component reads :func:`current_registries`: the
process-wide registries, unless a :func:`use_registries` block (in the style of scikit-learn's
``config_context``, a :mod:`contextvars` variable, so threads and asyncio tasks each see their
own) says otherwise::

    with use_registries(make_registries(MyPlugin())):
        textcw.pipeline.train("toy", "my-learner")   # and everything it calls

This block is the one way to choose registries. The ``registries=`` keyword that the public
entry points (:func:`textcw.make_learner`, :func:`textcw.pipeline.train`,
:func:`textcw.scale.train_sharded`, the evaluator factories, a design's ``run``...) took as an
override for one call is deprecated: it still works as the same block around that call would,
with a ``FutureWarning`` (:data:`REGISTRIES_DEPRECATION`, given by
:func:`deprecated_registries`, the one place that warns), and will be removed in a later
release. Nothing passes registries from function to function.

Installed plugins are imported on first use
-------------------------------------------
The process-wide manager imports an installed plugin only when a name it registers or a command
it adds is asked for, or when the plugins are listed (``textcw plugins``): ``textcw --help`` or
training a built-in learner imports none. What each plugin provides is kept in a plugin index in
the cache folder, keyed by the installed distributions and read back as untrusted state
(:mod:`textcw.plugins.index`); without a usable one, every plugin is loaded at start as before
(:mod:`textcw.plugins.lazy`). Managers built by :func:`get_plugin_manager` load every plugin.

Broken installed plugins
------------------------
An installed (entry-point) plugin is someone else's code, and one broken plugin must not take
every command down with it, ``textcw plugins`` and ``--help`` included. A plugin is *broken* when

- importing it raises anything but ``KeyboardInterrupt`` (``SystemExit`` included: a plugin
  that calls ``sys.exit`` at import does not end textcw), or pluggy refuses it (a hook function
  whose arguments do not match the hook);
- it implements a hook textcw does not have, usually a misspelling (``register_learner``): the
  rule of pluggy's ``check_pending``, applied plugin by plugin so that every such plugin is
  reported, not only the first (:func:`check_hooks`; a built-in or ``extra`` plugin breaking
  it is an :class:`UnknownHookError`);
- one of its hooks raises (:func:`build_registries`, :func:`register_commands`), or it registers
  a name another plugin already registered: a component name, or a command name (``textcw
  train`` cannot be replaced by a plugin; the report names both plugins);
- it registers a name (a component, a corpus task) that holds a control character or a line
  break, which would garble the terminal wherever the name is printed.

Plugins cannot impersonate
--------------------------
What an installed plugin says about itself is printed as text, never as terminal input:
summaries, task summaries, distribution names, versions and failure reasons are escaped
(:func:`textcw.untrusted.safe_text`: an escape sequence shows as ``\\x1b``) and names with
control characters are refused. A plugin whose import takes more than
:data:`SLOW_IMPORT_SECONDS` is named on stderr while it runs (``still importing plugin X ...``,
from a timer thread), so a plugin that hangs at import names itself.

A broken plugin is unregistered, so none of its hooks runs again and nothing it registered is
kept; everything else works. Each one is reported once, as one ``WARNING`` line on the logger
``"textcw"`` (shown on stderr when the application has not configured logging) that names the
plugin, its distribution and the reason, and says that ``TEXTCW_NO_PLUGINS=1`` runs textcw
without installed plugins. :func:`broken_plugins` lists them and ``textcw plugins`` shows them.
While a plugin is broken no index is written, so every start loads, and reports, it.

The built-in plugins and those passed as ``extra`` (plugins under test) are not guarded: their
errors propagate, since hiding them would hide a bug in textcw or in the plugin being tested.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import warnings
from collections.abc import Callable, Iterator

import pluggy

from textcw.plugins.commands import command_names, register_commands
from textcw.plugins.manager import (BUILTIN_PLUGINS, BUILTIN_PROVIDER, NO_PLUGINS_VAR, SLOW_IMPORT_SECONDS,
                                    BrokenPlugin, PluginManager, UnknownHookError, broken_plugins, check_hooks,
                                    get_plugin_manager, installed_ids, provider_name)
from textcw.plugins.registration import build_registries
from textcw.registry import Registries
from textcw.untrusted import safe_text

__all__ = [
    "BUILTIN_PLUGINS", "BUILTIN_PROVIDER", "NO_PLUGINS_VAR", "REGISTRIES_DEPRECATION", "SLOW_IMPORT_SECONDS",
    "BrokenPlugin", "PluginManager", "UnknownHookError", "broken_plugins", "build_registries", "check_hooks",
    "command_names", "current_registries", "default_plugin_manager", "default_registries", "deprecated_registries",
    "get_plugin_manager", "in_registries", "installed_plugins", "provider_name", "register_commands",
    "resolve_corpus", "use_registries",
]


def installed_plugins(pm: pluggy.PluginManager) -> list[dict[str, str]]:
    """Each plugin module with the distribution and version that provided it.

    A broken installed plugin (:func:`broken_plugins`) is listed too, with the key ``"broken"``
    holding the reason it was skipped. Plugins not imported yet (the process-wide manager's)
    are imported first, so that the list is whole and a broken one shows.
    """
    from textcw._version import __version__

    lazy = getattr(pm, "lazy", None)
    if lazy is not None:
        lazy.complete()
    dists = installed_ids(pm)
    rows = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        dist = dists.get(id(plugin))
        if dist is not None:
            rows.append({"name": safe_text(name, 100), "distribution": safe_text(dist.project_name, 100),
                         "version": safe_text(dist.version, 100)})
        elif name in BUILTIN_PLUGINS:
            rows.append({"name": name, "distribution": BUILTIN_PROVIDER, "version": __version__})
        else:
            rows.append({"name": provider_name(pm, plugin), "distribution": "(registered in process)",
                         "version": ""})
    for broken in broken_plugins(pm):
        rows.append({"name": broken.name, "distribution": broken.distribution, "version": broken.version,
                     "broken": broken.reason})
    return rows


# The registries built while the process-wide manager was (a start that loaded every plugin).
_BUILT: dict[int, Registries] = {}


@functools.cache
def default_plugin_manager() -> PluginManager:
    """The process-wide manager (built-ins plus installed plugins), built on first use.

    Installed plugins are imported on first use when the plugin index allows
    (:mod:`textcw.plugins.lazy`). ``TEXTCW_NO_PLUGINS=1`` leaves them out (their code is not
    even imported): a way to run textcw with its built-in components only (``docs/security.md``).
    """
    if os.environ.get(NO_PLUGINS_VAR, "") == "1":
        return get_plugin_manager(entry_points=False)
    from textcw.plugins.lazy import start

    pm, registries = start()
    if registries is not None:
        _BUILT[id(pm)] = registries
    return pm


@functools.cache
def default_registries() -> Registries:
    """The process-wide registries, built on first use and filled as they are used: a kind's
    built-in names when the kind is first looked up, an installed plugin's names when one of
    them is (:mod:`textcw.plugins.lazy`, :class:`textcw.registry.Registry`)."""
    from textcw.plugins.lazy import attach

    pm = default_plugin_manager()
    registries = _BUILT.pop(id(pm), None)
    return registries if registries is not None else attach(pm)


_IN_USE: contextvars.ContextVar[Registries | None] = contextvars.ContextVar("textcw_registries", default=None)


def current_registries() -> Registries:
    """The registries in use: those of the innermost :func:`use_registries` block, else
    :func:`default_registries`."""
    registries = _IN_USE.get()
    return registries if registries is not None else default_registries()


@contextlib.contextmanager
def use_registries(registries: Registries | None) -> Iterator[None]:
    """Within the block, :func:`current_registries` is ``registries`` (``None`` changes nothing,
    so that ``with use_registries(registries):`` serves an optional override)."""
    if registries is None:
        yield
        return
    if not isinstance(registries, Registries):
        raise TypeError(f"use_registries takes a textcw.registry.Registries, not {type(registries).__name__}")
    token = _IN_USE.set(registries)
    try:
        yield
    finally:
        _IN_USE.reset(token)


# The one message of the deprecated ``registries=`` keyword ({where} names the function); its
# start is what the test suite's ``filterwarnings`` turns into an error (pyproject.toml).
REGISTRIES_DEPRECATION = ("the registries= keyword of {where} is deprecated: pass registries with "
                          "`with textcw.plugins.use_registries(r):` around the call instead; "
                          "`registries=` will be removed in a later release")


def deprecated_registries(registries: Registries | None, where: str) -> Registries | None:
    """``registries``, after a ``FutureWarning`` (:data:`REGISTRIES_DEPRECATION`) when it is not
    ``None``: what every public function that still takes the deprecated ``registries=``
    keyword calls first thing, then uses the result as before (``with use_registries(...)`` or
    :func:`in_registries`). ``where`` names that function in the message; the warning points
    at the line that called it (``stacklevel=3``: this helper, that function, its caller)."""
    if registries is not None:
        warnings.warn(REGISTRIES_DEPRECATION.format(where=where), FutureWarning, stacklevel=3)
    return registries


def in_registries(registries: Registries | None, function: Callable) -> Callable:
    """``function``, run within :func:`use_registries` ``(registries)`` when called: how an
    evaluator factory keeps registries it was given for the runner it returns (``None``:
    ``function`` itself, which uses the registries in use when it runs)."""
    if registries is None:
        return function

    @functools.wraps(function)
    def run(*args, **kwargs):
        with use_registries(registries):
            return function(*args, **kwargs)

    return run


def resolve_corpus(spec: str):
    """``(entry, task)`` for ``"corpus[:task]"`` in the registries in use, the task checked
    against the corpus's ``tasks`` and ``task_check`` (:class:`textcw.registry.CorpusEntry`);
    ``task`` is ``None`` for the corpus's default task."""
    from textcw.corpus.base import check_task, split_task_name

    corpus, task = split_task_name(spec)
    entry = current_registries().corpora.get(corpus)
    check_task(corpus, task, entry.tasks, entry.task_check)
    return entry, task
