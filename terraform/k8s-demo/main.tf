# The forces-replacement scenario on a real cluster.
#
# A Deployment "web" in the namespace "demo-app", managed with the
# hashicorp/kubernetes provider.  Kubernetes does not let a Deployment's
# spec.selector change (it is immutable in apps/v1), and the provider marks
# spec.selector.match_labels as forcing a new resource: editing one
# selector label plans "must be replaced" -- the Deployment is deleted and
# created again and its pods are gone in between.  Changing replicas or
# the image is an ordinary rolling update in place.
#
# The change the agent proposes in the demo is one line in
# labels.auto.tfvars:
#
#     app = "web"   ->   app = "web-frontend"
#
# ../demo is the same scenario with no provider to download, for machines
# without a cluster.  This module needs the provider (from a filesystem
# mirror when runnerd runs it offline) and a cluster to plan against; the
# kind cluster of scripts/ has the namespace demo-app.

terraform {
  required_version = ">= 1.4"

  required_providers {
    kubernetes = {
      source  = "hashicorp/kubernetes"
      version = ">= 2.23.0, < 3.0.0"
    }
  }
}

variable "credential_file" {
  description = "The credential runnerd mounts for the call (JSON with server, token and ca); empty to use kubeconfig instead."
  type        = string
  default     = ""
}

variable "kubeconfig" {
  description = "Kubeconfig to use when no credential_file is given."
  type        = string
  default     = "~/.kube/config"
}

variable "kube_context" {
  description = "Kubeconfig context; null for the current one."
  type        = string
  default     = null
}

variable "namespace" {
  description = "Namespace the Deployment runs in; it must exist."
  type        = string
  default     = "demo-app"
}

variable "selector_labels" {
  description = "The Deployment's spec.selector.match_labels, also set on its pods; changing any of them replaces it."
  type        = map(string)
}

variable "replicas" {
  description = "Pod count; changing it is an update in place."
  type        = number
  default     = 2
}

variable "image" {
  description = "Container image; changing it is a rolling update in place."
  type        = string
  default     = "nginx:1.27"
}

locals {
  credential = var.credential_file == "" ? null : jsondecode(file(var.credential_file))
}

provider "kubernetes" {
  host                   = local.credential == null ? null : local.credential.server
  token                  = local.credential == null ? null : local.credential.token
  cluster_ca_certificate = local.credential == null ? null : local.credential.ca
  config_path            = local.credential == null ? var.kubeconfig : null
  config_context         = local.credential == null ? var.kube_context : null
}

resource "kubernetes_deployment_v1" "web" {
  metadata {
    name      = "web"
    namespace = var.namespace
    labels    = var.selector_labels
  }

  spec {
    replicas = var.replicas

    # Immutable on the cluster: a change here is a delete and a create.
    selector {
      match_labels = var.selector_labels
    }

    template {
      metadata {
        labels = var.selector_labels
      }

      spec {
        container {
          name  = "web"
          image = var.image

          port {
            container_port = 80
          }

          resources {
            limits = {
              cpu    = "200m"
              memory = "128Mi"
            }
          }
        }
      }
    }
  }
}

output "deployment" {
  description = "namespace/name of the Deployment and its selector."
  value = {
    id       = kubernetes_deployment_v1.web.id
    selector = var.selector_labels
  }
}
