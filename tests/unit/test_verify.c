/* wmap_workload_verify: what a definition found nothing for, in both modes. */
#include <criterion/criterion.h>
#include <string.h>

#include "helpers.h"
#include "wmap/verify.h"

static json_t *verify(const char *yaml, unsigned flags)
{
	wmap_registry *reg;
	wmap_engine *eng;
	wmap_workload *w = NULL;
	wmap_error err = { 0 };
	json_t *obj = t_yaml(yaml), *out = NULL;

	t_catalog_engine(&reg, &eng);
	cr_assert_eq(wmap_workload_resolve(&w, eng, obj, NULL, &err), 0, "%s", err.message);
	cr_assert_eq(wmap_workload_verify(&out, w, flags, &err), 0, "%s", err.message);
	wmap_workload_free(w);
	json_decref(obj);
	t_catalog_engine_free(reg, eng);
	return out;
}

static const char *pytorchjob =
	"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n"
	"  pytorchReplicaSpecs:\n"
	"    Master: {replicas: 1, template: {spec: {containers: [{name: m}]}}}\n"
	"    %s: {replicas: 4, template: {spec: {containers: [{name: w}]}}}\n";

Test(verify, a_key_in_another_case_is_named)
{
	char text[600];
	snprintf(text, sizeof(text), pytorchjob, "worker");
	json_t *out = verify(text, 0);
	cr_assert_eq(json_array_size(out), 1);
	cr_assert(strstr(json_string_value(json_array_get(out, 0)), "which has \"worker\" there"));
	json_decref(out);
}

Test(verify, optional_roles_left_out_are_findings_only_with_all)
{
	char text[600];
	snprintf(text, sizeof(text), pytorchjob, "Worker");
	json_t *out = verify(text, 0);
	cr_assert_eq(json_array_size(out), 0, "a correct PyTorchJob");
	json_decref(out);
	out = verify("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n"
		     "  pytorchReplicaSpecs:\n"
		     "    Worker: {replicas: 2, template: {spec: {containers: [{name: w}]}}}\n",
		     0);
	cr_assert_eq(json_array_size(out), 0, "no Master is a PyTorchJob's right");
	json_decref(out);
	out = verify("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: p}\nspec:\n"
		     "  pytorchReplicaSpecs:\n"
		     "    Worker: {replicas: 2, template: {spec: {containers: [{name: w}]}}}\n",
		     WMAP_VERIFY_ALL);
	cr_assert_eq(json_array_size(out), 1, "a sample is judged on every path");
	cr_assert(strstr(json_string_value(json_array_get(out, 0)), "component 'master'"));
	json_decref(out);
}

Test(verify, status_judged_only_when_present)
{
	const char *pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
			  "spec: {containers: [{name: c}]}\n%s";
	char text[400];
	snprintf(text, sizeof(text), pod, "");
	json_t *out = verify(text, 0);
	cr_assert_eq(json_array_size(out), 0, "a manifest never admitted has no status");
	json_decref(out);
	snprintf(text, sizeof(text), pod, "status: {phase: Exploded}\n");
	out = verify(text, 0);
	cr_assert_eq(json_array_size(out), 1);
	cr_assert(strstr(json_string_value(json_array_get(out, 0)),
			 "no status mapping of definition core-pod-v1 matched the object's .status (phase \"Exploded\")"),
		  "%s", json_string_value(json_array_get(out, 0)));
	json_decref(out);
	out = verify(text, WMAP_VERIFY_NO_STATUS);
	cr_assert_eq(json_array_size(out), 0);
	json_decref(out);
}
