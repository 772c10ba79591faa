/*
 * softmax_ex.c: oneDNN's forward softmax primitive with attributes (aclnn_emu.h): src and dst
 * each float32, float16, bfloat16, float64, int8, uint8, float8_e5m2 or float8_e4m3fn, over the middle axis of a
 * contiguous [outer][axis][inner] tensor. Per element, in benchdnn's reference order:
 *
 *   m = max(x) over the slice (NaNs skipped), s = sum(exp(x - m)),
 *   d = exp(x - m) / s   (log-softmax: d = (x - m) - log(s)),
 *   d *= src_scale; d = post_op(d) for each post-op in order; d *= 1/dst_scale;
 *   y = d converted to dst: floats rounded to nearest even; int8 / uint8 rounded half to
 *       even and saturated, NaN -> 0; f8 (e5m2, e4m3fn) as oneDNN: through binary16
 *       (see "float8" below).
 *
 * inf_as_zero (softmax only): a slice whose inputs are all -inf gives d = 0 (before the scales
 * and post-ops) instead of NaN. Otherwise IEEE: a slice holding +inf or a NaN gives NaN, as
 * softmax.c. Integer sources enter as their values. Binary post-ops read their float32 operand
 * at src1[post.src1 + sum_k idx_k * post.strides[k]] over dst's multi-index (0 strides
 * broadcast).
 *
 * Compute precision: float32 (vecmath.h's exp and log, sums of exps in float64, as softmax.c),
 * or float64 with libm when src or dst is float64. Eltwise post-ops use libm's float functions
 * (a few ulp) where vecmath.h has none.
 *
 * Shape of the work: one item is an outer index o and a block of w consecutive inner columns,
 * walked along the axis in segments of R consecutive a-rows (R > 1 only when w == inner: the
 * segment x[o][a0 .. a0+R)[0 .. inner) is then one contiguous run of S = R*w <= SEG elements;
 * a row, inner == 1, is the case w = 1, R = SEG). Per-column accumulators (max, float64 sum)
 * are S wide, aligned with the segment, so every pass is an elementwise loop over contiguous
 * arrays that gcc vectorises; the R replicas are folded by a halving tree afterwards, the same
 * order on every ISA level, so every level's version (ACLK_LEVELS) gives the same bits. Three
 * passes: max; exps and sums; output. The output pass finishes each segment completely:
 * normalise, src scale, each post-op as its own loop over the segment (binary operands gathered
 * into a segment-wide buffer unless they are contiguous), dst scale, convert and store: the
 * input is read from memory once, the output written once, and no temporary is larger than a
 * block. A block of up to KEEP elements keeps its widened input or its exps in the thread's
 * scratch (aclk_scratch) between passes; without scratch, or for larger blocks, x is read again
 * and the exps are recomputed, with the same bits. The float64 path always recomputes.
 *
 * Items depend on the shape only and each is computed by one thread (aclk_parallel_for), so
 * the results are the same for every thread count.
 */

/* Floating-point contraction off before any #include (see softmax.c): the per-level versions
 * (vecmath.h's ACLK_LEVELS) give the same bits only if no multiply-add is fused. */
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

#define SEG 512      /* segment / accumulator width in elements */
#define KEEP 65536   /* floats of a block kept in thread scratch between the passes */
#define CHUNK_ELEMS 32768
#define CHUNK_MIN 4096
#define MIN_CHUNKS 8


static int ex_dtype_ok(int dt)
{
    return dt == ACLK_F32 || dt == ACLK_F16 || dt == ACLK_BF16 || dt == ACLK_F64 ||
           dt == ACLK_I8 || dt == ACLK_U8 || dt == ACLK_F8_E5M2 || dt == ACLK_F8_E4M3;
}

/* ---------------------------------------------------------------------- float8 ----
 * oneDNN's conversions (its float8_e5m2_t / float8_e4m3_t): a float32 goes to binary16 first
 * (round to nearest even), then to f8 (round to nearest even from the binary16 bits).
 *   e5m2: binary16 without its low 8 bits: overflow gives inf, NaN stays NaN.
 *   e4m3 (e4m3fn): |h| above 464 (inf and NaN included) gives NaN (S.1111.111): 448 is the
 *   largest value, (448, 464] rounds to it; |h| <= 2^-10 gives a signed 0.
 * Widening is exact. */
static inline uint8_t f16_to_e5m2(uint16_t h)
{
    if ((h & 0x7c00) == 0x7c00)  /* inf stays inf; NaN gets the quiet bit */
        return (uint8_t)((h >> 8) | ((h & 0x03ff) ? 0x02 : 0x00));
    return (uint8_t)((uint16_t)(h + 0x7f + ((h >> 8) & 1)) >> 8);
}

static inline uint8_t f16_to_e4m3(uint16_t h)
{
    const uint8_t s = (uint8_t)((h & 0x8000) >> 8);
    const uint32_t a = h & 0x7fff;
    if (a > 0x5f40)
        return s | 0x7f;
    if (a <= 0x1400)
        return s;
    const uint32_t e = a >> 10, m = a & 0x3ff;
    uint32_t q, r, half;
    if (e >= 9) {  /* a normal e4m3: exponent e - 8, the top 3 of 10 mantissa bits */
        q = ((e - 8) << 3) | (m >> 7);
        r = m & 0x7f;
        half = 0x40;
    } else {       /* a subnormal e4m3 (units of 2^-9): (1024 + m) * 2^(e - 25) */
        const uint32_t sh = 16 - e, v = 1024 + m;
        q = v >> sh;
        r = v & ((1u << sh) - 1);
        half = 1u << (sh - 1);
    }
    q += (r > half || (r == half && (q & 1))) ? 1 : 0;
    return s | (uint8_t)q;
}

static inline float e5m2_to_f32(uint8_t b)
{
    return aclk_f16_to_f32((uint16_t)(b << 8));
}

static inline float e4m3_to_f32(uint8_t b)
{
    const uint32_t e = (b >> 3) & 0xf, m = b & 7;
    float v;
    if ((b & 0x7f) == 0x7f)
        v = NAN;
    else if (e == 0)
        v = (float)m * 0.001953125f; /* 2^-9 */
    else {
        const uint32_t bits = (e + 120) << 23; /* 2^(e - 7) */
        float p;
        memcpy(&p, &bits, sizeof p);
        v = (1.0f + (float)m * 0.125f) * p;
    }
    return (b & 0x80) ? -v : v;
}

static inline uint8_t f32_to_f8(int dt, float f)
{
    const uint16_t h = aclk_f32_to_f16(f);
    return dt == ACLK_F8_E5M2 ? f16_to_e5m2(h) : f16_to_e4m3(h);
}

static inline float f8_to_f32(int dt, uint8_t b)
{
    return dt == ACLK_F8_E5M2 ? e5m2_to_f32(b) : e4m3_to_f32(b);
}

static inline int is_f8(int dt)
{
    return dt == ACLK_F8_E5M2 || dt == ACLK_F8_E4M3;
}

static int is_binary(int alg)
{
    return alg >= EMU_PO_ADD && alg <= EMU_PO_DROPOUT;
}

static int alg_ok(int alg)
{
    return (alg >= EMU_PO_RELU && alg <= EMU_PO_SOFT_RELU) || is_binary(alg);
}

/* ------------------------------------------------------------------ geometry ---- */

typedef struct {
    int64_t w;    /* columns in the block */
    int64_t R;    /* a-rows per segment */
    int64_t S;    /* accumulator width R*w */
} blk_t;

/* block width: whole slabs when inner <= SEG; else a multiple of 16 chosen so that a block
   (axis x w) fits KEEP when it can, between 64 and SEG */
static int64_t blk_width(int64_t axis, int64_t inner)
{
    if (inner <= SEG)
        return inner;
    int64_t w = (KEEP / axis) & ~(int64_t)15;
    return w < 64 ? SEG : min64(w, SEG);
}

static blk_t block_geom(int64_t axis, int64_t inner, int64_t i0, int64_t W)
{
    blk_t b;
    if (W == inner) {
        b.w = inner;
        b.R = min64(SEG / inner, axis);
    } else {
        b.w = min64(W, inner - i0);
        b.R = 1;
    }
    b.S = b.R * b.w;
    return b;
}

/* items per chunk for n items of e elements each (softmax.c's grain_for) */
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

/* ----------------------------------------------------------- binary operands ----
 * For one item and one binary post-op, the src1 offsets of a segment starting at a-row a0 are
 * base + a0*sd + t[k] (k < len <= S). When t is linear (t[k] = k*step: a scalar for step 0,
 * contiguous for step 1) no table is kept. */
typedef struct {
    int64_t base; /* post.src1 + offset of (o, a = 0, i0) */
    int64_t sd;   /* stride over the softmax axis */
    int64_t step; /* linear: t[k] = k*step */
    int table;    /* 1: t[k] = tab[k] */
    int64_t *tab;
} operand;

typedef struct {
    const emu_softmax_ex_args *p;
    int sdt, ddt, lg, iaz;
    const void *x;
    const float *src1;
    void *y;
    int64_t outer, axis, inner, W, nblk;
    const float *etab; /* int8 / uint8 src: exp_table, else NULL */
    const float *etabr; /* the int8 path's log-softmax: etab with entry 0 set to 0 */
    const int64_t *rowlim; /* the int8 path: rows of up to rowlim[span] elements sum exactly */
} ex_ctx;

/* int8 / uint8 inputs: x - max is an integer in [-255, 0], so exp(x - max) is one of 256
   values, computed once per call with the exp every other path uses (aclk_exp_neg_f32, the same
   bits as aclk_vexp_sub_f32 gives) and then looked up: the exp of a wide int8 row, whose
   arguments fall below the fast exp's domain, cost 56 ms on (4096, 4096) against 6 ms for a
   narrow one. */
#define EXP_TAB 256
static void exp_table(float *t)
{
    for (int j = 0; j < EXP_TAB; j++)
        t[j] = aclk_exp_neg_f32(-(float)j);
}

/* e[k] = exp(x[k] - m[k]) for integer-valued x[k] <= m[k] (an int8 / uint8 source) */
ACLK_INLINE void vexp_sub_tab(const float *restrict x, const float *restrict m, float *e,
                              int64_t n, const float *restrict tab)
{
    for (int64_t k = 0; k < n; k++)
        e[k] = tab[(int32_t)(m[k] - x[k])];
}

/* per-lane minima, as vmax_acc (a lane-wise accumulator vectorises; one running scalar minimum
   is a dependency chain that cost 10 ms on (4096, 4096)) */
ACLK_INLINE void vmin_acc(float *restrict acc, const float *restrict x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        acc[k] = (x[k] < acc[k]) ? x[k] : acc[k];
}

/* e = exp(x - m): by the table where an item's integer inputs span more than the vector exp's
   fast domain (tab not NULL), else the vector exp, which is cheaper than a table gather there
   (narrow int8 rows of (4096, 4096): 6.0 ms against 9.3; wide ones 57 against 45) */
ACLK_INLINE void exp_sub(const float *tab, const float *x, const float *m, float *e, int64_t n)
{
    if (tab)
        vexp_sub_tab(x, m, e, n, tab);
    else
        aclk_vexp_sub_f32(x, m, e, n);
}

/* the operand of post-op j for item (o, i0) of geometry b; tab has room for SEG entries */
static void make_operand(const ex_ctx *c, int j, int64_t o, int64_t i0, blk_t b, int64_t *tab,
                         operand *op)
{
    const emu_softmax_ex_args *p = c->p;
    const emu_post_op *po = &p->post[j];
    const int nd = p->ndim, dim = p->dim;
    int64_t base = po->src1;
    /* outer dims: o decomposed over shape[0 .. dim) */
    int64_t q = o;
    for (int k = dim - 1; k >= 0; k--) {
        base += (q % p->shape[k]) * po->strides[k];
        q /= p->shape[k];
    }
    op->sd = nd > 0 ? po->strides[dim] : 0;
    /* inner dims: column i0 + k for k < w, an odometer over shape[dim+1 .. nd) */
    int64_t idx[8] = {0}, off = 0;
    q = i0;
    for (int k = nd - 1; k > dim; k--) {
        idx[k] = q % p->shape[k];
        q /= p->shape[k];
        off += idx[k] * po->strides[k];
    }
    const int64_t off0 = off;
    op->base = base + off0;
    tab[0] = 0;
    for (int64_t k = 1; k < b.w; k++) {
        for (int d = nd - 1; d > dim; d--) {
            off += po->strides[d];
            if (++idx[d] < p->shape[d])
                break;
            off -= idx[d] * po->strides[d];
            idx[d] = 0;
        }
        tab[k] = off - off0;
    }
    /* linear over the block's columns? */
    const int64_t t1 = b.w > 1 ? tab[1] : op->sd;
    int linear = 1;
    for (int64_t k = 2; k < b.w; k++)
        linear &= tab[k] == k * t1;
    if (linear && (b.R == 1 || op->sd == b.w * t1)) {
        op->table = 0;
        op->step = t1;
        op->tab = NULL;
        return;
    }
    /* the segment's table: a-row r of the segment, column k */
    for (int64_t r = 1; r < b.R; r++)
        for (int64_t k = 0; k < b.w; k++)
            tab[r * b.w + k] = r * op->sd + tab[k];
    op->table = 1;
    op->step = 0;
    op->tab = tab;
}

/* ------------------------------------------------------- accumulators and folds ---- */

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

/* log-softmax's sums: the elements at the column's max are counted (kacc), the others' exps
   summed (acc; a NaN is not at the max, so it reaches the sum) */
ACLK_INLINE void vsum_rest_acc_d(double *restrict acc, double *restrict kacc,
                                 const float *restrict e, const float *restrict x,
                                 const float *restrict m, int64_t n)
{
    for (int64_t k = 0; k < n; k++) {  /* branch-free: ties at the max are common in ints */
        const double ek = (double)e[k], top = (double)(x[k] == m[k]);
        acc[k] += ek - ek * top;  /* e is 1 at the max: exactly 0 there, e elsewhere */
        kacc[k] += top;
    }
}

