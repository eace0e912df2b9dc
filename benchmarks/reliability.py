"""Reliability suite: try hard to break DESIGN.md's invariants, and count what happens.

    python -m benchmarks.reliability [--kills 50] [--soak 10000]

Scenarios (each also runs, reduced, as a test in tests/reliability/):

- crash:    a consumer process checkpointing after every batch is SIGKILLed at random points
            while a writer process commits; restarted each time.
- chaos:    hints dropped (30%), duplicated, reordered and delayed by a ChaosNotifier.
- faults:   transient storage errors injected into pypaimon's FileIO (10% of calls).
- fault-permanent: storage fails for good; the error must reach the consumer, checkpoint untouched.
- expiry:   snapshots expired under a lagging consumer, with and without its consumer file.
- soak:     thousands of snapshots through one feed: memory, descriptors, tasks stay flat.

Prints a table (scenario, runs, committed batches, lost, duplicated and whether allowed,
out-of-order, max delay) and writes benchmarks/results/reliability.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import asdict

from benchmarks._common.reliability_setup import Outcome, writer_main
from benchmarks.reliability_chaos import run_chaos, run_faults, run_permanent_fault
from benchmarks.reliability_crash import consumer_main, run_crash
from benchmarks.reliability_crash import verify_sink as verify_sink  # (re-exported: the tests)
from benchmarks.reliability_expiry import run_expiry
from benchmarks.reliability_soak import run_soak

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def report(outcomes: list[Outcome]) -> str:
    lines = [
        "| scenario | runs | committed batches | expected rows | lost | duplicated (allowed?) | out-of-order | max delay ms |",
        "|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for o in outcomes:
        delay = f"{o.max_delay_ms:.0f}" if o.max_delay_ms is not None else "–"
        allowed = "yes" if o.duplicates_allowed else "NO"
        lines.append(
            f"| {o.scenario} | {o.runs} | {o.committed_batches} | {o.expected_rows} | {o.lost} | "
            f"{o.duplicated} ({allowed}) | {o.out_of_order} | {delay} |"
        )
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_write":
        return writer_main(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), sys.argv[6])
    if len(sys.argv) > 1 and sys.argv[1] == "_consume":
        return consumer_main(sys.argv[2], sys.argv[3], sys.argv[4])
    parser = argparse.ArgumentParser(description="paimon-feed reliability suite")
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--chaos-commits", type=int, default=150)
    parser.add_argument("--fault-commits", type=int, default=150)
    parser.add_argument("--soak", type=int, default=10_000)
    args = parser.parse_args()
    outcomes = [
        run_crash(args.kills),
        run_chaos(args.chaos_commits),
        run_faults(args.fault_commits),
        run_permanent_fault(),
        run_expiry(),
        run_soak(args.soak),
    ]
    table = report(outcomes)
    print(table)
    for o in outcomes:
        notes = {k: v for k, v in o.notes.items() if k != "samples"}
        print(f"- {o.scenario}: {json.dumps(notes, default=str)}")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "reliability.json"), "w") as handle:
        json.dump({"outcomes": [asdict(o) | {"ok": o.ok} for o in outcomes], "table": table}, handle, indent=1, default=str)


if __name__ == "__main__":
    main()
