"""``python -m paimon_feed.cli``: the ``paimon-feed`` command."""

import sys

from paimon_feed.cli import main

sys.exit(main())
