# Feed queue: S3 (directly, or through EventBridge) -> SQS, with a dead-letter queue.
#
# Messages are wake-ups only: the planner reads snapshot files from its own checkpoint forward,
# so a lost, duplicated or foreign message delays a batch but never loses or repeats one.

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  direct      = var.notification_mode == "direct"
  eventbridge = var.notification_mode == "eventbridge"

  bucket_arn     = "arn:${data.aws_partition.current.partition}:s3:::${var.bucket_name}"
  bucket_account = coalesce(var.bucket_account_id, data.aws_caller_identity.current.account_id)

  # SQS-managed SSE unless a customer-managed key is given (the two are mutually exclusive).
  sqs_managed_sse = var.kms_master_key_id == null

  # Paimon writes snapshot-<id> into <table>/snapshot/ (temporary files start with '.'
  # and the EARLIEST/LATEST hints have other names, so the prefix excludes both).
  table_snapshot_prefixes = {
    for t in var.tables :
    t => "${var.warehouse_prefix}${split(".", t)[0]}.db/${split(".", t)[1]}/snapshot/snapshot-"
  }

  # EventBridge's '*' also matches '/', so one pattern covers every database, table and branch.
  snapshot_key_wildcard = "${var.warehouse_prefix}*/snapshot/snapshot-*"

  snapshot_event_pattern = {
    source        = ["aws.s3"]
    "detail-type" = ["Object Created"]
    detail = {
      bucket = { name = [var.bucket_name] }
      object = { key = [{ wildcard = local.snapshot_key_wildcard }] }
    }
  }
}

resource "aws_sqs_queue" "dlq" {
  name                      = "${var.name}-dlq"
  message_retention_seconds = var.dlq_message_retention_seconds
  sqs_managed_sse_enabled   = local.sqs_managed_sse ? true : null
  kms_master_key_id         = var.kms_master_key_id
  tags                      = var.tags
}

resource "aws_sqs_queue" "this" {
  name                       = var.name
  visibility_timeout_seconds = var.visibility_timeout_seconds
  message_retention_seconds  = var.message_retention_seconds
  receive_wait_time_seconds  = var.receive_wait_time_seconds
  sqs_managed_sse_enabled    = local.sqs_managed_sse ? true : null
  kms_master_key_id          = var.kms_master_key_id

  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq.arn
    maxReceiveCount     = var.max_receive_count
  })

  tags = var.tags

  lifecycle {
    precondition {
      condition     = !(local.direct && var.manage_bucket_notification) || length(var.tables) > 0
      error_message = "notification_mode = \"direct\" needs at least one \"database.table\" in tables (or use notification_mode = \"eventbridge\" for a whole warehouse)."
    }
  }
}

# Only the feed queue may redrive into the dead-letter queue.
resource "aws_sqs_queue_redrive_allow_policy" "dlq" {
  queue_url = aws_sqs_queue.dlq.id

  redrive_allow_policy = jsonencode({
    redrivePermission = "byQueue"
    sourceQueueArns   = [aws_sqs_queue.this.arn]
  })
}

# Direct mode: only the warehouse bucket, owned by the expected account, may send.
data "aws_iam_policy_document" "queue_from_bucket" {
  count = local.direct ? 1 : 0

  statement {
    sid       = "AllowWarehouseBucketNotifications"
    effect    = "Allow"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.this.arn]

    principals {
      type        = "Service"
      identifiers = ["s3.amazonaws.com"]
    }

    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [local.bucket_arn]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [local.bucket_account]
    }
  }
}

# EventBridge mode: only our rule, in our account, may send.
data "aws_iam_policy_document" "queue_from_rule" {
  count = local.eventbridge ? 1 : 0

  statement {
    sid       = "AllowSnapshotRule"
    effect    = "Allow"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.this.arn]

    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com"]
    }

    condition {
      test     = "ArnEquals"
      variable = "aws:SourceArn"
      values   = [aws_cloudwatch_event_rule.snapshots[0].arn]
    }

    condition {
      test     = "StringEquals"
      variable = "aws:SourceAccount"
      values   = [data.aws_caller_identity.current.account_id]
    }
  }
}

resource "aws_sqs_queue_policy" "this" {
  queue_url = aws_sqs_queue.this.id
  policy    = one(concat(data.aws_iam_policy_document.queue_from_bucket[*].json, data.aws_iam_policy_document.queue_from_rule[*].json))
}

# --- direct: one S3 filter per table ---------------------------------------------------------

resource "aws_s3_bucket_notification" "direct" {
  count  = local.direct && var.manage_bucket_notification ? 1 : 0
  bucket = var.bucket_name

  dynamic "queue" {
    for_each = local.table_snapshot_prefixes
    content {
      id            = "paimon-feed-${var.name}-${replace(queue.key, ".", "-")}"
      queue_arn     = aws_sqs_queue.this.arn
      events        = ["s3:ObjectCreated:*"]
      filter_prefix = queue.value
    }
  }

  # S3 tests the destination's permission when the configuration is written.
  depends_on = [aws_sqs_queue_policy.this]
}

# --- eventbridge: the bucket sends every event to the default bus; one rule picks snapshots ---

resource "aws_s3_bucket_notification" "eventbridge" {
  count       = local.eventbridge && var.manage_bucket_notification ? 1 : 0
  bucket      = var.bucket_name
  eventbridge = true
}

resource "aws_cloudwatch_event_rule" "snapshots" {
  count       = local.eventbridge ? 1 : 0
  name        = "${var.name}-snapshots"
  description = "Paimon snapshot commits under s3://${var.bucket_name}/${var.warehouse_prefix}"

  event_pattern = jsonencode(local.snapshot_event_pattern)

  tags = var.tags
}

resource "aws_cloudwatch_event_target" "queue" {
  count     = local.eventbridge ? 1 : 0
  rule      = aws_cloudwatch_event_rule.snapshots[0].name
  target_id = "paimon-feed-queue"
  arn       = aws_sqs_queue.this.arn

  # Retry delivery for an hour, then give up: a notification is only a wake-up, and the
  # next commit of the table (or a feed's reconcile check) picks up what it would have said.
  retry_policy {
    maximum_event_age_in_seconds = 3600
    maximum_retry_attempts       = 24
  }
}
