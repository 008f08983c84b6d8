"""The one time limit tests put on a command or a wait: a hang guard, not a performance test.

:data:`HANG_SECONDS` is far above any real run, cold caches and a loaded 2-core machine
included (the slowest command a test starts, a first ``textcw train`` in a fresh install that
compiles every kernel, takes about 80 s under load). A command still running then has hung;
``tests/conftest.py`` reports the test as a hang (``HANG: ...``), not as a failure of what the
test checks.
"""

HANG_SECONDS = 1800
