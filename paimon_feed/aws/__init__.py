"""AWS integration: the Lambda handler (:mod:`paimon_feed.aws.lambda_handler`).

``lambda_handler`` is the thin entry point (and documents the function's settings and
promises); ``config`` reads the environment into a ``HandlerConfig``; ``invocation`` routes an
event's hints to tables and catches each table up on :mod:`paimon_feed.progress`.

Point the function's handler setting at ``paimon_feed.aws.lambda_handler.handler``. Importing
this package imports nothing from boto3; the handler needs the ``[s3]`` extra at run time.
"""

__all__: list[str] = []
