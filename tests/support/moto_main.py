"""``python tests/support/moto_main.py``: ``moto_server``, with two fidelity gaps closed.

- moto 5.2 stores a bucket's ``EventBridgeConfiguration`` (and sends the bucket's events to
  EventBridge) but leaves it out of ``GetBucketNotificationConfiguration``; AWS returns it.
  Without it, ``paimon-feed wire`` on moto would turn the flag on at every run.
- moto 5.2's ``SetQueueAttributes`` drops the queue's policy when the call does not name
  ``Policy`` (changing the visibility timeout removes it); AWS keeps it.
"""

from __future__ import annotations

import sys
from typing import Any


def _patch() -> None:
    from moto.s3.responses import S3Response

    original = S3Response.get_bucket_notification

    def get_bucket_notification(self: Any) -> Any:
        response = original(self)
        config = self.backend.get_bucket_notification_configuration(self.bucket_name)
        if config is None or config.event_bridge is None:
            return response
        status, headers, body = response
        text = body.decode() if isinstance(body, bytes) else body
        closing = "</NotificationConfiguration>"
        if closing in text:
            text = text.replace(closing, "<EventBridgeConfiguration/>" + closing)
        else:  # an empty configuration was rendered without its element
            text = ('<?xml version="1.0" encoding="UTF-8"?><NotificationConfiguration>'
                    "<EventBridgeConfiguration/></NotificationConfiguration>")
        return status, headers, text

    S3Response.get_bucket_notification = get_bucket_notification  # type: ignore[method-assign]

    from moto.sqs.models import Queue

    set_attributes = Queue._set_attributes

    def keep_policy(self: Any, attributes: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        policy = getattr(self, "policy", None)
        set_attributes(self, attributes, *args, **kwargs)
        if "Policy" not in attributes:
            self.policy = policy

    Queue._set_attributes = keep_policy  # type: ignore[method-assign]


if __name__ == "__main__":
    _patch()
    from moto.server import main

    sys.exit(main())
