"""help() on the public API shows docstrings, never source comments: pydoc takes the comment
block right above an undocumented method (``# lifecycle ---``) for its documentation."""

from __future__ import annotations

import inspect
import pydoc
import re

import pytest

import paimon_feed
import paimon_feed.feed
import paimon_feed.metrics

_COMMENT_LINE = re.compile(r"^[\s|]*#")
_PUBLIC = [
    getattr(paimon_feed, name)
    for name in paimon_feed.__all__
    if inspect.isclass(getattr(paimon_feed, name)) or inspect.isfunction(getattr(paimon_feed, name))
]


@pytest.mark.parametrize(
    "thing", [paimon_feed.feed, paimon_feed.metrics, *_PUBLIC], ids=lambda thing: thing.__name__
)
def test_help_shows_no_source_comments(thing):
    text = pydoc.plain(pydoc.render_doc(thing))
    assert [line for line in text.splitlines() if _COMMENT_LINE.match(line)] == []
