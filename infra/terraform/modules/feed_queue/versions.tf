terraform {
  # 1.5: lifecycle preconditions, optional() and check blocks are all stable.
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0"
    }
  }
}
