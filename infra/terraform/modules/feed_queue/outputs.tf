output "queue_url" {
  description = "URL of the feed queue (SqsNotifier(queue_url=...) or PAIMON_FEED_* consumers)."
  value       = aws_sqs_queue.this.id
}

output "queue_arn" {
  description = "ARN of the feed queue (event source of the Lambda function)."
  value       = aws_sqs_queue.this.arn
}

output "queue_name" {
  description = "Name of the feed queue."
  value       = aws_sqs_queue.this.name
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue that receives notifications the consumer failed max_receive_count times."
  value       = aws_sqs_queue.dlq.arn
}

output "dlq_url" {
  description = "URL of the dead-letter queue (for alarms and redrive)."
  value       = aws_sqs_queue.dlq.id
}

output "eventbridge_rule_arn" {
  description = "ARN of the snapshot rule in eventbridge mode; null in direct mode."
  value       = one(aws_cloudwatch_event_rule.snapshots[*].arn)
}

output "snapshot_key_filters" {
  description = "What selects snapshot commits: the S3 filter prefixes (direct) or the EventBridge key wildcard (eventbridge)."
  value       = local.direct ? values(local.table_snapshot_prefixes) : [local.snapshot_key_wildcard]
}

output "dlq_name" {
  description = "Name of the dead-letter queue (the QueueName dimension of its CloudWatch metrics)."
  value       = aws_sqs_queue.dlq.name
}

output "bucket_notification_to_merge" {
  description = "With manage_bucket_notification = false: what to merge into the aws_s3_bucket_notification of the stack that owns the bucket's notifications. direct: one queue block per table (id, queue_arn, events, filter_prefix); eventbridge: eventbridge = true. (paimon-feed wire merges it through the S3 API instead.)"
  value = {
    eventbridge = local.eventbridge
    queues = local.direct ? [
      for table, prefix in local.table_snapshot_prefixes : {
        id            = "paimon-feed-${var.name}-${replace(table, ".", "-")}"
        queue_arn     = aws_sqs_queue.this.arn
        events        = ["s3:ObjectCreated:*"]
        filter_prefix = prefix
      }
    ] : []
  }
}
