"""``ChangeFeed.sync()``: the blocking iterator for non-async code, in a real process."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import pytest
from support.tables import commit

# Idles on a table nobody commits to, then reports how the interrupt ended it.
IDLE_CONSUMER = textwrap.dedent(
    """
    import asyncio, sys, threading
    from pypaimon import CatalogFactory
    from paimon_feed import ChangeFeed, FeedClosedError

    table = CatalogFactory.create({"warehouse": sys.argv[1]}).get_table("db.events")
    feed = ChangeFeed(table, start="latest", consumer_id="sync-idle")
    try:
        if sys.argv[2] == "with":
            with feed.sync() as batches:
                print("idle", flush=True)
                for batch in batches:
                    print("unexpected batch", batch.snapshot_id, flush=True)
        else:
            print("idle", flush=True)
            for batch in feed.sync():
                print("unexpected batch", batch.snapshot_id, flush=True)
    except KeyboardInterrupt:
        try:
            asyncio.run(feed.__anext__())
        except FeedClosedError:
            print("interrupted, feed closed", flush=True)
        loops = [t.name for t in threading.enumerate() if t.name.startswith("paimon-feed-sync")]
        print("loop threads left:", loops, flush=True)
        sys.exit(130)
    """
)


def _default_sigint() -> None:
    # A child of a non-interactive shell may inherit SIGINT ignored; a user's terminal does not.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("form", ["with", "bare-for"])
def test_ctrl_c_ends_an_idle_sync_iteration_and_closes_the_feed(warehouse, append_table, form):
    commit(append_table, 0)
    process = subprocess.Popen(
        [sys.executable, "-c", IDLE_CONSUMER, warehouse, "with" if form == "with" else "for"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        assert process.stdout.readline().strip() == "idle"
        # Give the main thread time to block waiting for a batch; the outcome does not depend
        # on how long, only that the wait has begun.
        try:
            process.wait(timeout=1.5)
        except subprocess.TimeoutExpired:
            pass
        assert process.poll() is None, process.stderr.read()
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)  # before the fix: blocked until SIGKILL
    finally:
        process.kill()
    assert process.returncode == 130, (out, err)
    assert "interrupted, feed closed" in out
    assert "loop threads left: []" in out
    assert "unexpected batch" not in out
