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
 * Three ways through the float32 kernels, all built from loops that gcc vectorises without
 * reassociating anything (so every vector width gives the same bits):
 *   - rows (inner == 1, axis above a small limit): one row at a time; max and sum reduce into
 *     LANES fixed accumulators, then the passes use the scalar max / sum.
 *   - columns (inner > 1): for one outer index o and a block of w <= SEG consecutive inner
 *     columns, the elements x[o][a][i0 .. i0+w) for consecutive a are either rows of a
 *     contiguous slab (w == inner) or rows spaced inner apart. The axis is walked in
 *     "segments" of R consecutive a-rows (R = SEG / inner when the inner extent fits, else 1),
 *     each one contiguous run of len <= S = R*w elements. Per-column accumulators are kept S
 *     wide, aligned with the segment (element k belongs to column k % w), so each pass is an
 *     elementwise loop over contiguous arrays; afterwards the R replicas are folded (halving
 *     tree) and the per-column result copied back into all R replicas for the next pass.
 *   - small slabs (axis*inner tiny): many outer slabs are transposed into one [axis][nb*inner]
 *     float32 block, which is a single wide column problem, computed in place and scattered
 *     back (see gather / scatter).
 *
 * Stack use: about 45 KB forward and 75 KB backward (scratch arrays; the kernels never
 * allocate).
 */

/* Floating-point contraction off for this file (before any #include, so that the inline
 * helpers of the headers get it too): the target clones (vecmath.h) give bit-identical results
 * only if no multiply-add is fused, FMA being available in the AVX-512 clone alone, and the
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
#include "vecmath.h"

#define SEG 512 /* segment / accumulator width in elements */

static inline int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* ------------------------------------------------------------------- reductions ----
 * Reductions of a whole row into LANES fixed accumulators (lane = index mod LANES), which gcc
 * keeps in vector registers. The lane count is fixed, not the vector width, so every clone adds
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

/* fold R replicas of w columns into the first one (halving tree) */
ACLK_INLINE void fold_max_f(float *acc, int64_t R, int64_t w)
{
    while (R > 1) {
        int64_t h = R / 2, keep = R - h;
        float *restrict lo = acc;
        const float *restrict hi = acc + keep * w;
        for (int64_t k = 0; k < h * w; k++)
            lo[k] = (hi[k] > lo[k]) ? hi[k] : lo[k];
        R = keep;
    }
}

ACLK_INLINE void fold_sum_f(float *acc, int64_t R, int64_t w)
{
    while (R > 1) {
        int64_t h = R / 2, keep = R - h;
        float *restrict lo = acc;
        const float *restrict hi = acc + keep * w;
        for (int64_t k = 0; k < h * w; k++)
            lo[k] += hi[k];
        R = keep;
    }
}

ACLK_INLINE void fold_sum_d(double *acc, int64_t R, int64_t w)
{
    while (R > 1) {
        int64_t h = R / 2, keep = R - h;
        double *restrict lo = acc;
        const double *restrict hi = acc + keep * w;
        for (int64_t k = 0; k < h * w; k++)
            lo[k] += hi[k];
        R = keep;
    }
}

static void fold_max_d(double *acc, int64_t R, int64_t w)
{
    while (R > 1) {
        int64_t h = R / 2, keep = R - h;
        double *restrict lo = acc;
        const double *restrict hi = acc + keep * w;
        for (int64_t k = 0; k < h * w; k++)
            lo[k] = (hi[k] > lo[k]) ? hi[k] : lo[k];
        R = keep;
    }
}

/* copy the first w elements into replicas 1 .. R-1 */
ACLK_INLINE void replicate(void *acc, int64_t R, int64_t w, size_t esz)
{
    char *p = (char *)acc;
    int64_t total = R * w, have = w;
    while (have < total) {
        int64_t c = min64(have, total - have);
        memcpy(p + have * (int64_t)esz, p, (size_t)c * esz);
        have += c;
    }
}

/* --------------------------------------------------------------------- blocking ---- */

/* the geometry of one (o, column block) work item */
typedef struct {
    int64_t w;      /* columns in the block */
    int64_t R;      /* a-rows per segment */
    int64_t S;      /* accumulator width R*w */
    int64_t nseg;   /* segments along the axis */
} blk_t;

