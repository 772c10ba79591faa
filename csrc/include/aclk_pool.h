/*
 * aclk_pool.h: the kernel thread pool (csrc/runtime/pool.c), internal to the C core.
 *
 * aclk_parallel_for(n, grain, fn, ctx) runs fn(ctx, begin, end) over the items [0, n) in chunks
 * [k*grain, min((k+1)*grain, n)). Chunk boundaries depend only on n and grain, never on the number
 * of threads, so a kernel whose chunks compute independent outputs gives the same bits for every
 * thread count. The calling thread takes part; the call returns when every chunk is done, and
 * every write of every chunk is then visible to the caller.
 *
 * Callable from any thread, by several threads at once (one pool serves every stream: at most
 * aclk_num_threads() threads compute chunks at any time, the callers included). A call with a
 * single chunk (n <= grain), or made from inside a chunk, runs inline in the caller without
 * touching the pool. Chunks run in any order, on any thread, possibly concurrently: fn must not
 * depend on either, and must not block waiting for another chunk.
 */
#ifndef ACLK_POOL_H
#define ACLK_POOL_H

#include <stddef.h>
#include <stdint.h>

typedef void (*aclk_range_fn)(void *ctx, int64_t begin, int64_t end);

void aclk_parallel_for(int64_t n, int64_t grain, aclk_range_fn fn, void *ctx);

/* A scratch buffer of at least `bytes` bytes (64-byte aligned) owned by the calling thread,
 * kept between calls and freed when the thread exits; NULL when it cannot be allocated (the
 * caller then takes a path that needs none, with the same results). Its contents are not kept
 * across calls that ask for more than before. For buffers too large for a thread's stack. */
void *aclk_scratch(size_t bytes);

#endif /* ACLK_POOL_H */