/* log(sum of exps) of a log-softmax column from its count k >= 1 of elements at the max and the
   sum of the other exps: log(k) + log1p(rest / k). The max terms left out of the sum keep the
   tiny outputs of a dominant element accurate: log(1 + 1e-14) of a float64 sum would keep only
   two of their digits. A column with no element at its max (a NaN in it, or all -inf) gives
   the sum's NaN or log(k); its outputs are NaN either way. */
ACLK_INLINE double lse_of(double k, double rest)
{
    return k > 0.0 ? log(k) + log1p(rest / k) : log(rest);
}

/* nz[k] |= x[k] != -inf (inf_as_zero: the column is not all -inf) */
ACLK_INLINE void vnz_acc(uint32_t *restrict nz, const float *restrict x, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        nz[k] |= (uint32_t)(x[k] != -INFINITY);
}




ACLK_INLINE void fold_or(uint32_t *acc, int64_t R, int64_t w)
{
    while (R > 1) {
        int64_t h = R / 2, keep = R - h;
        uint32_t *restrict lo = acc;
        const uint32_t *restrict hi = acc + keep * w;
        for (int64_t k = 0; k < h * w; k++)
            lo[k] |= hi[k];
        R = keep;
    }
}


/* -------------------------------------------------------------- loads and stores ---- */

/* n elements of x at element offset off as float32 (float32 read in place, else widened) */
ACLK_INLINE const float *load_f32(int dt, const void *x, int64_t off, int64_t n,
                                  float *restrict buf)
{
    if (dt == ACLK_I8) {
        const int8_t *s = (const int8_t *)x + off;
        for (int64_t k = 0; k < n; k++)
            buf[k] = (float)s[k];
        return buf;
    }
    if (dt == ACLK_U8) {
        const uint8_t *s = (const uint8_t *)x + off;
        for (int64_t k = 0; k < n; k++)
            buf[k] = (float)s[k];
        return buf;
    }
    if (is_f8(dt)) {
        const uint8_t *s = (const uint8_t *)x + off;
        for (int64_t k = 0; k < n; k++)
            buf[k] = f8_to_f32(dt, s[k]);
        return buf;
    }
    return aclk_load_f32(dt, x, off, n, buf);
}

/* v rounded half to even and saturated to [lo, hi], NaN -> 0: the clamp first (selects), then
   the 1.5*2^23 add, which rounds to an integer exactly in this range */
ACLK_INLINE int32_t quant_f32(float v, float lo, float hi)
{
    v = aclk_sel_f32(v != v, 0.0f, v);
    v = aclk_sel_f32(v < lo, lo, v);
    v = aclk_sel_f32(v > hi, hi, v);
    v = (v + 12582912.0f) - 12582912.0f;
    return (int32_t)v;
}

ACLK_INLINE void store_f32(int dt, void *y, int64_t off, int64_t n, const float *restrict d)
{
    if (dt == ACLK_I8) {
        int8_t *o = (int8_t *)y + off;
        for (int64_t k = 0; k < n; k++)
            o[k] = (int8_t)quant_f32(d[k], -128.0f, 127.0f);
    } else if (dt == ACLK_U8) {
        uint8_t *o = (uint8_t *)y + off;
        for (int64_t k = 0; k < n; k++)
            o[k] = (uint8_t)quant_f32(d[k], 0.0f, 255.0f);
    } else if (is_f8(dt)) {
        uint8_t *o = (uint8_t *)y + off;
        for (int64_t k = 0; k < n; k++)
            o[k] = f32_to_f8(dt, d[k]);
    } else {
        aclk_store_f32(dt, y, off, n, d);
    }
}

static const double *load_f64(int dt, const void *x, int64_t off, int64_t n,
                              double *restrict buf)
{
    switch (dt) {
    case ACLK_F64: return (const double *)x + off;
    case ACLK_F32:
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)((const float *)x)[off + k];
        break;
    case ACLK_F16:
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)aclk_f16_to_f32(((const uint16_t *)x)[off + k]);
        break;
    case ACLK_BF16:
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)aclk_bf16_to_f32(((const uint16_t *)x)[off + k]);
        break;
    case ACLK_I8:
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)((const int8_t *)x)[off + k];
        break;
    case ACLK_F8_E5M2:
    case ACLK_F8_E4M3:
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)f8_to_f32(dt, ((const uint8_t *)x)[off + k]);
        break;
    default:
        for (int64_t k = 0; k < n; k++)
            buf[k] = (double)((const uint8_t *)x)[off + k];
        break;
    }
    return buf;
}

static int32_t quant_f64(double v, double lo, double hi)
{
    v = v != v ? 0.0 : v;
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    v = (v + 6755399441055744.0) - 6755399441055744.0; /* 1.5 * 2^52 */
    return (int32_t)v;
}

static void store_f64(int dt, void *y, int64_t off, int64_t n, const double *restrict d)
{
    switch (dt) {
    case ACLK_F64: memcpy((double *)y + off, d, (size_t)n * sizeof(double)); break;
    case ACLK_F32:
        for (int64_t k = 0; k < n; k++)
            ((float *)y)[off + k] = (float)d[k];
        break;
    case ACLK_F16:
        for (int64_t k = 0; k < n; k++)
            ((uint16_t *)y)[off + k] = aclk_f64_to_f16(d[k]);
        break;
    case ACLK_BF16:
        for (int64_t k = 0; k < n; k++)
            ((uint16_t *)y)[off + k] = aclk_f64_to_bf16(d[k]);
        break;
    case ACLK_I8:
        for (int64_t k = 0; k < n; k++)
            ((int8_t *)y)[off + k] = (int8_t)quant_f64(d[k], -128.0, 127.0);
        break;
    case ACLK_F8_E5M2:
    case ACLK_F8_E4M3: /* oneDNN stores a float: double -> float -> binary16 -> f8 */
        for (int64_t k = 0; k < n; k++)
            ((uint8_t *)y)[off + k] = f32_to_f8(dt, (float)d[k]);
        break;
    default:
        for (int64_t k = 0; k < n; k++)
            ((uint8_t *)y)[off + k] = (uint8_t)quant_f64(d[k], 0.0, 255.0);
        break;
    }
}

/* --------------------------------------------------------------------- post-ops ----
 * One post-op over a segment: d[k] = f(d[k]) (eltwise) or op(d[k], s[k]) (binary), each alg its
 * own loop so that the simple ones vectorise (selects, not branches: see vecmath.h). */
#define SQRT_2_OVER_PI 0.79788456080286535588
#define SQRT1_2 0.70710678118654752440
#define SOFT_RELU_BOUND 88.72283172607421875 /* log(FLT_MAX) rounded to float */

#define LOOP(EXPR)                                  \
    for (int64_t k = 0; k < n; k++) {               \
        const float v = d[k];                       \
        d[k] = (EXPR);                              \
    }                                               \
    break
#define LOOP2(EXPR)                                 \
    for (int64_t k = 0; k < n; k++) {               \
        const float v = d[k], t = s[k];             \
        d[k] = (EXPR);                              \
    }                                               \
    break

ACLK_INLINE float soft_relu_f32(float v, float al)
{
    const float in = al * v;
    const float r = in < (float)SOFT_RELU_BOUND ? log1pf(expf(in)) : in;
    return r / al;
}

ACLK_INLINE float hsig_f32(float v, float al, float be)
{
    float t = al * v + be;
    t = aclk_sel_f32(t > 1.0f, 1.0f, t);
    return aclk_sel_f32(t < 0.0f, 0.0f, t);
}

ACLK_LEVELS(post_f32,
            (int alg, float al, float be, float *restrict d, const float *restrict s, int64_t n),
            (alg, al, be, d, s, n))
{
    const float c = (float)SQRT_2_OVER_PI, r2 = (float)SQRT1_2;
    switch (alg) {
    case EMU_PO_RELU: LOOP(aclk_sel_f32(v > 0.0f, v, al * v));
    case EMU_PO_LINEAR: LOOP(al * v + be);
    /* oneDNN's formulas: clip is t = (v > alpha ? v : alpha), then (t > beta ? beta : t);
       clip_v2 the same t, then (t < beta ? t : beta). Both turn NaN into alpha (v > alpha is
       false); they differ forward only in the sign of a zero at t == beta */
    case EMU_PO_CLIP: LOOP(aclk_sel_f32(aclk_sel_f32(v > al, v, al) > be, be,
                                        aclk_sel_f32(v > al, v, al)));
    case EMU_PO_CLIP_V2: LOOP(aclk_sel_f32(aclk_sel_f32(v > al, v, al) < be,
                                           aclk_sel_f32(v > al, v, al), be));
    case EMU_PO_TANH: LOOP(tanhf(v));
    case EMU_PO_LOGISTIC: LOOP(1.0f / (1.0f + aclk_exp_f32(-v)));
    case EMU_PO_EXP: LOOP(aclk_exp_f32(v));
    case EMU_PO_LOG: LOOP(logf(v));
    case EMU_PO_ABS: LOOP(fabsf(v));
    case EMU_PO_SQUARE: LOOP(v * v);
    case EMU_PO_SQRT: LOOP(sqrtf(v));
    case EMU_PO_SWISH: LOOP(v / (1.0f + aclk_exp_f32(-(al * v))));
    case EMU_PO_GELU_ERF: LOOP(0.5f * v * (1.0f + erff(v * r2)));
    case EMU_PO_GELU_TANH: LOOP(0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * (v * v * v)))));
    case EMU_PO_ELU: LOOP(v > 0.0f ? v : al * expm1f(v));
    case EMU_PO_HARDSIGMOID: LOOP(hsig_f32(v, al, be));
    case EMU_PO_HARDSWISH: LOOP(v * hsig_f32(v, al, be));
    case EMU_PO_MISH: LOOP(v * tanhf(log1pf(expf(v)))); /* expf -> inf: tanh(inf) = 1 */
    case EMU_PO_POW: LOOP(al * powf(v, be));
    case EMU_PO_ROUND: LOOP(rintf(v));
    case EMU_PO_SOFT_RELU: LOOP(soft_relu_f32(v, al));
    case EMU_PO_ADD: LOOP2(v + t);
    case EMU_PO_SUB: LOOP2(v - t);
    case EMU_PO_MUL: LOOP2(v * t);
    case EMU_PO_DIV: LOOP2(v / t);
    case EMU_PO_MAX: LOOP2(aclk_sel_f32(v > t, v, t));
    case EMU_PO_MIN: LOOP2(aclk_sel_f32(v < t, v, t));
    case EMU_PO_GE: LOOP2(aclk_sel_f32(v >= t, 1.0f, 0.0f));
    case EMU_PO_GT: LOOP2(aclk_sel_f32(v > t, 1.0f, 0.0f));
    case EMU_PO_LE: LOOP2(aclk_sel_f32(v <= t, 1.0f, 0.0f));
    case EMU_PO_LT: LOOP2(aclk_sel_f32(v < t, 1.0f, 0.0f));
    case EMU_PO_EQ: LOOP2(aclk_sel_f32(v == t, 1.0f, 0.0f));
    case EMU_PO_NE: LOOP2(aclk_sel_f32(v != t, 1.0f, 0.0f));
    case EMU_PO_DROPOUT: LOOP2(aclk_sel_f32(t != 0.0f, v * t, 0.0f));
    default: break;
    }
}
#undef LOOP
#undef LOOP2

#define LOOP(EXPR)                                  \
    for (int64_t k = 0; k < n; k++) {               \
        const double v = d[k];                      \
        d[k] = (EXPR);                              \
    }                                               \
    break
#define LOOP2(EXPR)                                 \
    for (int64_t k = 0; k < n; k++) {               \
        const double v = d[k], t = s[k];            \
        d[k] = (EXPR);                              \
    }                                               \
    break

static double soft_relu_f64(double v, double al)
{
    const double in = al * v;
    return (in < 709.0 ? log1p(exp(in)) : in) / al;
}

static double hsig_f64(double v, double al, double be)
{
    double t = al * v + be;
    t = t > 1.0 ? 1.0 : t;
    return t < 0.0 ? 0.0 : t;
}

static void post_f64(int alg, double al, double be, double *restrict d,
                     const double *restrict s, int64_t n)
{
    switch (alg) {
    case EMU_PO_RELU: LOOP(v > 0.0 ? v : al * v);
    case EMU_PO_LINEAR: LOOP(al * v + be);
    case EMU_PO_CLIP: LOOP((v > al ? v : al) > be ? be : (v > al ? v : al));
    case EMU_PO_CLIP_V2: LOOP((v > al ? v : al) < be ? (v > al ? v : al) : be);
    case EMU_PO_TANH: LOOP(tanh(v));
    case EMU_PO_LOGISTIC: LOOP(1.0 / (1.0 + exp(-v)));
    case EMU_PO_EXP: LOOP(exp(v));
    case EMU_PO_LOG: LOOP(log(v));
    case EMU_PO_ABS: LOOP(fabs(v));
    case EMU_PO_SQUARE: LOOP(v * v);
    case EMU_PO_SQRT: LOOP(sqrt(v));
    case EMU_PO_SWISH: LOOP(v / (1.0 + exp(-(al * v))));
    case EMU_PO_GELU_ERF: LOOP(0.5 * v * (1.0 + erf(v * SQRT1_2)));
    case EMU_PO_GELU_TANH:
        LOOP(0.5 * v * (1.0 + tanh(SQRT_2_OVER_PI * (v + 0.044715 * (v * v * v)))));
    case EMU_PO_ELU: LOOP(v > 0.0 ? v : al * expm1(v));
    case EMU_PO_HARDSIGMOID: LOOP(hsig_f64(v, al, be));
    case EMU_PO_HARDSWISH: LOOP(v * hsig_f64(v, al, be));
    case EMU_PO_MISH: LOOP(v * tanh(log1p(exp(v))));
    case EMU_PO_POW: LOOP(al * pow(v, be));
    case EMU_PO_ROUND: LOOP(rint(v));
    case EMU_PO_SOFT_RELU: LOOP(soft_relu_f64(v, al));
    case EMU_PO_ADD: LOOP2(v + t);
    case EMU_PO_SUB: LOOP2(v - t);
    case EMU_PO_MUL: LOOP2(v * t);
    case EMU_PO_DIV: LOOP2(v / t);
    case EMU_PO_MAX: LOOP2(v > t ? v : t);
    case EMU_PO_MIN: LOOP2(v < t ? v : t);
    case EMU_PO_GE: LOOP2(v >= t ? 1.0 : 0.0);
    case EMU_PO_GT: LOOP2(v > t ? 1.0 : 0.0);
    case EMU_PO_LE: LOOP2(v <= t ? 1.0 : 0.0);
    case EMU_PO_LT: LOOP2(v < t ? 1.0 : 0.0);
    case EMU_PO_EQ: LOOP2(v == t ? 1.0 : 0.0);
    case EMU_PO_NE: LOOP2(v != t ? 1.0 : 0.0);
    case EMU_PO_DROPOUT: LOOP2(t != 0.0 ? v * t : 0.0);
    default: break;
    }
}
#undef LOOP
#undef LOOP2