static blk_t block_geom(int64_t axis, int64_t inner, int64_t i0)
{
    blk_t b;
    if (inner <= SEG) {
        b.w = inner;
        b.R = min64(SEG / inner, axis);
    } else {
        b.w = min64(SEG, inner - i0);
        b.R = 1;
    }
    b.S = b.R * b.w;
    b.nseg = (axis + b.R - 1) / b.R;
    return b;
}

/* ------------------------------------------------------------- small-slab batching ----
 * When one outer slab (axis x inner elements) is small, the per-slab work above (folds,
 * replicas, loop heads) would dominate. Then nb consecutive slabs [nb][axis][inner] are
 * gathered (and widened to float32) into a [axis][nb*inner] block, which is just one slab of
 * a problem with inner' = nb*inner, computed in place, and scattered back (narrowed). */
#define BLK 8192 /* floats in a gathered block */

/* Largest slab (axis*inner elements) that is batched, forward and backward; rows (inner == 1)
 * longer than the *_ROW limits take the row path (fwd_rows / bwd_rows) instead. Measured on
 * float32 with 4M elements (x86-64, AVX-512 clone): against the unbatched paths, batching wins
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

/* ---------------------------------------------------------- forward, 32-bit compute ---- */

typedef struct {
    float macc[SEG], fac[SEG], xbuf[SEG], ebuf[SEG];
    double sacc[SEG];
} fwd_ws;

/* x -> y over [outer][axis][inner]; y may be x */
ACLK_INLINE void fwd_core(int dt, const void *x, void *y, int64_t outer, int64_t axis,
                          int64_t inner, int lg, fwd_ws *ws)
{
    float *macc = ws->macc, *fac = ws->fac, *xbuf = ws->xbuf, *ebuf = ws->ebuf;
    double *sacc = ws->sacc;
    const int direct = (dt == ACLK_F32);

    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i0 = 0; i0 < inner; i0 += SEG) {
            blk_t b = block_geom(axis, inner, i0);
            const int64_t base = o * axis * inner + i0;

            /* pass 1: column max (NaNs are skipped here; they propagate through the sum) */
            for (int64_t k = 0; k < b.S; k++)
                macc[k] = -INFINITY;
            for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
                int64_t len = min64(b.R, axis - a0) * b.w;
                const float *p = aclk_load_f32(dt, x, base + a0 * inner, len, xbuf);
                vmax_acc(macc, p, len);
            }
            fold_max_f(macc, b.R, b.w);
            replicate(macc, b.R, b.w, sizeof(float));

            /* pass 2: e = exp(x - m), column sums in float64 */
            for (int64_t k = 0; k < b.S; k++)
                sacc[k] = 0.0;
            for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
                int64_t off = base + a0 * inner;
                int64_t len = min64(b.R, axis - a0) * b.w;
                const float *p = aclk_load_f32(dt, x, off, len, xbuf);
                float *e = (direct && !lg) ? (float *)y + off : ebuf;
                aclk_vexp_sub_f32(p, macc, e, len);
                vsum_acc_d(sacc, e, len);
            }
            fold_sum_d(sacc, b.R, b.w);
            if (!lg) {
                for (int64_t j = 0; j < b.w; j++)
                    fac[j] = (float)sacc[j];
            } else {
                /* log of the float64 sum: log(sf) + (s - sf)/sf, sf = s rounded to float, so
                   that a sum just above 1 still gives an accurate small log (this is not
                   performance-critical enough to need a float64 vector log) */
                for (int64_t j = 0; j < b.w; j++) {
                    float sf = (float)sacc[j];
                    fac[j] = sf;
                    ebuf[j] = (float)(sacc[j] - (double)sf) / sf;
                }
                aclk_vlog_f32(fac, b.w);
                for (int64_t j = 0; j < b.w; j++)
                    fac[j] = fac[j] + ebuf[j];
            }
            replicate(fac, b.R, b.w, sizeof(float));

            /* pass 3: normalise */
            for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
                int64_t off = base + a0 * inner;
                int64_t len = min64(b.R, axis - a0) * b.w;
                if (!lg) {
                    if (direct) {
                        float *yy = (float *)y + off;
                        for (int64_t k = 0; k < len; k++)
                            yy[k] = yy[k] / fac[k];
                    } else {
                        if (b.nseg > 1) { /* ebuf holds only the last segment: recompute */
                            const float *p = aclk_load_f32(dt, x, off, len, xbuf);
                            aclk_vexp_sub_f32(p, macc, ebuf, len);
                        }
                        for (int64_t k = 0; k < len; k++)
                            ebuf[k] = ebuf[k] / fac[k];
                        aclk_store_f32(dt, y, off, len, ebuf);
                    }
                } else {
                    const float *p = aclk_load_f32(dt, x, off, len, xbuf);
                    float *d = direct ? (float *)y + off : ebuf;
                    for (int64_t k = 0; k < len; k++)
                        d[k] = (p[k] - macc[k]) - fac[k];
                    if (!direct)
                        aclk_store_f32(dt, y, off, len, ebuf);
                }
            }
        }
    }
}

