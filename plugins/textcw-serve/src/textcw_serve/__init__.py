"""textcw-serve: run a textcw model as an HTTP service that learns from corrections.

``textcw serve MODEL [--learn]`` answers ``/predict`` and, with ``--learn``, ``/learn``: every
acknowledged update is first fsynced to an append-only log, so a crash loses none of them
(:mod:`textcw_serve.journal`, :mod:`textcw_serve.state`). :mod:`textcw_serve.client` talks to it
from Python. ``docs/serve.md`` in the textcw repository describes the API, the durability
guarantees and how they are tested.
"""

__version__ = "0.1.0"
