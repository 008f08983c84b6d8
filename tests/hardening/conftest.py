"""Hypothesis settings for the hardening tests.

CI runs a fixed, derandomised set of examples so that a failure reproduces exactly; set
``TEXTCW_FUZZ=deep`` to search longer with fresh random examples.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=60, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "deep", max_examples=2000, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("deep" if os.environ.get("TEXTCW_FUZZ") == "deep" else "ci")
