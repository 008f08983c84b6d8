import pytest

from toy_corpus import registries


@pytest.fixture(scope="session")
def regs():
    """The built-in catalogue plus the in-memory ``toy`` corpus."""
    return registries()
