# --- function -----------------------------------------------------------------------------------

variable "function_name" {
  description = "Name of the Lambda function; also names its IAM role and its log group (/aws/lambda/<function_name>)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,64}$", var.function_name))
    error_message = "function_name must be 1-64 characters of letters, digits, '-' and '_'."
  }
}

variable "description" {
  description = "Description of the Lambda function."
  type        = string
  default     = "paimon-feed: plans Paimon snapshot commits announced on SQS and hands them to a processor"
}

variable "handler" {
  description = "Handler of the function (the image command for container images). The packaged paimon_feed provides paimon_feed.aws.lambda_handler.handler."
  type        = string
  default     = "paimon_feed.aws.lambda_handler.handler"
}

variable "runtime" {
  description = "Python runtime of the function (the package is built for one of these)."
  type        = string
  default     = "python3.12"

  validation {
    condition     = contains(["python3.11", "python3.12"], var.runtime)
    error_message = "runtime must be \"python3.11\" or \"python3.12\"."
  }
}

variable "architecture" {
  description = "Instruction set of the function; must match the wheels (pyarrow) inside the package."
  type        = string
  default     = "x86_64"

  validation {
    condition     = contains(["x86_64", "arm64"], var.architecture)
    error_message = "architecture must be \"x86_64\" or \"arm64\"."
  }
}

variable "memory_size" {
  description = "Memory of the function in MB (CPU scales with it). Planning reads manifests with pyarrow; 1024 MB is a comfortable start."
  type        = number
  default     = 1024

  validation {
    condition     = var.memory_size >= 128 && var.memory_size <= 10240
    error_message = "memory_size must be between 128 and 10240 MB."
  }
}

variable "timeout" {
  description = "Timeout of one invocation in seconds. Keep the queue's visibility timeout at six times this value."
  type        = number
  default     = 120

  validation {
    condition     = var.timeout >= 1 && var.timeout <= 900
    error_message = "timeout must be between 1 and 900 seconds."
  }
}

variable "reserved_concurrent_executions" {
  description = "Optional reserved concurrency of the function; null (the default) reserves none. maximum_concurrency is the limit to use: it stops the event source from starting invocations, while a reservation throttles deliveries, which count as receives and can dead-letter healthy messages. If set, it must be >= maximum_concurrency."
  type        = number
  default     = null

  validation {
    # 0 would throttle every delivery (pushing messages to the DLQ). Terraform's || does not
    # short-circuit, hence the conditional.
    condition     = var.reserved_concurrent_executions == null ? true : var.reserved_concurrent_executions >= 1
    error_message = "reserved_concurrent_executions must be null or at least 1."
  }
}

variable "layers" {
  description = "ARNs of Lambda layers for zip packages (e.g. one holding pyarrow). Container images cannot use layers."
  type        = list(string)
  default     = []
}

variable "extra_environment_variables" {
  description = "Additional environment variables for the processor. Names starting with PAIMON_FEED_ are reserved for the module. Never put credentials here: the function uses its role."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k in keys(var.extra_environment_variables) : !startswith(k, "PAIMON_FEED_")])
    error_message = "extra_environment_variables must not set PAIMON_FEED_* names; use the module's variables for those."
  }
}

variable "environment_kms_key_arn" {
  description = "Customer-managed KMS key for the environment variables. null uses Lambda's service key (the variables hold no secrets)."
  type        = string
  default     = null
}

variable "tags" {
  description = "Tags added to every resource that supports them."
  type        = map(string)
  default     = {}
}

# --- deployment package (exactly one of: local zip, zip in S3, container image) ----------------
#
# pypaimon's dependencies (pyarrow, polars, pandas, numpy) unpack to well over Lambda's 250 MB
# limit for zip packages plus layers, so a container image is the practical choice unless the
# package is trimmed.

variable "package_image_uri" {
  description = "URI of a container image (in ECR) holding paimon_feed, its dependencies and the processor, built on the AWS Lambda Python base image. handler is passed as the image command; runtime and layers are ignored."
  type        = string
  default     = null
}

variable "package_filename" {
  description = "Path of a local zip holding paimon_feed, its dependencies and the processor module. Mutually exclusive with package_s3_bucket/package_s3_key and package_image_uri."
  type        = string
  default     = null
}

variable "package_s3_bucket" {
  description = "Bucket of the deployment zip (when not using package_filename)."
  type        = string
  default     = null
}

variable "package_s3_key" {
  description = "Key of the deployment zip in package_s3_bucket."
  type        = string
  default     = null
}

variable "package_s3_object_version" {
  description = "Object version of the deployment zip, for versioned buckets; null for the latest."
  type        = string
  default     = null
}

variable "package_source_code_hash" {
  description = "Base64 SHA-256 of an S3 deployment zip, so a new upload under the same key updates the function. Computed automatically for package_filename."
  type        = string
  default     = null
}

# --- what the function feeds on -----------------------------------------------------------------

variable "warehouse_bucket" {
  description = "Bucket of the Paimon warehouse."
  type        = string

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.warehouse_bucket))
    error_message = "warehouse_bucket must be a valid S3 bucket name."
  }
}

