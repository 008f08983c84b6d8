"""A Python client of ``textcw serve``, from whichever installed plugin provides one.

    from textcw.client import Client
    client = Client("http://127.0.0.1:8000")
    client.predict(["free money now"])      # labels, probabilities and margins
    client.learn(["free money now"], ["spam"])

textcw imports no plugin: a plugin that serves models provides the client by declaring a module
in the ``textcw.client`` entry-point group (``textcw-serve`` does, with ``textcw_serve.client``,
whose documentation, docs/serve.md, describes the API); this module hands out that module's
``Client``, ``ServiceError`` and ``ServiceUnavailableError``. The client needs only the standard
library.
"""

from __future__ import annotations

import functools
from importlib import metadata

from textcw.errors import PluginError

__all__ = ["Client", "ServiceError", "ServiceUnavailableError"]
GROUP = "textcw.client"


@functools.lru_cache(maxsize=1)
def provider():
    """The client module the installed plugins declare (exactly one), imported."""
    found = {ep.value: ep for ep in metadata.entry_points(group=GROUP)}
    if not found:
        raise PluginError(
            "textcw.client comes with a serving plugin (textcw-serve), and none is installed: "
            "install it from a textcw checkout with pip install ./plugins/textcw-serve"
        )
    if len(found) > 1:
        raise PluginError(f"several installed plugins provide textcw.client ({', '.join(sorted(found))}); "
                          "uninstall all but one")
    (entry,) = found.values()
    try:
        return entry.load()
    except Exception as exc:  # a broken plugin: say which
        raise PluginError(f"the client module {entry.value} (entry point {GROUP}) failed to "
                          f"import: {type(exc).__name__}: {exc}") from None


def __getattr__(name):
    if name not in __all__:
        raise AttributeError(f"module 'textcw.client' has no attribute {name!r}")
    value = getattr(provider(), name, None)
    if value is None:
        raise PluginError(f"the client module {provider().__name__} provides no {name}; "
                          f"a {GROUP} module provides {', '.join(__all__)}")
    return value
