"""A Python client of ``textcw serve`` (the service comes with the ``textcw-serve`` plugin).

    from textcw.client import Client
    client = Client("http://127.0.0.1:8000")
    client.predict(["free money now"])      # labels, probabilities and margins
    client.learn(["free money now"], ["spam"])

The client itself needs only the standard library; it lives in the ``textcw-serve`` plugin,
whose documentation (docs/serve.md) describes the API.
"""

from __future__ import annotations

from textcw.errors import PluginError

try:
    from textcw_serve.client import Client, ServiceError, ServiceUnavailableError
except ImportError:  # the plugin is not installed
    def __getattr__(name):
        raise PluginError(
            f"textcw.client.{name} comes with the textcw-serve plugin, which is not installed: "
            "install it from a textcw checkout with pip install ./plugins/textcw-serve"
        )
else:
    __all__ = ["Client", "ServiceError", "ServiceUnavailableError"]
