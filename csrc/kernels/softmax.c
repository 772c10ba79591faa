/*
 * softmax.c: softmax / log-softmax forward and backward over the middle axis of a contiguous
 * [outer][axis][inner] tensor.
 *
 * float32, float16 and bfloat16 are computed in float32 (16-bit types are widened a chunk at a
 * time into stack buffers and rounded to nearest even on the way out, dtype.h); float64 is
 * computed in float64 with libm exp/log. float32 uses the vectorisable aclk_exp_f32 /
 * aclk_log_f32 of vecmath.h.
 *
 *   fwd: m = max(x) over the axis, s = sum(exp(x - m)),
 *        y = exp(x - m) / s            or   y = (x - m) - log(s)
 *   bwd: softmax:     s = sum(grad*y), out = grad*y - s*y
 *        log-softmax: s = sum(grad),   out = grad - exp(y)*s
 * NaN / inf behave as in PyTorch with no special cases: the max skips NaNs but a NaN then
 * propagates through exp and the sum into the whole row; +inf makes inf - inf = NaN; an
 * all -inf row gives -inf - -inf = NaN; a -inf element in a finite row gives exp(-inf) = 0.
 * The forward sum is accumulated in float64 (float32 sums of long rows would lose ~1e-6); the
 * backward sums in float32.
 *
 * Each entry point runs the first implementation of its ordered list (end of file) that
 * accepts the dtype and shape: the blocked float32 and float64 kernels below, then the plain
 * reference kernel (reference.c), which accepts every dtype the operator supports.
 *
 * Work is split into items that depend on the shape only (rows, column blocks, groups of small
 * slabs; "threads and stores" below) and run on the kernel pool, each item by one thread with
 * the same code, so results are bit-identical for every thread count. Three ways through the
 * float32-compute kernels, all built from loops that gcc vectorises without reassociating
 * anything (so every vector width gives the same bits):
 *   - rows (inner == 1, axis above a small limit): a row of up to ROWBUF elements is read from
 *     memory once (widened into a stack buffer for 16-bit types), reduced into RW fixed lanes
 *     folded by a halving tree, its exps kept in a second buffer, normalised and written once
 *     (while the next row is prefetched); longer rows go in SEG pieces and are read three times.
 *   - columns (inner > 1): for one outer index o and a block of w <= SEG consecutive inner
 *     columns, the elements x[o][a][i0 .. i0+w) for consecutive a are either rows of a
 *     contiguous slab (w == inner) or rows spaced inner apart; w is chosen from the shape so
 *     that a block of axis x w elements fits in KEEP (256 KB of floats) when it can
 *     (col_width): its later passes then read the cache, not memory. The axis is walked in
 *     "segments" of R consecutive a-rows (R = SEG / inner when the inner extent fits, else 1),
 *     each one contiguous run of len <= S = R*w elements. Per-column accumulators are kept S
 *     wide, aligned with the segment (element k belongs to column k % w), so each pass is an
 *     elementwise loop over contiguous arrays; afterwards the R replicas are folded (halving
 *     tree) and the per-column result copied back into all R replicas for the next pass. A block
 *     of up to KEEP elements keeps its exps in thread scratch (read once, written once).
 *   - small slabs (axis*inner tiny): many outer slabs are transposed into one [axis][nb*inner]
 *     float32 block, which is a single wide column problem, computed in place and scattered
 *     back (see gather / scatter).
 *
 * Stack use per thread: about 130 KB of scratch arrays; the column path's exps go in a 256 KB
 * per-thread heap buffer (aclk_scratch, allocated once per thread; without it the exps are
 * recomputed, with the same bits), grown to up to 1 MB for whole slabs of up to KEEP_SLAB
 * elements, which cannot be narrowed: (64, 4096, 64) over dim 1, 2 threads cold, softmax
 * float32 18.9 -> 13.1 ms, float16 15.5 -> 10.7, bfloat16 21.3 -> 12.8 (one exp per element
 * instead of two, and 16-bit inputs widened twice instead of three times; since then once:
 * into the buffer, where the exps are then computed in place, which over dim 0 of (16, 1000,
 * 1000) took 0.90-0.95x the time of widening twice, float16 and bfloat16 alike).
 */

/* Floating-point contraction off for this file (before any #include, so that the inline
 * helpers of the headers get it too): the per-level versions (vecmath.h's ACLK_LEVELS) give
 * bit-identical results only if no multiply-add is fused, FMA being in some levels only, and the
 * accuracy of aclk_exp_f32 / aclk_log_f32 is measured without it. gcc ignores
 * "#pragma STDC FP_CONTRACT" in C (gcc 12), hence its own pragma. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <string.h>

#include "aclnn_emu.h"
#include "dtype.h"
#include "aclk_pool.h"
#include "vecmath.h"
#include "cvt_x86.h"
#include "softmax_common.h"
#include "parts.h"

#define SEG 512 /* segment / accumulator width in elements */

/* qnan_f32 / qnan_f64 (softmax_common.h): every NaN these kernels write is one quiet NaN */


/* ------------------------------------------------------------------- reductions ----
 * Reductions of a whole row into LANES fixed accumulators (lane = index mod LANES), which gcc
 * keeps in vector registers. The lane count is fixed, not the vector width, so every level adds
 * in the same order. */
#define LANES 16

ACLK_INLINE void lanes_max(float *restrict acc, const float *restrict x, int64_t n)
{
    int64_t k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] = (x[k + j] > acc[j]) ? x[k + j] : acc[j];
    for (int j = 0; k + j < n; j++)
        acc[j] = (x[k + j] > acc[j]) ? x[k + j] : acc[j];
}

ACLK_INLINE void lanes_sum_d(double *restrict acc, const float *restrict x, int64_t n)
{
    int64_t k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += (double)x[k + j];
    for (int j = 0; k + j < n; j++)
        acc[j] += (double)x[k + j];
}

ACLK_INLINE void lanes_sum_f(float *restrict acc, const float *restrict x, int64_t n)
{
    int64_t k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += x[k + j];
    for (int j = 0; k + j < n; j++)
        acc[j] += x[k + j];
}

ACLK_INLINE void lanes_dot_f(float *restrict acc, const float *restrict g,
                             const float *restrict y, int64_t n)
{
    int64_t k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] += g[k + j] * y[k + j];
    for (int j = 0; k + j < n; j++)
        acc[j] += g[k + j] * y[k + j];
}

ACLK_INLINE void vmax_acc(float *restrict acc, const float *restrict x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        acc[k] = (x[k] > acc[k]) ? x[k] : acc[k];
}

ACLK_INLINE void vsum_acc_d(double *restrict acc, const float *restrict x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        acc[k] += (double)x[k];
}

ACLK_INLINE void vsum_acc_f(float *restrict acc, const float *restrict x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        acc[k] += x[k];
}

ACLK_INLINE void vdot_acc_f(float *restrict acc, const float *restrict g,
                       const float *restrict y, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        acc[k] += g[k] * y[k];
}






/* --------------------------------------------------------------------- blocking ---- */

/* the geometry of one (o, column block) work item */
typedef struct {
    int64_t w;      /* columns in the block */
    int64_t R;      /* a-rows per segment */
    int64_t S;      /* accumulator width R*w */
    int64_t nseg;   /* segments along the axis */
} blk_t;

/* Elements of a column block kept in thread scratch between the passes: the forward pass's exps
   (16-bit: the widened inputs first, then the exps in their place; log-softmax, which needs only
   the exps' sums: 16-bit widened inputs, float32 nothing), the backward pass's 16-bit grad and
   y widened to float32 (256 KB of floats each: a block's inputs and its scratch fit a 1-2 MB L2
   together). */
#define KEEP 65536
#define KEEP_SLAB 262144
#define WMAX 4096

/* The block width W of the forward column path (a shape-only choice, so the same for every thread
   count). inner <= SEG: whole slabs (W == inner), R = SEG / inner a-rows per segment. Wider:
   blocks of W <= WMAX columns, a multiple of 16 (whole 64-byte lines of float32) and at least 64
   (narrower blocks cost more in per-row loop overhead than they save), so that axis x W <= KEEP
   when possible: each block is then read from memory once and its later passes hit the cache.
   A short axis gets wide blocks, i.e. long strided runs that the prefetchers follow: (16, 1000,
   1000) over dim 0 (runs of 4096 columns instead of 512) went from 18.2 to 13.5 ms for float32
   softmax and from 25 to 17 ms for log_softmax (2 threads, cold, medians of alternating runs). */
static int64_t col_width(int64_t axis, int64_t inner)
{
    if (inner <= SEG)
        return inner;
    int64_t w = (KEEP / axis) & ~(int64_t)15;
    return w < 64 ? SEG : min64(w, WMAX);
}

/* The width used by both column paths. 16-bit inputs take col_width, so that a block's widened
   float32 copies (forward: its exps; backward: grad and y) fit KEEP floats of scratch each and
   are converted once. float32 takes it where it is wider than SEG (a short axis) but never
   narrower: an L2 holding a float32 block's inputs beside a full KEEP buffer is thrashed, and
   recomputing (forward) or rereading (backward) SEG-wide blocks was faster, e.g. for (4, 300,
   13000) over dim 1, 2 threads cold: log_softmax 36.6 -> 24.1 ms, softmax_backward 28.5 -> 18.8
   ms (208-column blocks against 512). */
static int64_t blk_width(int dt, int64_t axis, int64_t inner)
{
    const int64_t w = col_width(axis, inner);
    return dt == ACLK_F32 ? (w > SEG ? w : min64(inner, SEG)) : w;
}

static blk_t block_geom(int64_t axis, int64_t inner, int64_t i0, int64_t W)
{
    blk_t b;
    if (W == inner && inner <= SEG) {
        b.w = inner;
        b.R = min64(SEG / inner, axis);
    } else {
        b.w = min64(W, inner - i0);
        b.R = 1;
    }
    b.S = b.R * b.w;
    b.nseg = (axis + b.R - 1) / b.R;
    return b;
}

/* A block whose a-rows are spaced inner apart (R == 1) is a series of short runs, each in
   another page, which the hardware prefetcher does not follow: each pass prefetches the run
   PF_AHEAD a-rows ahead of the one it reads, into L2 (prefetcht1), not L1: PF_AHEAD runs of a
   float32 block are 16 KB and more per input, which evicted from a 32 KB L1 what the pass was
   about to read. Measured on a Zen 4, 2 threads, cold, the two builds called alternately in
   one process: (16, 1000, 1000) over dim 1, float32, 0.75-0.87x the time of L1 prefetches for
   the four operators; (4, 300, 13000) over dim 1, 0.85-0.91x; 16-bit types and dim 0 within
   the noise (+-5 %). */
#define PF_AHEAD 8

ACLK_INLINE void prefetch_run(const blk_t *b, int dt, const void *p, int64_t off, int64_t a0,
                              int64_t axis, int64_t inner)
{
    if (b->R != 1 || a0 + PF_AHEAD >= axis)
        return;
    const int64_t esz = dt == ACLK_F32 ? 4 : 2, n = b->w * esz;
    const char *q = (const char *)p + (off + PF_AHEAD * inner) * esz;
    for (int64_t k = 0; k < n; k += 64)
        __builtin_prefetch(q + k, 0, 2);
    __builtin_prefetch(q + n - 1, 0, 2);
}

/* ------------------------------------------------------------- small-slab batching ----
 * When one outer slab (axis x inner elements) is small, the per-slab work above (folds,
 * replicas, loop heads) would dominate. Then nb consecutive slabs [nb][axis][inner] are
 * gathered (and widened to float32) into a [axis][nb*inner] block, which is just one slab of
 * a problem with inner' = nb*inner, computed in place, and scattered back (narrowed). */
#define BLK 8192 /* floats in a gathered block */

/* Largest slab (axis*inner elements) that is batched, forward and backward; rows (inner == 1)
 * longer than the *_ROW limits take the row path (fwd_rows / bwd_rows) instead. Measured on
 * float32 with 4M elements (x86-64, AVX-512 code): against the unbatched paths, batching wins
 * by up to ~10x for rows of 2..16 and for slabs up to ~100 with inner > 1 in the forward pass;
 * in the backward pass (two gathers and one scatter against cheap arithmetic) only for tiny
 * slabs. */
#ifndef SM_BATCH_FWD
#define SM_BATCH_FWD 128
#endif
#ifndef SM_BATCH_FWD_ROW
#define SM_BATCH_FWD_ROW 32
#endif
#ifndef SM_BATCH_BWD
#define SM_BATCH_BWD 16
#endif
#ifndef SM_BATCH_BWD_ROW
#define SM_BATCH_BWD_ROW 12
#endif

static int use_batch(int64_t axis, int64_t inner, int64_t max_slab)
{
    return axis <= max_slab && inner <= max_slab && axis * inner <= max_slab;
}

static int64_t batch_slabs(int64_t axis, int64_t inner)
{
    int64_t nb = min64(SEG / inner, BLK / (axis * inner));
    return nb < 1 ? 1 : nb;
}

/* buf[a][b*inner + i] = src[base + (b*axis + a)*inner + i] for b < nb */
ACLK_INLINE void gather(int dt, const void *src, int64_t base, int64_t nb, int64_t axis,
                        int64_t inner, float *restrict buf)
{
    const int64_t W = nb * inner;
    if (inner == 1) {
        if (dt == ACLK_F32) {
            const float *s = (const float *)src + base;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t a = 0; a < axis; a++)
                    buf[a * W + b] = s[b * axis + a];
        } else if (dt == ACLK_F16) {
            const uint16_t *s = (const uint16_t *)src + base;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t a = 0; a < axis; a++)
                    buf[a * W + b] = aclk_f16_to_f32(s[b * axis + a]);
        } else {
            const uint16_t *s = (const uint16_t *)src + base;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t a = 0; a < axis; a++)
                    buf[a * W + b] = aclk_bf16_to_f32(s[b * axis + a]);
        }
        return;
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t a = 0; a < axis; a++) {
            int64_t off = base + (b * axis + a) * inner;
            float *d = buf + a * W + b * inner;
            const float *p = aclk_load_f32(dt, src, off, inner, d);
            if (p != d)
                memcpy(d, p, (size_t)inner * sizeof(float));
        }
    }
}

