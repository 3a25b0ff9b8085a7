/* wmap: the per-thread review arena behind jansson's allocator (see wmap/arena.h).
 *
 * Blocks are mapped pages (mmap), not malloc'ed: glibc keeps freed memory (the webhook sets
 * M_TRIM_THRESHOLD to 64 MiB), so blocks a review outgrew would stay in the heap beside the
 * one kept; unmapped, they go back to the system. Measured with 100 reviews of each bench
 * size over TLS: VmHWM 14.1 MiB after the 431 KB reviews against 15.3 with malloc'ed blocks.
 *
 * A block is a header and bytes bumped through in 16-byte steps (what malloc aligns to:
 * jansson keeps doubles and 64-bit integers in its values). A free inside the scope is
 * recognised by its address (in one of this thread's blocks: after the first reviews there
 * is one) and does nothing; any other pointer goes to the functions that were set before. */
#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "wmap/arena.h"

/* A block's header; its bytes follow, 16-byte aligned. */
typedef struct block {
	struct block *next;
	char *end;
	size_t size; /* of the mapping */
} block;

#define HEADER ((sizeof(block) + 15) & ~(size_t)15)
#define FIRST_BLOCK ((size_t)64 << 10)

typedef struct arena {
	block *head; /* the block being bumped through; older ones after it */
	char *pos, *end;
	size_t held;  /* bytes of all blocks */
	size_t used;  /* bytes handed out in this scope */
	size_t limit; /* 0: WMAP_ARENA_MAX_BYTES */
} arena;

static json_malloc_t prev_malloc = malloc;
static json_free_t prev_free = free;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static _Thread_local arena *mine;    /* this thread's arena, made on first begin */
static _Thread_local arena *current; /* mine inside a scope, else NULL */

static void free_blocks(arena *a)
{
	block *b = a->head;
	while (b) {
		block *next = b->next;
		munmap(b, b->size);
		b = next;
	}
	a->head = NULL;
	a->pos = a->end = NULL;
	a->held = 0;
}

/* A new block of at least n bytes after its header, in front of the others; 0 or -1. */
static int grow(arena *a, size_t n)
{
	size_t limit = a->limit ? a->limit : WMAP_ARENA_MAX_BYTES;
	size_t size = a->held > FIRST_BLOCK ? a->held : FIRST_BLOCK; /* doubles what is held */
	if (size < n)
		size = n;
	if (a->held + HEADER + size > limit) {
		if (a->held + HEADER + n > limit)
			return -1;
		size = limit - a->held - HEADER;
	}
	/* Mapped, not malloc'ed: a block given back is given back to the system, and the
	 * heap is not left holding the blocks a review outgrew (glibc keeps freed memory). */
	size_t bytes = (HEADER + size + 4095) & ~(size_t)4095;
	if (a->held + bytes > limit)
		bytes = HEADER + size; /* at the cap: the pages' rest is left unused */
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	block *b = m;
	size = (bytes & ~(size_t)15) - HEADER;
	b->size = bytes;
	b->next = a->head;
	b->end = (char *)b + HEADER + size;
	a->head = b;
	a->pos = (char *)b + HEADER;
	a->end = b->end;
	a->held += HEADER + size;
	return 0;
}

static void *arena_malloc(size_t n)
{
	arena *a = current;
	if (!a)
		return prev_malloc(n);
	size_t need = (n + 15) & ~(size_t)15;
	if (need < n)
		return NULL;
	/* Past the cap (or with no block to be had) from the heap, as without an arena: a
	 * review the heap can answer is answered the same; a free tells them apart. */
	if ((size_t)(a->end - a->pos) < need && grow(a, need))
		return prev_malloc(n);
	void *p = a->pos;
	a->pos += need;
	a->used += need;
	return p;
}

static int in_arena(const arena *a, const void *p)
{
	uintptr_t u = (uintptr_t)p;
	for (const block *b = a->head; b; b = b->next)
		if (u >= (uintptr_t)b + HEADER && u < (uintptr_t)b->end)
			return 1;
	return 0;
}

void *wmap_arena_alloc(size_t n)
{
	arena *a = current;
	if (!a)
		return malloc(n);
	size_t need = (n + 15) & ~(size_t)15;
	if (need < n)
		return NULL;
	if ((size_t)(a->end - a->pos) < need && grow(a, need))
		return malloc(n);
	void *p = a->pos;
	a->pos += need;
	a->used += need;
	return p;
}

void wmap_arena_release(void *p)
{
	arena *a = current;
	if (!p || (a && in_arena(a, p)))
		return;
	free(p);
}

static void arena_free(void *p)
{
	arena *a = current;
	if (!p || (a && in_arena(a, p)))
		return;
	prev_free(p);
}

static void thread_done(void *p)
{
	arena *a = p;
	free_blocks(a);
	free(a);
}

static void install_once(void)
{
	json_malloc_t m;
	json_free_t f;
	json_get_alloc_funcs(&m, &f);
	if (m && f && m != arena_malloc) {
		prev_malloc = m;
		prev_free = f;
	}
	if (pthread_key_create(&key, thread_done))
		key = (pthread_key_t)-1;
	json_set_alloc_funcs(arena_malloc, arena_free);
}

void wmap_arena_install(void)
{
	pthread_once(&once, install_once);
}

/* This thread's arena, made on first use; NULL when memory runs out. */
static arena *get_mine(void)
{
	if (!mine) {
		mine = calloc(1, sizeof(*mine));
		if (mine && key != (pthread_key_t)-1)
			pthread_setspecific(key, mine);
	}
	return mine;
}

void wmap_arena_begin(void)
{
	wmap_arena_install();
	if (current || !get_mine())
		return; /* nested, or the heap as without an arena */
	mine->used = 0;
	current = mine;
}

void wmap_arena_end(void)
{
	arena *a = current;
	if (!a)
		return;
	current = NULL;
	size_t used = a->used;
	a->used = 0;
	if (a->head && !a->head->next && a->held <= WMAP_ARENA_KEEP_BYTES) {
		a->pos = (char *)a->head + HEADER; /* the usual case: one block, reused */
		return;
	}
	/* Several blocks: one for what this review used and an eighth more (up to the cap), so
	 * that the next review of this size needs one; not what the blocks held, which grew
	 * by doubling and would keep up to twice that in memory. */
	size_t want = used + used / 8 + HEADER;
	if (want > WMAP_ARENA_KEEP_BYTES)
		want = WMAP_ARENA_KEEP_BYTES;
	free_blocks(a);
	if (want > HEADER)
		grow(a, want - HEADER);
}

void wmap_arena_set_limit(size_t bytes)
{
	wmap_arena_install(); /* the key get_mine registers the arena under */
	if (get_mine())
		mine->limit = bytes;
}

int wmap_arena_holds(const void *p)
{
	return current && p && in_arena(current, p);
}

size_t wmap_arena_used(void)
{
	return current ? current->used : 0;
}

void wmap_arena_release_thread(void)
{
	if (!mine || current)
		return;
	if (key != (pthread_key_t)-1)
		pthread_setspecific(key, NULL);
	thread_done(mine);
	mine = NULL;
}
