/* Shared bits of the libFuzzer targets in tests/fuzz/. */
#ifndef FUZZ_FUZZ_H
#define FUZZ_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A property of the target does not hold: print why and abort, so libFuzzer saves the
 * input as a crash. */
#define FZ_CHECK(cond, ...)                                                    \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "fuzz property failed: %s:%d: %s: ", __FILE__, \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* A NUL-terminated copy of the input (most wmap entry points take C strings). */
static inline char *fz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif
