"""textcw.client hands out the client module an installed plugin declares (group textcw.client)."""

from __future__ import annotations

import types

import pytest

import textcw.client as client
from textcw.errors import PluginError


class _EntryPoint:
    def __init__(self, value, module=None, error=None):
        self.value, self._module, self._error = value, module, error

    def load(self):
        if self._error:
            raise self._error
        return self._module


@pytest.fixture
def entry_points(monkeypatch):
    declared = []
    monkeypatch.setattr(client.metadata, "entry_points",
                        lambda group: [e for e in declared] if group == client.GROUP else [])
    client.provider.cache_clear()
    yield declared
    client.provider.cache_clear()


def test_the_declared_module_provides_the_client(entry_points):
    module = types.ModuleType("someone.client")
    module.Client, module.ServiceError, module.ServiceUnavailableError = object, KeyError, OSError
    entry_points.append(_EntryPoint("someone.client", module))
    assert client.Client is object and client.ServiceError is KeyError
    with pytest.raises(AttributeError, match="has no attribute 'Other'"):
        client.Other


def test_without_a_provider_it_says_what_to_install(entry_points):
    with pytest.raises(PluginError, match=r"none is installed: install it from a textcw checkout with "
                                          r"pip install \./plugins/textcw-serve"):
        client.Client


def test_two_providers_or_a_broken_one_are_named(entry_points):
    entry_points += [_EntryPoint("a.client", types.ModuleType("a")), _EntryPoint("b.client", None)]
    with pytest.raises(PluginError, match=r"several installed plugins provide textcw.client \(a.client, b.client\)"):
        client.Client
    entry_points[:] = [_EntryPoint("c.client", error=ImportError("no module named c"))]
    client.provider.cache_clear()
    with pytest.raises(PluginError, match=r"c.client \(entry point textcw.client\) failed to import: "
                                          r"ImportError: no module named c"):
        client.Client
    entry_points[:] = [_EntryPoint("d.client", types.ModuleType("d.client"))]
    client.provider.cache_clear()
    with pytest.raises(PluginError, match=r"d.client provides no Client"):
        client.Client
