output "queue_url" {
  description = "URL of the feed queue; also usable by SqsNotifier(queue_url=...) consumers outside Lambda."
  value       = module.queue.queue_url
}

output "queue_arn" {
  description = "ARN of the feed queue."
  value       = module.queue.queue_arn
}

output "dlq_arn" {
  description = "ARN of the dead-letter queue."
  value       = module.queue.dlq_arn
}

output "eventbridge_rule_arn" {
  description = "ARN of the snapshot rule (eventbridge mode), else null."
  value       = module.queue.eventbridge_rule_arn
}

output "snapshot_key_filters" {
  description = "The S3 prefixes (direct) or EventBridge key wildcard (eventbridge) that select snapshot commits."
  value       = module.queue.snapshot_key_filters
}

output "function_name" {
  description = "Name of the feed function."
  value       = module.lambda.function_name
}

output "function_role_arn" {
  description = "Execution role of the function; attach the processor's own permissions (its sink) to it."
  value       = module.lambda.role_arn
}

output "log_group_name" {
  description = "Log group of the function."
  value       = module.lambda.log_group_name
}

output "bucket_notification_to_merge" {
  description = "The queue blocks (direct) or the EventBridge flag to merge into the bucket's notification configuration when manage_bucket_notification = false."
  value       = module.queue.bucket_notification_to_merge
}
