"""AWS integration: the Lambda handler (:mod:`paimon_feed.aws.lambda_handler`).

Point the function's handler setting at ``paimon_feed.aws.lambda_handler.handler``. Importing
this package imports nothing from boto3; the handler needs the ``[s3]`` extra at run time.
"""

__all__: list[str] = []
