# Complete example: a Paimon warehouse bucket -> feed queue -> feed Lambda.
# See README.md for the two notification modes and what they cost.

provider "aws" {
  region = var.region

  default_tags {
    tags = merge({ "paimon-feed:feed" = var.name }, var.tags)
  }
}

module "queue" {
  source = "../../modules/feed_queue"

  name                       = var.name
  bucket_name                = var.warehouse_bucket
  warehouse_prefix           = var.warehouse_prefix
  notification_mode          = var.notification_mode
  tables                     = var.tables
  manage_bucket_notification = var.manage_bucket_notification

  # AWS's rule for SQS event sources: visibility timeout = 6 x function timeout.
  visibility_timeout_seconds = 6 * var.lambda_timeout
}

module "lambda" {
  source = "../../modules/feed_lambda"

  function_name = var.name
  runtime       = var.runtime
  memory_size   = var.memory_size
  timeout       = var.lambda_timeout

  package_image_uri = var.package_image_uri
  package_filename  = var.package_filename
  package_s3_bucket = var.package_s3_bucket
  package_s3_key    = var.package_s3_key

  warehouse_bucket = var.warehouse_bucket
  warehouse_prefix = var.warehouse_prefix
  catalog_options  = var.catalog_options
  consumer_id      = var.consumer_id
  processor        = var.processor
  tables           = var.tables
  start            = var.start

  queue_arn                          = module.queue.queue_arn
  batch_size                         = var.batch_size
  maximum_batching_window_in_seconds = var.maximum_batching_window_in_seconds
  maximum_concurrency                = var.maximum_concurrency
  reserved_concurrent_executions     = var.reserved_concurrency

  log_retention_in_days = var.log_retention_in_days
}

# Messages in the DLQ mean a table failed max_receive_count times in a row: page someone.
resource "aws_cloudwatch_metric_alarm" "dlq_not_empty" {
  alarm_name          = "${var.name}-dlq-not-empty"
  alarm_description   = "paimon-feed ${var.name}: notifications reached the dead-letter queue; see the function's logs (${module.lambda.log_group_name})."
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = module.queue.dlq_name }
  statistic           = "Maximum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = var.alarm_actions
}
