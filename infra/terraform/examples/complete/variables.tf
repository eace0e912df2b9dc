variable "region" {
  description = "AWS region of the warehouse bucket; the queue, rule and function are created there too (S3 notifications cannot cross regions)."
  type        = string

  validation {
    condition     = can(regex("^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-[0-9]+$", var.region))
    error_message = "region must be an AWS region name such as \"eu-west-1\"."
  }
}

variable "name" {
  description = "Name of the feed: names the queue (<name>, <name>-dlq), the EventBridge rule (<name>-snapshots), the function and its role."
  type        = string
  default     = "paimon-feed"

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.name))
    error_message = "name must be 1-64 characters of letters, digits, '-' and '_'."
  }
}

variable "warehouse_bucket" {
  description = "Existing S3 bucket holding the Paimon warehouse (the bucket of s3://<bucket>/<prefix>)."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.warehouse_bucket))
    error_message = "warehouse_bucket must be an S3 bucket name: 3-63 lowercase letters, digits, '.' and '-', starting and ending with a letter or digit."
  }

  validation {
    condition     = !can(regex("\\.\\.", var.warehouse_bucket)) && !can(regex("^[0-9]+(\\.[0-9]+){3}$", var.warehouse_bucket))
    error_message = "warehouse_bucket must not contain '..' or look like an IP address."
  }
}

variable "warehouse_prefix" {
  description = "Key prefix of the warehouse in the bucket, ending with '/' (\"warehouse/\" for s3://bucket/warehouse), or \"\" when the warehouse is the bucket root."
  type        = string
  default     = ""

  validation {
    condition     = var.warehouse_prefix == "" || (endswith(var.warehouse_prefix, "/") && !startswith(var.warehouse_prefix, "/"))
    error_message = "warehouse_prefix must be \"\" or end with '/' (and not start with '/'), e.g. \"warehouse/\"."
  }

  validation {
    condition     = !can(regex("[*?\\\\]", var.warehouse_prefix))
    error_message = "warehouse_prefix must not contain '*', '?' or '\\' (they are wildcards in IAM and EventBridge patterns)."
  }
}

variable "notification_mode" {
  description = "\"direct\": S3 notifies the queue itself, one filter per table in var.tables (no extra service, no extra cost). \"eventbridge\": the bucket sends its events to EventBridge and one wildcard rule forwards every snapshot commit of the warehouse (new tables need no change)."
  type        = string
  default     = "direct"

  validation {
    condition     = contains(["direct", "eventbridge"], var.notification_mode)
    error_message = "notification_mode must be \"direct\" or \"eventbridge\"."
  }
}

variable "tables" {
  description = "Tables as \"database.table\". In direct mode: the tables S3 notifies about (at least one). In both modes: the function's allow-list; empty (eventbridge only) means every table of the warehouse."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.tables : can(regex("^[^./,*]+\\.[^./,*]+$", t))])
    error_message = "Each entry of tables must be \"database.table\" (exactly one '.', no ',', '/' or '*')."
  }
}

variable "manage_bucket_notification" {
  description = "Required choice: whether to write the bucket's notification configuration. true REPLACES any existing one (queues, topics, functions, EventBridge) on the bucket; false if another stack owns it (then add the queue or eventbridge = true there)."
  type        = bool
  nullable    = false
}

variable "consumer_id" {
  description = "Consumer id of the function: it keeps its position in <table>/consumer/consumer-<id>, which Paimon's snapshot expiration honours."
  type        = string

  validation {
    # [A-Za-z0-9._-]+ as paimon_feed.checkpoint accepts it: not starting with '.' or '-', at most 200.
    condition     = can(regex("^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$", var.consumer_id))
    error_message = "consumer_id must be 1-200 characters of [A-Za-z0-9._-], not starting with '.' or '-'."
  }
}

variable "processor" {
  description = "Function that receives the FeedBatches, as \"package.module:function\"; it must be inside the deployment package."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$", var.processor))
    error_message = "processor must look like \"package.module:function\"."
  }
}

variable "catalog_options" {
  description = "Extra pypaimon catalog options, e.g. { \"fs.s3.region\" = \"eu-west-1\" }. No credentials: the function uses its role."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k in keys(var.catalog_options) : !can(regex("(?i)(secret|access[-._]?key|session[-._]?token|password)", k))])
    error_message = "catalog_options must not carry credentials; the function reads S3 with its IAM role."
  }
}

