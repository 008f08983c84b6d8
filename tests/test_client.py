"""textcw.client hands out the client module an installed plugin provides (the provide_client hook)."""

from __future__ import annotations

import types

import pytest

import textcw
import textcw.client as client
from textcw.errors import PluginError
from textcw.plugins import get_plugin_manager


def _module(name, **names):
    module = types.ModuleType(name)
    for key, value in names.items():
        setattr(module, key, value)
    return module


def _provider(name, module=None, error=None):
    """A plugin whose provide_client hook returns ``module`` (or raises ``error``)."""
    def provide_client():
        if error is not None:
            raise error
        return module

    return types.SimpleNamespace(__name__=name, provide_client=textcw.hookimpl(provide_client))


@pytest.fixture
def plugins(monkeypatch):
    installed = []
    monkeypatch.setattr(client, "default_plugin_manager",
                        lambda: get_plugin_manager(entry_points=False, extra=installed))
    client.provider.cache_clear()
    yield installed
    client.provider.cache_clear()


def test_the_provided_module_is_the_client(plugins):
    plugins.append(_provider("someone", _module("someone.client", Client=object, ServiceError=KeyError,
                                                ServiceUnavailableError=OSError)))
    plugins.append(_provider("quiet"))  # a plugin that provides no client says None
    assert client.Client is object and client.ServiceError is KeyError and client.ServiceUnavailableError is OSError
    with pytest.raises(AttributeError, match="has no attribute 'Other'"):
        client.Other


def test_without_a_provider_it_says_what_to_install(plugins):
    with pytest.raises(PluginError, match=r"none is installed: install it from a textcw checkout with "
                                          r"pip install \./plugins/textcw-serve"):
        client.Client


def test_two_providers_or_a_broken_one_are_named(plugins):
    plugins += [_provider("a", _module("a.client")), _provider("b", _module("b.client"))]
    with pytest.raises(PluginError, match=r"several installed plugins provide textcw.client \(a, b\)"):
        client.Client
    plugins[:] = [_provider("c", error=ImportError("no module named c"))]
    client.provider.cache_clear()
    with pytest.raises(PluginError, match=r"the client of plugin c failed to import: ImportError: no module named c"):
        client.Client
    plugins[:] = [_provider("d", _module("d.client"))]
    client.provider.cache_clear()
    with pytest.raises(PluginError, match=r"d.client provides no Client; a provide_client hook returns a module"):
        client.Client