/* the inverse of gather */
ACLK_INLINE void scatter(int dt, void *dst, int64_t base, int64_t nb, int64_t axis,
                         int64_t inner, const float *restrict buf)
{
    const int64_t W = nb * inner;
    if (inner == 1) {
        if (dt == ACLK_F32) {
            float *d = (float *)dst + base;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t a = 0; a < axis; a++)
                    d[b * axis + a] = buf[a * W + b];
        } else if (dt == ACLK_F16) {
            uint16_t *d = (uint16_t *)dst + base;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t a = 0; a < axis; a++)
                    d[b * axis + a] = aclk_f32_to_f16(buf[a * W + b]);
        } else {
            uint16_t *d = (uint16_t *)dst + base;
            for (int64_t b = 0; b < nb; b++)
                for (int64_t a = 0; a < axis; a++)
                    d[b * axis + a] = aclk_f32_to_bf16(buf[a * W + b]);
        }
        return;
    }
    for (int64_t b = 0; b < nb; b++)
        for (int64_t a = 0; a < axis; a++)
            aclk_store_f32(dt, dst, base + (b * axis + a) * inner, inner, buf + a * W + b * inner);
}

/* ------------------------------------------------------------ threads and stores ----
 * Every kernel below splits its work into items that depend only on the shape (rows, column
 * blocks, groups of small slabs) and hands them to the kernel pool (aclk_pool.h); each item is
 * computed by one thread, start to finish, with the same code, so the result does not depend on
 * the thread count. Items are grouped into chunks of about CHUNK_ELEMS elements; a small problem
 * (fewer than MIN_CHUNKS such chunks) into MIN_CHUNKS chunks of at least CHUNK_MIN elements, so
 * that it too is shared between threads: (32, 1024) float32 softmax, hot, 53 -> 33 us on 2 threads.
 * Chunking decides only which thread runs an item, never the result.
 *
 * Outputs larger than the cache (aclk_use_nt) are written with non-temporal stores from a
 * cache-resident scratch buffer: the output is then written to memory once and never read
 * (a plain store first reads each line in), and it does not evict the inputs. */
#define CHUNK_ELEMS 32768
#define CHUNK_MIN 4096
#define MIN_CHUNKS 8

/* items per chunk for n items of elems_per_item elements each */
static int64_t grain_for(int64_t n, int64_t elems_per_item)
{
    const int64_t e = elems_per_item > 0 ? elems_per_item : 1;
    int64_t g = CHUNK_ELEMS / e;
    if (g > 1 && n < MIN_CHUNKS * g) {
        const int64_t lo = CHUNK_MIN / e, even = (n + MIN_CHUNKS - 1) / MIN_CHUNKS;
        g = lo > even ? lo : even;
    }
    return g < 1 ? 1 : g;
}

ACLK_INLINE void put_f32(int nt, int dt, void *base, int64_t off, int64_t n, const float *src)
{
    if (nt)
        aclk_store_f32_nt(dt, base, off, n, src);
    else
        aclk_store_f32(dt, base, off, n, src);
}

/* ------------------------------------------------------------ row reductions ----
 * A row is reduced into RW fixed lanes (lane = index mod RW), elementwise loops that gcc
 * vectorises at any width, then the lanes are folded by a halving tree: the same order on every
 * ISA and thread count. */
#define RW 64

ACLK_INLINE float row_max(const float *restrict x, int64_t n)
{
    float acc[RW];
    for (int j = 0; j < RW; j++)
        acc[j] = -INFINITY;
    int64_t k = 0;
    for (; k + RW <= n; k += RW)
        vmax_acc(acc, x + k, RW);
    vmax_acc(acc, x + k, n - k);
    fold_max_f(acc, RW, 1);
    return acc[0];
}

/* Prefetch the lines [i*L/nb, (i+1)*L/nb) of the next row's nbytes at pf (the i-th of nb
   compute blocks of this row): the next row then arrives while this one is computed, instead
   of the row's first pass waiting for memory with the vector units idle. */
#define PF_BLOCK 256 /* elements computed between two prefetch batches */

ACLK_INLINE void prefetch_part(const char *pf, int64_t nbytes, int64_t i, int64_t nb)
{
    if (!pf)
        return;
    const int64_t lines = (nbytes + 63) / 64;
    for (int64_t l = i * lines / nb; l < (i + 1) * lines / nb; l++)
        __builtin_prefetch(pf + l * 64, 0, 2);
}

/* e = exp(x - m), returns sum(e) accumulated in float64; prefetches the next row (pf) */
ACLK_INLINE double row_exp_sum(const float *restrict x, float m, float *restrict e, int64_t n,
                               const char *pf, int64_t pf_bytes)
{
    double acc[RW];
    for (int j = 0; j < RW; j++)
        acc[j] = 0.0;
    const int64_t nb = (n + PF_BLOCK - 1) / PF_BLOCK;
    for (int64_t i = 0; i < nb; i++) {
        const int64_t len = min64(PF_BLOCK, n - i * PF_BLOCK);
        float *eb = e + i * PF_BLOCK;
        aclk_vexp_sub1_f32(x + i * PF_BLOCK, m, eb, len);
        /* summed while in L1; PF_BLOCK is a multiple of RW, so the lanes see the same order */
        int64_t k = 0;
        for (; k + RW <= len; k += RW)
            vsum_acc_d(acc, eb + k, RW);
        vsum_acc_d(acc, eb + k, len - k);
        prefetch_part(pf, pf_bytes, i, nb);
    }
    fold_sum_d(acc, RW, 1);
    return acc[0];
}

ACLK_INLINE float row_sum_f(const float *restrict x, int64_t n)
{
    float acc[RW];
    for (int j = 0; j < RW; j++)
        acc[j] = 0.0f;
    int64_t k = 0;
    for (; k + RW <= n; k += RW)
        vsum_acc_f(acc, x + k, RW);
    vsum_acc_f(acc, x + k, n - k);
    fold_sum_f(acc, RW, 1);
    return acc[0];
}

ACLK_INLINE float row_dot_f(const float *restrict g, const float *restrict y, int64_t n)
{
    float acc[RW];
    for (int j = 0; j < RW; j++)
        acc[j] = 0.0f;
    int64_t k = 0;
    for (; k + RW <= n; k += RW)
        vdot_acc_f(acc, g + k, y + k, RW);
    vdot_acc_f(acc, g + k, y + k, n - k);
    fold_sum_f(acc, RW, 1);
    return acc[0];
}

/* log of a float64 sum s >= 1: log(sf) + (s - sf)/sf with sf = s rounded to float, so that a sum
   just above 1 still gives an accurate small log */
ACLK_INLINE float log_of_sum(double s)
{
    float sf = (float)s;
    return aclk_log_f32(sf) + (float)(s - (double)sf) / sf;
}

/* ---------------------------------------------------------- forward, 32-bit compute ---- */

typedef struct {
    int dt, lg, nt;
    const void *x;
    void *y;
    int64_t outer, axis, inner;
} fwd_args;

#define ROWBUF 8192 /* floats: rows (and column blocks) up to this size stay in scratch */

/* Rows of at most ROWBUF elements: each is read from memory once (widened into xb for 16-bit
   types), its exps kept in eb, and written once. */
ACLK_LEVELS(fwd_rows_chunk, (void *ctx, int64_t r0, int64_t r1), (ctx, r0, r1))
{
    const fwd_args *c = (const fwd_args *)ctx;
    float xb[ROWBUF], eb[ROWBUF];
    const int64_t n = c->axis;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t base = r * n;
        const float *p = aclk_load_f32(c->dt, c->x, base, n, xb);
        const float m = row_max(p, n);
        const int64_t esz = c->dt == ACLK_F32 ? 4 : 2;
        const char *next = r + 1 < c->outer ? (const char *)c->x + (base + n) * esz : NULL;
        const double s = row_exp_sum(p, m, eb, n, next, n * esz);
        /* float32 stored normally: the last pass writes y itself instead of eb and a copy */
        float *o = c->dt == ACLK_F32 && !c->nt ? (float *)c->y + base : eb;
        if (!c->lg) {
            const float inv = (float)(1.0 / s);
            for (int64_t k = 0; k < n; k++)
                o[k] = qnan_f32(eb[k] * inv);
        } else {
            const float f = log_of_sum(s);
            for (int64_t k = 0; k < n; k++)
                o[k] = qnan_f32((p[k] - m) - f);
        }
        put_f32(c->nt, c->dt, c->y, base, n, o);
    }
    if (c->nt)
        aclk_nt_fence();
}

/* Rows longer than ROWBUF, in SEG chunks: max, exp + sum, then the exps recomputed and
   normalised (the row is read three times; from cache when it fits there). */
ACLK_LEVELS(fwd_long_rows_chunk, (void *ctx, int64_t r0, int64_t r1), (ctx, r0, r1))
{
    const fwd_args *c = (const fwd_args *)ctx;
    float xbuf[SEG], ebuf[SEG];
    const int64_t n = c->axis;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t base = r * n;
        float mx[RW];
        double sm[RW];
        for (int j = 0; j < RW; j++)
            mx[j] = -INFINITY, sm[j] = 0.0;
        /* SEG is a multiple of RW, so lane j always holds the indices j mod RW */
        for (int64_t a0 = 0; a0 < n; a0 += SEG) {
            int64_t len = min64(SEG, n - a0);
            const float *p = aclk_load_f32(c->dt, c->x, base + a0, len, xbuf);
            int64_t k = 0;
            for (; k + RW <= len; k += RW)
                vmax_acc(mx, p + k, RW);
            vmax_acc(mx, p + k, len - k);
        }
        fold_max_f(mx, RW, 1);
        const float m = mx[0];
        for (int64_t a0 = 0; a0 < n; a0 += SEG) {
            int64_t len = min64(SEG, n - a0);
            const float *p = aclk_load_f32(c->dt, c->x, base + a0, len, xbuf);
            aclk_vexp_sub1_f32(p, m, ebuf, len);
            int64_t k = 0;
            for (; k + RW <= len; k += RW)
                vsum_acc_d(sm, ebuf + k, RW);
            vsum_acc_d(sm, ebuf + k, len - k);
        }
        fold_sum_d(sm, RW, 1);
        const double s = sm[0];
        const float inv = (float)(1.0 / s), f = c->lg ? log_of_sum(s) : 0.0f;
        for (int64_t a0 = 0; a0 < n; a0 += SEG) {
            int64_t len = min64(SEG, n - a0);
            const float *p = aclk_load_f32(c->dt, c->x, base + a0, len, xbuf);
            if (!c->lg) {
                aclk_vexp_sub1_f32(p, m, ebuf, len);
                for (int64_t k = 0; k < len; k++)
                    ebuf[k] = qnan_f32(ebuf[k] * inv);
            } else {
                for (int64_t k = 0; k < len; k++)
                    ebuf[k] = qnan_f32((p[k] - m) - f);
            }
            put_f32(c->nt, c->dt, c->y, base + a0, len, ebuf);
        }
    }
    if (c->nt)
        aclk_nt_fence();
}

typedef struct {
    float macc[WMAX], fac[WMAX], xbuf[WMAX], ebuf[WMAX];
    double sacc[WMAX];
    float *eblk; /* ecap floats of thread scratch, or NULL */
    int64_t ecap;
} fwd_ws;

/* One column block: for outer index o, the columns [i0, i0 + b.w) over the whole axis. When the
   block (axis x w elements) fits in eblk (KEEP floats) its exps are kept there and each element
   is read from memory once and written once; otherwise the normalising pass recomputes them
   (the same bits). y may be x (the gathered
   small-slab blocks, nt = 0 there). */
ACLK_INLINE void fwd_block(const fwd_args *c, int64_t o, int64_t i0, blk_t b, fwd_ws *ws)
{
    const int dt = c->dt, lg = c->lg, nt = c->nt;
    const int64_t axis = c->axis, inner = c->inner;
    const void *x = c->x;
    void *y = c->y;
    float *macc = ws->macc, *fac = ws->fac, *xbuf = ws->xbuf, *ebuf = ws->ebuf;
    double *sacc = ws->sacc;
    const int64_t base = o * axis * inner + i0;
    const int keep = ws->eblk && axis * b.w <= ws->ecap;
    /* 16-bit inputs of a kept block are widened once, into eblk, where pass 2 computes in place */
    const int wide = keep && dt != ACLK_F32;

    /* pass 1: column max (NaNs are skipped here; they propagate through the sum) */
    for (int64_t k = 0; k < b.S; k++)
        macc[k] = -INFINITY;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        int64_t len = min64(b.R, axis - a0) * b.w;
        prefetch_run(&b, dt, x, base + a0 * inner, a0, axis, inner);
        const float *p = aclk_load_f32(dt, x, base + a0 * inner, len,
                                       wide ? ws->eblk + a0 * b.w : xbuf);
        vmax_acc(macc, p, len);
    }
    fold_max_f(macc, b.R, b.w);
    replicate(macc, b.R, b.w, sizeof(float));

    /* pass 2: e = exp(x - m), column sums in float64 */
    for (int64_t k = 0; k < b.S; k++)
        sacc[k] = 0.0;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        int64_t len = min64(b.R, axis - a0) * b.w;
        float *e = keep ? ws->eblk + a0 * b.w : ebuf;
        const float *p = e;
        if (!wide) {
            prefetch_run(&b, dt, x, base + a0 * inner, a0, axis, inner);
            p = aclk_load_f32(dt, x, base + a0 * inner, len, xbuf);
        }
        if (lg) {
            /* log-softmax sums its exps only (its output is x - m - log(sum)): they go to ebuf,
               and e keeps what it holds (a 16-bit block's widened x) */
            aclk_vexp_sub_f32(p, macc, ebuf, len);
            vsum_acc_d(sacc, ebuf, len);
        } else {
            aclk_vexp_sub_f32(p, macc, e, len);
            vsum_acc_d(sacc, e, len);
        }
    }
    fold_sum_d(sacc, b.R, b.w);
    /* two loops, not one with the choice inside, so that each is vectorised: with inner >> axis
       (a softmax over dim 0) there is one log or reciprocal per axis elements */
    if (lg)
        for (int64_t j = 0; j < b.w; j++)
            fac[j] = log_of_sum(sacc[j]);
    else
        for (int64_t j = 0; j < b.w; j++)
            fac[j] = (float)(1.0 / sacc[j]);
    replicate(fac, b.R, b.w, sizeof(float));

    /* pass 3: normalise */
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        int64_t off = base + a0 * inner;
        int64_t len = min64(b.R, axis - a0) * b.w;
        float *e = keep ? ws->eblk + a0 * b.w : ebuf;
        if (!wide && (lg || !keep))
            prefetch_run(&b, dt, x, off, a0, axis, inner);
        if (!lg) {
            if (!keep) {
                const float *p = aclk_load_f32(dt, x, off, len, xbuf);
                aclk_vexp_sub_f32(p, macc, ebuf, len);
            }
            for (int64_t k = 0; k < len; k++)
                e[k] = qnan_f32(e[k] * fac[k]);
        } else {
            const float *p = wide ? e : aclk_load_f32(dt, x, off, len, xbuf);
            for (int64_t k = 0; k < len; k++)
                e[k] = qnan_f32((p[k] - macc[k]) - fac[k]);
        }
        put_f32(nt, dt, y, off, len, e);
    }
}

ACLK_LEVELS(fwd_cols_chunk, (void *ctx, int64_t t0, int64_t t1), (ctx, t0, t1))
{
    const fwd_args *c = (const fwd_args *)ctx;
    fwd_ws ws;
    const int64_t W = blk_width(c->dt, c->axis, c->inner), nblk = (c->inner + W - 1) / W;
    /* whole slabs (inner <= SEG) cannot be narrowed to fit KEEP: up to KEEP_SLAB are kept too */
    const int64_t need = c->axis * W;
    ws.ecap = c->inner <= SEG && need > KEEP && need <= KEEP_SLAB ? need : KEEP;
    ws.eblk = (float *)aclk_scratch((size_t)ws.ecap * sizeof(float));
    for (int64_t t = t0; t < t1; t++) {
        int64_t o = t / nblk, i0 = (t % nblk) * W;
        fwd_block(c, o, i0, block_geom(c->axis, c->inner, i0, W), &ws);
    }
    if (c->nt)
        aclk_nt_fence();
}

/* groups of B small slabs, gathered into one column block, computed in place, scattered */
ACLK_LEVELS(fwd_batch_chunk, (void *ctx, int64_t g0, int64_t g1), (ctx, g0, g1))
{
    const fwd_args *c = (const fwd_args *)ctx;
    fwd_ws ws;
    ws.ecap = KEEP;
    ws.eblk = (float *)aclk_scratch(KEEP * sizeof(float));
    float blk[BLK];
    const int64_t slab = c->axis * c->inner, B = batch_slabs(c->axis, c->inner);
    for (int64_t g = g0; g < g1; g++) {
        int64_t o0 = g * B, nb = min64(B, c->outer - o0);
        gather(c->dt, c->x, o0 * slab, nb, c->axis, c->inner, blk);
        fwd_args gc = {ACLK_F32, c->lg, 0, blk, blk, 1, c->axis, nb * c->inner};
        fwd_block(&gc, 0, 0, block_geom(c->axis, nb * c->inner, 0, nb * c->inner), &ws);
        scatter(c->dt, c->y, o0 * slab, nb, c->axis, c->inner, blk);
    }
}

#if defined(ACLK_X86)
/* the short-axis register path (defined after the backward kernels, whose helpers it shares) */
static int short_cols(int dt, int64_t total, int64_t axis, int64_t inner, const void *out,
                      const void *in1, const void *in2);
static void fwd_short_chunk(void *ctx, int64_t t0, int64_t t1);
#endif

static void softmax_fwd_f32(int dt, const void *x, void *y, int64_t outer, int64_t axis,
                            int64_t inner, int lg)
{
    const int64_t total = outer * axis * inner;
    const int64_t esz = dt == ACLK_F32 ? 4 : 2;
    fwd_args c = {dt, lg, aclk_use_nt(total * esz), x, y, outer, axis, inner};
    if (inner == 1 && axis > SM_BATCH_FWD_ROW) {
        if (axis <= ROWBUF)
            aclk_parallel_for(outer, grain_for(outer, axis), fwd_rows_chunk, &c);
        else
            aclk_parallel_for(outer, grain_for(outer, axis), fwd_long_rows_chunk, &c);
    } else if (!use_batch(axis, inner, SM_BATCH_FWD)) {
        const int64_t W = blk_width(dt, axis, inner), nblk = (inner + W - 1) / W;
        aclk_range_fn fn = fwd_cols_chunk;
#if defined(ACLK_X86)
        if (short_cols(dt, total, axis, inner, y, x, NULL))
            fn = fwd_short_chunk;
#endif
        aclk_parallel_for(outer * nblk, grain_for(outer * nblk, axis * min64(inner, W)), fn, &c);
    } else {
        const int64_t B = batch_slabs(axis, inner);
        const int64_t ng = (outer + B - 1) / B;
        aclk_parallel_for(ng, grain_for(ng, B * axis * inner), fwd_batch_chunk, &c);
    }
}

/* --------------------------------------------------------- backward, 32-bit compute ---- */

typedef struct {
    int dt, lg, nt;
    const void *g, *yv;
    void *out;
    int64_t outer, axis, inner;
} bwd_args;

ACLK_INLINE void bwd_combine(int lg, const float *restrict pg, const float *restrict py,
                             const float *restrict s, int64_t s_stride, float *restrict d,
                             int64_t len)
{
    /* s_stride 0: one scalar s[0]; 1: s[k] per element */
    if (lg) {
        /* exp(y) into d first; y is a log-softmax output, <= 0, in all but odd calls, and the
           exp for arguments <= 0 gives the general one's bits for less work (x - 0 is x). The
           choice stays here: moved into aclk_vexp_f32 it measured slower (float32 rows
           0.89 -> 1.05 ns/element) */
        if (aclk_all_nonpos_f32(py, len))
            aclk_vexp_sub1_f32(py, 0.0f, d, len);
        else
            aclk_vexp_f32(py, d, len);
        if (s_stride)
            for (int64_t k = 0; k < len; k++)
                d[k] = qnan_f32(pg[k] - d[k] * s[k]);
        else
            for (int64_t k = 0; k < len; k++)
                d[k] = qnan_f32(pg[k] - d[k] * s[0]);
    } else {
        if (s_stride)
            for (int64_t k = 0; k < len; k++)
                d[k] = qnan_f32(pg[k] * py[k] - s[k] * py[k]);
        else
            for (int64_t k = 0; k < len; k++)
                d[k] = qnan_f32(pg[k] * py[k] - s[0] * py[k]);
    }
}

/* The next row's prefetch spread over npass passes of the current one (npass 2: part a0/SEG
   of the reduction pass's pieces, pass 0, and of the output pass's, pass 1, half the next row
   each). The 16-bit register rows spread it over both passes, so that memory also works while
   the reduction runs from cache instead of idling until the output pass: (4096, 4096), 2
   threads, cold, `ab_kernels.py`, AVX-512 level, softmax_backward 0.89-0.97x (float16) and
   0.72-0.92x (bfloat16), log_softmax_backward 0.88-1.03x; 1 thread 0.91-1.03x. Not for
   log_softmax_backward at the AVX2 level, whose longer output pass (the exp through a float32
   buffer) keeps the whole prefetch: split, it measured 1.0-1.18x there. */
ACLK_INLINE void prefetch_next_row2(const bwd_args *c, int64_t base, int64_t a0, int pass,
                                    int npass)
{
    if (base + c->axis >= c->outer * c->axis)
        return;
    const int64_t esz = c->dt == ACLK_F32 ? 4 : 2, nbytes = c->axis * esz;
    const int64_t nb = (c->axis + SEG - 1) / SEG, i = pass * nb + a0 / SEG;
    const int64_t off = (base + c->axis) * esz;
    prefetch_part((const char *)c->g + off, nbytes, i, npass * nb);
    prefetch_part((const char *)c->yv + off, nbytes, i, npass * nb);
}

/* The output pass of a backward row reads grad and y from cache (and computes an exp per
   element for log_softmax_backward): on rows (inner 1) it prefetches the next row's grad and
   y, a part per SEG piece (a0: the piece's start), so that memory works during the arithmetic
   and the next row's first pass reads from cache. Nothing after the last row. On a Zen 4 core,
   (4096, 4096), 2 threads, cold: softmax_backward float16 4.2 -> 3.6 ms, bfloat16 5.0 -> 4.1,
   float32 6.6 -> 6.2 (on a Zen 3 core it had measured no faster for softmax_backward). */
ACLK_INLINE void prefetch_next_row(const bwd_args *c, int64_t base, int64_t a0)
{
    prefetch_next_row2(c, base, a0, 0, 1);
}

#if defined(ACLK_X86)
/* 16-bit softmax_backward and log_softmax_backward rows at the AVX2 level and above: the halves
   are converted in registers inside the reduction and output loops instead of being widened
   into float32 row buffers first (which wrote and reread 32 KB per row): a float16
   softmax_backward row in cache 0.55 -> 0.38 ns per element. The same lanes (RW = 64) and fold
   as row_dot_f / row_sum_f, the same per-element arithmetic as bwd_combine (a multiply, then
   an add or a subtract; never fused; log_softmax_backward's exp on the piece's y widened into
   the output buffer, with the same choice of exp), so the same bits for every row whose
   reduction is not NaN; a row with a NaN reduction is recomputed by the widening path (see
   bwd_short_rows_chunk), so NaN payloads match too, and vcvtph2ps quieting a float16 signaling
   NaN (the exact conversion keeps it) never reaches an output: every NaN goes through float
   arithmetic first, which quiets it with the same payload. bfloat16 is read in the unpack's lane
   order (aclk_avx2_ld2_bf16_lanes / aclk_avx512_ld2_bf16_lanes: one load and two unpacks per 16
   or 32 elements, no widening loads, shifts or permutes): each reduction lane still sums the
   same indices mod RW in the same order and is put back in place before the fold, and the
   output pack restores element order. In cache, 1 thread, (32, 4096): bfloat16
   softmax_backward 0.250 -> 0.200 ns/element, log_softmax_backward 0.48 -> 0.43; cold,
   (4096, 4096), 2 threads: 0.94-0.98x. */


/* qnan_f32 of 8 and 16 lanes: NaN lanes (unordered with themselves) blended to 0x7FC00000 */
ACLK_AVX2_INLINE __m256 qnan8(__m256 v)
{
    return _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32((int)QNAN_BITS_F32)),
                            _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
}

ACLK_AVX512_INLINE __m512 qnan16(__m512 v)
{
    return _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                              _mm512_castsi512_ps(_mm512_set1_epi32((int)QNAN_BITS_F32)));
}

ACLK_AVX2_INLINE __m256 ld16x8(const uint16_t *p, const int bf)
{
    return bf ? aclk_avx2_ld_bf16(p) : aclk_avx2_ld_f16_raw(p);
}

ACLK_AVX2_INLINE float ld16(uint16_t h, const int bf)
{
    return bf ? aclk_bf16_to_f32(h) : aclk_f16_to_f32(h);
}

/* softmax_backward's 16 outputs in float32 (v0, v1, given y) from two vectors of grad and y:
   bwd_combine's arithmetic */
ACLK_AVX2_INLINE void bwd8x2(__m256 g0, __m256 g1, __m256 *v0, __m256 *v1, __m256 vs)
{
    *v0 = qnan8(_mm256_sub_ps(_mm256_mul_ps(g0, *v0), _mm256_mul_ps(vs, *v0)));
    *v1 = qnan8(_mm256_sub_ps(_mm256_mul_ps(g1, *v1), _mm256_mul_ps(vs, *v1)));
}

/* d[k0, n): the outputs past the last whole vector step, one at a time */
ACLK_INLINE void out16_tail(const uint16_t *g, const uint16_t *y, float s, uint16_t *d,
                            int64_t k0, int64_t n, const int bf, const int lg)
{
    for (int64_t k = k0; k < n; k++) {
        const float yv = bf ? aclk_bf16_to_f32(y[k]) : aclk_f16_to_f32(y[k]);
        const float gv = bf ? aclk_bf16_to_f32(g[k]) : aclk_f16_to_f32(g[k]);
        const float o = qnan_f32(lg ? gv - aclk_exp_f32(yv) * s : gv * yv - s * yv);
        d[k] = bf ? aclk_f32_to_bf16(o) : aclk_f32_to_f16(o);
    }
}

/* softmax_backward's d[0, n) from g, y and s at the AVX2 level, 16 elements per step (bfloat16
   in the unpack's lane order). bfloat16 log_softmax_backward keeps row16_combine_lg: with its
   exp in registers 8 lanes wide, one vector per step, it measured slower (float16 in cache 0.50
   -> 0.53 ns per element); float16 takes row16_out_lg_f16, four vectors per step, which was
   faster (in cache 0.87-0.89x the time) */
