variable "name" {
  description = "Base name of the feed queue. The dead-letter queue is \"<name>-dlq\" and the EventBridge rule \"<name>-snapshots\"."
  type        = string

  validation {
    # SQS allows 80 characters; "-dlq" and "-snapshots" are appended.
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "name must be 1-64 characters of letters, digits, '-' and '_'."
  }
}

variable "bucket_name" {
  description = "Name of the S3 bucket that holds the Paimon warehouse. Only this bucket (or the EventBridge rule that matches it) may send to the queue."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket_name))
    error_message = "bucket_name must be a valid S3 bucket name (3-63 lowercase letters, digits, '.' and '-')."
  }
}

variable "bucket_account_id" {
  description = "AWS account that owns the warehouse bucket, used for the aws:SourceAccount condition in direct mode. null means the account Terraform runs in."
  type        = string
  default     = null

  validation {
    condition     = var.bucket_account_id == null || can(regex("^[0-9]{12}$", var.bucket_account_id))
    error_message = "bucket_account_id must be a 12-digit AWS account id or null."
  }
}

variable "warehouse_prefix" {
  description = "Key prefix of the warehouse inside the bucket, ending with '/' (\"warehouse/\" for s3://bucket/warehouse), or \"\" when the warehouse is the bucket root."
  type        = string
  default     = ""

  validation {
    condition     = var.warehouse_prefix == "" || (endswith(var.warehouse_prefix, "/") && !startswith(var.warehouse_prefix, "/"))
    error_message = "warehouse_prefix must be \"\" or end with '/' (and not start with '/'), e.g. \"warehouse/\"."
  }

  validation {
    # '*' and '\' are the special characters of EventBridge wildcard patterns.
    condition     = !can(regex("[*\\\\]", var.warehouse_prefix))
    error_message = "warehouse_prefix must not contain '*' or '\\'."
  }
}

variable "notification_mode" {
  description = "How S3 tells the queue about commits: \"direct\" (S3 event notification straight to SQS, one filter per table in var.tables) or \"eventbridge\" (bucket sends events to EventBridge; one wildcard rule covers every table of the warehouse)."
  type        = string
  default     = "direct"

  validation {
    condition     = contains(["direct", "eventbridge"], var.notification_mode)
    error_message = "notification_mode must be \"direct\" or \"eventbridge\"."
  }
}

variable "tables" {
  description = "Tables to notify about in direct mode, as \"database.table\". Each becomes one S3 filter with prefix <warehouse_prefix><database>.db/<table>/snapshot/snapshot-. Ignored in eventbridge mode."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.tables : can(regex("^[^./*]+\\.[^./*]+$", t))])
    error_message = "Each entry of tables must be \"database.table\" (exactly one '.', no '/' or '*')."
  }
}

variable "manage_bucket_notification" {
  description = "Required choice: whether this module writes the bucket's notification configuration. true REPLACES the WHOLE configuration of the bucket (every other queue, topic, function or EventBridge setting on it is removed): only for a bucket no one else gets notifications from. false: add the queue (direct) or eventbridge = true in the stack that owns the bucket's notifications."
  type        = bool
  nullable    = false
}

variable "kms_master_key_id" {
  description = "Customer-managed KMS key (ARN or id) for queue encryption. null (recommended) uses SQS-managed SSE, which S3 and EventBridge can write to without key-policy changes. A CMK's key policy must allow s3.amazonaws.com / events.amazonaws.com kms:GenerateDataKey and kms:Decrypt."
  type        = string
  default     = null
}

variable "visibility_timeout_seconds" {
  description = "Visibility timeout of the queue in seconds. With a Lambda consumer it must be at least the function timeout; AWS recommends six times the function timeout."
  type        = number
  default     = 720

  validation {
    condition     = var.visibility_timeout_seconds >= 0 && var.visibility_timeout_seconds <= 43200
    error_message = "visibility_timeout_seconds must be between 0 and 43200."
  }
}

variable "message_retention_seconds" {
  description = "How long an undelivered notification stays in the queue, in seconds. Notifications are only wake-ups (the planner reads snapshots itself), so a short retention loses nothing but latency."
  type        = number
  default     = 345600

  validation {
    condition     = var.message_retention_seconds >= 60 && var.message_retention_seconds <= 1209600
    error_message = "message_retention_seconds must be between 60 and 1209600."
  }
}

variable "receive_wait_time_seconds" {
  description = "Long-poll wait of ReceiveMessage in seconds (20 = maximum; fewer empty receives for SqsNotifier consumers)."
  type        = number
  default     = 20

  validation {
    condition     = var.receive_wait_time_seconds >= 0 && var.receive_wait_time_seconds <= 20
    error_message = "receive_wait_time_seconds must be between 0 and 20."
  }
}

variable "max_receive_count" {
  description = "Receives after which a message moves to the dead-letter queue. Counts every failed Lambda attempt and every throttled delivery."
  type        = number
  default     = 5

  validation {
    condition     = var.max_receive_count >= 1 && var.max_receive_count <= 1000
    error_message = "max_receive_count must be between 1 and 1000."
  }
}

variable "dlq_message_retention_seconds" {
  description = "Retention of the dead-letter queue in seconds (default 14 days, the maximum)."
  type        = number
  default     = 1209600

  validation {
    condition     = var.dlq_message_retention_seconds >= 60 && var.dlq_message_retention_seconds <= 1209600
    error_message = "dlq_message_retention_seconds must be between 60 and 1209600."
  }
}

variable "tags" {
  description = "Tags added to every resource that supports them."
  type        = map(string)
  default     = {}
}
