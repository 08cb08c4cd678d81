#! /usr/bin/env atf-sh
# SPDX-License-Identifier: ISC
# The double's fault modes, as kubectl sees them: an API server that is
# down, that forbids everything, that answers every create with 409, or
# that is slow; a fault may be limited to a path or a method.

. "$(atf_get_srcdir)/k8s.subr"

setup()
{
	k8s_need_kubectl
	k8s_start
	k8s_namespaces
	python3 "$K8S_SRC/mkjob.py" f > f.json
}

atf_test_case down cleanup
down_head()
{
	atf_set "descr" "down: connections close unanswered"
	atf_set "timeout" "60"
}
down_body()
{
	setup
	k8s_fault down
	atf_check -s exit:1 -e match:'EOF|connection reset' \
	    kubectl get pods -n demo-app --request-timeout=5s
	k8s_fault ""
	atf_check -e match:'No resources found' kubectl get pods -n demo-app
}
down_cleanup()
{
	k8s_stop
}

atf_test_case forbidden_everything cleanup
forbidden_everything_head()
{
	atf_set "descr" "403: even the admin is Forbidden, in the usual words"
	atf_set "timeout" "60"
}
forbidden_everything_body()
{
	setup
	k8s_fault "403 path=/jobs"
	atf_check -s exit:1 -e match:'jobs.batch is forbidden: User "kubernetes-admin" cannot create resource "jobs" in API group "batch" in the namespace "demo-app"' \
	    kubectl create --validate=false -f f.json
	atf_check -e match:'No resources found' kubectl get pods -n demo-app
}
forbidden_everything_cleanup()
{
	k8s_stop
}

atf_test_case conflict_on_create cleanup
conflict_on_create_head()
{
	atf_set "descr" "409: a create answers AlreadyExists and stores nothing"
	atf_set "timeout" "60"
}
conflict_on_create_body()
{
	setup
	k8s_fault 409
	atf_check -s exit:1 -e match:'Error from server \(AlreadyExists\).*jobs.batch "f" already exists' \
	    kubectl create --validate=false -f f.json
	k8s_fault ""
	atf_check -e match:'No resources found' kubectl get jobs -n demo-app
}
conflict_on_create_cleanup()
{
	k8s_stop
}

atf_test_case slow_and_method_filter cleanup
slow_and_method_filter_head()
{
	atf_set "descr" "slow: a client deadline fires; method=DELETE limits " \
	    "a fault to deletions"
	atf_set "timeout" "60"
}
slow_and_method_filter_body()
{
	setup
	k8s_fault "slow 3"
	atf_check -s exit:1 -e match:'deadline exceeded|Timeout|timeout' \
	    kubectl get pods -n demo-app --request-timeout=1s
	k8s_fault "403 method=DELETE"
	atf_check -o ignore kubectl create --validate=false -f f.json
	atf_check -s exit:1 -e match:'cannot delete resource "jobs"' \
	    kubectl delete job f -n demo-app
	k8s_fault ""
	atf_check -o ignore kubectl delete job f -n demo-app
}
slow_and_method_filter_cleanup()
{
	k8s_stop
}

atf_init_test_cases()
{
	atf_add_test_case down
	atf_add_test_case forbidden_everything
	atf_add_test_case conflict_on_create
	atf_add_test_case slow_and_method_filter
}