ACLK_AVX2_INLINE void row16_out256(const uint16_t *g, const uint16_t *y, float s, uint16_t *d,
                                   int64_t n, const int bf)
{
    const __m256 vs = _mm256_set1_ps(s);
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m256 g0, g1, v0, v1;
        if (bf) {
            aclk_avx2_ld2_bf16_lanes(g + k, &g0, &g1);
            aclk_avx2_ld2_bf16_lanes(y + k, &v0, &v1);
        } else {
            g0 = ld16x8(g + k, 0), g1 = ld16x8(g + k + 8, 0);
            v0 = ld16x8(y + k, 0), v1 = ld16x8(y + k + 8, 0);
        }
        bwd8x2(g0, g1, &v0, &v1, vs);
        _mm256_storeu_si256((__m256i *)(d + k), bf ? aclk_avx2_cvt2_bf16_lanes(v0, v1)
                                                   : aclk_avx2_cvt2_f16(v0, v1));
    }
    out16_tail(g, y, s, d, k, n, bf, 0);
}

/* dot(g, y) (lg: sum(g)) of one 16-bit row */
ACLK_AVX2_INLINE float row16_reduce(const bwd_args *c, int64_t base, const uint16_t *g,
                                    const uint16_t *y, int64_t n, int split, const int bf,
                                    const int lg)
{
    __m256 a[RW / 8];
    for (int j = 0; j < RW / 8; j++)
        a[j] = _mm256_setzero_ps();
    int64_t k = 0;
    float acc[RW];
    if (bf) {
        /* in the unpack's lane order: a[2m] holds elements 16m + {0-3, 8-11} (mod RW), a[2m+1]
           16m + {4-7, 12-15}; put back in index order after the loop */
        for (; k + RW <= n; k += RW) {
            if (split && k % SEG == 0)
                prefetch_next_row2(c, base, k, 0, 2);
            for (int m = 0; m < RW / 16; m++) {
                __m256 g0, g1, y0, y1;
                aclk_avx2_ld2_bf16_lanes(g + k + 16 * m, &g0, &g1);
                if (!lg) {
                    aclk_avx2_ld2_bf16_lanes(y + k + 16 * m, &y0, &y1);
                    g0 = _mm256_mul_ps(g0, y0);
                    g1 = _mm256_mul_ps(g1, y1);
                }
                a[2 * m] = _mm256_add_ps(a[2 * m], g0);
                a[2 * m + 1] = _mm256_add_ps(a[2 * m + 1], g1);
            }
        }
        for (int m = 0; m < RW / 16; m++) {
            float t0[8], t1[8];
            _mm256_storeu_ps(t0, a[2 * m]);
            _mm256_storeu_ps(t1, a[2 * m + 1]);
            memcpy(acc + 16 * m, t0, 4 * sizeof(float));
            memcpy(acc + 16 * m + 4, t1, 4 * sizeof(float));
            memcpy(acc + 16 * m + 8, t0 + 4, 4 * sizeof(float));
            memcpy(acc + 16 * m + 12, t1 + 4, 4 * sizeof(float));
        }
    } else {
        for (; k + RW <= n; k += RW) {
            if (split && k % SEG == 0)
                prefetch_next_row2(c, base, k, 0, 2);
            for (int j = 0; j < RW / 8; j++) {
                const __m256 vg = ld16x8(g + k + 8 * j, bf);
                a[j] = _mm256_add_ps(a[j], lg ? vg : _mm256_mul_ps(vg, ld16x8(y + k + 8 * j, bf)));
            }
        }
        for (int j = 0; j < RW / 8; j++)
            _mm256_storeu_ps(acc + 8 * j, a[j]);
    }
    for (int j = 0; k + j < n; j++)
        acc[j] += lg ? ld16(g[k + j], bf) : ld16(g[k + j], bf) * ld16(y[k + j], bf);
    fold_sum_f(acc, RW, 1);
    return acc[0];
}

/* d[k] = g[k] - exp(y[k])*s: y widened into d, which gets its exps in place (the exp for
   arguments <= 0 when no y[k] > 0, as bwd_combine chooses), then the combine reads g in
   registers */
ACLK_AVX2_INLINE void row16_combine_lg(const uint16_t *g, const uint16_t *y, float s, float *d,
                                       int64_t n, const int bf)
{
    __m256 pos = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256 vy = ld16x8(y + k, bf);
        pos = _mm256_or_ps(pos, _mm256_cmp_ps(vy, _mm256_setzero_ps(), _CMP_GT_OQ));
        _mm256_storeu_ps(d + k, vy);
    }
    int any = !_mm256_testz_ps(pos, pos);
    for (; k < n; k++) {
        d[k] = ld16(y[k], bf);
        any |= d[k] > 0.0f;
    }
    if (any)
        aclk_vexp_f32(d, d, n);
    else
        aclk_vexp_sub1_f32(d, 0.0f, d, n);
    const __m256 vs = _mm256_set1_ps(s);
    for (k = 0; k + 8 <= n; k += 8)
        _mm256_storeu_ps(d + k, qnan8(_mm256_sub_ps(ld16x8(g + k, bf),
                                                    _mm256_mul_ps(_mm256_loadu_ps(d + k), vs))));
    for (; k < n; k++)
        d[k] = qnan_f32(ld16(g[k], bf) - d[k] * s);
}

/* exp(x) of 8 floats in [EXP_NORMAL_MIN, 0]: aclk_exp_neg_normal_f32, operation for operation */
ACLK_AVX2_INLINE __m256 exp_nn8(__m256 x)
{
    const __m256 C = _mm256_set1_ps(12582912.0f);
    const __m256 k = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), C);
    const __m256 n = _mm256_sub_ps(k, C);
    const __m256i nb = _mm256_slli_epi32(
        _mm256_sub_epi32(_mm256_castps_si256(k), _mm256_set1_epi32(0x4B400000)), 23);
    __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-0.693359375f), x);
    r = _mm256_fmadd_ps(n, _mm256_set1_ps(2.12194440e-4f), r);
    const __m256 r2 = _mm256_mul_ps(r, r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_add_ps(_mm256_mul_ps(p, r2), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), nb));
}

/* 1 when all 16 float16 (raw bits) lie in [EXP_NORMAL_MIN, 0]: +0, or the sign set and a
   magnitude <= 0x5560 (86.0; a NaN's is above), an unsigned compare as min(a, lim) == a */
ACLK_AVX2_INLINE int f16x16_neg_normal(__m256i h)
{
    const __m256i a = _mm256_xor_si256(h, _mm256_set1_epi16((short)0x8000));
    const __m256i in = _mm256_or_si256(
        _mm256_cmpeq_epi16(_mm256_min_epu16(a, _mm256_set1_epi16(0x5560)), a),
        _mm256_cmpeq_epi16(h, _mm256_setzero_si256()));
    return _mm256_movemask_epi8(in) == -1;
}

/* float16 log_softmax_backward's d[0, n) = g - exp(y)*s in registers, 32 elements per step: the
   32 y checked once on their bits, then aclk_exp_neg_normal_f32 (exp_nn8) for four vectors,
   else aclk_exp_f32 per element (the same bits where both are defined, as row16_combine_lg's
   choice), then the same multiply, subtract and rounding to float16 as row16_combine_lg and
   put_f32, without the float32 piece buffer and its three passes */
ACLK_AVX2_INLINE void row16_out_lg_f16(const uint16_t *g, const uint16_t *y, float s,
                                       uint16_t *d, int64_t n)
{
    const __m256 vs = _mm256_set1_ps(s);
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        const __m256i h0 = _mm256_loadu_si256((const __m256i *)(y + k));
        const __m256i h1 = _mm256_loadu_si256((const __m256i *)(y + k + 16));
        __m256 e[4] = {_mm256_cvtph_ps(_mm256_castsi256_si128(h0)),
                       _mm256_cvtph_ps(_mm256_extracti128_si256(h0, 1)),
                       _mm256_cvtph_ps(_mm256_castsi256_si128(h1)),
                       _mm256_cvtph_ps(_mm256_extracti128_si256(h1, 1))};
        if (f16x16_neg_normal(h0) & f16x16_neg_normal(h1)) {
            for (int v = 0; v < 4; v++)
                e[v] = exp_nn8(e[v]);
        } else {
            float t[32];
            for (int v = 0; v < 4; v++)
                _mm256_storeu_ps(t + 8 * v, e[v]);
            for (int j = 0; j < 32; j++)
                t[j] = aclk_exp_f32(t[j]);
            for (int v = 0; v < 4; v++)
                e[v] = _mm256_loadu_ps(t + 8 * v);
        }
        __m256 o[4];
        for (int v = 0; v < 4; v++)
            o[v] = qnan8(_mm256_sub_ps(ld16x8(g + k + 8 * v, 0), _mm256_mul_ps(e[v], vs)));
        _mm256_storeu_si256((__m256i *)(d + k), aclk_avx2_cvt2_f16(o[0], o[1]));
        _mm256_storeu_si256((__m256i *)(d + k + 16), aclk_avx2_cvt2_f16(o[2], o[3]));
    }
    out16_tail(g, y, s, d, k, n, 0, 1);
}

/* s = dot(g, y) (lg: sum(g)) of one 16-bit row (bf: bfloat16, else float16) */
ACLK_TARGET_AVX2 static float row16_reduce_avx2(const bwd_args *c, int64_t base, int64_t n,
                                                int split)
{
    const uint16_t *g = (const uint16_t *)c->g + base, *y = (const uint16_t *)c->yv + base;
    return BF_LG_CALL(row16_reduce, c, c, base, g, y, n, split);
}

/* the output of one 16-bit row from its reduction s, a SEG piece at a time (a streamed
   softmax_backward output through a 1 KB buffer: see row16_out_avx512) */
ACLK_TARGET_AVX2 static void row16_out_avx2(const bwd_args *c, int64_t base, float s)
{
    float obuf[SEG];
    uint16_t hbuf[SEG];
    const int bf = c->dt == ACLK_BF16;
    const uint16_t *g = (const uint16_t *)c->g + base, *y = (const uint16_t *)c->yv + base;
    uint16_t *out = (uint16_t *)c->out + base;
    for (int64_t a0 = 0; a0 < c->axis; a0 += SEG) {
        if (c->lg)
            prefetch_next_row(c, base, a0);
        else
            prefetch_next_row2(c, base, a0, 1, 2);
        const int64_t len = min64(SEG, c->axis - a0);
        if (c->lg && !bf) {
            uint16_t *d = c->nt ? hbuf : out + a0;
            row16_out_lg_f16(g + a0, y + a0, s, d, len);
            if (c->nt)
                stream16(out + a0, hbuf, len);
            continue;
        }
        if (c->lg) {
            if (bf)
                row16_combine_lg(g + a0, y + a0, s, obuf, len, 1);
            else
                row16_combine_lg(g + a0, y + a0, s, obuf, len, 0);
            put_f32(c->nt, c->dt, c->out, base + a0, len, obuf);
            continue;
        }
        uint16_t *d = c->nt ? hbuf : out + a0;
        if (bf)
            row16_out256(g + a0, y + a0, s, d, len, 1);
        else
            row16_out256(g + a0, y + a0, s, d, len, 0);
        if (c->nt)
            stream16(out + a0, hbuf, len);
    }
}

/* The output pass of the same rows at the AVX-512 level: 16 elements per vector, computed,
   narrowed and stored in registers, without the float32 piece buffer and the narrowing pass over
   it (log_softmax_backward's exp in registers too). A streamed output (c->nt) is still written
   into a 1 KB buffer per piece and streamed from there in one burst: stores streamed from inside
   the compute loop made (4096, 4096) 1.24-1.43x slower, cold, 2 threads. Each element gets the
   same multiplies and subtract, and the exp is aclk_exp_neg_normal_f32 on a vector whose
   arguments all lie in [EXP_NORMAL_MIN, 0], else aclk_exp_f32 (the exps of vecmath.h agree bit
   for bit where both are defined): the same bits as the rows above. The reduction stays
   row16_reduce_avx2: its 512-bit form measured slower for float16 (in cache 0.190 -> 0.204
   ns/element for softmax_backward; vcvtph2ps on 512 bits is no faster per element on the Zen 4
   this was measured on). In cache, 1 thread, (32, 4096): log_softmax_backward float16 0.49 ->
   0.40, bfloat16 0.54 -> 0.48 ns/element; softmax_backward unchanged. */
ACLK_AVX512_INLINE __m512 ld16x16(const uint16_t *p, const int bf)
{
    return bf ? aclk_avx512_ld_bf16(p) : aclk_avx512_ld_f16_raw(p);
}

/* exp(x) of 16 floats: aclk_exp_neg_normal_f32 when every x is in its domain, else
   aclk_exp_f32 (the same bits where both are defined); gcc vectorises either loop to one
   16-lane pass in this AVX-512 function */
ACLK_AVX512_INLINE __m512 exp16(__m512 x)
{
    const __mmask16 in = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LE_OQ) &
                         _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_NORMAL_MIN), _CMP_GE_OQ);
    float t[16];
    _mm512_storeu_ps(t, x);
    if (in == 0xFFFF) {
#pragma GCC unroll 16
        for (int j = 0; j < 16; j++)
            t[j] = aclk_exp_neg_normal_f32(t[j]);
    } else {
        for (int j = 0; j < 16; j++)
            t[j] = aclk_exp_f32(t[j]);
    }
    return _mm512_loadu_ps(t);
}

/* exp(x) of 16 floats in [EXP_NORMAL_MIN, 0]: aclk_exp_neg_normal_f32, operation for operation
   (used by out16_512 and the short-axis path below) */