variable "start" {
  description = "Where a table without a checkpoint starts (paimon_feed.start): \"latest-full\", \"latest\", \"earliest\", \"42\" or \"snapshot:42\", \"time:<ISO-8601>\" or \"time:-1h\". null uses the library default (latest-full)."
  type        = string
  default     = null

  validation {
    condition     = var.start == null || can(regex("(?i)^(latest-full|latest|earliest|(snapshot:)?[0-9]+|time:.+|-[0-9.]+ ?(ms|s|m|h|d|w))$", var.start))
    error_message = "start must be latest-full, latest, earliest, a snapshot id (42 or snapshot:42), time:<ISO-8601> or a relative time such as time:-1h."
  }
}

variable "package_image_uri" {
  description = "ECR image with paimon_feed, its dependencies and the processor (recommended: pypaimon's dependencies exceed the 250 MB zip limit). Give this, package_filename, or package_s3_bucket + package_s3_key."
  type        = string
  default     = null
}

variable "package_filename" {
  description = "Local zip with paimon_feed, its dependencies and the processor (must unpack to under 250 MB)."
  type        = string
  default     = null

  validation {
    condition     = var.package_filename == null || can(regex("\\.zip$", var.package_filename))
    error_message = "package_filename must be a .zip file."
  }
}

variable "package_s3_bucket" {
  description = "Bucket of the deployment zip, when it is uploaded to S3 instead of given as package_filename."
  type        = string
  default     = null
}

variable "package_s3_key" {
  description = "Key of the deployment zip in package_s3_bucket."
  type        = string
  default     = null
}

variable "runtime" {
  description = "Python runtime the package was built for."
  type        = string
  default     = "python3.12"

  validation {
    condition     = contains(["python3.11", "python3.12"], var.runtime)
    error_message = "runtime must be \"python3.11\" or \"python3.12\"."
  }
}

variable "memory_size" {
  description = "Memory of the function in MB."
  type        = number
  default     = 1024

  validation {
    condition     = var.memory_size >= 128 && var.memory_size <= 10240
    error_message = "memory_size must be between 128 and 10240."
  }
}

variable "lambda_timeout" {
  description = "Timeout of one invocation in seconds; the queue's visibility timeout is set to six times this."
  type        = number
  default     = 120

  validation {
    condition     = var.lambda_timeout >= 10 && var.lambda_timeout <= 900
    error_message = "lambda_timeout must be between 10 and 900 seconds."
  }
}

variable "reserved_concurrency" {
  description = "Optional reserved concurrency of the function (null: none, the default). maximum_concurrency is the limit to use; a reservation throttles deliveries instead. If set, at least maximum_concurrency."
  type        = number
  default     = null

  validation {
    condition     = var.reserved_concurrency == null ? true : var.reserved_concurrency >= 2 && var.reserved_concurrency <= 100
    error_message = "reserved_concurrency must be null or between 2 and 100 (at least the SQS minimum of maximum_concurrency)."
  }
}

variable "maximum_concurrency" {
  description = "Most concurrent invocations the SQS event source starts: the feed's concurrency limit. Small on purpose: checkpoints per table are conditional writes, so parallel invocations on one table only waste work."
  type        = number
  default     = 2

  validation {
    condition     = var.maximum_concurrency >= 2 && var.maximum_concurrency <= 1000
    error_message = "maximum_concurrency must be between 2 and 1000."
  }
}

variable "batch_size" {
  description = "Most messages per invocation."
  type        = number
  default     = 10

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10000
    error_message = "batch_size must be between 1 and 10000."
  }
}

variable "maximum_batching_window_in_seconds" {
  description = "Seconds Lambda gathers messages before invoking (0 = lowest latency; more coalesces commit bursts)."
  type        = number
  default     = 1

  validation {
    condition     = var.maximum_batching_window_in_seconds >= 0 && var.maximum_batching_window_in_seconds <= 300
    error_message = "maximum_batching_window_in_seconds must be between 0 and 300."
  }
}

variable "log_retention_in_days" {
  description = "Retention of the function's logs in days."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_in_days)
    error_message = "log_retention_in_days must be a value CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, ...)."
  }
}

variable "alarm_actions" {
  description = "ARNs (e.g. SNS topics) notified when the dead-letter queue holds messages, i.e. a table keeps failing."
  type        = list(string)
  default     = []
}

variable "tags" {
  description = "Tags for every resource (applied as provider default_tags)."
  type        = map(string)
  default     = {}
}