/* the binary operand of a segment (a-row a0, len elements): a pointer into src1 when it is
   contiguous, else gathered into g */
ACLK_INLINE const float *fetch_f32(const float *src1, const operand *op, int64_t a0,
                                   int64_t len, float *restrict g)
{
    const float *s = src1 + op->base + a0 * op->sd;
    if (op->table) {
        const int64_t *t = op->tab;
        for (int64_t k = 0; k < len; k++)
            g[k] = s[t[k]];
        return g;
    }
    if (op->step == 1)
        return s;
    if (op->step == 0) {
        const float v = s[0];
        for (int64_t k = 0; k < len; k++)
            g[k] = v;
        return g;
    }
    const int64_t st = op->step;
    for (int64_t k = 0; k < len; k++)
        g[k] = s[k * st];
    return g;
}

static void fetch_f64(const float *src1, const operand *op, int64_t a0, int64_t len,
                      double *restrict g)
{
    const float *s = src1 + op->base + a0 * op->sd;
    for (int64_t k = 0; k < len; k++)
        g[k] = (double)s[op->table ? op->tab[k] : k * op->step];
}

/* ------------------------------------------------------------ float32 compute ---- */

typedef struct {
    float macc[SEG], fac[SEG], xbuf[SEG], ebuf[SEG], dbuf[SEG], gbuf[SEG];
    double sacc[SEG], kacc[SEG]; /* kacc: log-softmax's count of elements at the max */
    float nacc[SEG];             /* integer sources: lane minima */
    uint32_t nz[SEG];
    int64_t tab[EMU_MAX_POST_OPS][SEG];
    operand ops[EMU_MAX_POST_OPS];
    float *eblk; /* KEEP floats of thread scratch, or NULL */
} ws_f32;

/* the rest of the output pass for one segment of len softmax values d (a-row a0, element
   offset off): scales, post-ops, conversion and store */
ACLK_INLINE void finish_f32(const ex_ctx *c, ws_f32 *ws, float *restrict d, int64_t a0,
                            int64_t off, int64_t len)
{
    const emu_softmax_ex_args *p = c->p;
    const float ss = p->src_scale, inv = 1.0f / p->dst_scale;
    if (ss != 1.0f)
        for (int64_t k = 0; k < len; k++)
            d[k] = d[k] * ss;
    for (int j = 0; j < p->n_post; j++) {
        const emu_post_op *po = &p->post[j];
        const float *s = NULL;
        if (is_binary(po->alg))
            s = fetch_f32(c->src1, &ws->ops[j], a0, len, ws->gbuf);
        post_f32(po->alg, po->alpha, po->beta, d, s, len);
    }
    if (inv != 1.0f)
        for (int64_t k = 0; k < len; k++)
            d[k] = d[k] * inv;
    for (int64_t k = 0; k < len; k++) /* every NaN one quiet NaN (softmax_common.h) */
        d[k] = qnan_f32(d[k]);
    store_f32(c->ddt, c->y, off, len, d);
}

/* One item: outer index o, columns [i0, i0 + b.w), the whole axis. A block that fits eblk keeps
   there its widened input (16-bit and 8-bit sources) and then its exps (softmax), so x is read
   from memory once; otherwise the later passes read x again and recompute the exps. */
ACLK_INLINE void item_f32(const ex_ctx *c, int64_t o, int64_t i0, blk_t b, ws_f32 *ws)
{
    const emu_softmax_ex_args *p = c->p;
    const int dt = c->sdt, lg = c->lg, iaz = c->iaz;
    const int64_t axis = c->axis, inner = c->inner;
    const void *x = c->x;
    const int64_t base = o * axis * inner + i0;
    float *macc = ws->macc, *fac = ws->fac, *xbuf = ws->xbuf, *ebuf = ws->ebuf;
    double *sacc = ws->sacc;
    uint32_t *nz = ws->nz;
    for (int j = 0; j < p->n_post; j++)
        if (is_binary(p->post[j].alg))
            make_operand(c, j, o, i0, b, ws->tab[j], &ws->ops[j]);
    const int keep = ws->eblk && axis * b.w <= KEEP;
    const int wide = keep && dt != ACLK_F32;

    /* pass 1: column max (NaNs skipped: they propagate through the sum); inf_as_zero: whether
       the column holds anything but -inf */
    for (int64_t k = 0; k < b.S; k++)
        macc[k] = -INFINITY, nz[k] = 0;
    float *nacc = ws->nacc; /* integer sources: lane minima of the item's inputs */
    if (c->etab)
        for (int64_t k = 0; k < b.S; k++)
            nacc[k] = INFINITY;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        const int64_t len = min64(b.R, axis - a0) * b.w;
        const float *px = load_f32(dt, x, base + a0 * inner, len,
                                   wide ? ws->eblk + a0 * b.w : xbuf);
        vmax_acc(macc, px, len);
        if (iaz)
            vnz_acc(nz, px, len);
        if (c->etab)
            vmin_acc(nacc, px, len);
    }
    fold_max_f(macc, b.R, b.w);
    const float *etab = NULL;
    if (c->etab) {  /* the table where some x - max may fall below the fast exp's domain */
        float hi = -INFINITY, lo = INFINITY;
        for (int64_t k = 0; k < b.w; k++)
            hi = macc[k] > hi ? macc[k] : hi;
        for (int64_t k = 0; k < b.S; k++)
            lo = nacc[k] < lo ? nacc[k] : lo;
        etab = hi - lo > -EXP_NORMAL_MIN ? c->etab : NULL;
    }
    replicate(macc, b.R, b.w, sizeof(float));
    if (iaz) {
        fold_or(nz, b.R, b.w);
        replicate(nz, b.R, b.w, sizeof(uint32_t));
    }

    /* pass 2: e = exp(x - m), column sums in float64 */
    double *kacc = ws->kacc;
    for (int64_t k = 0; k < b.S; k++)
        sacc[k] = 0.0, kacc[k] = 0.0;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        const int64_t len = min64(b.R, axis - a0) * b.w;
        float *e = keep ? ws->eblk + a0 * b.w : ebuf;
        const float *px = wide ? e : load_f32(dt, x, base + a0 * inner, len, xbuf);
        /* log-softmax needs the sums only: its exps go to ebuf, eblk keeps the widened x */
        float *eo = lg ? ebuf : e;
        exp_sub(etab, px, macc, eo, len);
        if (lg)
            vsum_rest_acc_d(sacc, kacc, eo, px, macc, len);
        else
            vsum_acc_d(sacc, eo, len);
    }
    fold_sum_d(sacc, b.R, b.w);
    if (lg) {
        fold_sum_d(kacc, b.R, b.w);
        for (int64_t j = 0; j < b.w; j++)
            fac[j] = (float)lse_of(kacc[j], sacc[j]);
    } else
        for (int64_t j = 0; j < b.w; j++)
            fac[j] = (float)(1.0 / sacc[j]);
    replicate(fac, b.R, b.w, sizeof(float));

    /* pass 3: normalise, then the rest of the output pass, segment by segment */
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        const int64_t off = base + a0 * inner, len = min64(b.R, axis - a0) * b.w;
        float *restrict d = ws->dbuf;
        if (!lg) {
            const float *e = ebuf;
            if (keep) {
                e = ws->eblk + a0 * b.w;
            } else {
                const float *px = load_f32(dt, x, off, len, xbuf);
                exp_sub(etab, px, macc, ebuf, len);
            }
            for (int64_t k = 0; k < len; k++)
                d[k] = e[k] * fac[k];
            if (iaz)
                for (int64_t k = 0; k < len; k++)
                    d[k] = aclk_sel_f32(nz[k] != 0, d[k], 0.0f);
        } else {
            const float *px = wide ? ws->eblk + a0 * b.w : load_f32(dt, x, off, len, xbuf);
            for (int64_t k = 0; k < len; k++)
                d[k] = (px[k] - macc[k]) - fac[k];
        }
        finish_f32(c, ws, d, a0, off, len);
    }
}

ACLK_LEVELS(chunk_f32, (void *ctx, int64_t t0, int64_t t1), (ctx, t0, t1))
{
    const ex_ctx *c = (const ex_ctx *)ctx;
    ws_f32 ws;
    ws.eblk = (float *)aclk_scratch(KEEP * sizeof(float));
    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / c->nblk, i0 = (t % c->nblk) * c->W;
        item_f32(c, o, i0, block_geom(c->axis, c->inner, i0, c->W), &ws);
    }
}

/* ------------------------------------------------------------ float64 compute ----
 * The same items and passes in float64 with libm's exp / log; the exps are recomputed in the
 * output pass. */

typedef struct {
    double macc[SEG], fac[SEG], xbuf[SEG], dbuf[SEG], gbuf[SEG], sacc[SEG], kacc[SEG];
    uint32_t nz[SEG];
    int64_t tab[EMU_MAX_POST_OPS][SEG];
    operand ops[EMU_MAX_POST_OPS];
} ws_f64;

static void item_f64(const ex_ctx *c, int64_t o, int64_t i0, blk_t b, ws_f64 *ws)
{
    const emu_softmax_ex_args *p = c->p;
    const int dt = c->sdt, lg = c->lg, iaz = c->iaz;
    const int64_t axis = c->axis, inner = c->inner;
    const int64_t base = o * axis * inner + i0;
    double *macc = ws->macc, *fac = ws->fac, *sacc = ws->sacc;
    uint32_t *nz = ws->nz;
    const double ss = (double)p->src_scale, inv = 1.0 / (double)p->dst_scale;
    for (int j = 0; j < p->n_post; j++)
        if (is_binary(p->post[j].alg))
            make_operand(c, j, o, i0, b, ws->tab[j], &ws->ops[j]);

    for (int64_t k = 0; k < b.S; k++)
        macc[k] = -INFINITY, nz[k] = 0, sacc[k] = 0.0;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        const int64_t len = min64(b.R, axis - a0) * b.w;
        const double *px = load_f64(dt, c->x, base + a0 * inner, len, ws->xbuf);
        for (int64_t k = 0; k < len; k++) {
            macc[k] = px[k] > macc[k] ? px[k] : macc[k];
            nz[k] |= (uint32_t)(px[k] != -INFINITY);
        }
    }
    fold_max_d(macc, b.R, b.w);
    replicate(macc, b.R, b.w, sizeof(double));
    fold_or(nz, b.R, b.w);
    replicate(nz, b.R, b.w, sizeof(uint32_t));

    double *kacc = ws->kacc;
    for (int64_t k = 0; k < b.S; k++)
        kacc[k] = 0.0;
    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        const int64_t len = min64(b.R, axis - a0) * b.w;
        const double *px = load_f64(dt, c->x, base + a0 * inner, len, ws->xbuf);
        if (lg) {  /* the max terms counted, not summed (lse_of) */
            for (int64_t k = 0; k < len; k++) {
                const int top = px[k] == macc[k];
                sacc[k] += top ? 0.0 : exp(px[k] - macc[k]);
                kacc[k] += top ? 1.0 : 0.0;
            }
        } else {
            for (int64_t k = 0; k < len; k++)
                sacc[k] += exp(px[k] - macc[k]);
        }
    }
    fold_sum_d(sacc, b.R, b.w);
    fold_sum_d(kacc, b.R, b.w);
    for (int64_t j = 0; j < b.w; j++)
        fac[j] = lg ? lse_of(kacc[j], sacc[j]) : sacc[j];
    replicate(fac, b.R, b.w, sizeof(double));

    for (int64_t a0 = 0; a0 < axis; a0 += b.R) {
        const int64_t off = base + a0 * inner, len = min64(b.R, axis - a0) * b.w;
        const double *px = load_f64(dt, c->x, off, len, ws->xbuf);
        double *restrict d = ws->dbuf;
        if (lg) {
            for (int64_t k = 0; k < len; k++)
                d[k] = (px[k] - macc[k]) - fac[k];
        } else {
            for (int64_t k = 0; k < len; k++)
                d[k] = iaz && !nz[k] ? 0.0 : exp(px[k] - macc[k]) / fac[k];
        }
        if (ss != 1.0)
            for (int64_t k = 0; k < len; k++)
                d[k] = d[k] * ss;
        for (int j = 0; j < p->n_post; j++) {
            const emu_post_op *po = &p->post[j];
            if (is_binary(po->alg))
                fetch_f64(c->src1, &ws->ops[j], a0, len, ws->gbuf);
            post_f64(po->alg, (double)po->alpha, (double)po->beta, d, ws->gbuf, len);
        }
        if (inv != 1.0)
            for (int64_t k = 0; k < len; k++)
                d[k] = d[k] * inv;
        for (int64_t k = 0; k < len; k++)
            d[k] = qnan_f64(d[k]);
        store_f64(c->ddt, c->y, off, len, d);
    }
}