/* one contiguous row (inner == 1): scalar max / sum from LANES-wide accumulators */
ACLK_INLINE void fwd_rows(int dt, const void *x, void *y, int64_t outer, int64_t axis, int lg,
                          fwd_ws *ws, float *row)
{
    float *xbuf = ws->xbuf, *ebuf = ws->ebuf;
    const int direct = (dt == ACLK_F32);
    /* 16-bit softmax: keep the whole row of exps (in `row`, BLK floats) when it fits, so the
       normalising pass need not recompute them */
    const int keep = !direct && !lg && axis <= BLK;

    for (int64_t o = 0; o < outer; o++) {
        const int64_t base = o * axis;
        float mx[LANES];
        double sm[LANES];
        for (int j = 0; j < LANES; j++)
            mx[j] = -INFINITY;
        for (int64_t a0 = 0; a0 < axis; a0 += SEG) {
            int64_t len = min64(SEG, axis - a0);
            lanes_max(mx, aclk_load_f32(dt, x, base + a0, len, xbuf), len);
        }
        float m = mx[0];
        for (int j = 1; j < LANES; j++)
            m = (mx[j] > m) ? mx[j] : m;

        for (int j = 0; j < LANES; j++)
            sm[j] = 0.0;
        for (int64_t a0 = 0; a0 < axis; a0 += SEG) {
            int64_t len = min64(SEG, axis - a0);
            const float *p = aclk_load_f32(dt, x, base + a0, len, xbuf);
            float *e = (direct && !lg) ? (float *)y + base + a0 : keep ? row + a0 : ebuf;
            aclk_vexp_sub1_f32(p, m, e, len);
            lanes_sum_d(sm, e, len);
        }
        double s = 0.0;
        for (int j = 0; j < LANES; j++)
            s += sm[j];
        float f = (float)s;
        if (lg) /* as in fwd_core: log(sf) + (s - sf)/sf */
            f = aclk_log_f32(f) + (float)(s - (double)f) / f;

        for (int64_t a0 = 0; a0 < axis; a0 += SEG) {
            int64_t off = base + a0, len = min64(SEG, axis - a0);
            if (!lg) {
                if (direct) {
                    float *yy = (float *)y + off;
                    for (int64_t k = 0; k < len; k++)
                        yy[k] = yy[k] / f;
                } else {
                    float *e = keep ? row + a0 : ebuf;
                    if (!keep) { /* ebuf holds only the last chunk: recompute */
                        const float *p = aclk_load_f32(dt, x, off, len, xbuf);
                        aclk_vexp_sub1_f32(p, m, ebuf, len);
                    }
                    for (int64_t k = 0; k < len; k++)
                        e[k] = e[k] / f;
                    aclk_store_f32(dt, y, off, len, e);
                }
            } else {
                const float *p = aclk_load_f32(dt, x, off, len, xbuf);
                float *d = direct ? (float *)y + off : ebuf;
                for (int64_t k = 0; k < len; k++)
                    d[k] = (p[k] - m) - f;
                if (!direct)
                    aclk_store_f32(dt, y, off, len, ebuf);
            }
        }
    }
}

ACLK_CLONES static void softmax_fwd_f32(int dt, const void *x, void *y, int64_t outer,
                                        int64_t axis, int64_t inner, int lg)
{
    fwd_ws ws;
    float blk[BLK];
    if (inner == 1 && axis > SM_BATCH_FWD_ROW) {
        fwd_rows(dt, x, y, outer, axis, lg, &ws, blk);
        return;
    }
    if (!use_batch(axis, inner, SM_BATCH_FWD)) {
        fwd_core(dt, x, y, outer, axis, inner, lg, &ws);
        return;
    }
    const int64_t slab = axis * inner, B = batch_slabs(axis, inner);
    for (int64_t o0 = 0; o0 < outer; o0 += B) {
        int64_t nb = min64(B, outer - o0);
        gather(dt, x, o0 * slab, nb, axis, inner, blk);
        fwd_core(ACLK_F32, blk, blk, 1, axis, nb * inner, lg, &ws);
        scatter(dt, y, o0 * slab, nb, axis, inner, blk);
    }
}

