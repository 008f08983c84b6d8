import pytest

from textcw.plugins import use_registries
from toy_corpus import registries


@pytest.fixture(scope="session")
def regs():
    """The built-in catalogue plus the in-memory ``toy`` corpus, in use from the first test that
    asks for them (a superset of the built-ins, so later tests see every name they expect)."""
    toy = registries()
    with use_registries(toy):
        yield toy