static void chunk_f64(void *ctx, int64_t t0, int64_t t1)
{
    const ex_ctx *c = (const ex_ctx *)ctx;
    ws_f64 ws;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / c->nblk, i0 = (t % c->nblk) * c->W;
        item_f64(c, o, i0, block_geom(c->axis, c->inner, i0, c->W), &ws);
    }
}

/* ------------------------------------------ int8 source, int8 / uint8 destination ----
 * oneDNN's int8 softmax (src_scale, dst_scale, no post-op; `aclnn-py bench`'s int8 rows) in one
 * pass structure with item_f32's items, segments, lane accumulators, folds and formulas, so the
 * same bits, but without widening anything to float32 in memory:
 *   - pass 1 takes each lane's max and min on the int8 values (exact in any order);
 *   - j = max - x is an integer in [0, 255], so exp(x - max) is etab[j], the bits item_f32's exp
 *     gives (exp_table): a permute of the table's first entries in registers when the item's
 *     inputs span little (AVX-512: up to 31, AVX2: up to 15; benchdnn's data and the bench's
 *     span 8), else a gather; the output pass looks the exps up again instead of keeping them;
 *   - log-softmax's sum of the exps off the max is etabr[j] (entry 0 is 0: the e - e*top of
 *     vsum_rest_acc_d), its count of elements at the max (j == 0) an int32 per lane, made
 *     float64 before the fold (exact counts: the same sums);
 *   - log-softmax's lse_of per column through lse_cols (a vectorised log1p and a rounding
 *     test; libm only where the test cannot decide);
 *   - the output pass scales, rounds and saturates as quant_f32 (NaN -> 0, clamp, the 1.5*2^23
 *     add, an exact truncation) and stores the bytes; the vector loops multiply by both scales
 *     always (a scale of 1 multiplies exactly) and take log-softmax or not as a constant;
 *   - rows (inner == 1) whose exps sum exactly in any order (inputs spanning up to about 12
 *     on long rows, see "rows" below) skip the lanes: max, min and sum in registers, outputs
 *     from a per-row table of output bytes by max - x (a byte shuffle);
 *   - items of one a-row per segment over an axis of up to COLS_AXIS (dim 0 of (16, 1000,
 *     1000)) take vectors of columns with everything in registers, log-softmax's factor by a
 *     vector log1p without divides (see "short axes" below).
 * It was 1.3-4x the float32 strict kernel's time on the same shape (the scalar exp the
 * compiler made of item_f32's inlined vector exp in chunk_f32, a float32 copy of each block,
 * the output's separate scale and store loops, a libm log1p per column of a short axis); then
 * up to 1.6x on rows (512 float64 lanes set up, folded and copied per row).
 * Levels: AVX-512 and AVX2 intrinsics (target attributes, cvt_x86.h), with their tails shorter
 * than a vector in the scalar table loops (i8_*_tab, the same bits); the portable level
 * (chunk_i8_gen, built for the baseline only) looks the exps up in scalar loops on x86 and
 * computes them with the vector exp elsewhere (see i8_sums_g). inf_as_zero does nothing here (no int8 is -inf). */

typedef struct {
    int8_t mx[SEG], mn[SEG];
    float fac[SEG];
    double sacc[SEG], kacc[SEG];
    int32_t kcnt[SEG]; /* log-softmax's per-lane counts of elements at the max (kacc, exact) */
} ws_i8;

/* pass 1 and the folds: per-column max (replicated over the segment's R a-rows) in ws->mx;
   returns the largest max - min of a column (the largest j of the item) */
ACLK_INLINE int i8_stats(const ex_ctx *c, const int8_t *x, blk_t b, ws_i8 *ws)
{
    int8_t *restrict mx = ws->mx, *restrict mn = ws->mn;
    for (int64_t k = 0; k < b.S; k++)
        mx[k] = INT8_MIN, mn[k] = INT8_MAX;
    for (int64_t a0 = 0; a0 < c->axis; a0 += b.R) {
        const int8_t *restrict px = x + a0 * c->inner;
        const int64_t len = min64(b.R, c->axis - a0) * b.w;
        for (int64_t k = 0; k < len; k++) {
            mx[k] = px[k] > mx[k] ? px[k] : mx[k];
            mn[k] = px[k] < mn[k] ? px[k] : mn[k];
        }
    }
    for (int64_t R = b.R; R > 1;) {
        const int64_t h = R / 2, keep = R - h;
        const int8_t *restrict hx = mx + keep * b.w, *restrict hn = mn + keep * b.w;
        for (int64_t k = 0; k < h * b.w; k++) {
            mx[k] = hx[k] > mx[k] ? hx[k] : mx[k];
            mn[k] = hn[k] < mn[k] ? hn[k] : mn[k];
        }
        R = keep;
    }
    int span = 0;
    for (int64_t k = 0; k < b.w; k++)
        span = mx[k] - mn[k] > span ? mx[k] - mn[k] : span;
    replicate(mx, b.R, b.w, 1);
    return span;
}

/* log1p(q) for q >= 0 to about 2^-50 relative, branch-free (a loop of it vectorises): u = 1 + q
   rounded, log1p(q) = log(u) + (q - (u - 1)) / u (u - 1 is exact), log(u) = e*ln2 + log(m) for
   u = 2^e * m, m in [sqrt(1/2), sqrt(2)), log(m) = 2*atanh(z) with z = (m - 1) / (m + 1),
   |z| <= 0.1716, by its series to z^21 (the rest is below 2^-55 of it) */
ACLK_INLINE double log1p_approx(double q)
{
    const double u = 1.0 + q, cr = (q - (u - 1.0)) / u;
    const uint64_t ub = aclk_f64_bits(u);
    const uint64_t mb = (ub & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull; /* [1, 2) */
    /* the biased exponent as a double by the 2^52 trick: 64-bit lanes only, which AVX2 has */
    const double be = aclk_bits_f64((ub >> 52) | 0x4330000000000000ull) - 4503599627370496.0;
    /* m > sqrt(2) (compared as bits): halve m, one more to e; masks, not selects, which the
       AVX2 instantiation (ACLK_LEVELS) would not vectorise */
    const uint64_t big = (uint64_t)0 - (uint64_t)(mb > 0x3FF6A09E667F3BCDull);
    const double e = (be - 1023.0) + aclk_bits_f64(big & 0x3FF0000000000000ull);
    const double m = aclk_bits_f64(mb - (big & 0x0010000000000000ull));
    const double f = m - 1.0, z = f / (m + 1.0), w = z * z;
    double p = 1.0 / 21;
    p = p * w + 1.0 / 19;
    p = p * w + 1.0 / 17;
    p = p * w + 1.0 / 15;
    p = p * w + 1.0 / 13;
    p = p * w + 1.0 / 11;
    p = p * w + 1.0 / 9;
    p = p * w + 1.0 / 7;
    p = p * w + 1.0 / 5;
    p = p * w + 1.0 / 3;
    p = p * w;
    const double lm = 2.0 * z + (2.0 * z) * p;
    return (e * 0.69314718055994530942 + lm) + cr;
}

/* log-softmax's factor (float)lse_of(k, rest) for n columns (k >= 1: an int8 column always has
   an element at its max): lse_of calls libm's log and log1p, which took over half the time of an
   int8 log-softmax over a short axis (16 elements: one call per 16 outputs). Each column is
   first computed as log(k + rest) = log1p_approx((k - 1) + rest) (k - 1 exact, the add rounded
   once: within 2^-51 relative of lse_of's double over k in [1, 4096] and rest from 0 to 4096,
   rest as small as 1e-12 included, in a check against glibc's log and log1p; a second
   log1p_approx of rest / k with its divide took a third of a log-softmax over dim 0 of
   (16, 1000, 1000) before); when every value within 2^-40 of it rounds to the same float, that
   float is lse_of's too (rounding is monotonic), otherwise (about one column in 2^16) lse_of
   itself is called. */
ACLK_INLINE void lse_cols(const double *restrict k, const double *restrict rest,
                          float *restrict fac, int64_t n)
{
    double a[SEG]; /* n <= SEG. Two loops: the AVX2 instantiation vectorised neither part of one */
    for (int64_t j = 0; j < n; j++)
        a[j] = log1p_approx((k[j] - 1.0) + rest[j]);
    int any = 0;
    for (int64_t j = 0; j < n; j++) {
        const double d = a[j] * 0x1p-40;
        const float lo = (float)(a[j] - d), hi = (float)(a[j] + d);
        fac[j] = aclk_sel_f32(lo == hi, lo, NAN);
        any |= lo != hi;
    }
    if (any)
        for (int64_t j = 0; j < n; j++)
            if (fac[j] != fac[j])
                fac[j] = (float)lse_of(k[j], rest[j]);
}

/* the sums' folds and the per-column factor (1 / sum, or log-softmax's log of the sum), as
   item_f32 */
ACLK_INLINE void i8_factor(const ex_ctx *c, blk_t b, ws_i8 *ws)
{
    fold_sum_d(ws->sacc, b.R, b.w);
    if (c->lg) {
        /* integer counts: their float64 sums are exact, so the same as vsum_rest_acc_d's */
        for (int64_t k = 0; k < b.S; k++)
            ws->kacc[k] = (double)ws->kcnt[k];
        fold_sum_d(ws->kacc, b.R, b.w);
        lse_cols(ws->kacc, ws->sacc, ws->fac, b.w);
    } else
        for (int64_t j = 0; j < b.w; j++)
            ws->fac[j] = (float)(1.0 / ws->sacc[j]);
    replicate(ws->fac, b.R, b.w, sizeof(float));
}

/* the portable segment loops over [k0, n) with the exps looked up in the table: the sums
   (pass 2) and the outputs (pass 3); the vector levels' tails */
ACLK_INLINE void i8_sums_tab(const ex_ctx *c, const int8_t *restrict x,
                             const int8_t *restrict m, int64_t k0, int64_t n,
                             double *restrict s, int32_t *restrict kc)
{
    if (c->lg) {
        const float *restrict tr = c->etabr;
        for (int64_t k = k0; k < n; k++) {
            const int32_t j = m[k] - x[k];
            s[k] += (double)tr[j];
            kc[k] += j == 0;
        }
    } else {
        const float *restrict t = c->etab;
        for (int64_t k = k0; k < n; k++)
            s[k] += (double)t[m[k] - x[k]];
    }
}

/* d (a softmax or log-softmax value) scaled, rounded and saturated as finish_f32 and store_f32
   do it (a multiply by a scale of 1 is skipped there; here it is selected away) */
ACLK_INLINE uint8_t i8_quant(float d, float ss, int su, float inv, int iu, float lo, float hi)
{
    d = aclk_sel_f32(su, d * ss, d);
    d = aclk_sel_f32(iu, d * inv, d);
    return (uint8_t)quant_f32(d, lo, hi);
}

ACLK_INLINE void i8_out_tab(const ex_ctx *c, const int8_t *restrict x, const int8_t *restrict m,
                            const float *restrict fac, int64_t k0, int64_t n,
                            uint8_t *restrict y)
{
    const float ss = c->p->src_scale, inv = 1.0f / c->p->dst_scale;
    const int su = ss != 1.0f, iu = inv != 1.0f;
    const float lo = c->ddt == ACLK_U8 ? 0.0f : -128.0f, hi = c->ddt == ACLK_U8 ? 255.0f : 127.0f;
    const float *restrict t = c->etab;
    for (int64_t k = k0; k < n; k++) {
        const float d = c->lg ? (float)(x[k] - m[k]) - fac[k] : t[m[k] - x[k]] * fac[k];
        y[k] = i8_quant(d, ss, su, inv, iu, lo, hi);
    }
}

/* The portable level's segment loops. On x86 the table loops above: the portable level there
   has no FMA, so the vector exp's fmaf is a libm call per element (0.45 s for 4096 x 4096 on
   one core, against 0.05 s for the table's scalar loads). Elsewhere (aarch64: NEON with FMA)
   the exps are the vector exp of x - max (the same bits, see exp_table), computed once: pass 2
   keeps them in e (the block's place in thread scratch, or a segment buffer that pass 3
   recomputes) */
ACLK_INLINE void i8_sums_g(const ex_ctx *c, const int8_t *restrict x,
                           const int8_t *restrict m, int64_t n, double *restrict s,
                           int32_t *restrict kc, float *restrict d, float *restrict e)
{
#if defined(ACLK_X86)
    (void)d, (void)e;
    i8_sums_tab(c, x, m, 0, n, s, kc);
#else
    for (int64_t k = 0; k < n; k++)
        d[k] = (float)(x[k] - m[k]);
    aclk_vexp_sub1_f32(d, 0.0f, e, n);
    if (c->lg) {
        for (int64_t k = 0; k < n; k++) {
            s[k] += (double)aclk_sel_f32(x[k] == m[k], 0.0f, e[k]);
            kc[k] += x[k] == m[k];
        }
    } else {
        for (int64_t k = 0; k < n; k++)
            s[k] += (double)e[k];
    }
#endif
}

ACLK_INLINE void i8_out_g(const ex_ctx *c, const int8_t *restrict x, const int8_t *restrict m,
                          const float *restrict fac, int64_t n, uint8_t *restrict y,
                          float *restrict d, const float *restrict e)
{
#if defined(ACLK_X86)
    (void)d, (void)e;
    i8_out_tab(c, x, m, fac, 0, n, y);
#else
    const float ss = c->p->src_scale, inv = 1.0f / c->p->dst_scale;
    const int su = ss != 1.0f, iu = inv != 1.0f;
    const float lo = c->ddt == ACLK_U8 ? 0.0f : -128.0f, hi = c->ddt == ACLK_U8 ? 255.0f : 127.0f;
    if (c->lg) {
        for (int64_t k = 0; k < n; k++)
            y[k] = i8_quant((float)(x[k] - m[k]) - fac[k], ss, su, inv, iu, lo, hi);
    } else {
        if (!e) {
            for (int64_t k = 0; k < n; k++)
                d[k] = (float)(x[k] - m[k]);
            aclk_vexp_sub1_f32(d, 0.0f, d, n);
            e = d;
        }
        for (int64_t k = 0; k < n; k++)
            y[k] = i8_quant(e[k] * fac[k], ss, su, inv, iu, lo, hi);
    }
#endif
}

/* ----- rows (inner == 1) summed in any order
 * A row of n elements whose int8 values span s = max - min sums n exps etab[j] (log-softmax:
 * etabr[j]) with j in [0, s]. Each nonzero one is a multiple of u, the smallest unit in the last
 * place among etab[0 .. s], and at most t = max(etab[0 .. s]) (1, etab[0]), so every partial
 * sum of them, in whatever order, is a multiple of u no larger than n*t, which a float64 holds
 * exactly when n*t <= 2^53 * u: then every order of the adds gives the exact sum, the one
 * item_f32's lanes and folds give too (so do its integer counts at the max, exact in any
 * order). row_limits gives the longest such row per span: 2^18 elements at span 8 (etab[8] is
 * 3.4e-4, u = 2^-35), 4096 at 12, 256 at 15, none once a subnormal exp is in the row (about
 * s > 87). Such a row is summed in registers (AVX-512, AVX2) or a few scalar accumulators (the
 * portable level) instead of item_f32's 512 lanes, set up, folded and copied per row.
 * Its outputs depend on j alone: a table q[j] of its s + 1 output bytes, each by i8_out_tab's
 * formula with the row's factor, is made once per row and looked up (a byte shuffle at AVX-512
 * and AVX2, where s <= 15 is the table of one shuffle). */
static void row_limits(const float *t, int64_t *lim)
{
    double umin = 1.0, tmax = 0.0;
    for (int s = 0; s < EXP_TAB; s++) {
        if (t[s] > 0.0f) {
            const uint32_t e = (aclk_f32_bits(t[s]) >> 23) & 0xff; /* ulp 2^(e - 150), e > 0 */
            const double u = aclk_bits_f64((uint64_t)(e ? e - 150 + 1023 : 1023 - 149) << 52);
            umin = u < umin ? u : umin;
            tmax = t[s] > tmax ? (double)t[s] : tmax;
        }
        const double l = tmax > 0.0 ? umin * 0x1p53 / tmax : 0x1p62; /* exact: powers of 2 */
        lim[s] = l >= 0x1p62 ? INT64_MAX : (int64_t)l;
    }
}

/* the row factor from its exact sum (log-softmax: of the exps off the max) and count at the
   max: i8_factor's for one column */
ACLK_INLINE float row_factor(const ex_ctx *c, double s, int64_t cnt)
{
    if (c->lg) {
        const double k = (double)cnt;
        float f;
        lse_cols(&k, &s, &f, 1);
        return f;
    }
    return (float)(1.0 / s);
}

/* q[j] for j <= top: the output byte of an element max - j of a row with factor fac */
ACLK_INLINE void row_qtab(const ex_ctx *c, float fac, int top, uint8_t *restrict q)
{
    const float ss = c->p->src_scale, inv = 1.0f / c->p->dst_scale;
    const int su = ss != 1.0f, iu = inv != 1.0f;
    const float lo = c->ddt == ACLK_U8 ? 0.0f : -128.0f, hi = c->ddt == ACLK_U8 ? 255.0f : 127.0f;
    for (int j = 0; j <= top; j++) {
        const float d = c->lg ? (float)(-j) - fac : c->etab[j] * fac;
        q[j] = i8_quant(d, ss, su, inv, iu, lo, hi);
    }
}

/* the scalar part [k0, n) of a row's max / min, exp sum and count at the max, and output */
ACLK_INLINE void row_stats_tail(const int8_t *restrict x, int64_t k0, int64_t n, int *mx, int *mn)
{
    int a = *mx, b = *mn;
    for (int64_t k = k0; k < n; k++) {
        a = x[k] > a ? x[k] : a;
        b = x[k] < b ? x[k] : b;
    }
    *mx = a, *mn = b;
}

ACLK_INLINE double row_sum_tail(const int8_t *restrict x, int64_t k0, int64_t n, int m,
                                const float *restrict t, int64_t *cnt)
{
    double s = 0.0;
    int64_t z = 0;
    for (int64_t k = k0; k < n; k++) {
        s += (double)t[m - x[k]];
        z += x[k] == m;
    }
    *cnt += z;
    return s;
}

ACLK_INLINE void row_out_tail(const int8_t *restrict x, int64_t k0, int64_t n, int m,
                              const uint8_t *restrict q, uint8_t *restrict y)
{
    for (int64_t k = k0; k < n; k++)
        y[k] = q[m - x[k]];
}

/* the portable level's row: any span whose sum is exact (four accumulators), outputs by the
   table when the row has more elements than it has entries; 0 (nothing done) otherwise */
ACLK_INLINE int i8_row_g(const ex_ctx *c, const int8_t *restrict x, uint8_t *restrict y)
{
    const int64_t n = c->axis;
    int mx = INT8_MIN, mn = INT8_MAX;
    row_stats_tail(x, 0, n, &mx, &mn);
    const int span = mx - mn;
    if (n > c->rowlim[span] || span >= n)
        return 0;
    const float *restrict t = c->lg ? c->etabr : c->etab;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t cnt = 0, k = 0;
    for (; k + 4 <= n; k += 4) {
        s0 += (double)t[mx - x[k]];
        s1 += (double)t[mx - x[k + 1]];
        s2 += (double)t[mx - x[k + 2]];
        s3 += (double)t[mx - x[k + 3]];
        cnt += (x[k] == mx) + (x[k + 1] == mx) + (x[k + 2] == mx) + (x[k + 3] == mx);
    }
    const double s = ((s0 + s1) + (s2 + s3)) + row_sum_tail(x, k, n, mx, t, &cnt);
    uint8_t q[EXP_TAB];
    row_qtab(c, row_factor(c, s, cnt), span, q);
    row_out_tail(x, 0, n, mx, q, y);
    return 1;
}

#if defined(ACLK_X86)
/* ----- AVX-512: 16 lanes */
ACLK_AVX512_INLINE __m512i i8_j512(const int8_t *x, const int8_t *m)
{
    const __m128i xv = _mm_loadu_si128((const __m128i *)x);
    const __m128i mv = _mm_loadu_si128((const __m128i *)m);
    return _mm512_cvtepu8_epi32(_mm_sub_epi8(mv, xv)); /* m - x in [0, 255] */
}

/* t[j]: span <= 15 one permute, <= 31 a two-table permute, else a gather */
ACLK_AVX512_INLINE __m512 i8_exp512(__m512i j, int span, __m512 t0, __m512 t1, const float *t)
{
    if (span <= 15)
        return _mm512_permutexvar_ps(j, t0);
    if (span <= 31)
        return _mm512_permutex2var_ps(t0, j, t1);
    return _mm512_i32gather_ps(j, t, 4);
}

ACLK_AVX512_INLINE void i8_sums_512(const ex_ctx *c, const int8_t *x, const int8_t *m,
                                    int64_t n, int span, double *s, int32_t *kc, int lg)
{
    const float *t = lg ? c->etabr : c->etab;
    const __m512 t0 = _mm512_loadu_ps(t), t1 = _mm512_loadu_ps(t + 16);
    const __m512i one = _mm512_set1_epi32(1);
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        const __m512i j = i8_j512(x + k, m + k);
        const __m512 e = i8_exp512(j, span, t0, t1, t);
        _mm512_storeu_pd(s + k, _mm512_add_pd(_mm512_loadu_pd(s + k),
                                              _mm512_cvtps_pd(_mm512_castps512_ps256(e))));
        _mm512_storeu_pd(s + k + 8, _mm512_add_pd(_mm512_loadu_pd(s + k + 8),
                                                  _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1))));
        if (lg) {
            const __mmask16 top = _mm512_cmpeq_epi32_mask(j, _mm512_setzero_si512());
            if (top) {
                const __m512i n0 = _mm512_loadu_si512((const void *)(kc + k));
                _mm512_storeu_si512((void *)(kc + k), _mm512_mask_add_epi32(n0, top, n0, one));
            }
        }
    }
    i8_sums_tab(c, x, m, k, n, s, kc);
}