/* --------------------------------------------------------- backward, 32-bit compute ---- */

typedef struct {
    float sacc[SEG], gbuf[SEG], ybuf[SEG], obuf[SEG];
} bwd_ws;

/* (grad, y) -> out over [outer][axis][inner]; out may be grad or y */
ACLK_INLINE void bwd_core(int dt, const void *grad, const void *yv, void *out, int64_t outer,
                          int64_t axis, int64_t inner, int lg, bwd_ws *ws)
{
    float *sacc = ws->sacc, *gbuf = ws->gbuf, *ybuf = ws->ybuf, *obuf = ws->obuf;
    const int direct = (dt == ACLK_F32);

    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i0 = 0; i0 < inner; i0 += SEG) {
            blk_t b = block_geom(axis, inner, i0);
            const int64_t base = o * axis * inner + i0;
            const float *pg = NULL, *py = NULL;

            /* pass 1: s = sum(grad * y) (softmax) or sum(grad) (log-softmax), in float32 */
            for (int64_t k = 0; k < b.S; k++)
                sacc[k] = 0.0f;
            for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
                int64_t off = base + a0 * inner;
                int64_t len = min64(b.R, axis - a0) * b.w;
                pg = aclk_load_f32(dt, grad, off, len, gbuf);
                if (lg) {
                    vsum_acc_f(sacc, pg, len);
                } else {
                    py = aclk_load_f32(dt, yv, off, len, ybuf);
                    vdot_acc_f(sacc, pg, py, len);
                }
            }
            fold_sum_f(sacc, b.R, b.w);
            replicate(sacc, b.R, b.w, sizeof(float));

            /* pass 2: out = grad*y - s*y, or grad - exp(y)*s */
            for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
                int64_t off = base + a0 * inner;
                int64_t len = min64(b.R, axis - a0) * b.w;
                if (b.nseg > 1 || direct) {
                    pg = aclk_load_f32(dt, grad, off, len, gbuf);
                    py = aclk_load_f32(dt, yv, off, len, ybuf);
                } else if (lg) { /* single segment: grad already widened, y not yet */
                    py = aclk_load_f32(dt, yv, off, len, ybuf);
                }
                float *d = direct ? (float *)out + off : obuf;
                if (lg) {
                    for (int64_t k = 0; k < len; k++)
                        d[k] = pg[k] - aclk_exp_f32(py[k]) * sacc[k];
                } else {
                    for (int64_t k = 0; k < len; k++)
                        d[k] = pg[k] * py[k] - sacc[k] * py[k];
                }
                if (!direct)
                    aclk_store_f32(dt, out, off, len, obuf);
            }
        }
    }
}

/* one contiguous row (inner == 1): scalar sum from LANES-wide float32 accumulators */
ACLK_INLINE void bwd_rows(int dt, const void *grad, const void *yv, void *out, int64_t outer,
                          int64_t axis, int lg, bwd_ws *ws)
{
    float *gbuf = ws->gbuf, *ybuf = ws->ybuf, *obuf = ws->obuf;
    const int direct = (dt == ACLK_F32);

    for (int64_t o = 0; o < outer; o++) {
        const int64_t base = o * axis;
        const float *pg = NULL, *py = NULL;
        float acc[LANES];
        for (int j = 0; j < LANES; j++)
            acc[j] = 0.0f;
        for (int64_t a0 = 0; a0 < axis; a0 += SEG) {
            int64_t len = min64(SEG, axis - a0);
            pg = aclk_load_f32(dt, grad, base + a0, len, gbuf);
            if (lg) {
                lanes_sum_f(acc, pg, len);
            } else {
                py = aclk_load_f32(dt, yv, base + a0, len, ybuf);
                lanes_dot_f(acc, pg, py, len);
            }
        }
        float s = 0.0f;
        for (int j = 0; j < LANES; j++)
            s += acc[j];

        for (int64_t a0 = 0; a0 < axis; a0 += SEG) {
            int64_t off = base + a0, len = min64(SEG, axis - a0);
            if (axis > SEG || direct) {
                pg = aclk_load_f32(dt, grad, off, len, gbuf);
                py = aclk_load_f32(dt, yv, off, len, ybuf);
            } else if (lg) {
                py = aclk_load_f32(dt, yv, off, len, ybuf);
            }
            float *d = direct ? (float *)out + off : obuf;
            if (lg) {
                for (int64_t k = 0; k < len; k++)
                    d[k] = pg[k] - aclk_exp_f32(py[k]) * s;
            } else {
                for (int64_t k = 0; k < len; k++)
                    d[k] = pg[k] * py[k] - s * py[k];
            }
            if (!direct)
                aclk_store_f32(dt, out, off, len, obuf);
        }
    }
}

