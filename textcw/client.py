"""A Python client of ``textcw serve``, from whichever installed plugin provides one.

    from textcw.client import Client
    client = Client("http://127.0.0.1:8000")
    client.predict(["free money now"])      # labels, probabilities and margins
    client.learn(["free money now"], ["spam"])

textcw imports no plugin by name: a plugin that serves models provides the client through the
``provide_client`` hook (:func:`textcw.hookspecs.provide_client`; ``textcw-serve`` returns
``textcw_serve.client``, whose documentation, docs/serve.md, describes the API), registered as
any other plugin is; this module hands out that module's ``Client``, ``ServiceError`` and
``ServiceUnavailableError``. The installed plugins are imported when one of these names is first
asked for. The client needs only the standard library.
"""

from __future__ import annotations

import functools
import os

from textcw.errors import PluginError
from textcw.plugins import NO_PLUGINS_VAR, default_plugin_manager, provider_name

__all__ = ["Client", "ServiceError", "ServiceUnavailableError"]


@functools.lru_cache(maxsize=1)
def provider():
    """The client module the installed plugins provide (exactly one)."""
    pm = default_plugin_manager()
    lazy = getattr(pm, "lazy", None)
    if lazy is not None:
        lazy.complete()  # a plugin's hooks are known once it is imported
    found = {}
    for impl in pm.hook.provide_client.get_hookimpls():
        name = provider_name(pm, impl.plugin)
        try:
            module = impl.function()
        except Exception as exc:  # a broken plugin: say which
            raise PluginError(f"the client of plugin {name} failed to import: {type(exc).__name__}: {exc}") from None
        if module is not None:
            found[name] = module
    if not found and os.environ.get(NO_PLUGINS_VAR, "") == "1":
        raise PluginError(f"textcw.client comes with a serving plugin (textcw-serve), and {NO_PLUGINS_VAR}=1 "
                          "leaves installed plugins out: unset it")
    if not found:
        raise PluginError(
            "textcw.client comes with a serving plugin (textcw-serve), and none is installed: "
            "install it from a textcw checkout with pip install ./plugins/textcw-serve"
        )
    if len(found) > 1:
        raise PluginError(f"several installed plugins provide textcw.client ({', '.join(sorted(found))}); "
                          "uninstall all but one")
    ((_, module),) = found.items()
    return module


def __getattr__(name):
    if name not in __all__:
        raise AttributeError(f"module 'textcw.client' has no attribute {name!r}")
    value = getattr(provider(), name, None)
    if value is None:
        raise PluginError(f"the client module {provider().__name__} provides no {name}; "
                          f"a provide_client hook returns a module with {', '.join(__all__)}")
    return value
