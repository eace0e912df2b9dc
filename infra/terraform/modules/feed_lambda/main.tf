# Feed Lambda: SQS -> paimon_feed.aws.lambda_handler -> processor, checkpointing per table.
#
# Concurrency: keep it small. Each invocation plans from a table's checkpoint and advances it
# with a conditional write, so two invocations working on the same table read the same
# snapshots and one of them loses the write: concurrency beyond a few only wastes work.
# maximum_concurrency on the event source is the limit: SQS polling starts no more invocations.
# A reserved concurrency (optional) would instead throttle deliveries, which count as receives
# and push messages to the DLQ; if one is set it must be >= maximum_concurrency.

data "aws_partition" "current" {}

locals {
  partition  = data.aws_partition.current.partition
  bucket_arn = "arn:${local.partition}:s3:::${var.warehouse_bucket}"

  # Every S3 permission is scoped to the warehouse prefix.
  warehouse_objects_arn = "${local.bucket_arn}/${var.warehouse_prefix}*"

  # Checkpoints: <table>/consumer/consumer-<id> of this consumer only, plus the "consumer/"
  # directory marker pyarrow's S3 filesystem creates before the first checkpoint of a table.
  checkpoint_arns = [
    "${local.bucket_arn}/${var.warehouse_prefix}*/consumer/consumer-${var.consumer_id}",
    "${local.bucket_arn}/${var.warehouse_prefix}*/consumer/",
  ]

  warehouse_uri  = trimsuffix("s3://${var.warehouse_bucket}/${var.warehouse_prefix}", "/")
  log_group_name = "/aws/lambda/${var.function_name}"

  feed_environment = merge(
    {
      PAIMON_FEED_WAREHOUSE       = local.warehouse_uri
      PAIMON_FEED_CATALOG_OPTIONS = jsonencode(var.catalog_options)
      PAIMON_FEED_CONSUMER_ID     = var.consumer_id
      PAIMON_FEED_PROCESSOR       = var.processor
    },
    length(var.tables) > 0 ? { PAIMON_FEED_TABLES = join(",", var.tables) } : {},
    var.start != null ? { PAIMON_FEED_START = var.start } : {},
  )

  package_from_image = var.package_image_uri != null
  package_from_file  = var.package_filename != null
  package_from_s3    = var.package_s3_bucket != null || var.package_s3_key != null
  package_sources    = length([for given in [local.package_from_image, local.package_from_file, local.package_from_s3] : given if given])
}

# --- role ---------------------------------------------------------------------------------------