ACLK_AVX512_INLINE void i8_out_512(const ex_ctx *c, const int8_t *x, const int8_t *m,
                                   const float *fac, int64_t n, int span, uint8_t *y, int lg)
{
    const float ss = c->p->src_scale, inv = 1.0f / c->p->dst_scale;
    const __m512 vss = _mm512_set1_ps(ss), vinv = _mm512_set1_ps(inv);
    const __m512 lo = _mm512_set1_ps(c->ddt == ACLK_U8 ? 0.0f : -128.0f);
    const __m512 hi = _mm512_set1_ps(c->ddt == ACLK_U8 ? 255.0f : 127.0f);
    const __m512 rnd = _mm512_set1_ps(12582912.0f), zero = _mm512_setzero_ps();
    const float *t = c->etab;
    const __m512 t0 = _mm512_loadu_ps(t), t1 = _mm512_loadu_ps(t + 16);
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        const __m512i j = i8_j512(x + k, m + k);
        const __m512 f = _mm512_loadu_ps(fac + k);
        __m512 d = lg ? _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_setzero_si512(),
                                                                          j)), f)
                      : _mm512_mul_ps(i8_exp512(j, span, t0, t1, t), f);
        /* a scale of 1 multiplies exactly (i8_quant skips it: the same bytes) */
        d = _mm512_mul_ps(_mm512_mul_ps(d, vss), vinv);
        d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), d, zero);
        d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, lo, _CMP_LT_OQ), d, lo);
        d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, hi, _CMP_GT_OQ), d, hi);
        d = _mm512_sub_ps(_mm512_add_ps(d, rnd), rnd);
        _mm_storeu_si128((__m128i *)(y + k), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(d)));
    }
    i8_out_tab(c, x, m, fac, k, n, y);
}

/* ----- AVX2: 8 lanes */
ACLK_AVX2_INLINE __m256i i8_j256(const int8_t *x, const int8_t *m)
{
    const __m128i xv = _mm_loadl_epi64((const __m128i *)x);
    const __m128i mv = _mm_loadl_epi64((const __m128i *)m);
    return _mm256_cvtepu8_epi32(_mm_sub_epi8(mv, xv));
}

/* t[j]: span <= 7 one permute, <= 15 two and a blend on j's bit 3, else a gather */
ACLK_AVX2_INLINE __m256 i8_exp256(__m256i j, int span, __m256 t0, __m256 t1, const float *t)
{
    if (span <= 7)
        return _mm256_permutevar8x32_ps(t0, j);
    if (span <= 15)
        return _mm256_blendv_ps(_mm256_permutevar8x32_ps(t0, j), _mm256_permutevar8x32_ps(t1, j),
                                _mm256_castsi256_ps(_mm256_slli_epi32(j, 28)));
    return _mm256_i32gather_ps(t, j, 4);
}

ACLK_AVX2_INLINE void i8_sums_256(const ex_ctx *c, const int8_t *x, const int8_t *m,
                                  int64_t n, int span, double *s, int32_t *kc, int lg)
{
    const float *t = lg ? c->etabr : c->etab;
    const __m256 t0 = _mm256_loadu_ps(t), t1 = _mm256_loadu_ps(t + 8);
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256i j = i8_j256(x + k, m + k);
        const __m256 e = i8_exp256(j, span, t0, t1, t);
        _mm256_storeu_pd(s + k, _mm256_add_pd(_mm256_loadu_pd(s + k),
                                              _mm256_cvtps_pd(_mm256_castps256_ps128(e))));
        _mm256_storeu_pd(s + k + 4, _mm256_add_pd(_mm256_loadu_pd(s + k + 4),
                                                  _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1))));
        if (lg) { /* the compare's -1 where j == 0, subtracted */
            const __m256i n0 = _mm256_loadu_si256((const __m256i *)(kc + k));
            const __m256i top = _mm256_cmpeq_epi32(j, _mm256_setzero_si256());
            _mm256_storeu_si256((__m256i *)(kc + k), _mm256_sub_epi32(n0, top));
        }
    }
    i8_sums_tab(c, x, m, k, n, s, kc);
}

ACLK_AVX2_INLINE void i8_out_256(const ex_ctx *c, const int8_t *x, const int8_t *m,
                                 const float *fac, int64_t n, int span, uint8_t *y, int lg)
{
    const float ss = c->p->src_scale, inv = 1.0f / c->p->dst_scale;
    const int u8 = c->ddt == ACLK_U8;
    const __m256 vss = _mm256_set1_ps(ss), vinv = _mm256_set1_ps(inv);
    const __m256 lo = _mm256_set1_ps(u8 ? 0.0f : -128.0f);
    const __m256 hi = _mm256_set1_ps(u8 ? 255.0f : 127.0f);
    const __m256 rnd = _mm256_set1_ps(12582912.0f), zero = _mm256_setzero_ps();
    const float *t = c->etab;
    const __m256 t0 = _mm256_loadu_ps(t), t1 = _mm256_loadu_ps(t + 8);
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const __m256i j = i8_j256(x + k, m + k);
        const __m256 f = _mm256_loadu_ps(fac + k);
        __m256 d = lg ? _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_setzero_si256(),
                                                                          j)), f)
                      : _mm256_mul_ps(i8_exp256(j, span, t0, t1, t), f);
        d = _mm256_mul_ps(_mm256_mul_ps(d, vss), vinv);
        d = _mm256_blendv_ps(d, zero, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));
        d = _mm256_blendv_ps(d, lo, _mm256_cmp_ps(d, lo, _CMP_LT_OQ));
        d = _mm256_blendv_ps(d, hi, _mm256_cmp_ps(d, hi, _CMP_GT_OQ));
        d = _mm256_sub_ps(_mm256_add_ps(d, rnd), rnd);
        const __m256i q = _mm256_cvttps_epi32(d);
        const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(q),
                                          _mm256_extracti128_si256(q, 1));
        _mm_storel_epi64((__m128i *)(y + k), u8 ? _mm_packus_epi16(h, h) : _mm_packs_epi16(h, h));
    }
    i8_out_tab(c, x, m, fac, k, n, y);
}

