0# The forces-replacement scenario, with nothing to download.
#
# This module stands in for a live Kubernetes Deployment "web" in the
# namespace "demo-app".  It uses only Terraform's built-in terraform_data
# resource, so `terraform init` needs no provider and no network.
#
# On a real cluster a Deployment's spec.selector is immutable: changing a
# selector label makes the provider delete the Deployment and create a new
# one, and the pods go away in between.  terraform_data.web models that
# with triggers_replace: the selector labels live there, so changing one of
# them plans "must be replaced" (actions ["delete","create"]), while
# changing the replica count or the image is an update in place.
#
# The change an agent proposes in the demo is one line in
# labels.auto.tfvars, which looks like routine tidying:
#
#     app = "web"   ->   app = "web-frontend"
#
# terraform_plan flags the resulting plan as destructive and
# terraform_apply waits for a person to approve it.  See ../k8s-demo for
# the same scenario with the kubernetes provider on a real cluster.

terraform {
  required_version = ">= 1.4"
}

variable "namespace" {
  description = "Namespace the Deployment runs in."
  type        = string
  default     = "demo-app"
}

variable "selector_labels" {
  description = "The Deployment's spec.selector.matchLabels; changing any of them replaces it."
  type        = map(string)
}

variable "replicas" {
  description = "Pod count; changing it is an update in place."
  type        = number
  default     = 3
}

variable "image" {
  description = "Container image; changing it is an update in place."
  type        = string
  default     = "nginx:1.27"
}

resource "terraform_data" "web" {
  # What the cluster cannot change in place: where the Deployment lives and
  # which pods it selects.
  triggers_replace = {
    namespace = var.namespace
    selector  = var.selector_labels
  }

  # What a rolling update can change.
  input = {
    name     = "web"
    replicas = var.replicas
    image    = var.image
  }
}

output "deployment" {
  description = "The modelled Deployment: namespace/name and its selector."
  value = {
    id        = "${var.namespace}/web"
    selector  = var.selector_labels
    replicas  = var.replicas
    object_id = terraform_data.web.id
  }
}