ACLK_AVX512_INLINE __m512 exp_nn16(__m512 x)
{
    const __m512 big = _mm512_set1_ps(12582912.0f);
    const __m512 k = _mm512_fmadd_ps(x, _mm512_set1_ps(1.44269504088896341f), big);
    const __m512 n = _mm512_sub_ps(k, big);
    const __m512i nb = _mm512_slli_epi32(
        _mm512_sub_epi32(_mm512_castps_si512(k), _mm512_set1_epi32(0x4B400000)), 23);
    __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-0.693359375f), x);
    r = _mm512_fmadd_ps(n, _mm512_set1_ps(2.12194440e-4f), r);
    const __m512 r2 = _mm512_mul_ps(r, r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_add_ps(_mm512_mul_ps(p, r2), r);
    p = _mm512_add_ps(p, _mm512_set1_ps(1.0f));
    return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(p), nb));
}

/* 1 when 32 float16 (raw bits) all lie in aclk_exp_neg_normal_f32's domain [EXP_NORMAL_MIN, 0]:
   +0, or the sign set and a magnitude <= 86.0's bits 0x5560 (a NaN's is above); the same answer
   as exp16's compares on the widened values */
ACLK_AVX512_INLINE int f16x32_neg_normal(__m512i h)
{
    const __mmask32 neg = _mm512_cmple_epu16_mask(_mm512_xor_si512(h, _mm512_set1_epi16(
                                                      (short)0x8000)),
                                                  _mm512_set1_epi16(0x5560));
    const __mmask32 zero = _mm512_cmpeq_epi16_mask(h, _mm512_setzero_si512());
    return (uint32_t)(neg | zero) == 0xFFFFFFFFu;
}

/* the same for 32 bfloat16: +0, or the sign set and a magnitude <= 0x42AC (86.0) */
ACLK_AVX512_INLINE int bf16x32_neg_normal(__m512i h)
{
    const __mmask32 neg = _mm512_cmple_epu16_mask(_mm512_xor_si512(h, _mm512_set1_epi16(
                                                      (short)0x8000)),
                                                  _mm512_set1_epi16(0x42AC));
    const __mmask32 zero = _mm512_cmpeq_epi16_mask(h, _mm512_setzero_si512());
    return (uint32_t)(neg | zero) == 0xFFFFFFFFu;
}

/* 16 outputs in float32 from 16 elements of grad and y */
ACLK_AVX512_INLINE __m512 bwd16(__m512 vg, __m512 vy, __m512 vs, const int lg)
{
    if (lg)
        return qnan16(_mm512_sub_ps(vg, _mm512_mul_ps(exp16(vy), vs)));
    return qnan16(_mm512_sub_ps(_mm512_mul_ps(vg, vy), _mm512_mul_ps(vs, vy)));
}

/* d[0, n) from g, y and s (sv: s[k] per element, else the scalar s), 32 elements per step
   (bfloat16 with a scalar s in the unpack's lane order, which the narrowing pack puts back: see
   aclk_avx512_ld2_bf16_lanes) */
ACLK_AVX512_INLINE void out16_512(const uint16_t *g, const uint16_t *y, float s, const float *sv,
                                  uint16_t *d, int64_t n, const int bf, const int lg)
{
    const __m512 vs = _mm512_set1_ps(s);
    int64_t k = 0;
    if (lg && !bf && !sv) {
        /* float16 log_softmax_backward, 64 elements per step: the 64 y checked once on their
           bits, then four independent exps in one block (aclk_exp_neg_normal_f32, else exp16's
           per-vector choice: the same bits either way) */
        for (; k + 64 <= n; k += 64) {
            const __m512i h0 = _mm512_loadu_si512((const void *)(y + k));
            const __m512i h1 = _mm512_loadu_si512((const void *)(y + k + 32));
            __m512 e[4] = {_mm512_cvtph_ps(_mm512_castsi512_si256(h0)),
                           _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h0, 1)),
                           _mm512_cvtph_ps(_mm512_castsi512_si256(h1)),
                           _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h1, 1))};
            if (f16x32_neg_normal(h0) & f16x32_neg_normal(h1)) {
                for (int v = 0; v < 4; v++)
                    e[v] = exp_nn16(e[v]);
            } else {
                for (int v = 0; v < 4; v++)
                    e[v] = exp16(e[v]);
            }
            __m512 o[4];
            for (int v = 0; v < 4; v++)
                o[v] = qnan16(_mm512_sub_ps(ld16x16(g + k + 16 * v, 0),
                                            _mm512_mul_ps(e[v], vs)));
            for (int v = 0; v < 2; v++)
                _mm512_storeu_si512(
                    (void *)(d + k + 32 * v),
                    _mm512_inserti64x4(_mm512_castsi256_si512(aclk_avx512_cvt_f16(o[2 * v])),
                                       aclk_avx512_cvt_f16(o[2 * v + 1]), 1));
        }
    }
    if (lg && bf && !sv) {
        /* bfloat16 log_softmax_backward the same way, in the unpack's lane order: +0, or the
           sign set and a magnitude <= 0x42AC (86.0) */
        for (; k + 64 <= n; k += 64) {
            const __m512i h0 = _mm512_loadu_si512((const void *)(y + k));
            const __m512i h1 = _mm512_loadu_si512((const void *)(y + k + 32));
            __m512 e[4], gv[4];
            aclk_avx512_ld2_bf16_lanes(y + k, &e[0], &e[1]);
            aclk_avx512_ld2_bf16_lanes(y + k + 32, &e[2], &e[3]);
            if (bf16x32_neg_normal(h0) & bf16x32_neg_normal(h1)) {
                for (int v = 0; v < 4; v++)
                    e[v] = exp_nn16(e[v]);
            } else {
                for (int v = 0; v < 4; v++)
                    e[v] = exp16(e[v]);
            }
            aclk_avx512_ld2_bf16_lanes(g + k, &gv[0], &gv[1]);
            aclk_avx512_ld2_bf16_lanes(g + k + 32, &gv[2], &gv[3]);
            for (int v = 0; v < 4; v++)
                e[v] = qnan16(_mm512_sub_ps(gv[v], _mm512_mul_ps(e[v], vs)));
            _mm512_storeu_si512((void *)(d + k), aclk_avx512_cvt2_bf16_lanes(e[0], e[1]));
            _mm512_storeu_si512((void *)(d + k + 32), aclk_avx512_cvt2_bf16_lanes(e[2], e[3]));
        }
    }
    for (; k + 32 <= n; k += 32) {
        __m512i r;
        if (bf && !sv) {
            __m512 g0, g1, y0, y1;
            aclk_avx512_ld2_bf16_lanes(g + k, &g0, &g1);
            aclk_avx512_ld2_bf16_lanes(y + k, &y0, &y1);
            r = aclk_avx512_cvt2_bf16_lanes(bwd16(g0, y0, vs, lg), bwd16(g1, y1, vs, lg));
        } else {
            const __m512 s0 = sv ? _mm512_loadu_ps(sv + k) : vs;
            const __m512 s1 = sv ? _mm512_loadu_ps(sv + k + 16) : vs;
            const __m512 v0 = bwd16(ld16x16(g + k, bf), ld16x16(y + k, bf), s0, lg);
            const __m512 v1 = bwd16(ld16x16(g + k + 16, bf), ld16x16(y + k + 16, bf), s1, lg);
            r = bf ? aclk_avx512_cvt2_bf16(v0, v1)
                   : _mm512_inserti64x4(_mm512_castsi256_si512(aclk_avx512_cvt_f16(v0)),
                                        aclk_avx512_cvt_f16(v1), 1);
        }
        _mm512_storeu_si512((void *)(d + k), r);
    }
    if (sv)
        for (; k < n; k++)
            out16_tail(g, y, sv[k], d, k, k + 1, bf, lg);
    else
        out16_tail(g, y, s, d, k, n, bf, lg);
}

/* out[0, n) of c's operator and dtype by out16_512; a streamed output (c->nt) is written into
   hbuf and streamed from there in one burst */
ACLK_AVX512_INLINE void out16_piece(const bwd_args *c, const uint16_t *g, const uint16_t *y,
                                    float s, const float *sv, uint16_t *out, uint16_t *hbuf,
                                    int64_t n)
{
    uint16_t *d = c->nt ? hbuf : out;
    BF_LG_CALL(out16_512, c, g, y, s, sv, d, n);
    if (c->nt)
        stream16(out, hbuf, n);
}

ACLK_TARGET_AVX512 static void row16_out_avx512(const bwd_args *c, int64_t base, float s)
{
    uint16_t hbuf[SEG];
    const uint16_t *g = (const uint16_t *)c->g + base, *y = (const uint16_t *)c->yv + base;
    uint16_t *out = (uint16_t *)c->out + base;
    for (int64_t a0 = 0; a0 < c->axis; a0 += SEG) {
        prefetch_next_row2(c, base, a0, 1, 2);
        const int64_t len = min64(SEG, c->axis - a0);
        out16_piece(c, g + a0, y + a0, s, NULL, out + a0, hbuf, len);
    }
}
#endif

/* float32 stored normally into an output that is neither input: the output pass writes it
   itself instead of a buffer and a copy (bwd_combine's output is restrict) */
ACLK_INLINE int out_direct(const bwd_args *c)
{
    return c->dt == ACLK_F32 && !c->nt && c->out != c->g && c->out != c->yv;
}

/* row_dot_f of a float32 softmax_backward row (the same lanes and order, so the same bits) that
   prefetches the first half of the next row's grad and y, a part per SEG piece, as the 16-bit
   rows do (prefetch_next_row2): memory then also reads while the reduction runs from cache,
   instead of only during the output pass, which streams its stores (aclk_use_nt) at users'
   output sizes and so leaves memory less busy than a read-for-ownership store did */
ACLK_INLINE float row_dot_f_pf(const bwd_args *c, int64_t base, const float *restrict g,
                               const float *restrict y, int64_t n)
{
    float acc[RW];
    for (int j = 0; j < RW; j++)
        acc[j] = 0.0f;
    int64_t k = 0;
    for (; k + RW <= n; k += RW) {
        if (k % SEG == 0)
            prefetch_next_row2(c, base, k, 0, 2);
        vdot_acc_f(acc, g + k, y + k, RW);
    }
    if (k % SEG == 0 && k < n)
        prefetch_next_row2(c, base, k, 0, 2);
    vdot_acc_f(acc, g + k, y + k, n - k);
    fold_sum_f(acc, RW, 1);
    return acc[0];
}

/* rows of at most ROWBUF elements: grad and y widened once (16-bit types) into row buffers, or
   read in place (float32; the row stays in L1/L2 between the two passes); s = dot(grad, y) or
   sum(grad), then out in SEG pieces */
ACLK_LEVELS(bwd_short_rows_chunk, (void *ctx, int64_t r0, int64_t r1), (ctx, r0, r1))
{
    const bwd_args *c = (const bwd_args *)ctx;
    float gb[ROWBUF], yb[ROWBUF], obuf[SEG];
    const int64_t n = c->axis;
    const int direct = out_direct(c);
    /* float32 softmax_backward with a streamed output: the next row's prefetch spread over both
       passes (stored normally, the output pass's reads for ownership keep memory busy: split,
       it measured 1.02-1.06x the time there, 1 thread) */
    const int split = c->dt == ACLK_F32 && !c->lg && c->nt;
#if defined(ACLK_X86)
    /* 0: widening path; 1: AVX2 rows; 2: AVX-512 rows */
    const int fast16 = c->dt == ACLK_F32 ? 0 : min64(aclk_isa_level(), ACLK_ISA_AVX512);
#endif
    for (int64_t r = r0; r < r1; r++) {
        const int64_t base = r * n;
#if defined(ACLK_X86)
        if (fast16) {
            /* a NaN reduction (a NaN, inf - inf or inf * 0 in the row) takes the widening path
               below: which of several NaNs survives a sum depends on the order of each add's
               operands, and that path's order is the one every ISA level shares */
            const float s = row16_reduce_avx2(c, base, n, fast16 > 1 || !c->lg);
            if (s == s) {
                if (fast16 > 1)
                    row16_out_avx512(c, base, s);
                else
                    row16_out_avx2(c, base, s);
                continue;
            }
        }
#endif
        const float *pg = aclk_load_f32(c->dt, c->g, base, n, gb);
        const float *py = aclk_load_f32(c->dt, c->yv, base, n, yb);
        const float s = c->lg ? row_sum_f(pg, n)
                        : split ? row_dot_f_pf(c, base, pg, py, n) : row_dot_f(pg, py, n);
        for (int64_t a0 = 0; a0 < n; a0 += SEG) {
            int64_t len = min64(SEG, n - a0);
            if (split)
                prefetch_next_row2(c, base, a0, 1, 2);
            else
                prefetch_next_row(c, base, a0);
            float *o = direct ? (float *)c->out + base + a0 : obuf;
            bwd_combine(c->lg, pg + a0, py + a0, &s, 0, o, len);
            put_f32(c->nt, c->dt, c->out, base + a0, len, o);
        }
    }
    if (c->nt)
        aclk_nt_fence();
}

/* rows longer than ROWBUF: the same in SEG pieces, each read twice */
ACLK_LEVELS(bwd_rows_chunk, (void *ctx, int64_t r0, int64_t r1), (ctx, r0, r1))
{
    const bwd_args *c = (const bwd_args *)ctx;
    float gbuf[SEG], ybuf[SEG], obuf[SEG];
    const int64_t n = c->axis;
    const int direct = out_direct(c);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t base = r * n;
        float acc[RW];
        for (int j = 0; j < RW; j++)
            acc[j] = 0.0f;
        for (int64_t a0 = 0; a0 < n; a0 += SEG) {
            int64_t len = min64(SEG, n - a0), k = 0;
            const float *pg = aclk_load_f32(c->dt, c->g, base + a0, len, gbuf);
            if (c->lg) {
                for (; k + RW <= len; k += RW)
                    vsum_acc_f(acc, pg + k, RW);
                vsum_acc_f(acc, pg + k, len - k);
            } else {
                const float *py = aclk_load_f32(c->dt, c->yv, base + a0, len, ybuf);
                for (; k + RW <= len; k += RW)
                    vdot_acc_f(acc, pg + k, py + k, RW);
                vdot_acc_f(acc, pg + k, py + k, len - k);
            }
        }
        fold_sum_f(acc, RW, 1);
        const float s = acc[0];
        for (int64_t a0 = 0; a0 < n; a0 += SEG) {
            int64_t len = min64(SEG, n - a0);
            const float *pg = aclk_load_f32(c->dt, c->g, base + a0, len, gbuf);
            const float *py = aclk_load_f32(c->dt, c->yv, base + a0, len, ybuf);
            float *o = direct ? (float *)c->out + base + a0 : obuf;
            bwd_combine(c->lg, pg, py, &s, 0, o, len);
            put_f32(c->nt, c->dt, c->out, base + a0, len, o);
        }
    }
    if (c->nt)
        aclk_nt_fence();
}