/* ----- rows at AVX-512 and AVX2 (see "rows" above): inputs spanning up to 15 */
/* the largest of 16 int8 */
ACLK_AVX2_INLINE int hmax_epi8(__m128i a)
{
    a = _mm_max_epi8(a, _mm_srli_si128(a, 8));
    a = _mm_max_epi8(a, _mm_srli_si128(a, 4));
    a = _mm_max_epi8(a, _mm_srli_si128(a, 2));
    a = _mm_max_epi8(a, _mm_srli_si128(a, 1));
    return (int8_t)_mm_cvtsi128_si32(a);
}

/* the row's exp sum and count at the max (lg), 32 elements a step, in registers */
ACLK_AVX512_INLINE double row_sum512(const int8_t *x, int64_t n, int m, const float *t, int lg,
                                     int64_t *cnt)
{
    const __m128i vm = _mm_set1_epi8((char)m);
    const __m512 t0 = _mm512_loadu_ps(t);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    __m512d a0 = _mm512_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    __m512i kc = zero;
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        const __m512i j0 = _mm512_cvtepu8_epi32(
            _mm_sub_epi8(vm, _mm_loadu_si128((const __m128i *)(x + k))));
        const __m512i j1 = _mm512_cvtepu8_epi32(
            _mm_sub_epi8(vm, _mm_loadu_si128((const __m128i *)(x + k + 16))));
        const __m512 e0 = _mm512_permutexvar_ps(j0, t0), e1 = _mm512_permutexvar_ps(j1, t0);
        a0 = _mm512_add_pd(a0, _mm512_cvtps_pd(_mm512_castps512_ps256(e0)));
        a1 = _mm512_add_pd(a1, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e0, 1)));
        a2 = _mm512_add_pd(a2, _mm512_cvtps_pd(_mm512_castps512_ps256(e1)));
        a3 = _mm512_add_pd(a3, _mm512_cvtps_pd(_mm512_extractf32x8_ps(e1, 1)));
        if (lg) {
            kc = _mm512_mask_add_epi32(kc, _mm512_cmpeq_epi32_mask(j0, zero), kc, one);
            kc = _mm512_mask_add_epi32(kc, _mm512_cmpeq_epi32_mask(j1, zero), kc, one);
        }
    }
    *cnt = lg ? _mm512_reduce_add_epi32(kc) : 0;
    return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a0, a1), _mm512_add_pd(a2, a3))) +
           row_sum_tail(x, k, n, m, t, cnt);
}

ACLK_AVX512_INLINE int i8_row_512(const ex_ctx *c, const int8_t *x, uint8_t *y)
{
    const int64_t n = c->axis;
    const __m512i ones = _mm512_set1_epi8(-1);
    __m512i vmx = _mm512_set1_epi8(INT8_MIN), vmn = vmx; /* vmn: the max of ~x = -1 - x */
    int64_t k = 0;
    for (; k + 64 <= n; k += 64) {
        const __m512i v = _mm512_loadu_si512((const void *)(x + k));
        vmx = _mm512_max_epi8(vmx, v);
        vmn = _mm512_max_epi8(vmn, _mm512_xor_si512(v, ones));
    }
    const __m256i h = _mm256_max_epi8(_mm512_castsi512_si256(vmx),
                                      _mm512_extracti64x4_epi64(vmx, 1));
    const __m256i l = _mm256_max_epi8(_mm512_castsi512_si256(vmn),
                                      _mm512_extracti64x4_epi64(vmn, 1));
    int mx = hmax_epi8(_mm_max_epi8(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1)));
    int mn = -1 - hmax_epi8(_mm_max_epi8(_mm256_castsi256_si128(l),
                                         _mm256_extracti128_si256(l, 1)));
    row_stats_tail(x, k, n, &mx, &mn);
    const int span = mx - mn;
    if (span > 15 || n > c->rowlim[span])
        return 0;
    int64_t cnt;
    const double s = c->lg ? row_sum512(x, n, mx, c->etabr, 1, &cnt)
                           : row_sum512(x, n, mx, c->etab, 0, &cnt);
    uint8_t q[16];
    row_qtab(c, row_factor(c, s, cnt), 15, q);
    const __m512i vq = _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)q));
    const __m512i vm = _mm512_set1_epi8((char)mx);
    for (k = 0; k + 64 <= n; k += 64) {
        const __m512i j = _mm512_sub_epi8(vm, _mm512_loadu_si512((const void *)(x + k)));
        _mm512_storeu_si512((void *)(y + k), _mm512_shuffle_epi8(vq, j));
    }
    row_out_tail(x, k, n, mx, q, y);
    return 1;
}

/* AVX2: t[j] for j <= 7 one permute (two: 15, as i8_exp256) */
ACLK_AVX2_INLINE double row_sum256(const int8_t *x, int64_t n, int m, const float *t, int two,
                                   int lg, int64_t *cnt)
{
    const __m128i vm = _mm_set1_epi8((char)m);
    const __m256 t0 = _mm256_loadu_ps(t), t1 = _mm256_loadu_ps(t + 8);
    const __m256i zero = _mm256_setzero_si256();
    __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
    __m256i kc = zero;
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        const __m128i jb = _mm_sub_epi8(vm, _mm_loadu_si128((const __m128i *)(x + k)));
        const __m256i j0 = _mm256_cvtepu8_epi32(jb);
        const __m256i j1 = _mm256_cvtepu8_epi32(_mm_srli_si128(jb, 8));
        const __m256 e0 = i8_exp256(j0, two ? 15 : 7, t0, t1, t);
        const __m256 e1 = i8_exp256(j1, two ? 15 : 7, t0, t1, t);
        a0 = _mm256_add_pd(a0, _mm256_cvtps_pd(_mm256_castps256_ps128(e0)));
        a1 = _mm256_add_pd(a1, _mm256_cvtps_pd(_mm256_extractf128_ps(e0, 1)));
        a2 = _mm256_add_pd(a2, _mm256_cvtps_pd(_mm256_castps256_ps128(e1)));
        a3 = _mm256_add_pd(a3, _mm256_cvtps_pd(_mm256_extractf128_ps(e1, 1)));
        if (lg) /* the compare's -1 where j == 0, subtracted */
            kc = _mm256_sub_epi32(_mm256_sub_epi32(kc, _mm256_cmpeq_epi32(j0, zero)),
                                  _mm256_cmpeq_epi32(j1, zero));
    }
    int64_t z = 0;
    if (lg) {
        int32_t kv[8];
        _mm256_storeu_si256((__m256i *)kv, kc);
        for (int i = 0; i < 8; i++)
            z += kv[i];
    }
    *cnt = z;
    double av[4];
    _mm256_storeu_pd(av, _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    return ((av[0] + av[1]) + (av[2] + av[3])) + row_sum_tail(x, k, n, m, t, cnt);
}

ACLK_AVX2_INLINE int i8_row_256(const ex_ctx *c, const int8_t *x, uint8_t *y)
{
    const int64_t n = c->axis;
    const __m256i ones = _mm256_set1_epi8(-1);
    __m256i vmx = _mm256_set1_epi8(INT8_MIN), vmn = vmx; /* vmn: the max of ~x */
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        const __m256i v = _mm256_loadu_si256((const __m256i *)(x + k));
        vmx = _mm256_max_epi8(vmx, v);
        vmn = _mm256_max_epi8(vmn, _mm256_xor_si256(v, ones));
    }
    int mx = hmax_epi8(_mm_max_epi8(_mm256_castsi256_si128(vmx),
                                         _mm256_extracti128_si256(vmx, 1)));
    int mn = -1 - hmax_epi8(_mm_max_epi8(_mm256_castsi256_si128(vmn),
                                              _mm256_extracti128_si256(vmn, 1)));
    row_stats_tail(x, k, n, &mx, &mn);
    const int span = mx - mn;
    if (span > 15 || n > c->rowlim[span])
        return 0;
    int64_t cnt;
    const float *t = c->lg ? c->etabr : c->etab;
    const double s = span <= 7 ? (c->lg ? row_sum256(x, n, mx, t, 0, 1, &cnt)
                                        : row_sum256(x, n, mx, t, 0, 0, &cnt))
                               : (c->lg ? row_sum256(x, n, mx, t, 1, 1, &cnt)
                                        : row_sum256(x, n, mx, t, 1, 0, &cnt));
    uint8_t q[16];
    row_qtab(c, row_factor(c, s, cnt), 15, q);
    const __m256i vq = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)q));
    const __m256i vm = _mm256_set1_epi8((char)mx);
    for (k = 0; k + 32 <= n; k += 32) {
        const __m256i j = _mm256_sub_epi8(vm, _mm256_loadu_si256((const __m256i *)(x + k)));
        _mm256_storeu_si256((__m256i *)(y + k), _mm256_shuffle_epi8(vq, j));
    }
    row_out_tail(x, k, n, mx, q, y);
    return 1;
}

/* ----- short axes in column blocks (R == 1), columns in registers
 * An item of R == 1 (a block of w < inner columns, or a slab whose segment is one a-row) walks
 * each column over the axis in order, one float64 accumulator per column: a column's sum is the
 * same whether its 16 (AVX2: 8) neighbours share a vector of accumulators in memory or in
 * registers. On a short axis (16 in the bench's (16, 1000, 1000) over dim 0) the segment loops
 * above pay a load and a store of every accumulator per element and three loops over 512
 * columns; here a vector of columns takes its max, exps and sums, factor and outputs with the
 * axis's rows (one vector load each, from L1 after the first pass) in registers. The lookup
 * (permute, two, gather) is chosen per vector of columns by its own span, the factor is
 * i8_factor's (lse_cols' rounding test on log1p512 / log1p256, below), the outputs
 * i8_out_512's / i8_out_256's: the same bits. Columns of the block past the last full vector
 * take the segment loops. */
#define COLS_AXIS 128 /* the longest axis taken this way: the pass re-reads 128 lines from L1 */

/* the span of 16 columns' max and min bytes (max - min, unsigned) */
ACLK_AVX2_INLINE int span_epi8(__m128i mx, __m128i mn)
{
    __m128i d = _mm_sub_epi8(mx, mn);
    d = _mm_max_epu8(d, _mm_srli_si128(d, 8));
    d = _mm_max_epu8(d, _mm_srli_si128(d, 4));
    d = _mm_max_epu8(d, _mm_srli_si128(d, 2));
    d = _mm_max_epu8(d, _mm_srli_si128(d, 1));
    return _mm_cvtsi128_si32(d) & 0xff;
}

/* i8_out_512's scale, saturation and rounding of 16 values, as bytes */
ACLK_AVX512_INLINE __m128i quant512(__m512 d, __m512 vss, __m512 vinv, __m512 lo, __m512 hi)
{
    const __m512 rnd = _mm512_set1_ps(12582912.0f), zero = _mm512_setzero_ps();
    d = _mm512_mul_ps(_mm512_mul_ps(d, vss), vinv);
    d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q), d, zero);
    d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, lo, _CMP_LT_OQ), d, lo);
    d = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(d, hi, _CMP_GT_OQ), d, hi);
    d = _mm512_sub_ps(_mm512_add_ps(d, rnd), rnd);
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(d));
}

/* log1p_approx of 8 lanes without its two divides: 1 / u and 1 / (m + 1) by rcp14 and two
   Newton steps (about 2^-51 relative: rcp14's 2^-14 squared twice, and the roundings), the
   series to z^17 (the rest below 2^-50 of it): within 2^-48 relative of lse_of's double over
   the columns of the short-axis path (a check against glibc's log and log1p), well inside
   lse_cols' 2^-40 rounding test, so the same floats */
ACLK_AVX512_INLINE __m512d recip512(__m512d v)
{
    const __m512d two = _mm512_set1_pd(2.0);
    __m512d r = _mm512_rcp14_pd(v);
    r = _mm512_mul_pd(r, _mm512_sub_pd(two, _mm512_mul_pd(v, r)));
    return _mm512_mul_pd(r, _mm512_sub_pd(two, _mm512_mul_pd(v, r)));
}

ACLK_AVX512_INLINE __m512d log1p512(__m512d q)
{
    const __m512d one = _mm512_set1_pd(1.0);
    const __m512d u = _mm512_add_pd(one, q);
    const __m512d cr = _mm512_mul_pd(_mm512_sub_pd(q, _mm512_sub_pd(u, one)), recip512(u));
    const __m512i ub = _mm512_castpd_si512(u);
    const __m512i mb = _mm512_or_si512(
        _mm512_and_si512(ub, _mm512_set1_epi64(0x000FFFFFFFFFFFFFll)),
        _mm512_set1_epi64(0x3FF0000000000000ll)); /* [1, 2) */
    const __mmask8 big = _mm512_cmpgt_epu64_mask(mb, _mm512_set1_epi64(0x3FF6A09E667F3BCDll));
    const __m512d be = _mm512_cvtepi64_pd(_mm512_srli_epi64(ub, 52)); /* exact */
    const __m512d e = _mm512_mask_add_pd(_mm512_sub_pd(be, _mm512_set1_pd(1023.0)), big,
                                         _mm512_sub_pd(be, _mm512_set1_pd(1023.0)), one);
    const __m512d m = _mm512_castsi512_pd(
        _mm512_mask_sub_epi64(mb, big, mb, _mm512_set1_epi64(0x0010000000000000ll)));
    const __m512d f = _mm512_sub_pd(m, one);
    const __m512d z = _mm512_mul_pd(f, recip512(_mm512_add_pd(m, one)));
    const __m512d w = _mm512_mul_pd(z, z);
    /* the series by Estrin's scheme (a shorter dependency chain than Horner's) */
    const __m512d w2 = _mm512_mul_pd(w, w), w4 = _mm512_mul_pd(w2, w2);
#define EST2(A, B) _mm512_add_pd(_mm512_set1_pd(A), _mm512_mul_pd(_mm512_set1_pd(B), w))
    const __m512d b0 = _mm512_add_pd(EST2(1.0 / 3, 1.0 / 5),
                                     _mm512_mul_pd(EST2(1.0 / 7, 1.0 / 9), w2));
    const __m512d b1 = _mm512_add_pd(EST2(1.0 / 11, 1.0 / 13),
                                     _mm512_mul_pd(EST2(1.0 / 15, 1.0 / 17), w2));
#undef EST2
    const __m512d p = _mm512_mul_pd(_mm512_add_pd(b0, _mm512_mul_pd(b1, w4)), w);
    const __m512d z2 = _mm512_add_pd(z, z);
    const __m512d lm = _mm512_add_pd(z2, _mm512_mul_pd(z2, p));
    return _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(e, _mm512_set1_pd(0.69314718055994530942)),
                                       lm), cr);
}

