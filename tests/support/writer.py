"""A writer in its own process (tests/ on ``PYTHONPATH``: :func:`support.fixtures.python_env`)::

    python -m support.writer WAREHOUSE DB.TABLE FIRST LAST [INTERVAL]
    python -m support.writer CATALOG_OPTIONS_JSON DB.TABLE FIRST LAST [INTERVAL]

Commits numbers FIRST..LAST with the deterministic rows of ``tables.rows_for``, sleeping
INTERVAL seconds between commits, then prints ``done``. A local warehouse is a path; an
``s3://`` table on moto is reached with its catalog options, a JSON object.
"""

import json
import sys
import time

from pypaimon import CatalogFactory

from support.tables import catalog, commit


def main() -> None:
    where, name, first, last = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    interval = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    if where.startswith("{"):
        table = CatalogFactory.create(json.loads(where)).get_table(name)
    else:
        table = catalog(where).get_table(name)
    for n in range(first, last + 1):
        commit(table, n)
        if interval:
            time.sleep(interval)
    print("done", flush=True)


if __name__ == "__main__":
    main()
