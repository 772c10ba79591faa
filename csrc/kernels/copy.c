/*
 * copy.c: strided element copy between two views of the same shape.
 *
 * aclk_strided_copy copies every element of a view of `shape` (0..EMU_MAX_DIMS dims; 0 dims is
 * one element) from src to dst; strides are in elements, may be negative or zero, and src/dst
 * point at element [0,...,0]. Before looping, dims of size 1 are dropped and adjacent dims that
 * are jointly contiguous in both src and dst are merged, so e.g. two contiguous tensors become
 * one memcpy. The innermost dim is a memcpy when it is contiguous on both sides, a fill when
 * the source is broadcast (stride 0), and a tight typed loop otherwise. When the innermost two
 * dims form a transpose (src contiguous along the outer one of the two), they are copied in
 * small square tiles so that both sides stay in cache.
 *
 * Large copies are split over the kernel threads (aclk_parallel_for) by rows: the innermost dim
 * (or tiled pair of dims) is a row, rows are grouped into chunks of about GRAIN elements; a
 * single row (one contiguous run, after merging) is split into element ranges instead, and
 * written with non-temporal stores when it is larger than half the last-level cache. Only when
 * the two views cannot overlap and no destination dim is broadcast: otherwise the copy runs on
 * the calling thread in element order, as before (the order then decides what is left).
 */
#include <string.h>

#include "aclk_pool.h"
#include "aclnn_emu.h"
#include "dtype.h"

#define TILE 32
#define GRAIN ((int64_t)1 << 16) /* elements per parallel chunk, about */

typedef struct {
    int64_t n, ss, ds;      /* extent, src stride, dst stride (elements) */
} dim_t;

/* one row of n elements: d[i*ds] = s[i*ss] */
static void copy_row(int64_t es, int64_t n, const char *s, int64_t ss, char *d, int64_t ds)
{
    if (ss == 1 && ds == 1) {
        memmove(d, s, (size_t)(n * es));
        return;
    }
    switch (es) {
    case 1: {
        const uint8_t *sp = (const uint8_t *)s;
        uint8_t *dp = (uint8_t *)d;
        if (ss == 0 && ds == 1) {
            memset(dp, sp[0], (size_t)n);
        } else {
            for (int64_t i = 0; i < n; i++)
                dp[i * ds] = sp[i * ss];
        }
        break;
    }
#define TYPED_ROW(T)                                                                  \
    {                                                                                 \
        const T *sp = (const T *)s;                                                   \
        T *dp = (T *)d;                                                               \
        if (ss == 0) {                                                                \
            T v = sp[0];                                                              \
            if (ds == 1) {                                                            \
                for (int64_t i = 0; i < n; i++)                                       \
                    dp[i] = v;                                                        \
            } else {                                                                  \
                for (int64_t i = 0; i < n; i++)                                       \
                    dp[i * ds] = v;                                                   \
            }                                                                         \
        } else if (ds == 1) {                                                         \
            for (int64_t i = 0; i < n; i++)                                           \
                dp[i] = sp[i * ss];                                                   \
        } else if (ss == 1) {                                                         \
            for (int64_t i = 0; i < n; i++)                                           \
                dp[i * ds] = sp[i];                                                   \
        } else {                                                                      \
            for (int64_t i = 0; i < n; i++)                                           \
                dp[i * ds] = sp[i * ss];                                              \
        }                                                                             \
    }
    case 2: TYPED_ROW(uint16_t) break;
    case 4: TYPED_ROW(uint32_t) break;
    default: TYPED_ROW(uint64_t) break;
#undef TYPED_ROW
    }
}

/* the innermost two dims, d1 outer and d0 inner, copied in TILE x TILE blocks */
static void copy_tiled(int64_t es, const dim_t *d1, const dim_t *d0, const char *s, char *d)
{
    for (int64_t i0 = 0; i0 < d1->n; i0 += TILE) {
        int64_t ni = d1->n - i0 < TILE ? d1->n - i0 : TILE;
        for (int64_t j0 = 0; j0 < d0->n; j0 += TILE) {
            int64_t nj = d0->n - j0 < TILE ? d0->n - j0 : TILE;
            const char *sb = s + (i0 * d1->ss + j0 * d0->ss) * es;
            char *db = d + (i0 * d1->ds + j0 * d0->ds) * es;
            for (int64_t i = 0; i < ni; i++)
                copy_row(es, nj, sb + i * d1->ss * es, d0->ss, db + i * d1->ds * es, d0->ds);
        }
    }
}

/* one call's copy after dims were dropped and merged */
typedef struct {
    int64_t es;
    int nd, loop_dims, tiled, nt;
    dim_t dims[EMU_MAX_DIMS];
    const char *s;
    char *d;
} copy_job;

/* rows [r0, r1) of the odometer over dims [0, loop_dims) (row r: its digits, last fastest) */
static void copy_rows(const copy_job *j, int64_t r0, int64_t r1)
{
    const int64_t es = j->es;
    const int nd = j->nd, loop_dims = j->loop_dims;
    const dim_t *dims = j->dims;
    /* byte offsets rather than pointers, so nothing ever points outside the views */
    int64_t idx[EMU_MAX_DIMS] = {0};
    int64_t so = 0, doff = 0, r = r0;
    for (int k = loop_dims - 1; k >= 0; k--) {
        idx[k] = r % dims[k].n;
        r /= dims[k].n;
        so += idx[k] * dims[k].ss * es;
        doff += idx[k] * dims[k].ds * es;
    }
    for (int64_t row = r0; row < r1; row++) {
        if (j->tiled)
            copy_tiled(es, &dims[nd - 2], &dims[nd - 1], j->s + so, j->d + doff);
        else
            copy_row(es, dims[nd - 1].n, j->s + so, dims[nd - 1].ss, j->d + doff,
                     dims[nd - 1].ds);

        /* advance the odometer over dims [0, loop_dims) */
        int k = loop_dims - 1;
        for (; k >= 0; k--) {
            if (++idx[k] < dims[k].n) {
                so += dims[k].ss * es;
                doff += dims[k].ds * es;
                break;
            }
            so -= (dims[k].n - 1) * dims[k].ss * es;
            doff -= (dims[k].n - 1) * dims[k].ds * es;
            idx[k] = 0;
        }
        if (k < 0)
            break;
    }
}