data "aws_iam_policy_document" "assume_role" {
  statement {
    sid     = "LambdaAssumesRole"
    effect  = "Allow"
    actions = ["sts:AssumeRole"]

    principals {
      type        = "Service"
      identifiers = ["lambda.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "this" {
  name               = var.function_name
  description        = "Execution role of the paimon-feed function ${var.function_name}"
  assume_role_policy = data.aws_iam_policy_document.assume_role.json
  tags               = var.tags
}

data "aws_iam_policy_document" "permissions" {
  statement {
    sid       = "ReadWarehouse"
    effect    = "Allow"
    actions   = ["s3:GetObject"]
    resources = [local.warehouse_objects_arn]
  }

  # Listing is what makes S3 answer 404 (not 403) for a snapshot that does not exist yet;
  # S3 evaluates the s3:prefix condition against the requested key for that decision.
  statement {
    sid       = "ListWarehouse"
    effect    = "Allow"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]

    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = ["${var.warehouse_prefix}*"]
    }
  }

  statement {
    sid       = "WriteOwnCheckpoints"
    effect    = "Allow"
    actions   = ["s3:PutObject"]
    resources = local.checkpoint_arns
  }

  statement {
    sid    = "ConsumeFeedQueue"
    effect = "Allow"
    actions = [
      "sqs:ReceiveMessage",
      "sqs:DeleteMessage",
      "sqs:GetQueueAttributes",
      "sqs:ChangeMessageVisibility",
    ]
    resources = [var.queue_arn]
  }

  # Log streams are created by Lambda at run time; the ":*" covers only this group's streams.
  statement {
    sid       = "WriteOwnLogs"
    effect    = "Allow"
    actions   = ["logs:CreateLogStream", "logs:PutLogEvents"]
    resources = ["${aws_cloudwatch_log_group.this.arn}:*"]
  }
}

resource "aws_iam_role_policy" "permissions" {
  name   = "paimon-feed"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.permissions.json
}

# Only with a customer-managed key on the queue: receiving needs kms:Decrypt on that key.
data "aws_iam_policy_document" "queue_kms" {
  count = var.queue_kms_key_arn != null ? 1 : 0

  statement {
    sid       = "DecryptFeedQueue"
    effect    = "Allow"
    actions   = ["kms:Decrypt"]
    resources = [var.queue_kms_key_arn]
  }
}

resource "aws_iam_role_policy" "queue_kms" {
  count  = var.queue_kms_key_arn != null ? 1 : 0
  name   = "paimon-feed-queue-kms"
  role   = aws_iam_role.this.id
  policy = data.aws_iam_policy_document.queue_kms[0].json
}

# --- logs ---------------------------------------------------------------------------------------

resource "aws_cloudwatch_log_group" "this" {
  #checkov:skip=CKV_AWS_158:Log events are encrypted by CloudWatch Logs' service key by default; a customer-managed key is opt-in through var.log_kms_key_arn because its key policy must name the regional logs principal, which this module cannot assume.
  name              = local.log_group_name
  retention_in_days = var.log_retention_in_days
  kms_key_id        = var.log_kms_key_arn
  tags              = var.tags
}

# --- function -----------------------------------------------------------------------------------

resource "aws_lambda_function" "this" {
  #checkov:skip=CKV_AWS_115:Concurrency is limited where it does not throttle deliveries: the SQS event source's maximum_concurrency. A reservation (var.reserved_concurrent_executions, optional) throttles, and throttled receives can dead-letter healthy messages.
  #checkov:skip=CKV_AWS_116:The function is invoked synchronously by the SQS event source mapping; failed messages go to the queue's redrive dead-letter queue (feed_queue module). A function DLQ only applies to asynchronous invocations.
  #checkov:skip=CKV_AWS_117:The function only calls the S3 and SQS APIs and accepts no inbound connections; a VPC would need NAT or VPC endpoints without narrowing what the role may do.
  #checkov:skip=CKV_AWS_272:Code signing needs an AWS Signer profile and a signing step in the release pipeline, which this project does not ship; the operator chooses the package (image, zip or S3 object) and its provenance.
  #checkov:skip=CKV_AWS_173:The environment holds no secrets (warehouse URI, consumer id, processor name, catalog options without credentials) and is encrypted at rest with Lambda's service key; var.environment_kms_key_arn opts into a customer-managed key.
  function_name = var.function_name
  description   = var.description
  role          = aws_iam_role.this.arn
  architectures = [var.architecture]
  memory_size   = var.memory_size
  timeout       = var.timeout

  reserved_concurrent_executions = var.reserved_concurrent_executions

  # A container image brings its own runtime and takes the handler as its command.
  package_type = local.package_from_image ? "Image" : "Zip"
  image_uri    = var.package_image_uri
  handler      = local.package_from_image ? null : var.handler
  runtime      = local.package_from_image ? null : var.runtime
  layers       = local.package_from_image ? null : var.layers

  dynamic "image_config" {
    for_each = local.package_from_image ? [var.handler] : []
    content {
      command = [image_config.value]
    }
  }

  filename          = var.package_filename
  s3_bucket         = var.package_s3_bucket
  s3_key            = var.package_s3_key
  s3_object_version = var.package_s3_object_version
  source_code_hash  = local.package_from_file ? filebase64sha256(var.package_filename) : var.package_source_code_hash

  kms_key_arn = var.environment_kms_key_arn

  environment {
    variables = merge(var.extra_environment_variables, local.feed_environment)
  }

  tracing_config {
    mode = "PassThrough"
  }

  tags = var.tags

  lifecycle {
    precondition {
      condition     = local.package_sources == 1
      error_message = "Give exactly one deployment package: package_image_uri, package_filename, or package_s3_bucket + package_s3_key."
    }

    precondition {
      condition     = !local.package_from_s3 || (var.package_s3_bucket != null && var.package_s3_key != null)
      error_message = "An S3 deployment package needs both package_s3_bucket and package_s3_key."
    }

    precondition {
      condition     = var.reserved_concurrent_executions == null ? true : var.maximum_concurrency <= var.reserved_concurrent_executions
      error_message = "maximum_concurrency must not exceed reserved_concurrent_executions, or Lambda throttles deliveries and messages reach the DLQ."
    }
  }

  # The role must be able to write logs before the first invocation.
  depends_on = [aws_iam_role_policy.permissions, aws_cloudwatch_log_group.this]
}

resource "aws_lambda_event_source_mapping" "queue" {
  event_source_arn = var.queue_arn
  function_name    = aws_lambda_function.this.arn
  enabled          = var.event_source_enabled

  batch_size                         = var.batch_size
  maximum_batching_window_in_seconds = var.maximum_batching_window_in_seconds

  # The handler returns the ids of the messages whose table failed; only those are retried.
  function_response_types = ["ReportBatchItemFailures"]

  scaling_config {
    maximum_concurrency = var.maximum_concurrency
  }

  # Creating the mapping checks that the role may receive from the queue.
  depends_on = [aws_iam_role_policy.permissions, aws_iam_role_policy.queue_kms]
}
