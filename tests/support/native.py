"""The ``[native]`` extra in tests: required in CI, a clean skip where it is not installed, and a
spy on which splits pypaimon-rust read."""

from __future__ import annotations

import os

import pytest

from paimon_feed.planner import _native_read

__all__ = ["require_native", "spy_native_reads"]


def require_native() -> None:
    """Skip the test if ``pypaimon-rust`` is not installed here; fail in CI, which installs
    ``[dev]`` (and so ``[native]``)."""
    if _native_read._runtime_available():
        return
    reason = "pypaimon-rust (paimon-feed[native]) is not installed"
    if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        pytest.fail(f"{reason}; CI installs [dev], which includes it", pytrace=False)
    pytest.skip(reason)


def spy_native_reads(monkeypatch, *, native: bool) -> list[bool]:
    """Turn native reads on or off; the returned list gets, per split offered to a native
    reader, whether Rust read it (``False``: it went to the other path)."""
    monkeypatch.setenv(_native_read.ENVIRONMENT_SWITCH, "1" if native else "0")
    used: list[bool] = []
    original = _native_read.NativeRead._split

    def spy(self, split, target, other):
        taken = [True]

        def fallback(splits):
            taken[0] = False
            return other(splits)

        yield from original(self, split, target, fallback)
        used.append(taken[0])

    monkeypatch.setattr(_native_read.NativeRead, "_split", spy)
    return used