typedef struct {
    float sacc[WMAX], gbuf[WMAX], ybuf[WMAX], obuf[WMAX];
    float *gblk, *yblk; /* 16-bit inputs: KEEP floats each of thread scratch, or NULL */
} bwd_ws;

#if defined(ACLK_X86)
/* the offset and length of the block's a-rows from a0 (a segment), both inputs' runs ahead
   prefetched */
ACLK_INLINE int64_t col16_run(const bwd_args *c, const blk_t *b, int64_t base, int64_t a0,
                              int64_t *len)
{
    const int64_t off = base + a0 * c->inner;
    *len = min64(b->R, c->axis - a0) * b->w;
    prefetch_run(b, c->dt, c->g, off, a0, c->axis, c->inner);
    prefetch_run(b, c->dt, c->yv, off, a0, c->axis, c->inner);
    return off;
}

/* 16-bit softmax_backward column blocks at the AVX2 level and above, as the 16-bit rows: grad
   and y converted in registers in both passes (each read twice, the second time from cache)
   instead of widened into float32 copies that the passes write and reread (8 bytes per element
   each way). The same arithmetic per element as bwd_block (vdot_acc_f, fold_sum_f,
   bwd_combine: a multiply, then an add or a subtract), so the same bits; a block with a NaN
   column dot returns 0 and is computed by bwd_block, whose operand order every ISA level
   shares (as for the rows). log_softmax_backward takes it only at the AVX-512 level, whose
   output pass computes its exp in registers 16 lanes wide (col16_out_avx512; pass 1 sums grad
   as vsum_acc_f does): in cache, 1 thread, float16 over dim 0 of (1, 16, 100000) 0.62 -> 0.42
   ns per element, (64, 512, 64) 0.54-0.77 -> 0.38-0.47; cold, 2 threads, (16, 1000, 1000) over
   dim 0 0.78x (float16) and 0.86x (bfloat16), (64, 4096, 64) 0.82-0.86x. With the output pass
   8 lanes wide and the exp in a float32 buffer (the AVX2 form) it had measured no faster than
   the widening path (float16 in cache 0.64 -> 0.59, bfloat16 0.55 -> 0.63). */

/* after pass 1: 0 when a column's dot is NaN, else sacc replicated over the block's a-rows */
ACLK_INLINE int col_dots_finish(float *sacc, const blk_t *b)
{
    int nan = 0;
    for (int64_t k = 0; k < b->w; k++)
        nan |= sacc[k] != sacc[k];
    if (nan)
        return 0;
    replicate(sacc, b->R, b->w, sizeof(float));
    return 1;
}

/* pass 1: sacc = the block's column dots (lg: sums of grad), replicated over its b->R a-rows;
   0 when one is NaN. The body at one vector width, VW lanes: STEP adds the products (lg: grad)
   of the run's elements [k, k + VW) to sacc[k, k + VW). Each column's sum is the same
   sequence of float32 multiplies and adds at every width, so the two bodies below give the
   same bits. At the AVX-512 level the loads are 16 elements wide (a 32-byte load per input per
   step where AVX2 does 16 bytes): over dim 0 of (16, 1000, 1000), whose runs of 4096 columns
   are read from memory in this pass, 2 threads, cold, 0.88-0.95x the time of the AVX2 body for
   softmax_backward and 0.93-0.98x for log_softmax_backward (float16, bfloat16). */
#define COL16_DOTS_BODY(VW, STEP)                                                              \
    const uint16_t *G = (const uint16_t *)c->g, *Y = (const uint16_t *)c->yv;                  \
    for (int64_t k = 0; k < b->S; k++)                                                         \
        sacc[k] = 0.0f;                                                                        \
    for (int64_t a0 = 0; a0 < c->axis; a0 += b->R) {                                           \
        int64_t len;                                                                           \
        const int64_t off = col16_run(c, b, base, a0, &len);                                   \
        const uint16_t *g = G + off, *y = Y + off;                                             \
        int64_t k = 0;                                                                         \
        for (; k + (VW) <= len; k += (VW))                                                     \
            STEP;                                                                              \
        for (; k < len; k++)                                                                   \
            sacc[k] += lg ? ld16(g[k], bf) : ld16(g[k], bf) * ld16(y[k], bf);                  \
    }                                                                                          \
    fold_sum_f(sacc, b->R, b->w);                                                              \
    return col_dots_finish(sacc, b)

ACLK_AVX2_INLINE int col16_dots(const bwd_args *c, int64_t base, const blk_t *b, float *sacc,
                                const int bf, const int lg)
{
    COL16_DOTS_BODY(8, {
        const __m256 vg = ld16x8(g + k, bf);
        const __m256 t = lg ? vg : _mm256_mul_ps(vg, ld16x8(y + k, bf));
        _mm256_storeu_ps(sacc + k, _mm256_add_ps(_mm256_loadu_ps(sacc + k), t));
    });
}

ACLK_AVX512_INLINE int col16_dots512(const bwd_args *c, int64_t base, const blk_t *b,
                                     float *sacc, const int bf, const int lg)
{
    COL16_DOTS_BODY(16, {
        const __m512 vg = ld16x16(g + k, bf);
        const __m512 t = lg ? vg : _mm512_mul_ps(vg, ld16x16(y + k, bf));
        _mm512_storeu_ps(sacc + k, _mm512_add_ps(_mm512_loadu_ps(sacc + k), t));
    });
}

ACLK_TARGET_AVX512 static int col16_dots_avx512(const bwd_args *c, int64_t base, const blk_t *b,
                                                float *sacc)
{
    return BF_LG_CALL(col16_dots512, c, c, base, b, sacc);
}

ACLK_TARGET_AVX2 static int col16_dots_avx2(const bwd_args *c, int64_t base, const blk_t *b,
                                            float *sacc)
{
    return BF_LG_CALL(col16_dots, c, c, base, b, sacc);
}

/* pass 2 of softmax_backward at the AVX2 level: float32 outputs in obuf, then narrowed */
ACLK_AVX2_INLINE void col16_out(const bwd_args *c, int64_t base, const blk_t *b,
                                const float *sacc, float *obuf, const int bf)
{
    const uint16_t *G = (const uint16_t *)c->g, *Y = (const uint16_t *)c->yv;
    for (int64_t a0 = 0; a0 < c->axis; a0 += b->R) {
        int64_t len;
        const int64_t off = col16_run(c, b, base, a0, &len);
        const uint16_t *g = G + off, *y = Y + off;
        int64_t k = 0;
        for (; k + 8 <= len; k += 8) {
            const __m256 vy = ld16x8(y + k, bf);
            _mm256_storeu_ps(obuf + k, qnan8(_mm256_sub_ps(
                                           _mm256_mul_ps(ld16x8(g + k, bf), vy),
                                           _mm256_mul_ps(_mm256_loadu_ps(sacc + k), vy))));
        }
        for (; k < len; k++) {
            const float yv = ld16(y[k], bf);
            obuf[k] = qnan_f32(ld16(g[k], bf) * yv - sacc[k] * yv);
        }
        put_f32(c->nt, c->dt, c->out, off, len, obuf);
    }
}

ACLK_TARGET_AVX2 static void col16_out_avx2(const bwd_args *c, int64_t base, const blk_t *b,
                                            const float *sacc, float *obuf)
{
    if (c->dt == ACLK_BF16)
        col16_out(c, base, b, sacc, obuf, 1);
    else
        col16_out(c, base, b, sacc, obuf, 0);
}

/* pass 2 at the AVX-512 level, both operators: computed, narrowed and stored in registers (the
   exp too), as the rows' output pass */
ACLK_TARGET_AVX512 static void col16_out_avx512(const bwd_args *c, int64_t base, const blk_t *b,
                                                const float *sacc)
{
    uint16_t hbuf[WMAX];
    const uint16_t *G = (const uint16_t *)c->g, *Y = (const uint16_t *)c->yv;
    uint16_t *out = (uint16_t *)c->out;
    for (int64_t a0 = 0; a0 < c->axis; a0 += b->R) {
        int64_t len;
        const int64_t off = col16_run(c, b, base, a0, &len);
        out16_piece(c, G + off, Y + off, 0.0f, sacc, out + off, hbuf, len);
    }
}

/* Runs (a block's contiguous a-rows, b->S elements) at least this long take the AVX-512 output
   pass; shorter ones too for a log_softmax_backward output stored normally. Streamed in shorter
   runs ((16, 1000, 1000) over dim 1: 64 elements), the AVX-512 pass made softmax_backward 1.10-
   1.26x slower, cold, 2 threads; in cache, runs of 512 ((64, 512, 64)) float16
   softmax_backward 0.18 -> 0.19 ns per element, but cold (64, 4096, 64) 0.93-1.02x and
   log_softmax_backward 0.82-0.86x. */
#define COL16_WIDE_RUN 512

/* the block's two passes; 0 (nothing written) when a column's dot or sum is NaN */
static int col16_block(const bwd_args *c, int64_t o, int64_t i0, const blk_t *b, bwd_ws *ws,
                       int wide)
{
    const int64_t base = o * c->axis * c->inner + i0;
    float *sacc = ws->sacc;
    if (!(wide ? col16_dots_avx512(c, base, b, sacc) : col16_dots_avx2(c, base, b, sacc)))
        return 0;
    if (wide)
        col16_out_avx512(c, base, b, sacc);
    else
        col16_out_avx2(c, base, b, sacc, ws->obuf);
    return 1;
}

/* ------------------------------------------------------- short-axis column blocks ----
 * Column blocks with one a-row per segment (inner > SEG, so R == 1) of a short axis (axis <=
 * SHORT_AXIS), e.g. (16, 1000, 1000) over dim 0, at the AVX-512 level: one step of 64 bytes of
 * columns at a time (16 float32 or 32 16-bit columns, a whole cache line per a-row), all the
 * step's a-rows loaded into registers (or L1) once, then max, exps, sums and outputs computed
 * there and stored a line per a-row (streamed when c->nt and the lines are whole), the columns
 * SHORT_PF bytes ahead prefetched: each element is read from memory once and nothing goes
 * through the block's scratch or L2 passes.
 *
 * The same bits as fwd_block / bwd_block (and col16_block) for every column whose sum is not
 * NaN: with R == 1, those blocks' column results are sequential over a with no replicas and no
 * fold: the max is acc = x > acc ? x : acc from -inf in a order (a compare and a masked move
 * here: which of +0 and -0 wins matters to log-softmax's outputs); the forward sum is
 * acc = acc + (double)exp(x - m) from 0.0 in a order, then 1.0 / acc rounded to float, or
 * log_of_sum(acc); the backward sums are acc = acc + g*y (log: acc + g) in float32 from 0.0f in
 * a order; the outputs are e * f, (x - m) - f, g*y - s*y and g - exp(y)*s. The exps are
 * aclk_exp_neg_normal_f32 (written out below in intrinsics, the same operations in the same
 * order) where every argument of the step lies in [EXP_NORMAL_MIN, 0], else aclk_exp_neg_f32
 * (forward) or aclk_exp_f32 (exp16, backward): the same bits on their common domain. A column
 * whose sum is NaN can hold several NaNs, and which payload survives then depends on the
 * operand order of each compiled add and multiply: when any sum of the block is NaN the
 * function returns 0 and the caller recomputes the whole block by the path it replaced
 * (outputs written so far are overwritten with the same bits; hence only when the output
 * overlaps no input). A non-NaN sum has no NaN among its terms, so no output of such a column
 * meets two NaN operands (at most one, e.g. the default NaN of inf * 0, propagated as is). */
#define SHORT_AXIS 16
#define SHORT_PF 1024 /* bytes ahead prefetched along each a-row */

/* 1 when every lane of x is in [EXP_NORMAL_MIN, 0] (a NaN is not) */
ACLK_AVX512_INLINE int exp_normal16(__m512 x)
{
    return (_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LE_OQ) &
            _mm512_cmp_ps_mask(x, _mm512_set1_ps(EXP_NORMAL_MIN), _CMP_GE_OQ)) == 0xFFFF;
}

/* exp(x) of 16 floats x <= 0 (or NaN): aclk_exp_neg_f32 */
ACLK_AVX512_INLINE __m512 exp_neg16(__m512 x)
{
    float t[16];
    _mm512_storeu_ps(t, x);
    for (int j = 0; j < 16; j++)
        t[j] = aclk_exp_neg_f32(t[j]);
    return _mm512_loadu_ps(t);
}

/* 16 elements at p + off (dk 0: float32, 1: float16, 2: bfloat16) as floats, lanes outside m
   zero */
ACLK_AVX512_INLINE __m512 short_ld(const void *p, int64_t off, __mmask16 m, const int dk)
{
    if (dk == 0)
        return _mm512_maskz_loadu_ps(m, (const float *)p + off);
    const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)p + off);
    if (dk == 1)
        return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* one step's outputs of an a-row (v[0], and v[1] for 16-bit types) at p + off, lanes m[0],
   m[1]; stream: a whole aligned line, streamed */
