/* Allocation-failure injection for build/allocfail-tests (tests/fuzz/fuzz.mk), curl-torture
 * style: this file defines malloc, calloc, realloc, strdup and strndup for the whole
 * process, forwards them to glibc, and while armed fails the k-th call made from code
 * that must cope with it: libwmap (linked into the executable), libjansson and libyaml.
 * Calls from libjq (which aborts on OOM by design), libc itself, libcurl, Criterion and the
 * dynamic loader are never failed. tests/unit/test_allocfail.c drives it through
 * wmap_allocfail_arm/disarm, declared weak there so unit-tests links without this file.
 *
 * Not for ASan builds: ASan must own malloc (fuzz.mk leaves this file out with SANITIZE=1). */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

int wmap_allocfail_interposed = 1;

void wmap_allocfail_arm(long k);
long wmap_allocfail_disarm(void);

#define MAX_RANGES 32
static struct { uintptr_t lo, hi; } ranges[MAX_RANGES];
static int n_ranges;
static int armed;
static long fail_at; /* 0 = count only */
static long counted;

/* Executable segments of the objects whose allocations may fail. */
static int add_ranges(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	const char *name = info->dlpi_name;
	int main_exe = !name || !*name;
	if (!main_exe && !strstr(name, "libjansson") && !strstr(name, "libyaml"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && n_ranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		ranges[n_ranges].lo = info->dlpi_addr + ph->p_vaddr;
		ranges[n_ranges].hi = ranges[n_ranges].lo + ph->p_memsz;
		n_ranges++;
	}
	return 0;
}

void wmap_allocfail_arm(long k)
{
	if (!n_ranges)
		dl_iterate_phdr(add_ranges, NULL);
	fail_at = k;
	counted = 0;
	armed = 1;
}

long wmap_allocfail_disarm(void)
{
	armed = 0;
	return counted;
}

static int fail_now(const void *caller)
{
	if (!armed)
		return 0;
	uintptr_t a = (uintptr_t)caller;
	int ours = 0;
	for (int i = 0; i < n_ranges && !ours; i++)
		ours = a >= ranges[i].lo && a < ranges[i].hi;
	if (!ours)
		return 0;
	if (++counted != fail_at)
		return 0;
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	return fail_now(__builtin_return_address(0)) ? NULL : __libc_realloc(p, n);
}

char *strdup(const char *s)
{
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = __libc_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

char *strndup(const char *s, size_t max)
{
	if (fail_now(__builtin_return_address(0)))
		return NULL;
	size_t n = strnlen(s, max);
	char *d = __libc_malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}