static void rows_chunk(void *ctx, int64_t r0, int64_t r1)
{
    copy_rows((const copy_job *)ctx, r0, r1);
}

/* elements [i0, i1) of the single row (nd == 1, not tiled) */
static void elems_chunk(void *ctx, int64_t i0, int64_t i1)
{
    const copy_job *j = (const copy_job *)ctx;
    const dim_t *r = &j->dims[0];
    const char *s = j->s + i0 * r->ss * j->es;
    char *d = j->d + i0 * r->ds * j->es;
    if (j->nt) { /* contiguous on both sides: whole floats streamed, the rest copied */
        int64_t bytes = (i1 - i0) * j->es, nf = bytes / 4;
        if ((uintptr_t)d % 4 == 0 && (uintptr_t)s % 4 == 0) {
            aclk_copy_f32_nt((float *)(void *)d, (const float *)(const void *)s, nf);
            memcpy(d + nf * 4, s + nf * 4, (size_t)(bytes - nf * 4));
        } else {
            memcpy(d, s, (size_t)bytes);
        }
        aclk_nt_fence();
    } else {
        copy_row(j->es, i1 - i0, s, r->ss, d, r->ds);
    }
}

/* [lo, hi) bytes a view of dims touches, relative to its element [0,...,0] */
static void extent(const dim_t *dims, int nd, int64_t es, int src, int64_t *lo, int64_t *hi)
{
    int64_t a = 0, b = 0;
    for (int i = 0; i < nd; i++) {
        int64_t st = (src ? dims[i].ss : dims[i].ds) * es, span = (dims[i].n - 1) * st;
        if (span < 0)
            a += span;
        else
            b += span;
    }
    *lo = a;
    *hi = b + es;
}

int aclk_strided_copy(int64_t elem_size, int ndim, const int64_t *shape,
                      const void *src, const int64_t *src_strides,
                      void *dst, const int64_t *dst_strides)
{
    if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
        return -1;
    if (ndim < 0 || ndim > EMU_MAX_DIMS)
        return -1;
    const int64_t es = elem_size;

    /* drop size-1 dims, stop at an empty one */
    dim_t dims[EMU_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] <= 0)
            return 0;
        if (shape[i] == 1)
            continue;
        dims[nd].n = shape[i];
        dims[nd].ss = src_strides[i];
        dims[nd].ds = dst_strides[i];
        nd++;
    }

    /* merge an outer dim into the following inner one when both sides are contiguous across */
    int m = 0;
    for (int i = 0; i < nd; i++) {
        if (m > 0 && dims[m - 1].ss == dims[i].n * dims[i].ss &&
            dims[m - 1].ds == dims[i].n * dims[i].ds) {
            dims[m - 1].n *= dims[i].n;
            dims[m - 1].ss = dims[i].ss;
            dims[m - 1].ds = dims[i].ds;
        } else {
            dims[m++] = dims[i];
        }
    }
    nd = m;

    const char *s = (const char *)src;
    char *d = (char *)dst;
    if (nd == 0) {
        memmove(d, s, (size_t)es);
        return 0;
    }

    copy_job j;
    memset(&j, 0, sizeof j);
    j.es = es;
    j.nd = nd;
    memcpy(j.dims, dims, (size_t)nd * sizeof(dim_t));
    j.s = s;
    j.d = d;
    /* transpose-like innermost pair: the source is contiguous along the outer of the two */
    j.tiled = nd >= 2 && dims[nd - 1].ss != 1 && dims[nd - 2].ss == 1 &&
              dims[nd - 1].ds == 1 && dims[nd - 1].n >= TILE && dims[nd - 2].n >= TILE;
    j.loop_dims = j.tiled ? nd - 2 : nd - 1; /* dims walked by the odometer */

    int64_t rows = 1, total = 1;
    int parallel = 1;
    for (int i = 0; i < nd; i++) {
        total *= dims[i].n;
        if (i < j.loop_dims)
            rows *= dims[i].n;
        parallel &= dims[i].ds != 0;
    }
    if (parallel && total >= 2 * GRAIN) {
        int64_t slo, shi, dlo, dhi;
        extent(dims, nd, es, 1, &slo, &shi);
        extent(dims, nd, es, 0, &dlo, &dhi);
        intptr_t sp = (intptr_t)s, dp = (intptr_t)d;
        parallel = sp + shi <= dp + dlo || dp + dhi <= sp + slo;
    } else {
        parallel = 0;
    }
    if (!parallel) {
        copy_rows(&j, 0, rows);
    } else if (nd == 1) {
        j.nt = dims[0].ss == 1 && dims[0].ds == 1 && aclk_use_nt(total * es);
        aclk_parallel_for(total, GRAIN, elems_chunk, &j);
    } else {
        int64_t row_elems = total / rows;
        int64_t grain = GRAIN / row_elems;
        aclk_parallel_for(rows, grain < 1 ? 1 : grain, rows_chunk, &j);
    }
    return 0;
}
