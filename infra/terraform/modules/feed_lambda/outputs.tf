output "function_name" {
  description = "Name of the feed function."
  value       = aws_lambda_function.this.function_name
}

output "function_arn" {
  description = "ARN of the feed function."
  value       = aws_lambda_function.this.arn
}

output "role_arn" {
  description = "ARN of the function's execution role (grant it more, e.g. to the processor's sink, with extra role policies)."
  value       = aws_iam_role.this.arn
}

output "role_name" {
  description = "Name of the function's execution role."
  value       = aws_iam_role.this.name
}

output "log_group_name" {
  description = "Log group of the function."
  value       = aws_cloudwatch_log_group.this.name
}

output "event_source_mapping_uuid" {
  description = "UUID of the SQS event source mapping."
  value       = aws_lambda_event_source_mapping.queue.uuid
}
