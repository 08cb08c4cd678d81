0module "a" {
  source = "./a"
}
locals {
  s = "${"}"} %{if true}x%{endif} $${y}"
  h = <<-EOT
    ${ {a = 1} }
    EOT
}
/* c */ # d
// e
module "b" { source = "git::x" }
