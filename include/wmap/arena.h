/* wmap: the review arena, memory for what one admission review builds and throws away.
 *
 * A review parses its body into a jansson tree, resolves the object, builds a patch and an
 * answer, writes the answer and frees it all: about 23,000 allocations for a 128-group
 * RayCluster, each freed one at a time, which made malloc and free 39% of the review's
 * instructions. Between wmap_arena_begin and wmap_arena_end every jansson allocation of the
 * calling thread comes from that thread's arena, a few large blocks bumped through; a free
 * inside the arena does nothing, and wmap_arena_end releases it all at once, keeping one
 * block for the next review.
 *
 * The one rule: nothing allocated inside the scope may outlive it. Values made before the
 * scope (definitions, policies, compiled expressions: the state in force) may be read,
 * referenced and released inside it, never changed to hold a value made inside it. Other
 * threads, and this one outside a scope, allocate from the heap as before.
 *
 * jansson's allocator is process-wide (json_set_alloc_funcs): wmap_arena_install puts the
 * arena's functions in front of whatever functions were set before, forwarding every
 * allocation outside a scope to them. It is the library's one piece of global state. */
#ifndef WMAP_ARENA_H
#define WMAP_ARENA_H

#include <stddef.h>

/* Text from json_dumps made in a scope is arena memory too, so wmap writes text it frees
 * with free() with wmap_json_text (wmap/json_text.h) instead.
 *
 * Sets jansson's allocation functions (once per process; later calls do nothing). Call it
 * before other threads use jansson; wmap_arena_begin calls it too. */
void wmap_arena_install(void);

/* From here to wmap_arena_end, this thread's jansson values come from its arena. Scopes do
 * not nest: a begin inside a scope does nothing, and its end ends nothing. */
void wmap_arena_begin(void);

/* Releases everything allocated since wmap_arena_begin (every jansson value made in the
 * scope must be dead by then) and allocates from the heap again. */
void wmap_arena_end(void);

/* The most bytes this thread's arena may hold (0: WMAP_ARENA_MAX_BYTES). Allocations past
 * it, or when no block can be had, come from the heap as without an arena, so a review
 * gets the answer it would get without one (a YuniKorn review of a 1000-job JobSet builds
 * 280 MB); when the heap has no memory either, the allocation fails (NULL) and jansson and
 * wmap turn that into a clean failure. */
void wmap_arena_set_limit(size_t bytes);

/* 1 when p (a jansson value) comes from this thread's arena in the current scope. A tree
 * made wholly in the scope and holding no reference to a value from before it (a review as
 * wmap_admission_parse reads it) need not be released value by value: the scope's end
 * drops it (json_decref walks the whole tree to free it). */
int wmap_arena_holds(const void *p);

/* Bytes of wmap's own that a review makes and drops (a patch's paths), like its jansson
 * values: from this thread's arena inside a scope, from malloc outside one (or past the
 * cap). Each is given back with wmap_arena_release, in the scope it was made in, or, made
 * outside any, outside any. NULL when memory runs out. */
void *wmap_arena_alloc(size_t n);

/* Gives p back: nothing for the current scope's arena memory, free() for anything else
 * (so memory from malloc may be released here too). NULL does nothing. */
void wmap_arena_release(void *p);

/* Bytes this thread's arena handed out in the current scope (0 outside one). */
size_t wmap_arena_used(void);

/* Frees this thread's arena (outside a scope); a thread that ends frees its own. */
void wmap_arena_release_thread(void);

/* Above the node cap's worst parse (65,536 short keys, about 10 MiB built). */
#define WMAP_ARENA_MAX_BYTES ((size_t)64 << 20)

/* What an arena keeps between reviews: one block as big as the last review needed, up to
 * this (a 431 KB review builds about 3 MiB). */
#define WMAP_ARENA_KEEP_BYTES ((size_t)8 << 20)

#endif
