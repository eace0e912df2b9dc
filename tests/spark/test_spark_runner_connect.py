"""``foreach_batch`` with a Spark Connect session (the ``connect`` fixture: a local Connect
server) and the same guarantees as on classic Spark.

Oracles: the rows the writer wrote and the consumer file Paimon reads.
"""

from __future__ import annotations

import pytest
from runner_support import RUN_TIMEOUT_S, IdempotentSink
from spark_support import WriterThread, commit, delivered_changes, expected_changes, wait_until

from paimon_feed.spark import foreach_batch

pytestmark = [pytest.mark.spark]


def test_a_connect_session_gets_every_change_exactly_once_across_a_crash(connect, paimon):
    table = paimon.create_pk_table()
    for n in range(1, 7):
        commit(table, n)
    sink = IdempotentSink(fail_on=4)
    options = dict(warehouse=paimon.path, table="db.orders", consumer_id="etl", start="earliest",
                   includeRowKind=True, maxSnapshotsPerTrigger=2)
    runner = foreach_batch(connect, sink, **options)
    with pytest.raises(RuntimeError, match="batch 4"):
        runner.await_termination(RUN_TIMEOUT_S)
    assert table.consumer_manager().consumer("etl").next_snapshot == 3

    runner = foreach_batch(connect, sink, **options)
    WriterThread(table, 7, 7).start().join()  # pushed to the running runner
    wait_until(lambda: 7 in sink.batches, RUN_TIMEOUT_S, "the batch of snapshot 7")
    runner.stop()
    assert sink.calls == [2, 4, 4, 6, 7] and sink.replays == [4]
    assert delivered_changes(sink.rows()) == expected_changes(table, range(1, 8))
    assert table.consumer_manager().consumer("etl").next_snapshot == 8