variable "warehouse_prefix" {
  description = "Key prefix of the warehouse inside the bucket, ending with '/', or \"\" for the bucket root. Scopes every S3 permission of the function."
  type        = string
  default     = ""

  validation {
    condition     = var.warehouse_prefix == "" || (endswith(var.warehouse_prefix, "/") && !startswith(var.warehouse_prefix, "/"))
    error_message = "warehouse_prefix must be \"\" or end with '/' (and not start with '/')."
  }

  validation {
    # IAM resource ARNs and s3:prefix conditions treat these as wildcards.
    condition     = !can(regex("[*?]", var.warehouse_prefix))
    error_message = "warehouse_prefix must not contain '*' or '?'."
  }
}

variable "catalog_options" {
  description = "Extra pypaimon catalog options (PAIMON_FEED_CATALOG_OPTIONS, JSON), e.g. {\"fs.s3.region\" = \"eu-west-1\"}. The warehouse is set from warehouse_bucket/warehouse_prefix. Never put access keys here."
  type        = map(string)
  default     = {}
}

variable "consumer_id" {
  description = "Consumer id whose checkpoint (<table>/consumer/consumer-<id>) the function reads and advances."
  type        = string

  validation {
    # The rule of paimon_feed.checkpoint.validate_consumer_id: [A-Za-z0-9._-]+, not starting with '.' or '-'.
    condition     = can(regex("^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$", var.consumer_id))
    error_message = "consumer_id must be 1-200 characters of [A-Za-z0-9._-], not starting with '.' or '-'."
  }
}

variable "processor" {
  description = "The function that receives FeedBatches, as \"package.module:function\" (PAIMON_FEED_PROCESSOR)."
  type        = string

  validation {
    condition     = can(regex("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$", var.processor))
    error_message = "processor must look like \"package.module:function\"."
  }
}

variable "tables" {
  description = "Allow-list of \"database.table\" the function handles (PAIMON_FEED_TABLES); notifications for other tables are skipped. Empty means every table of the warehouse."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for t in var.tables : can(regex("^[^./,*]+\\.[^./,*]+$", t))])
    error_message = "Each entry of tables must be \"database.table\" (exactly one '.', no ',', '/' or '*')."
  }
}

variable "start" {
  description = "Start position for tables without a checkpoint (PAIMON_FEED_START), e.g. \"latest\", \"earliest\", \"snapshot:42\", \"time:-1h\". null uses the library default. A stored checkpoint always wins."
  type        = string
  default     = null
}

# --- event source -------------------------------------------------------------------------------

variable "queue_arn" {
  description = "ARN of the feed queue (output queue_arn of the feed_queue module)."
  type        = string

  validation {
    condition     = can(regex("^arn:[a-z-]+:sqs:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]+$", var.queue_arn))
    error_message = "queue_arn must be an SQS queue ARN (standard queue)."
  }
}

variable "queue_kms_key_arn" {
  description = "Customer-managed KMS key that encrypts the queue, if any; the function then gets kms:Decrypt on it. null for SQS-managed SSE."
  type        = string
  default     = null
}

variable "batch_size" {
  description = "Most messages per invocation. Several commits of one table in one batch are planned together, so larger batches save work."
  type        = number
  default     = 10

  validation {
    condition     = var.batch_size >= 1 && var.batch_size <= 10000
    error_message = "batch_size must be between 1 and 10000."
  }
}

variable "maximum_batching_window_in_seconds" {
  description = "How long Lambda gathers messages before invoking, in seconds. 0 = lowest latency; a few seconds coalesce bursts of commits into one plan. Must be >= 1 when batch_size > 10."
  type        = number
  default     = 1

  validation {
    condition     = var.maximum_batching_window_in_seconds >= 0 && var.maximum_batching_window_in_seconds <= 300
    error_message = "maximum_batching_window_in_seconds must be between 0 and 300."
  }
}

variable "maximum_concurrency" {
  description = "Most concurrent invocations the SQS event source starts (2-1000). Keep it small and <= reserved_concurrent_executions, so Lambda never throttles deliveries (throttles count as receives and move messages to the DLQ)."
  type        = number
  default     = 2

  validation {
    condition     = var.maximum_concurrency >= 2 && var.maximum_concurrency <= 1000
    error_message = "maximum_concurrency must be between 2 and 1000."
  }
}

variable "event_source_enabled" {
  description = "Whether the event source mapping polls the queue (false pauses the feed; messages wait in the queue)."
  type        = bool
  default     = true
}

# --- logs ---------------------------------------------------------------------------------------

variable "log_retention_in_days" {
  description = "Retention of the function's log group in days."
  type        = number
  default     = 365

  validation {
    condition     = contains([1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653], var.log_retention_in_days)
    error_message = "log_retention_in_days must be one of the values CloudWatch Logs accepts (1, 3, 5, 7, 14, 30, 60, 90, ... 3653)."
  }
}

variable "log_kms_key_arn" {
  description = "Customer-managed KMS key for the log group. null uses CloudWatch Logs' service encryption. The key policy must allow logs.<region>.amazonaws.com."
  type        = string
  default     = null
}
