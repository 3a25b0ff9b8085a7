/* The files a FILE|DIR argument names (wmap_file_list_add): order, recursion, what is
 * skipped, and the refusals. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helpers.h"
#include "wmap/file.h"

Test(file, folder_walked_recursively_in_name_order)
{
	char dir[128], sub[200], hidden[200];
	wmap_file_list l = { 0 };
	wmap_error err = { 0 };

	t_temp_dir(dir, sizeof(dir), "wmap-list");
	snprintf(sub, sizeof(sub), "%s/b-sub", dir);
	snprintf(hidden, sizeof(hidden), "%s/.git", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_assert_eq(mkdir(hidden, 0700), 0);
	t_write_file(dir, "c.yml", "a: 1\n");
	t_write_file(dir, "a.yaml", "a: 1\n");
	t_write_file(dir, "notes.txt", "skipped\n");
	t_write_file(dir, ".hidden.yaml", "skipped\n");
	t_write_file(sub, "x.json", "{}\n");
	t_write_file(hidden, "config.yaml", "skipped\n");
	cr_assert_eq(wmap_file_list_add(&l, dir, &err), 0, "%s", err.message);
	cr_assert_eq(l.n, 3);
	cr_assert(strstr(l.paths[0], "/a.yaml"));
	cr_assert(strstr(l.paths[1], "/b-sub/x.json"));
	cr_assert(strstr(l.paths[2], "/c.yml"));
	/* A file named outright is read whatever its name; the list grows in argument order. */
	cr_assert_eq(wmap_file_list_add(&l, t_write_file(dir, "named.txt", "a: 1\n"), &err), 0);
	cr_assert_eq(l.n, 4);
	cr_assert(strstr(l.paths[3], "/named.txt"));
	wmap_file_list_clear(&l);
	cr_assert_eq(l.n, 0);
	t_remove_dir(dir);
}

Test(file, refusals_keep_the_list)
{
	char dir[128], empty[200], loop[200], link_path[260];
	wmap_file_list l = { 0 };
	wmap_error err = { 0 };

	t_temp_dir(dir, sizeof(dir), "wmap-list");
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(loop, sizeof(loop), "%s/loop", dir);
	cr_assert_eq(mkdir(empty, 0700), 0);
	cr_assert_eq(mkdir(loop, 0700), 0);
	t_write_file(loop, "a.yaml", "a: 1\n");
	snprintf(link_path, sizeof(link_path), "%s/back", loop);
	cr_assert_eq(symlink(loop, link_path), 0);
	cr_assert_eq(wmap_file_list_add(&l, "-", &err), 0);
	cr_assert_eq(wmap_file_list_add(&l, empty, &err), WMAP_EINVAL);
	cr_assert(strstr(err.message, "holds no *.yaml"), "%s", err.message);
	cr_assert_eq(wmap_file_list_add(&l, loop, &err), WMAP_EINVAL);
	cr_assert(strstr(err.message, "symbolic link back"), "%s", err.message);
	cr_assert_eq(wmap_file_list_add(&l, "/nonexistent/wmap", &err), WMAP_ENOTFOUND);
	cr_assert_eq(l.n, 1, "a refused path adds nothing");
	cr_assert_str_eq(l.paths[0], "-");
	wmap_file_list_clear(&l);
	wmap_file_list_clear(NULL);
	t_remove_dir(dir);
}