ACLK_AVX512_INLINE void short_st(void *p, int64_t off, const __m512 *v, const __mmask16 *m,
                                 int stream, const int dk)
{
    const __m512 v0 = qnan16(v[0]);
    if (dk == 0) {
        float *d = (float *)p + off;
        if (stream)
            _mm512_stream_ps(d, v0);
        else
            _mm512_mask_storeu_ps(d, m[0], v0);
        return;
    }
    const __m512 v1 = qnan16(v[1]);
    uint16_t *d = (uint16_t *)p + off;
    const __m256i h0 = dk == 1 ? aclk_avx512_cvt_f16(v0) : aclk_avx512_cvt_bf16(v0);
    const __m256i h1 = dk == 1 ? aclk_avx512_cvt_f16(v1) : aclk_avx512_cvt_bf16(v1);
    if (stream) {
        _mm512_stream_si512((void *)d, _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1));
    } else {
        _mm256_mask_storeu_epi16(d, m[0], h0);
        _mm256_mask_storeu_epi16(d + 16, m[1], h1);
    }
}

/* The steps of a block of w columns from element offset base (column i0 of inner): calls
   STEP(j, l, m, stream) for the step of l columns from j, lane masks m[2], streaming its stores
   when stream; the first step is shortened so that the following ones start on a 64-byte line
   of out when out's a-rows are whole lines apart (else nothing is streamed). */
typedef struct {
    int64_t head; /* columns of the first step */
    int nt;       /* stream whole aligned steps */
} short_geom;

ACLK_INLINE short_geom short_steps(int nt, const void *out, int64_t base, int64_t inner,
                                   int64_t esz)
{
    short_geom s = {0, 0};
    const uintptr_t a = (uintptr_t)((const char *)out + base * esz);
    if (nt && (inner * esz) % 64 == 0 && a % (uintptr_t)esz == 0) {
        s.nt = 1;
        s.head = (int64_t)((64 - a % 64) % 64) / esz;
    }
    return s;
}

ACLK_INLINE void short_masks(int64_t l, __mmask16 *m)
{
    m[0] = l >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << l) - 1);
    m[1] = l >= 32 ? (__mmask16)0xFFFF : l > 16 ? (__mmask16)((1u << (l - 16)) - 1) : 0;
}

/* 1: the block's outputs written; 0: a column's sum is NaN (see above) */
ACLK_AVX512_INLINE int fwd_short(const fwd_args *c, int64_t base, int64_t i0, int64_t w,
                                 const int dk, const int lg)
{
    const int64_t axis = c->axis, inner = c->inner, esz = dk ? 2 : 4;
    const int NV = dk ? 2 : 1, STEP = 16 * NV;
    const int64_t pfc = SHORT_PF / esz;
    const short_geom g = short_steps(c->nt, c->y, base, inner, esz);
    const char *X = (const char *)c->x;
    __m512 xv[SHORT_AXIS][2];
    for (int64_t j = 0, l; j < w; j += l) {
        l = min64(j == 0 && g.head ? g.head : STEP, w - j);
        __mmask16 m[2];
        short_masks(l, m);
        const int stream = g.nt && l == STEP;
        if (i0 + j + pfc < inner)
            for (int64_t a = 0; a < axis; a++)
                __builtin_prefetch(X + (base + a * inner + j + pfc) * esz, 0, 3);
        __m512 mx[2] = {_mm512_set1_ps(-INFINITY), _mm512_set1_ps(-INFINITY)};
        for (int64_t a = 0; a < axis; a++)
            for (int v = 0; v < NV; v++) {
                const __m512 x = short_ld(c->x, base + a * inner + j + 16 * v, m[v], dk);
                xv[a][v] = x;
                mx[v] = _mm512_mask_mov_ps(mx[v], _mm512_cmp_ps_mask(x, mx[v], _CMP_GT_OQ), x);
            }
        int normal = 1;
        for (int64_t a = 0; a < axis; a++)
            for (int v = 0; v < NV; v++) {
                xv[a][v] = _mm512_sub_ps(xv[a][v], mx[v]);
                normal &= exp_normal16(xv[a][v]);
            }
        __m512d s[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                        _mm512_setzero_pd()};
        for (int64_t a = 0; a < axis; a++)
            for (int v = 0; v < NV; v++) {
                const __m512 e = normal ? exp_nn16(xv[a][v]) : exp_neg16(xv[a][v]);
                s[2 * v] = _mm512_add_pd(s[2 * v], _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
                s[2 * v + 1] = _mm512_add_pd(s[2 * v + 1],
                                             _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
                if (!lg)
                    xv[a][v] = e;
            }
        __mmask8 nan = 0;
        for (int v = 0; v < 2 * NV; v++)
            nan |= _mm512_cmp_pd_mask(s[v], s[v], _CMP_UNORD_Q);
        if (nan)
            return 0;
        __m512 f[2];
        for (int v = 0; v < NV; v++) {
            if (lg) {
                double sd[16];
                float t[16];
                _mm512_storeu_pd(sd, s[2 * v]);
                _mm512_storeu_pd(sd + 8, s[2 * v + 1]);
                for (int q = 0; q < 16; q++)
                    t[q] = log_of_sum(sd[q]);
                f[v] = _mm512_loadu_ps(t);
            } else {
                const __m512d one = _mm512_set1_pd(1.0);
                f[v] = _mm512_insertf32x8(
                    _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_div_pd(one, s[2 * v]))),
                    _mm512_cvtpd_ps(_mm512_div_pd(one, s[2 * v + 1])), 1);
            }
        }
        for (int64_t a = 0; a < axis; a++) {
            __m512 o[2];
            for (int v = 0; v < NV; v++)
                o[v] = lg ? _mm512_sub_ps(xv[a][v], f[v]) : _mm512_mul_ps(xv[a][v], f[v]);
            short_st(c->y, base + a * inner + j, o, m, stream, dk);
        }
    }
    return 1;
}

/* exp(x) of 16 floats, any x: exp_nn16 when every lane is in its domain, else exp16 */
ACLK_AVX512_INLINE __m512 exp_any16(__m512 x)
{
    return exp_normal16(x) ? exp_nn16(x) : exp16(x);
}

ACLK_AVX512_INLINE int bwd_short(const bwd_args *c, int64_t base, int64_t i0, int64_t w,
                                 const int dk, const int lg)
{
    const int64_t axis = c->axis, inner = c->inner, esz = dk ? 2 : 4;
    const int NV = dk ? 2 : 1, STEP = 16 * NV;
    const int64_t pfc = SHORT_PF / esz;
    const short_geom geo = short_steps(c->nt, c->out, base, inner, esz);
    const char *G = (const char *)c->g, *Y = (const char *)c->yv;
    __m512 gv[SHORT_AXIS][2], yv[SHORT_AXIS][2];
    for (int64_t j = 0, l; j < w; j += l) {
        l = min64(j == 0 && geo.head ? geo.head : STEP, w - j);
        __mmask16 m[2];
        short_masks(l, m);
        const int stream = geo.nt && l == STEP;
        if (i0 + j + pfc < inner)
            for (int64_t a = 0; a < axis; a++) {
                __builtin_prefetch(G + (base + a * inner + j + pfc) * esz, 0, 3);
                __builtin_prefetch(Y + (base + a * inner + j + pfc) * esz, 0, 3);
            }
        __m512 s[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
        for (int64_t a = 0; a < axis; a++)
            for (int v = 0; v < NV; v++) {
                const int64_t off = base + a * inner + j + 16 * v;
                const __m512 g = short_ld(c->g, off, m[v], dk), y = short_ld(c->yv, off, m[v], dk);
                gv[a][v] = g, yv[a][v] = y;
                s[v] = _mm512_add_ps(s[v], lg ? g : _mm512_mul_ps(g, y));
            }
        __mmask16 nan = 0;
        for (int v = 0; v < NV; v++)
            nan |= _mm512_cmp_ps_mask(s[v], s[v], _CMP_UNORD_Q);
        if (nan)
            return 0;
        for (int64_t a = 0; a < axis; a++) {
            __m512 o[2];
            for (int v = 0; v < NV; v++) {
                const __m512 g = gv[a][v], y = yv[a][v];
                o[v] = lg ? _mm512_sub_ps(g, _mm512_mul_ps(exp_any16(y), s[v]))
                          : _mm512_sub_ps(_mm512_mul_ps(g, y), _mm512_mul_ps(s[v], y));
            }
            short_st(c->out, base + a * inner + j, o, m, stream, dk);
        }
    }
    return 1;
}

#define DK_LG_CALL(F, c, ...)                                                                 \
    ((c)->lg ? ((c)->dt == ACLK_F32 ? F(__VA_ARGS__, 0, 1)                                   \
                                    : (c)->dt == ACLK_F16 ? F(__VA_ARGS__, 1, 1)             \
                                                          : F(__VA_ARGS__, 2, 1))            \
             : ((c)->dt == ACLK_F32 ? F(__VA_ARGS__, 0, 0)                                   \
                                    : (c)->dt == ACLK_F16 ? F(__VA_ARGS__, 1, 0)             \
                                                          : F(__VA_ARGS__, 2, 0)))

ACLK_TARGET_AVX512 static int fwd_short_avx512(const fwd_args *c, int64_t base, int64_t i0,
                                               int64_t w)
{
    return DK_LG_CALL(fwd_short, c, c, base, i0, w);
}

ACLK_TARGET_AVX512 static int bwd_short_avx512(const bwd_args *c, int64_t base, int64_t i0,
                                               int64_t w)
{
    return DK_LG_CALL(bwd_short, c, c, base, i0, w);
}
#endif

/* one column block; out may be grad or y (the gathered blocks, nt = 0 there) */
ACLK_INLINE void bwd_block(const bwd_args *c, int64_t o, int64_t i0, blk_t b, bwd_ws *ws)
{
    const int dt = c->dt, lg = c->lg;
    const int64_t axis = c->axis, inner = c->inner;
    float *sacc = ws->sacc, *gbuf = ws->gbuf, *ybuf = ws->ybuf, *obuf = ws->obuf;
    const int64_t base = o * axis * inner + i0;
    /* 16-bit inputs widened once: pass 1 keeps grad (and y) in float32 for pass 2 */
    const int wide = ws->gblk && axis * b.w <= KEEP;

    for (int64_t k = 0; k < b.S; k++)
        sacc[k] = 0.0f;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        int64_t off = base + a0 * inner;
        int64_t len = min64(b.R, axis - a0) * b.w;
        prefetch_run(&b, dt, c->g, off, a0, axis, inner);
        if (!lg)
            prefetch_run(&b, dt, c->yv, off, a0, axis, inner);
        const float *pg = aclk_load_f32(dt, c->g, off, len, wide ? ws->gblk + a0 * b.w : gbuf);
        if (lg) {
            vsum_acc_f(sacc, pg, len);
        } else {
            const float *py = aclk_load_f32(dt, c->yv, off, len,
                                            wide ? ws->yblk + a0 * b.w : ybuf);
            vdot_acc_f(sacc, pg, py, len);
        }
    }
    fold_sum_f(sacc, b.R, b.w);
    replicate(sacc, b.R, b.w, sizeof(float));

    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        int64_t off = base + a0 * inner;
        int64_t len = min64(b.R, axis - a0) * b.w;
        const float *pg, *py;
        if (wide) {
            pg = ws->gblk + a0 * b.w;
        } else {
            prefetch_run(&b, dt, c->g, off, a0, axis, inner);
            pg = aclk_load_f32(dt, c->g, off, len, gbuf);
        }
        if (wide && !lg) {
            py = ws->yblk + a0 * b.w;
        } else {
            prefetch_run(&b, dt, c->yv, off, a0, axis, inner);
            py = aclk_load_f32(dt, c->yv, off, len, ybuf);
        }
        bwd_combine(lg, pg, py, sacc, 1, obuf, len);
        put_f32(c->nt, dt, c->out, off, len, obuf);
    }
}

ACLK_LEVELS(bwd_cols_chunk, (void *ctx, int64_t t0, int64_t t1), (ctx, t0, t1))
{
    const bwd_args *c = (const bwd_args *)ctx;
    bwd_ws ws;
    ws.gblk = ws.yblk = NULL;
    if (c->dt != ACLK_F32) {
        ws.gblk = (float *)aclk_scratch(2 * KEEP * sizeof(float));
        ws.yblk = ws.gblk ? ws.gblk + KEEP : NULL;
    }
    const int64_t W = blk_width(c->dt, c->axis, c->inner), nblk = (c->inner + W - 1) / W;
#if defined(ACLK_X86)
    const int level = c->dt == ACLK_F32 ? ACLK_ISA_GENERIC : aclk_isa_level();
#endif
    for (int64_t t = t0; t < t1; t++) {
        int64_t o = t / nblk, i0 = (t % nblk) * W;
        const blk_t b = block_geom(c->axis, c->inner, i0, W);
#if defined(ACLK_X86)
        const int wide = level >= ACLK_ISA_AVX512 && (b.S >= COL16_WIDE_RUN || (c->lg && !c->nt));
        if ((wide || (level >= ACLK_ISA_AVX2 && !c->lg)) && col16_block(c, o, i0, &b, &ws, wide))
            continue;
#endif
        bwd_block(c, o, i0, b, &ws);
    }
    if (c->nt)
        aclk_nt_fence();
}

ACLK_LEVELS(bwd_batch_chunk, (void *ctx, int64_t g0, int64_t g1), (ctx, g0, g1))
{
    const bwd_args *c = (const bwd_args *)ctx;
    bwd_ws ws;
    ws.gblk = ws.yblk = NULL;
    float gblk[BLK], yblk[BLK];
    const int64_t slab = c->axis * c->inner, B = batch_slabs(c->axis, c->inner);
    for (int64_t g = g0; g < g1; g++) {
        int64_t o0 = g * B, nb = min64(B, c->outer - o0);
        gather(c->dt, c->g, o0 * slab, nb, c->axis, c->inner, gblk);
        gather(c->dt, c->yv, o0 * slab, nb, c->axis, c->inner, yblk);
        bwd_args gc = {ACLK_F32, c->lg, 0, gblk, yblk, gblk, 1, c->axis, nb * c->inner};
        bwd_block(&gc, 0, 0, block_geom(c->axis, nb * c->inner, 0, nb * c->inner), &ws);
        scatter(c->dt, c->out, o0 * slab, nb, c->axis, c->inner, gblk);
    }
}

