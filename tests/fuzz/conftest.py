"""Hypothesis profiles for the fuzz tests.

- ``fuzz-ci`` (the default): a bounded number of examples per test, so ``pytest tests/fuzz``
  stays well under a minute on a 2-core machine.
- ``fuzz-campaign``: a long local run, chosen by ``PAIMON_FEED_FUZZ_EXAMPLES=N`` (examples per
  test), e.g. ``PAIMON_FEED_FUZZ_EXAMPLES=20000 pytest tests/fuzz --hypothesis-show-statistics``.

Only the tests in this folder use Hypothesis, so loading a profile here changes no other test.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

CI_EXAMPLES = 300
CAMPAIGN_EXAMPLES = os.environ.get("PAIMON_FEED_FUZZ_EXAMPLES", "").strip()

settings.register_profile(
    "fuzz-ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz-campaign",
    parent=settings.get_profile("fuzz-ci"),
    max_examples=int(CAMPAIGN_EXAMPLES or CI_EXAMPLES),
)
settings.load_profile("fuzz-campaign" if CAMPAIGN_EXAMPLES else "fuzz-ci")