/* lse_cols of 8 columns from their counts and sums: the float of log1p512((k - 1) + rest) when
   the 2^-40 test decides it, else lse_of's */
ACLK_AVX512_INLINE __m256 lse8_512(__m512d k, __m512d rest)
{
    const __m512d a = log1p512(_mm512_add_pd(_mm512_sub_pd(k, _mm512_set1_pd(1.0)), rest));
    const __m512d d = _mm512_mul_pd(a, _mm512_set1_pd(0x1p-40));
    const __m256 lo = _mm512_cvtpd_ps(_mm512_sub_pd(a, d));
    const __m256 hi = _mm512_cvtpd_ps(_mm512_add_pd(a, d));
    const __mmask8 bad = _mm256_cmp_ps_mask(lo, hi, _CMP_NEQ_UQ);
    if (!bad)
        return lo;
    float f[8];
    double kv[8], rv[8];
    _mm256_storeu_ps(f, lo);
    _mm512_storeu_pd(kv, k);
    _mm512_storeu_pd(rv, rest);
    for (int j = 0; j < 8; j++)
        if (bad >> j & 1)
            f[j] = (float)lse_of(kv[j], rv[j]);
    return _mm256_loadu_ps(f);
}

/* NV vectors of 16 columns at x (row stride ld) over n rows to y, vm their maxima; span bounds
   their span (a constant: the lookup of i8_exp512). NV = 4 (a cache line of each row) gives the
   factors' dependency chains (log1p512: about 150 cycles) four vectors of work each */
#define I8_UNROLL _Pragma("GCC unroll 4")
ACLK_AVX512_INLINE void cols_512(const ex_ctx *c, const int8_t *x, int64_t ld, int64_t n,
                                 const __m128i *vm, int nv, int span, uint8_t *y, int lg)
{
    const float *t = lg ? c->etabr : c->etab;
    const __m512 t0 = _mm512_loadu_ps(t), t1 = _mm512_loadu_ps(t + 16);
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    __m512d s0[4], s1[4];
    __m512i kc[4];
    __m512 f[4];
    I8_UNROLL
    for (int v = 0; v < nv; v++)
        s0[v] = s1[v] = _mm512_setzero_pd(), kc[v] = zero;
    for (int64_t a = 0; a < n; a++) {
        I8_UNROLL
        for (int v = 0; v < nv; v++) {
            const __m128i xv = _mm_loadu_si128((const __m128i *)(x + a * ld + 16 * v));
            const __m512i j = _mm512_cvtepu8_epi32(_mm_sub_epi8(vm[v], xv));
            const __m512 e = i8_exp512(j, span, t0, t1, t);
            s0[v] = _mm512_add_pd(s0[v], _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
            s1[v] = _mm512_add_pd(s1[v], _mm512_cvtps_pd(_mm512_extractf32x8_ps(e, 1)));
            if (lg)
                kc[v] = _mm512_mask_add_epi32(kc[v], _mm512_cmpeq_epi32_mask(j, zero), kc[v],
                                              one);
        }
    }
    I8_UNROLL
    for (int v = 0; v < nv; v++) {
        if (lg)
            f[v] = _mm512_insertf32x8(
                _mm512_castps256_ps512(
                    lse8_512(_mm512_cvtepi32_pd(_mm512_castsi512_si256(kc[v])), s0[v])),
                lse8_512(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(kc[v], 1)), s1[v]), 1);
        else {
            const __m512d one_d = _mm512_set1_pd(1.0);
            f[v] = _mm512_insertf32x8(
                _mm512_castps256_ps512(_mm512_cvtpd_ps(_mm512_div_pd(one_d, s0[v]))),
                _mm512_cvtpd_ps(_mm512_div_pd(one_d, s1[v])), 1);
        }
    }
    const __m512 vss = _mm512_set1_ps(c->p->src_scale);
    const __m512 vinv = _mm512_set1_ps(1.0f / c->p->dst_scale);
    const __m512 lo = _mm512_set1_ps(c->ddt == ACLK_U8 ? 0.0f : -128.0f);
    const __m512 hi = _mm512_set1_ps(c->ddt == ACLK_U8 ? 255.0f : 127.0f);
    const float *te = c->etab;
    const __m512 e0 = _mm512_loadu_ps(te), e1 = _mm512_loadu_ps(te + 16);
    for (int64_t a = 0; a < n; a++) {
        I8_UNROLL
        for (int v = 0; v < nv; v++) {
            const __m128i xv = _mm_loadu_si128((const __m128i *)(x + a * ld + 16 * v));
            const __m512i j = _mm512_cvtepu8_epi32(_mm_sub_epi8(vm[v], xv));
            const __m512 d = lg ? _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(zero, j)),
                                                f[v])
                                : _mm512_mul_ps(i8_exp512(j, span, e0, e1, te), f[v]);
            _mm_storeu_si128((__m128i *)(y + a * ld + 16 * v), quant512(d, vss, vinv, lo, hi));
        }
    }
}

/* COLS with the lookup by the span and log-softmax or not as constants */
#define I8_COLS_SPANS(COLS, NV, S1, S2)                                                       \
    do {                                                                                      \
        if (c->lg) {                                                                          \
            if (span <= S1)                                                                   \
                COLS(c, x + k, ld, n, vm, NV, S1, y + k, 1);                                  \
            else if (span <= S2)                                                              \
                COLS(c, x + k, ld, n, vm, NV, S2, y + k, 1);                                  \
            else                                                                              \
                COLS(c, x + k, ld, n, vm, NV, 255, y + k, 1);                                 \
        } else {                                                                              \
            if (span <= S1)                                                                   \
                COLS(c, x + k, ld, n, vm, NV, S1, y + k, 0);                                  \
            else if (span <= S2)                                                              \
                COLS(c, x + k, ld, n, vm, NV, S2, y + k, 0);                                  \
            else                                                                              \
                COLS(c, x + k, ld, n, vm, NV, 255, y + k, 0);                                 \
        }                                                                                     \
    } while (0)

/* the maxima (vm) and minima of nv vectors of vb (16 or 8) columns over n rows; their span */
ACLK_AVX2_INLINE int cols_stats(const int8_t *x, int64_t ld, int64_t n, int nv, int vb,
                                __m128i *vm)
{
    __m128i mn[4];
    I8_UNROLL
    for (int v = 0; v < nv; v++)
        vm[v] = mn[v] = vb == 16 ? _mm_loadu_si128((const __m128i *)(x + vb * v))
                                 : _mm_loadl_epi64((const __m128i *)(x + vb * v));
    for (int64_t a = 1; a < n; a++) {
        I8_UNROLL
        for (int v = 0; v < nv; v++) {
            const __m128i xv = vb == 16
                                   ? _mm_loadu_si128((const __m128i *)(x + a * ld + vb * v))
                                   : _mm_loadl_epi64((const __m128i *)(x + a * ld + vb * v));
            vm[v] = _mm_max_epi8(vm[v], xv);
            mn[v] = _mm_min_epi8(mn[v], xv);
        }
    }
    int span = 0;
    I8_UNROLL
    for (int v = 0; v < nv; v++) {
        const int sv = span_epi8(vm[v], mn[v]); /* AVX2's upper 8 bytes: 0 - 0 */
        span = sv > span ? sv : span;
    }
    return span;
}

/* the columns [0, w) of a block at x / y in vectors of 64, then 16; returns the columns done */
ACLK_AVX512_INLINE int64_t i8_cols_512(const ex_ctx *c, const int8_t *x, uint8_t *y, int64_t w)
{
    const int64_t n = c->axis, ld = c->inner;
    __m128i vm[4];
    int64_t k = 0;
    for (; k + 64 <= w; k += 64) {
        const int span = cols_stats(x + k, ld, n, 4, 16, vm);
        I8_COLS_SPANS(cols_512, 4, 15, 31);
    }
    for (; k + 16 <= w; k += 16) {
        const int span = cols_stats(x + k, ld, n, 1, 16, vm);
        I8_COLS_SPANS(cols_512, 1, 15, 31);
    }
    return k;
}

/* AVX2: i8_out_256's scale, saturation and rounding of 8 values, as 8 bytes */
ACLK_AVX2_INLINE __m128i quant256(__m256 d, __m256 vss, __m256 vinv, __m256 lo, __m256 hi,
                                  int u8)
{
    const __m256 rnd = _mm256_set1_ps(12582912.0f), zero = _mm256_setzero_ps();
    d = _mm256_mul_ps(_mm256_mul_ps(d, vss), vinv);
    d = _mm256_blendv_ps(d, zero, _mm256_cmp_ps(d, d, _CMP_UNORD_Q));
    d = _mm256_blendv_ps(d, lo, _mm256_cmp_ps(d, lo, _CMP_LT_OQ));
    d = _mm256_blendv_ps(d, hi, _mm256_cmp_ps(d, hi, _CMP_GT_OQ));
    d = _mm256_sub_ps(_mm256_add_ps(d, rnd), rnd);
    const __m256i q = _mm256_cvttps_epi32(d);
    const __m128i h = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
    return u8 ? _mm_packus_epi16(h, h) : _mm_packs_epi16(h, h);
}

/* AVX2: log1p512 on 4 lanes; the reciprocals from a float divide (2^-24) and two Newton steps */
ACLK_AVX2_INLINE __m256d recip256(__m256d v)
{
    const __m256d two = _mm256_set1_pd(2.0);
    __m256d r = _mm256_cvtps_pd(_mm_div_ps(_mm_set1_ps(1.0f), _mm256_cvtpd_ps(v)));
    r = _mm256_mul_pd(r, _mm256_sub_pd(two, _mm256_mul_pd(v, r)));
    return _mm256_mul_pd(r, _mm256_sub_pd(two, _mm256_mul_pd(v, r)));
}

ACLK_AVX2_INLINE __m256d log1p256(__m256d q)
{
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d u = _mm256_add_pd(one, q);
    const __m256d cr = _mm256_mul_pd(_mm256_sub_pd(q, _mm256_sub_pd(u, one)), recip256(u));
    const __m256i ub = _mm256_castpd_si256(u);
    const __m256i mb = _mm256_or_si256(
        _mm256_and_si256(ub, _mm256_set1_epi64x(0x000FFFFFFFFFFFFFll)),
        _mm256_set1_epi64x(0x3FF0000000000000ll)); /* [1, 2) */
    /* the biased exponent by the 2^52 trick (exact) */
    const __m256d be = _mm256_sub_pd(
        _mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(ub, 52),
                                            _mm256_set1_epi64x(0x4330000000000000ll))),
        _mm256_set1_pd(4503599627370496.0));
    const __m256i big = _mm256_cmpgt_epi64(mb, _mm256_set1_epi64x(0x3FF6A09E667F3BCDll));
    const __m256d e = _mm256_add_pd(_mm256_sub_pd(be, _mm256_set1_pd(1023.0)),
                                    _mm256_and_pd(_mm256_castsi256_pd(big), one));
    const __m256d m = _mm256_castsi256_pd(
        _mm256_sub_epi64(mb, _mm256_and_si256(big, _mm256_set1_epi64x(0x0010000000000000ll))));
    const __m256d z = _mm256_mul_pd(_mm256_sub_pd(m, one), recip256(_mm256_add_pd(m, one)));
    const __m256d w = _mm256_mul_pd(z, z);
    /* the series by Estrin's scheme (a shorter dependency chain than Horner's) */
    const __m256d w2 = _mm256_mul_pd(w, w), w4 = _mm256_mul_pd(w2, w2);
#define EST2(A, B) _mm256_add_pd(_mm256_set1_pd(A), _mm256_mul_pd(_mm256_set1_pd(B), w))
    const __m256d b0 = _mm256_add_pd(EST2(1.0 / 3, 1.0 / 5),
                                     _mm256_mul_pd(EST2(1.0 / 7, 1.0 / 9), w2));
    const __m256d b1 = _mm256_add_pd(EST2(1.0 / 11, 1.0 / 13),
                                     _mm256_mul_pd(EST2(1.0 / 15, 1.0 / 17), w2));
#undef EST2
    const __m256d p = _mm256_mul_pd(_mm256_add_pd(b0, _mm256_mul_pd(b1, w4)), w);
    const __m256d z2 = _mm256_add_pd(z, z);
    const __m256d lm = _mm256_add_pd(z2, _mm256_mul_pd(z2, p));
    return _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(e, _mm256_set1_pd(0.69314718055994530942)),
                                       lm), cr);
}