ACLK_CLONES static void softmax_bwd_f32(int dt, const void *grad, const void *yv, void *out,
                                        int64_t outer, int64_t axis, int64_t inner, int lg)
{
    bwd_ws ws;
    if (inner == 1 && axis > SM_BATCH_BWD_ROW) {
        bwd_rows(dt, grad, yv, out, outer, axis, lg, &ws);
        return;
    }
    if (!use_batch(axis, inner, SM_BATCH_BWD)) {
        bwd_core(dt, grad, yv, out, outer, axis, inner, lg, &ws);
        return;
    }
    float gblk[BLK], yblk[BLK];
    const int64_t slab = axis * inner, B = batch_slabs(axis, inner);
    for (int64_t o0 = 0; o0 < outer; o0 += B) {
        int64_t nb = min64(B, outer - o0);
        gather(dt, grad, o0 * slab, nb, axis, inner, gblk);
        gather(dt, yv, o0 * slab, nb, axis, inner, yblk);
        bwd_core(ACLK_F32, gblk, yblk, gblk, 1, axis, nb * inner, lg, &ws);
        scatter(dt, out, o0 * slab, nb, axis, inner, gblk);
    }
}

/* ------------------------------------------------------------------ float64 ---- */

static void softmax_fwd_f64(const double *x, double *y, int64_t outer, int64_t axis,
                            int64_t inner, int lg)
{
    double macc[SEG], sacc[SEG];

    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i0 = 0; i0 < inner; i0 += SEG) {
            blk_t b = block_geom(axis, inner, i0);
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
                        yy[k] = (p[k] - macc[k]) - sacc[k];
                } else {
                    for (int64_t k = 0; k < len; k++)
                        yy[k] = yy[k] / sacc[k];
                }
            }
        }
    }
}

static void softmax_bwd_f64(const double *g, const double *yv, double *out, int64_t outer,
                            int64_t axis, int64_t inner, int lg)
{
    double sacc[SEG];

    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i0 = 0; i0 < inner; i0 += SEG) {
            blk_t b = block_geom(axis, inner, i0);
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
                        d[k] = pg[k] - exp(py[k]) * sacc[k];
                } else {
                    for (int64_t k = 0; k < len; k++)
                        d[k] = pg[k] * py[k] - sacc[k] * py[k];
                }
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
    softmax_fwd_f64((const double *)x, (double *)y, outer, axis, inner, lg != 0);
    return 0;
}

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
    softmax_bwd_f64((const double *)grad, (const double *)y, (double *)out, outer, axis, inner,
                    lg != 0);
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

static const struct {
    const char *name;
    accepts_fn accepts;
    bwd_fn run;
} BWD[] = {
    {"float32", is_f32_compute, bwd_f32},
    {"float64", is_f64, bwd_f64},
    {"reference", ref_accepts, aclk_ref_softmax_bwd},
};

#define NUM(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int pick_fwd(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    for (int i = 0; i < NUM(FWD); i++)
        if (FWD[i].accepts(dtype, outer, axis, inner))
            return i;
    return -1;
}

static int pick_bwd(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    for (int i = 0; i < NUM(BWD); i++)
        if (BWD[i].accepts(dtype, outer, axis, inner))
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

const char *aclk_softmax_fwd_impl(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    int i = pick_fwd(dtype, outer, axis, inner);
    return i < 0 ? NULL : FWD[i].name;
}

const char *aclk_softmax_bwd_impl(int dtype, int64_t outer, int64_t axis, int64_t inner)
{
    int i = pick_bwd(dtype, outer, axis, inner);
    return i < 0 ? NULL : BWD[i].name;
}
