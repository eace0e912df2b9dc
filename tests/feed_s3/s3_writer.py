"""A writer in its own process for ``s3://`` tables on moto.

``python s3_writer.py CATALOG_OPTIONS_JSON DB.TABLE FIRST LAST [INTERVAL]`` commits numbers
FIRST..LAST with the deterministic rows of ``support.tables.rows_for``, sleeping INTERVAL seconds
between commits, then prints ``done``.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from support.tables import commit  # noqa: E402


def main() -> None:
    options, name = json.loads(sys.argv[1]), sys.argv[2]
    first, last = int(sys.argv[3]), int(sys.argv[4])
    interval = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    from pypaimon import CatalogFactory

    table = CatalogFactory.create(options).get_table(name)
    for n in range(first, last + 1):
        commit(table, n)
        if interval:
            time.sleep(interval)
    print("done", flush=True)


if __name__ == "__main__":
    main()
