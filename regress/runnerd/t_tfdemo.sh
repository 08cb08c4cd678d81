#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# terraform/demo does what the demo says, with the terraform on this
# machine and no provider download: create, then no changes, then the
# one-line label edit plans a replacement forced by triggers_replace.
# terraform/k8s-demo cannot be planned here (provider, cluster); it is
# checked for terraform fmt only.

tf_setup()
{
	command -v terraform >/dev/null || atf_fail "terraform is not installed (make deps installs it)"
	export TF_CLI_CONFIG_FILE=/dev/null CHECKPOINT_DISABLE=1 \
	    TF_IN_AUTOMATION=1
	cp "$(atf_config_get srcdir)"/terraform/demo/*.tf \
	    "$(atf_config_get srcdir)"/terraform/demo/*.tfvars .
}

# actions ADDRESS: the actions, action_reason and replace_paths of one
# resource in the saved plan, on one line.
actions()
{
	terraform show -json plan | python3 -c '
import json, sys
for r in json.load(sys.stdin).get("resource_changes", []):
    if r["address"] == sys.argv[1]:
        c = r["change"]
        print(",".join(c["actions"]), r.get("action_reason"),
            json.dumps(c.get("replace_paths")))' "$1"
}

atf_test_case label_edit_forces_replacement
label_edit_forces_replacement_head()
{
	atf_set "descr" "the demo's one-line label edit plans a replacement"
	atf_set "timeout" "120"
}
label_edit_forces_replacement_body()
{
	tf_setup
	atf_check -o ignore terraform init -input=false -no-color
	atf_check -o ignore terraform plan -input=false -no-color -out=plan
	atf_check_equal "$(actions terraform_data.web)" "create None null"
	atf_check -o ignore terraform apply -input=false -no-color plan

	atf_check -o ignore terraform plan -input=false -no-color -out=plan
	atf_check_equal "$(actions terraform_data.web)" "no-op None null"

	# The edit the demo makes, and nothing else.
	atf_check sed -i 's/app  = "web"/app  = "web-frontend"/' \
	    labels.auto.tfvars
	atf_check -o match:'must be replaced' terraform plan -input=false \
	    -no-color -out=plan
	atf_check_equal "$(actions terraform_data.web)" \
	    'delete,create replace_because_cannot_update [["triggers_replace"]]'

	# Replicas are an update in place.
	atf_check sed -i 's/app  = "web-frontend"/app  = "web"/' \
	    labels.auto.tfvars
	atf_check -o ignore terraform plan -input=false -no-color -out=plan \
	    -var replicas=5
	atf_check_equal "$(actions terraform_data.web)" "update None null"
}

atf_test_case modules_fmt_clean
modules_fmt_clean_head()
{
	atf_set "descr" "both demo modules are terraform fmt-clean"
}
modules_fmt_clean_body()
{
	command -v terraform >/dev/null || atf_fail "terraform is not installed (make deps installs it)"
	export TF_CLI_CONFIG_FILE=/dev/null
	for m in demo k8s-demo; do
		atf_check terraform fmt -check -recursive \
		    "$(atf_config_get srcdir)/terraform/$m"
	done
}

atf_init_test_cases()
{
	atf_add_test_case label_edit_forces_replacement
	atf_add_test_case modules_fmt_clean
}
