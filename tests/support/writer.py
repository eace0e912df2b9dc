"""A writer in its own process: ``python writer.py WAREHOUSE DB.TABLE FIRST LAST [INTERVAL]``.

Commits numbers FIRST..LAST with the deterministic rows of ``tables.rows_for``, sleeping
INTERVAL seconds between commits, then prints ``done``.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from support.tables import catalog, commit  # noqa: E402


def main() -> None:
    warehouse, name, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    interval = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    table = catalog(warehouse).get_table(name)
    for n in range(first, last + 1):
        commit(table, n)
        if interval:
            time.sleep(interval)
    print("done", flush=True)


if __name__ == "__main__":
    main()