/* lse8_512 for 4 columns */
ACLK_AVX2_INLINE __m128 lse4_256(__m256d k, __m256d rest)
{
    const __m256d a = log1p256(_mm256_add_pd(_mm256_sub_pd(k, _mm256_set1_pd(1.0)), rest));
    const __m256d d = _mm256_mul_pd(a, _mm256_set1_pd(0x1p-40));
    const __m128 lo = _mm256_cvtpd_ps(_mm256_sub_pd(a, d));
    const __m128 hi = _mm256_cvtpd_ps(_mm256_add_pd(a, d));
    const int bad = _mm_movemask_ps(_mm_cmp_ps(lo, hi, _CMP_NEQ_UQ));
    if (!bad)
        return lo;
    float f[4];
    double kv[4], rv[4];
    _mm_storeu_ps(f, lo);
    _mm256_storeu_pd(kv, k);
    _mm256_storeu_pd(rv, rest);
    for (int j = 0; j < 4; j++)
        if (bad >> j & 1)
            f[j] = (float)lse_of(kv[j], rv[j]);
    return _mm_loadu_ps(f);
}

/* cols_512 at AVX2: nv (2 or 1: 16 registers) vectors of 8 columns */
ACLK_AVX2_INLINE void cols_256(const ex_ctx *c, const int8_t *x, int64_t ld, int64_t n,
                               const __m128i *vm, int nv, int span, uint8_t *y, int lg)
{
    const float *t = lg ? c->etabr : c->etab;
    const __m256 t0 = _mm256_loadu_ps(t), t1 = _mm256_loadu_ps(t + 8);
    const __m256i zero = _mm256_setzero_si256();
    __m256d s0[2], s1[2];
    __m256i kc[2];
    __m256 f[2];
    I8_UNROLL
    for (int v = 0; v < nv; v++)
        s0[v] = s1[v] = _mm256_setzero_pd(), kc[v] = zero;
    for (int64_t a = 0; a < n; a++) {
        I8_UNROLL
        for (int v = 0; v < nv; v++) {
            const __m128i xv = _mm_loadl_epi64((const __m128i *)(x + a * ld + 8 * v));
            const __m256i j = _mm256_cvtepu8_epi32(_mm_sub_epi8(vm[v], xv));
            const __m256 e = i8_exp256(j, span, t0, t1, t);
            s0[v] = _mm256_add_pd(s0[v], _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
            s1[v] = _mm256_add_pd(s1[v], _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
            if (lg) /* the compare's -1 where j == 0, subtracted */
                kc[v] = _mm256_sub_epi32(kc[v], _mm256_cmpeq_epi32(j, zero));
        }
    }
    I8_UNROLL
    for (int v = 0; v < nv; v++) {
        if (lg)
            f[v] = _mm256_insertf128_ps(
                _mm256_castps128_ps256(
                    lse4_256(_mm256_cvtepi32_pd(_mm256_castsi256_si128(kc[v])), s0[v])),
                lse4_256(_mm256_cvtepi32_pd(_mm256_extracti128_si256(kc[v], 1)), s1[v]), 1);
        else {
            const __m256d one_d = _mm256_set1_pd(1.0);
            f[v] = _mm256_insertf128_ps(
                _mm256_castps128_ps256(_mm256_cvtpd_ps(_mm256_div_pd(one_d, s0[v]))),
                _mm256_cvtpd_ps(_mm256_div_pd(one_d, s1[v])), 1);
        }
    }
    const int u8 = c->ddt == ACLK_U8;
    const __m256 vss = _mm256_set1_ps(c->p->src_scale);
    const __m256 vinv = _mm256_set1_ps(1.0f / c->p->dst_scale);
    const __m256 lo = _mm256_set1_ps(u8 ? 0.0f : -128.0f);
    const __m256 hi = _mm256_set1_ps(u8 ? 255.0f : 127.0f);
    const float *te = c->etab;
    const __m256 e0 = _mm256_loadu_ps(te), e1 = _mm256_loadu_ps(te + 8);
    for (int64_t a = 0; a < n; a++) {
        I8_UNROLL
        for (int v = 0; v < nv; v++) {
            const __m128i xv = _mm_loadl_epi64((const __m128i *)(x + a * ld + 8 * v));
            const __m256i j = _mm256_cvtepu8_epi32(_mm_sub_epi8(vm[v], xv));
            const __m256 d = lg ? _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(zero, j)),
                                                f[v])
                                : _mm256_mul_ps(i8_exp256(j, span, e0, e1, te), f[v]);
            _mm_storel_epi64((__m128i *)(y + a * ld + 8 * v),
                             quant256(d, vss, vinv, lo, hi, u8));
        }
    }
}

/* the columns [0, w) of a block in vectors of 16, then 8; returns the columns done */
ACLK_AVX2_INLINE int64_t i8_cols_256(const ex_ctx *c, const int8_t *x, uint8_t *y, int64_t w)
{
    const int64_t n = c->axis, ld = c->inner;
    __m128i vm[4];
    int64_t k = 0;
    for (; k + 16 <= w; k += 16) {
        const int span = cols_stats(x + k, ld, n, 2, 8, vm);
        I8_COLS_SPANS(cols_256, 2, 7, 15);
    }
    for (; k + 8 <= w; k += 8) {
        const int span = cols_stats(x + k, ld, n, 1, 8, vm);
        I8_COLS_SPANS(cols_256, 1, 7, 15);
    }
    return k;
}
#endif

/* the chunk of items at one level: SUMS / OUT are its vector segment loops */
#define I8_CHUNK(NAME, ATTR, ROW, COLS, SUMS, OUT)                                            \
    ATTR static void NAME(void *ctx, int64_t t0, int64_t t1)                                  \
    {                                                                                         \
        const ex_ctx *c = (const ex_ctx *)ctx;                                                \
        const int8_t *x = (const int8_t *)c->x;                                               \
        uint8_t *y = (uint8_t *)c->y;                                                         \
        ws_i8 ws;                                                                             \
        for (int64_t t = t0; t < t1; t++) {                                                   \
            const int64_t o = t / c->nblk, i0 = (t % c->nblk) * c->W;                         \
            blk_t b = block_geom(c->axis, c->inner, i0, c->W);                                \
            int64_t base = o * c->axis * c->inner + i0;                                       \
            if (c->inner == 1 && ROW(c, x + base, y + base))                                  \
                continue;                                                                     \
            if (b.R == 1 && c->axis <= COLS_AXIS) { /* the rest: the columns past them */     \
                const int64_t done = COLS(c, x + base, y + base, b.w);                        \
                if (done == b.w)                                                              \
                    continue;                                                                 \
                base += done;                                                                 \
                b.w -= done;                                                                  \
                b.S = b.w;                                                                    \
            }                                                                                 \
            const int span = i8_stats(c, x + base, b, &ws);                                   \
            for (int64_t k = 0; k < b.S; k++)                                                 \
                ws.sacc[k] = 0.0, ws.kcnt[k] = 0;                                             \
            for (int64_t a0 = 0; a0 < c->axis; a0 += b.R) {                                   \
                const int8_t *xs = x + base + a0 * c->inner;                                  \
                const int64_t len = min64(b.R, c->axis - a0) * b.w;                           \
                if (c->lg) /* log-softmax or not as a constant in each copy of the loop */    \
                    SUMS(c, xs, ws.mx, len, span, ws.sacc, ws.kcnt, 1);                       \
                else                                                                          \
                    SUMS(c, xs, ws.mx, len, span, ws.sacc, ws.kcnt, 0);                       \
            }                                                                                 \
            i8_factor(c, b, &ws);                                                             \
            for (int64_t a0 = 0; a0 < c->axis; a0 += b.R) {                                   \
                const int64_t off = base + a0 * c->inner;                                     \
                const int64_t len = min64(b.R, c->axis - a0) * b.w;                           \
                if (c->lg)                                                                    \
                    OUT(c, x + off, ws.mx, ws.fac, len, span, y + off, 1);                    \
                else                                                                          \
                    OUT(c, x + off, ws.mx, ws.fac, len, span, y + off, 0);                    \
            }                                                                                 \
        }                                                                                     \
    }

#if defined(ACLK_X86)
I8_CHUNK(chunk_i8_avx2, ACLK_TARGET_AVX2, i8_row_256, i8_cols_256, i8_sums_256, i8_out_256)
I8_CHUNK(chunk_i8_avx512, ACLK_TARGET_AVX512, i8_row_512, i8_cols_512, i8_sums_512,
         i8_out_512)
#endif
#undef I8_CHUNK

/* the portable level: as above, with the exps of a block kept in thread scratch between passes
   2 and 3 (softmax): up to KEEP elements, or a whole slab (inner <= SEG, which cannot be
   narrowed) of up to KEEP_SLAB, as softmax.c's float32 kernel keeps them */
#define KEEP_SLAB 262144
static void chunk_i8_gen(void *ctx, int64_t t0, int64_t t1) /* generic level only (i8_chunk) */
{
    const ex_ctx *c = (const ex_ctx *)ctx;
    const int8_t *x = (const int8_t *)c->x;
    uint8_t *y = (uint8_t *)c->y;
    ws_i8 ws;
    float dbuf[SEG], ebuf[SEG];
    const int64_t need = c->axis * c->W;
    const int64_t cap = c->inner <= SEG && need > KEEP && need <= KEEP_SLAB ? need : KEEP;
    float *eblk = c->lg ? NULL : (float *)aclk_scratch((size_t)cap * sizeof(float));
    for (int64_t t = t0; t < t1; t++) {
        const int64_t o = t / c->nblk, i0 = (t % c->nblk) * c->W;
        const blk_t b = block_geom(c->axis, c->inner, i0, c->W);
        const int64_t base = o * c->axis * c->inner + i0;
        if (c->inner == 1 && i8_row_g(c, x + base, y + base))
            continue;
        const int keep = eblk && c->axis * b.w <= cap;
        i8_stats(c, x + base, b, &ws);
        for (int64_t k = 0; k < b.S; k++)
            ws.sacc[k] = 0.0, ws.kcnt[k] = 0;
        for (int64_t a0 = 0; a0 < c->axis; a0 += b.R)
            i8_sums_g(c, x + base + a0 * c->inner, ws.mx, min64(b.R, c->axis - a0) * b.w,
                      ws.sacc, ws.kcnt, dbuf, keep ? eblk + a0 * b.w : ebuf);
        i8_factor(c, b, &ws);
        for (int64_t a0 = 0; a0 < c->axis; a0 += b.R) {
            const int64_t off = base + a0 * c->inner;
            i8_out_g(c, x + off, ws.mx, ws.fac, min64(b.R, c->axis - a0) * b.w, y + off, dbuf,
                     keep ? eblk + a0 * b.w : NULL);
        }
    }
}


static aclk_range_fn i8_chunk(void)
{
#if defined(ACLK_X86)
    const int level = aclk_isa_level();
    if (level >= ACLK_ISA_AVX512)
        return chunk_i8_avx512;
    if (level >= ACLK_ISA_AVX2)
        return chunk_i8_avx2;
#endif
    return chunk_i8_gen;
}

/* ------------------------------------------------------------------ entry point ---- */

/* the binary post-ops' broadcast needs dst's shape to agree with outer x axis x inner */
static int shape_ok(const emu_softmax_ex_args *p)
{
    if (p->ndim == 0)
        return p->outer == 1 && p->axis == 1 && p->inner == 1;
    if (p->dim < 0 || p->dim >= p->ndim)
        return 0;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < p->ndim; k++) {
        if (p->shape[k] < 0)
            return 0;
        if (k < p->dim)
            outer *= p->shape[k];
        else if (k > p->dim)
            inner *= p->shape[k];
    }
    return outer == p->outer && p->shape[p->dim] == p->axis && inner == p->inner;
}

int aclk_softmax_ex(const emu_softmax_ex_args *p, int src_dtype, const void *x,
                    const float *src1, int dst_dtype, void *y)
{
    if (!p || !ex_dtype_ok(src_dtype) || !ex_dtype_ok(dst_dtype))
        return -1;
    if (p->n_post < 0 || p->n_post > EMU_MAX_POST_OPS || p->ndim < 0 || p->ndim > 8)
        return -1;
    if (p->outer < 0 || p->axis < 0 || p->inner < 0)
        return -1;
    int binary = 0;
    for (int j = 0; j < p->n_post; j++) {
        if (!alg_ok(p->post[j].alg))
            return -1;
        binary |= is_binary(p->post[j].alg);
    }
    if (p->outer == 0 || p->axis == 0 || p->inner == 0)
        return 0;
    if (binary && (!src1 || !shape_ok(p)))
        return -1;
    ex_ctx c;
    float etab[EXP_TAB];
    c.etab = NULL;
    if (src_dtype == ACLK_I8 || src_dtype == ACLK_U8) {
        exp_table(etab);
        c.etab = etab;
    }
    c.p = p;
    c.sdt = src_dtype;
    c.ddt = dst_dtype;
    c.lg = p->log != 0;
    c.iaz = p->inf_as_zero && !p->log;
    c.x = x;
    c.src1 = src1;
    c.y = y;
    c.outer = p->outer;
    c.axis = p->axis;
    c.inner = p->inner;
    c.W = blk_width(p->axis, p->inner);
    c.nblk = (p->inner + c.W - 1) / c.W;
    const int64_t n = c.outer * c.nblk;
    const int64_t grain = grain_for(n, c.axis * min64(c.inner, c.W));
    if (src_dtype == ACLK_I8 && (dst_dtype == ACLK_I8 || dst_dtype == ACLK_U8) && !binary &&
        p->n_post == 0) {
        float etabr[EXP_TAB];
        memcpy(etabr, etab, sizeof etabr);
        etabr[0] = 0.0f;
        c.etabr = etabr;
        int64_t rowlim[EXP_TAB];
        row_limits(etab, rowlim);
        c.rowlim = rowlim;
        aclk_parallel_for(n, grain, i8_chunk(), &c);
        return 0;
    }
    c.etabr = NULL;
    c.rowlim = NULL;
    if (src_dtype == ACLK_F64 || dst_dtype == ACLK_F64)
        aclk_parallel_for(n, grain, chunk_f64, &c);
    else
        aclk_parallel_for(n, grain, chunk_f32, &c);
    return 0;
}
