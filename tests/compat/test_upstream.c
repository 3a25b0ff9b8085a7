/* Compatibility with upstream Workload Map: its definitions load and validate here, its old
 * examples read (and its one broken example is named), and its recorded runs read as recorded.
 * The material is upstream's, in ../shared/interop (WMAP_SHARED). These tests are a binary of
 * their own so that a clone without ../shared skips them as a whole, with one line from make
 * (Criterion 2.4.1 exits 1 whenever a test is skipped, even when every other test passed). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/helpers.h"
#include "wmap/registry.h"
#include "wmap/workload.h"
#include "wmap/yaml.h"

/* make runs this binary only when the folder is there; run by hand without it, it fails. */
static const char *shared_dir(void)
{
	const char *shared = t_shared();
	cr_assert_not_null(shared, "upstream material not found: set WMAP_SHARED to the shared folder "
				   "(it must hold interop/)");
	return shared;
}

Test(upstream, every_upstream_definition_validates)
{
	const char *shared = shared_dir();
	char pattern[1024];
	size_t n;
	snprintf(pattern, sizeof(pattern), "%s/interop/upstream-catalog/*.yaml", shared);
	char **files = t_glob(pattern, &n);
	cr_assert_gt(n, 0);
	wmap_registry *reg;
	wmap_error err = {0};
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	for (size_t i = 0; i < n; i++) {
		cr_expect_eq(wmap_registry_add_path(reg, files[i], WMAP_ORIGIN_FILE, &err), 0, "%s", err.message);
	}
	for (size_t i = 0; i < wmap_registry_count(reg); i++)
		cr_expect_eq(wmap_definition_check_jq(wmap_registry_get(reg, i), &err), 0, "%s", err.message);
	cr_expect_eq(wmap_registry_count(reg), n);
	wmap_registry_free(reg);
	t_free_list(files, n);
}

Test(upstream, reads_upstreams_old_examples_and_names_their_broken_one)
{
	const char *shared = shared_dir();
	char path[1024];
	wmap_registry *reg;
	wmap_error err = {0};
	cr_assert_eq(wmap_registry_new(&reg, &err), 0);
	const char *const ok[] = {"jobset", "pytorch", "lws", "dynamo", "kserve"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(path, sizeof(path), "%s/interop/upstream-samples/%s.yaml", shared, ok[i]);
		cr_expect_eq(wmap_registry_add_path(reg, path, WMAP_ORIGIN_FILE, &err), 0, "%s", err.message);
	}
	/* upstream's mpijob.yaml lacks a line break at line 25 */
	snprintf(path, sizeof(path), "%s/interop/upstream-samples/mpijob.yaml", shared);
	cr_expect_eq(wmap_registry_add_path(reg, path, WMAP_ORIGIN_FILE, &err), WMAP_EINVAL);
	cr_expect(strstr(err.message, "mpijob.yaml:25:") != NULL, "%s", err.message);
	wmap_registry_free(reg);
}

/* Upstream's recorded runs: every STATE frame reads as its recorded state. */
Test(upstream, recordings_read_the_recorded_state)
{
	const char *shared = shared_dir();
	char pattern[1024];
	size_t n, frames = 0;
	snprintf(pattern, sizeof(pattern), "%s/interop/upstream-samples/recorded/*.yaml", shared);
	char **files = t_glob(pattern, &n);
	cr_assert_gt(n, 0);
	for (size_t i = 0; i < n; i++) {
		char msg[WMAP_ERROR_MAX], defpath[1024], slug[256];
		wmap_error err = {0};
		const char *base = strrchr(files[i], '/') + 1;
		snprintf(slug, sizeof(slug), "%.*s", (int)strcspn(base, "."), base);
		snprintf(defpath, sizeof(defpath), "%s/interop/upstream-catalog/%s.yaml", shared, slug);
		wmap_registry *ureg;
		wmap_engine *ueng;
		cr_assert_eq(wmap_registry_new(&ureg, &err), 0);
		cr_assert_eq(wmap_registry_add_path(ureg, defpath, WMAP_ORIGIN_FILE, &err), 0, "%s", err.message);
		cr_assert_eq(wmap_engine_new(&ueng, ureg, &err), 0);
		const wmap_definition *def = wmap_registry_get(ureg, 0);
		json_t *rec = t_load_file(files[i], msg, sizeof(msg));
		cr_assert_not_null(rec, "%s", msg);
		json_t *events = json_object_get(rec, "events");
		size_t k;
		json_t *ev;
		json_array_foreach(events, k, ev) {
			if (strcmp(json_string_value(json_object_get(ev, "kind")), "STATE") != 0)
				continue;
			const char *state = json_string_value(json_object_get(ev, "state"));
			unsigned got = 0;
			cr_expect_eq(wmap_status_evaluate(&got, ueng, def, json_object_get(ev, "object"), &err), 0,
				     "%s frame %zu: %s", base, k, err.message);
			/* Known exception (interop README): the copied LLMInferenceService definition
			 * predates upstream's mapping of reason Stopped to Suspended. */
			int known = strstr(base, "llminferenceservice") && strcmp(state, "Suspended") == 0;
			unsigned want = t_parse_statuses(state);
			if (!known && !want)
				cr_expect_eq(got, 0, "%s frame %zu: want Undefined, got bits %x", base, k, got);
			else if (!known)
				cr_expect(got & want, "%s frame %zu: want %s, got bits %x", base, k, state, got);
			frames++;
		}
		json_decref(rec);
		wmap_engine_free(ueng);
		wmap_registry_free(ureg);
	}
	cr_expect_gt(frames, 4);
	t_free_list(files, n);
}