#if defined(ACLK_X86)
/* 1 when the n bytes at p and the n bytes at q do not overlap */
static int disjoint(const void *p, const void *q, int64_t n)
{
    const uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
    return a + (uintptr_t)n <= b || b + (uintptr_t)n <= a;
}

/* A block of one a-row per segment (inner > SEG) over a short axis takes the register path at
   the AVX-512 level when the output overlaps no input (see fwd_short) */
static int short_cols(int dt, int64_t total, int64_t axis, int64_t inner, const void *out,
                           const void *in1, const void *in2)
{
#if defined(ACLK_X86)
    const int64_t bytes = total * (dt == ACLK_F32 ? 4 : 2);
    return inner > SEG && axis <= SHORT_AXIS && aclk_isa_level() >= ACLK_ISA_AVX512 &&
           disjoint(out, in1, bytes) && (!in2 || disjoint(out, in2, bytes));
#else
    (void)dt, (void)total, (void)axis, (void)inner, (void)out, (void)in1, (void)in2;
    return 0;
#endif
}

/* The short-axis path's work items are the column path's, (outer index, block of W columns),
   so that a block whose sums hold a NaN is recomputed by fwd_cols_chunk / bwd_cols_chunk as an
   item of its own: those functions, whose compiled code decides the NaN payloads, stay as they
   were (a second inlined copy of fwd_block / bwd_block here would be compiled on its own, and
   may order the operands of a commutative add or multiply otherwise). */
static void fwd_short_chunk(void *ctx, int64_t t0, int64_t t1)
{
    const fwd_args *c = (const fwd_args *)ctx;
    const int64_t W = blk_width(c->dt, c->axis, c->inner), nblk = (c->inner + W - 1) / W;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / nblk, i0 = (t % nblk) * W;
        if (!fwd_short_avx512(c, o * c->axis * c->inner + i0, i0, min64(W, c->inner - i0)))
            fwd_cols_chunk(ctx, t, t + 1);
    }
    if (c->nt)
        aclk_nt_fence();
}

static void bwd_short_chunk(void *ctx, int64_t t0, int64_t t1)
{
    const bwd_args *c = (const bwd_args *)ctx;
    const int64_t W = blk_width(c->dt, c->axis, c->inner), nblk = (c->inner + W - 1) / W;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / nblk, i0 = (t % nblk) * W;
        if (!bwd_short_avx512(c, o * c->axis * c->inner + i0, i0, min64(W, c->inner - i0)))
            bwd_cols_chunk(ctx, t, t + 1);
    }
    if (c->nt)
        aclk_nt_fence();
}
#endif

static void softmax_bwd_f32(int dt, const void *grad, const void *yv, void *out, int64_t outer,
                            int64_t axis, int64_t inner, int lg)
{
    const int64_t total = outer * axis * inner;
    const int64_t esz = dt == ACLK_F32 ? 4 : 2;
    bwd_args c = {dt, lg, aclk_use_nt(total * esz), grad, yv, out, outer, axis, inner};
    if (inner == 1 && axis > SM_BATCH_BWD_ROW) {
        aclk_parallel_for(outer, grain_for(outer, axis),
                          axis <= ROWBUF ? bwd_short_rows_chunk : bwd_rows_chunk, &c);
    } else if (!use_batch(axis, inner, SM_BATCH_BWD)) {
        const int64_t W = blk_width(dt, axis, inner), nblk = (inner + W - 1) / W;
        aclk_range_fn fn = bwd_cols_chunk;
#if defined(ACLK_X86)
        if (short_cols(dt, total, axis, inner, out, grad, yv))
            fn = bwd_short_chunk;
#endif
        aclk_parallel_for(outer * nblk, grain_for(outer * nblk, axis * min64(inner, W)), fn, &c);
    } else {
        const int64_t B = batch_slabs(axis, inner);
        const int64_t ng = (outer + B - 1) / B;
        aclk_parallel_for(ng, grain_for(ng, B * axis * inner), bwd_batch_chunk, &c);
    }
}

/* ------------------------------------------------------------------ float64 ---- */

/* float64 work items: (outer index, block of SEG columns), as the 32-bit column path */
typedef struct {
    const double *x, *g;
    double *y;
    int64_t axis, inner;
    int lg;
} f64_args;

static void softmax_fwd_f64_chunk(void *ctx, int64_t t0, int64_t t1)
{
    const f64_args *c = (const f64_args *)ctx;
    const double *x = c->x;
    double *y = c->y;
    const int64_t axis = c->axis, inner = c->inner, nblk = (inner + SEG - 1) / SEG;
    const int lg = c->lg;
    double macc[SEG], sacc[SEG];

    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / nblk, i0 = (t % nblk) * SEG;
        blk_t b = block_geom(axis, inner, i0, min64(inner, SEG));
        const int64_t base = o * axis * inner + i0;

        for (int64_t k = 0; k < b.S; k++)
            macc[k] = -INFINITY;
        for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
            int64_t len = min64(b.R, axis - a0) * b.w;
            const double *p = x + base + a0 * inner;
            for (int64_t k = 0; k < len; k++)
                macc[k] = (p[k] > macc[k]) ? p[k] : macc[k];
        }
        fold_max_d(macc, b.R, b.w);
        replicate(macc, b.R, b.w, sizeof(double));

        for (int64_t k = 0; k < b.S; k++)
            sacc[k] = 0.0;
        for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
            int64_t off = base + a0 * inner;
            int64_t len = min64(b.R, axis - a0) * b.w;
            const double *p = x + off;
            if (lg) {
                for (int64_t k = 0; k < len; k++)
                    sacc[k] += exp(p[k] - macc[k]);
            } else {
                double *e = y + off;
                for (int64_t k = 0; k < len; k++) {
                    double v = exp(p[k] - macc[k]);
                    e[k] = v;
                    sacc[k] += v;
                }
            }
        }
        fold_sum_d(sacc, b.R, b.w);
        if (lg)
            for (int64_t j = 0; j < b.w; j++)
                sacc[j] = log(sacc[j]);
        replicate(sacc, b.R, b.w, sizeof(double));

        for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
            int64_t off = base + a0 * inner;
            int64_t len = min64(b.R, axis - a0) * b.w;
            double *yy = y + off;
            if (lg) {
                const double *p = x + off;
                for (int64_t k = 0; k < len; k++)
                    yy[k] = qnan_f64((p[k] - macc[k]) - sacc[k]);
            } else {
                for (int64_t k = 0; k < len; k++)
                    yy[k] = qnan_f64(yy[k] / sacc[k]);
            }
        }
    }
}

static void softmax_bwd_f64_chunk(void *ctx, int64_t t0, int64_t t1)
{
    const f64_args *c = (const f64_args *)ctx;
    const double *g = c->g, *yv = c->x;
    double *out = c->y;
    const int64_t axis = c->axis, inner = c->inner, nblk = (inner + SEG - 1) / SEG;
    const int lg = c->lg;
    double sacc[SEG];

    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / nblk, i0 = (t % nblk) * SEG;
        blk_t b = block_geom(axis, inner, i0, min64(inner, SEG));
        const int64_t base = o * axis * inner + i0;

        for (int64_t k = 0; k < b.S; k++)
            sacc[k] = 0.0;
        for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
            int64_t off = base + a0 * inner;
            int64_t len = min64(b.R, axis - a0) * b.w;
            const double *pg = g + off, *py = yv + off;
            if (lg) {
                for (int64_t k = 0; k < len; k++)
                    sacc[k] += pg[k];
            } else {
                for (int64_t k = 0; k < len; k++)
                    sacc[k] += pg[k] * py[k];
            }
        }
        fold_sum_d(sacc, b.R, b.w);
        replicate(sacc, b.R, b.w, sizeof(double));

        for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
            int64_t off = base + a0 * inner;
            int64_t len = min64(b.R, axis - a0) * b.w;
            const double *pg = g + off, *py = yv + off;
            double *d = out + off;
            if (lg) {
                for (int64_t k = 0; k < len; k++)
                    d[k] = qnan_f64(pg[k] - exp(py[k]) * sacc[k]);
            } else {
                for (int64_t k = 0; k < len; k++)
                    d[k] = qnan_f64(pg[k] * py[k] - sacc[k] * py[k]);
            }
        }
    }
}

/* ------------------------------------------------------------------ entry points ---- *
 * Each entry point runs the first implementation of its list whose `accepts` takes the dtype
 * and shape; the reference kernel comes last and takes every dtype the operator supports, so
 * a case no fast kernel takes still runs. A dtype no implementation takes returns -1. */

typedef int (*fwd_fn)(int dtype, const void *x, void *y, int64_t outer, int64_t axis,
                      int64_t inner, int log_softmax);
typedef int (*bwd_fn)(int dtype, const void *grad, const void *y, void *out, int64_t outer,
                      int64_t axis, int64_t inner, int log_softmax);
typedef int (*accepts_fn)(int dtype, int64_t outer, int64_t axis, int64_t inner);

static int is_f32_compute(int dt, int64_t outer, int64_t axis, int64_t inner)
{
    (void)outer, (void)axis, (void)inner;
    return dt == ACLK_F32 || dt == ACLK_F16 || dt == ACLK_BF16;
}

static int is_f64(int dt, int64_t outer, int64_t axis, int64_t inner)
{
    (void)outer, (void)axis, (void)inner;
    return dt == ACLK_F64;
}

static int ref_accepts(int dt, int64_t outer, int64_t axis, int64_t inner)
{
    return is_f32_compute(dt, outer, axis, inner) || is_f64(dt, outer, axis, inner);
}

#define NUM(a) ((int)(sizeof(a) / sizeof((a)[0])))

#if ACLK_IN_PART(1) /* the forward entry points (parts.h) */

static int fwd_f32(int dt, const void *x, void *y, int64_t outer, int64_t axis, int64_t inner,
                   int lg)
{
    softmax_fwd_f32(dt, x, y, outer, axis, inner, lg != 0);
    return 0;
}

static int fwd_f64(int dt, const void *x, void *y, int64_t outer, int64_t axis, int64_t inner,
                   int lg)
{
    (void)dt;
    f64_args c = {(const double *)x, NULL, (double *)y, axis, inner, lg != 0};
    aclk_parallel_for(outer * ((inner + SEG - 1) / SEG),
                      grain_for(outer * ((inner + SEG - 1) / SEG), axis * min64(inner, SEG)),
                      softmax_fwd_f64_chunk, &c);
    return 0;
}

static const struct {
    const char *name;
    accepts_fn accepts;
    fwd_fn run;
} FWD[] = {
    {"float32", is_f32_compute, fwd_f32},
    {"float64", is_f64, fwd_f64},
    {"reference", ref_accepts, aclk_ref_softmax_fwd},
};

static int pick_fwd(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    for (int i = 0; i < NUM(FWD); i++)
        if (FWD[i].accepts(dtype, outer, axis, inner))
            return i;
    return -1;
}

int aclk_softmax_fwd(int dtype, const void *x, void *y, int64_t outer, int64_t axis,
                     int64_t inner, int log_softmax)
{
    int i = pick_fwd(dtype, outer, axis, inner);
    if (i < 0)
        return -1;
    if (outer <= 0 || axis <= 0 || inner <= 0)
        return 0;
    return FWD[i].run(dtype, x, y, outer, axis, inner, log_softmax);
}

const char *aclk_softmax_fwd_impl(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    int i = pick_fwd(dtype, outer, axis, inner);
    return i < 0 ? NULL : FWD[i].name;
}

#endif

#if ACLK_IN_PART(2) /* the backward entry points */

static int bwd_f32(int dt, const void *grad, const void *y, void *out, int64_t outer,
                   int64_t axis, int64_t inner, int lg)
{
    softmax_bwd_f32(dt, grad, y, out, outer, axis, inner, lg != 0);
    return 0;
}

static int bwd_f64(int dt, const void *grad, const void *y, void *out, int64_t outer,
                   int64_t axis, int64_t inner, int lg)
{
    (void)dt;
    f64_args c = {(const double *)y, (const double *)grad, (double *)out, axis, inner, lg != 0};
    aclk_parallel_for(outer * ((inner + SEG - 1) / SEG),
                      grain_for(outer * ((inner + SEG - 1) / SEG), axis * min64(inner, SEG)),
                      softmax_bwd_f64_chunk, &c);
    return 0;
}

static const struct {
    const char *name;
    accepts_fn accepts;
    bwd_fn run;
} BWD[] = {
    {"float32", is_f32_compute, bwd_f32},
    {"float64", is_f64, bwd_f64},
    {"reference", ref_accepts, aclk_ref_softmax_bwd},
};

static int pick_bwd(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    for (int i = 0; i < NUM(BWD); i++)
        if (BWD[i].accepts(dtype, outer, axis, inner))
            return i;
    return -1;
}

int aclk_softmax_bwd(int dtype, const void *grad, const void *y, void *out, int64_t outer,
                     int64_t axis, int64_t inner, int log_softmax)
{
    int i = pick_bwd(dtype, outer, axis, inner);
    if (i < 0)
        return -1;
    if (outer <= 0 || axis <= 0 || inner <= 0)
        return 0;
    return BWD[i].run(dtype, grad, y, out, outer, axis, inner, log_softmax);
}

const char *aclk_softmax_bwd_impl(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    int i = pick_bwd(dtype, outer, axis, inner);
    return i < 0 ? NULL : BWD[i].name;
}

#endif
