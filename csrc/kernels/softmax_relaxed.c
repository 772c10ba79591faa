/*
 * softmax_relaxed.c: the softmax family's relaxed-accumulation kernels for float16 / bfloat16
 * (oneDNN's accumulation mode "relaxed" / "any"; contract in aclnn_emu.h): every output within
 * 2 ulp of its dtype of the float64 result, the backward operators within 2^-10 of the largest
 * |term| of the output's slice.
 *
 * Against the strict kernels (softmax.c), which give the same bits at every ISA level, these
 * compute in float32 with cheaper arithmetic at each level's own vector width, so their bits
 * differ between levels (never between thread counts):
 *   - exp: one-constant range reduction d = n*ln2 + r (n = round(d/ln2), r by one fused
 *     multiply-add at the vector levels; the ln2 constant's own error is below 2^-28 of the
 *     result for |n| <= 217), a minimax polynomial for exp(r) on [-ln2/2, ln2/2] (every
 *     operator at the vector levels: degree 3, relative error 1.0e-4, at most 0.2 ulp of
 *     float16, and for log_softmax_backward 0.1 of its bound 2^-10 of the largest term, the
 *     output's own rounding at most 0.5 of it; the generic level: degree 4, 2.9e-6), then the
 *     scaling by 2^n:
 *     vscalefps at the AVX-512 level, two exact power-of-two multiplies elsewhere (both round
 *     once into the subnormal range, which bfloat16 outputs reach). d is clamped to
 *     [-150, 100] first (NaN kept), so -inf gives +0 and no int conversion sees an infinity.
 *     The AVX-512 level's forward column blocks (r5_exp_col) take 2^t, t = d * log2(e), as
 *     p(f) * 2^floor(t) instead: vreduceps for f = t - floor(t) (0 for -inf), a degree-4
 *     polynomial (2.7e-6), vscalefps by floor(t); no clamp, 7 operations against 8.
 *     The AVX2 level's fast exp (V_EXPN_F / V_EXP_F) where every argument of a row (its min,
 *     found with the max), a 4-vector column strip or a short-axis column vector is in
 *     [RD_NORM, RD_FHI] (checked by a compare per vector: see r2_any_lt4): no clamp, and n
 *     added to p's exponent field (2 operations instead of 8), the same bits (the product is a
 *     normal float32 there, exact either way). log_softmax_backward (V_EXPB_F) takes it first
 *     and checks after: the running min and max of y over a row's piece, a column block or
 *     a short-axis column pair; a y out of the range computes that part again with the
 *     clamped exp, and the rest of the chunk with it.
 * bfloat16 outputs at the AVX2 level round to nearest with ties away from zero (u + 0x8000, the
 * top half: 2 operations; half an ulp as round-to-even, which the other levels use). The
 * forward rows and short-axis blocks load and store 16 bfloat16 there as a vector pair of the
 * even and odd elements (V_LD2F / V_ST2F: the backward kernels' R2B_LD2 / r2b_st2), 3
 * operations per 16 inputs and 6 per 16 outputs against 4 and 10 one vector at a time; the
 * AVX-512-BF16 instantiation stores such pairs with one vcvtne2ps2bf16.
 *   - sums in float32 in several vector accumulators (the forward sum is at most n, its
 *     relative error ~ n/(lanes) * 2^-24, far below a 16-bit ulp);
 *   - log-softmax: lse = log(k) + log1p(s/k), k the count of the max elements (d == 0) and s
 *     the sum of the other exps: the max terms are left out of s so that when one element
 *     dominates (s << 1) its output -log1p(s/k) keeps the exp's relative accuracy instead of
 *     the absolute error of a sum near 1 (which cost ~10 ulp for outputs near 0). Rows and
 *     column blocks sum all the exps first and take lse = log(s) when s >= 2 (every output then
 *     at least log 2 from 0, log(s) as accurate as softmax's 1/s), the split only below 2 (or
 *     NaN) in a second exp pass (column blocks: over the column vectors that need it, from L2);
 *     short-axis column vectors sum the non-max exps t beside s (a compare and a masked add)
 *     and take log1p(t) where s < 2 (one max term then), one vector log per column vector
 *     (r_lse_st): their sums fall below 2 too often for a second pass (uniform [-4, 4) over an
 *     axis of 16: most vectors have such a lane);
 *   - softmax_backward out = (g - s)*y (one rounding fewer, no cancellation beyond the
 *     operator's own), log_softmax_backward out = g - s*exp(y) (fused at the vector levels).
 * Special values as the strict kernels: a NaN anywhere in a slice reaches every output through
 * the sum (or the max), +inf gives inf - inf = NaN, an all -inf slice -inf - -inf = NaN, and a
 * -inf element of a finite slice exp(-inf) = 0 (log-softmax: -inf - lse = -inf).
 * bfloat16 outputs at the AVX-512 level convert with vcvtneps2bf16 where the CPU has it (the
 * _avx512bf instantiation: the same bits, see there).
 * Prefetches that decide the cold times (each measured; see the git log): the next block of a
 * chunk during the outputs pass; the forward blocks' output lines for writing (prefetchw) during
 * the first pass; log_softmax_backward's y during pass 1 (which reads g only); the short-axis
 * blocks' output lines with their inputs'.
 *
 * Layouts: rows (inner == 1): each row is read from memory once (max), then its exps computed
 * from L1 (kept in a float32 row buffer for softmax up to RROWBUF elements) while the next row
 * of the chunk is prefetched, then normalised and written. Columns (inner > 1): blocks of w <=
 * RWMAX consecutive columns of one outer index over the whole axis, per-column accumulators in
 * L1 arrays, the next block of the chunk prefetched during the output pass. The forward blocks
 * read the input twice, not three times: a sub-block of about RSUB_BYTES at a time, its column
 * max joined to a running max, the sums so far rescaled by exp(m_old - m_new) where that rose
 * (r_rescale: the accurate float32 exp, so each rise costs ~1 float32 ulp of the sum), then the
 * sub-block's exps from L1; 4-vector strips of columns keep their accumulators in registers
 * (the arrays' store-load chains through every a-row cost more than the loads). Softmax blocks
 * keep their exps in the output (when streaming it, in a per-chunk scratch instead: the same
 * bits; not when a block has more than RGTAB sub-blocks x columns: those recompute the exp in
 * the outputs pass): the sum pass rounds
 * e = exp(x - m_b) into y (m_b the running max of its sub-block, so e <= 1) and the outputs
 * pass multiplies it in place, from L2, by g = exp(m_b - m) / sum (one per sub-block and
 * column, computed with the accurate exp). The rounding of e is half an ulp of e, and below
 * float16's normal range half an ulp absolute, which g <= 1 only shrinks: with the product's
 * rounding at most 1.7 ulp of the output (measured 1.52 float16, 1.46 bfloat16, against
 * 0.79 with the second exp); at the AVX2 level 6.4 -> 4.4 instructions per element for float16
 * softmax over dim 1 of (4, 4096, 64), 7.2 -> 5.7 bfloat16. Chunks of items
 * depend on the shape only (aclk_pool.h), so the bits do not depend on the thread count.
 * Outputs larger than half the LLC (aclk_use_nt) are streamed from a small buffer, except
 * the forward rows' whole 64-byte lines, streamed straight from the registers (fwd_row's
 * pass 3: the row's head and tail around them by normal stores), and the forward column
 * blocks' (long axis): each a-row straight from the registers in whole 64-byte lines, its
 * head and tail around them stored normally, softmax's exps kept in a per-chunk scratch
 * (RFCOL_SCRATCH) as in the output otherwise. The rows' and these blocks' exps and sums are
 * computed the same way whether the output is streamed or not, so their bits do not depend on
 * the store policy (ACLNN_EMU_LLC) either. The forward short-axis blocks stream whole lines
 * straight from registers too (see fwd_block_small).
 * The backward kernels stream theirs straight from the registers too, whole 64-byte lines
 * only (a partly streamed line costs a read-modify-write in memory), the parts of a line left
 * (a row's head and tail, columns up to a line boundary) stored normally: rows from the
 * first line boundary on; column blocks whose a-rows all start on a line (else through the
 * buffer); short-axis blocks four column vectors at a time, so that each a-row's lines are
 * complete after one or two adjacent stores (a pair at a time at the AVX2 level would keep
 * half a line of each of the 16 a-rows open, more than a core's ~10 write-combining buffers).
 * Where log_softmax_backward computes a part again with the clamped exp it fences first, so
 * that the second stores land after the streamed ones they replace. The same bits either way
 * (tests/test_relaxed_kernels.py, test_relaxed_nt_same_bytes_bwd).
 */

/* Contraction off (before any #include, see softmax.c): the generic level's arithmetic is
   written out operation by operation; the vector levels fuse explicitly where they mean to. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aclnn_emu.h"
#include "dtype.h"
#include "aclk_pool.h"
#include "vecmath.h"
#include "cvt_x86.h"
#include "softmax_common.h"
#include "parts.h"

#define RROWBUF 8192   /* softmax rows up to this long keep their exps in a float32 buffer */
#define RPF_BLOCK 512  /* row elements per prefetch batch of the next row */
#define RPIECE 1024    /* output piece (streamed outputs go through a buffer this long) */
#define RBPIECE 256    /* backward rows: piece whose end prefetches its share of the next row */
#define RWMAX 1024     /* widest column block */
#define RCOL_BYTES (512 * 1024) /* target 16-bit bytes of a column block (its re-reads hit L2) */
#define RSUB_BYTES 16384 /* 16-bit input of a forward column sub-block (re-read from L1) */
#define RCHUNK 262144  /* elements per parallel chunk */
#define RCHUNK_FCOLS 1048576 /* forward and log_softmax_backward column blocks (long axis): each
                                prefetches the next */
#define RGTAB 4096     /* sub-blocks x columns of a softmax column block that keeps its exps
                          in the output */
#define RSMALL 32      /* axes up to this long: one column vector at a time, in registers */
#define RPF_COLS 512   /* columns ahead prefetched by the short-axis blocks */
#define F16_NEG_INF 0xFC00u
#define BF16_NEG_INF 0xFF80u

typedef struct {
    int dt, lg, nt;
    const void *x;
    void *y;
    int64_t outer, axis, inner, W, nblk;
} rfwd_args;

typedef struct {
    int dt, lg, nt;
    const void *g, *yv;
    void *out;
    int64_t outer, axis, inner, W, nblk;
} rbwd_args;

typedef struct {
    float macc[RWMAX], sacc[RWMAX], nacc[RWMAX];
    float gt[RGTAB]; /* softmax column blocks: per sub-block and column, its max, then g */
    float mins[RWMAX]; /* forward column blocks: a sub-block's column min (R_FAST) */
    uint16_t hb[RWMAX];
} rcol_ws;

/* exp(r) for r in [-ln2/2, ln2/2]: 1 + r*(c1 + r*(c2 + r*(c3 + r*c4))), minimax for relative
   error (2.9e-6); exact 1 at r = 0, so a max element's exp is exactly 1 */
#define RC1 0.9999668598175049f
#define RC2 0.5000301599502563f
#define RC3 0.1678747832775116f
#define RC4 0.041513822972774506f
/* the forward operators' exp(r): degree 3, relative error 1.0e-4 (0.2 ulp of float16 at most),
   again exact 1 at r = 0 */
#define RF1 1.000195860862732f
#define RF2 0.504130482673645f
#define RF3 0.1651795357465744f
#define RMAGIC 12582912.0f /* 1.5 * 2^23: x + RMAGIC rounds x to an integer */
#define RLOG2E 1.44269504088896341f
#define RLN2 0.693147180559945309f
#define RLN2_HI 0.693359375f      /* the generic level's two-part ln2 (no fused multiply-add) */
#define RLN2_LO -2.12194440e-4f
#define RD_LO -150.0f /* below: exp is +0 in float32 */
#define RD_HI 100.0f  /* above: +inf */
/* the AVX2 level's fast exp (r2_exp_neg_fast, r2_exp_fast) for d in [RD_NORM, RD_FHI]:
   n in [-125, 127], so p * 2^n (p in [0.70, 1.42]) is a normal float32 and adding n to p's
   exponent field is the exact product the two multiplies give: the same bits */
#define RD_NORM -86.5f
#define RD_FHI 88.0f

/* log1p(u) for u >= 0 or NaN: log(1 + u) corrected by u / ((1 + u) - 1), exact to the log's
   accuracy also when 1 + u rounds */
ACLK_INLINE float r_log1p(float u)
{
    const float w = 1.0f + u, t = w - 1.0f;
    return aclk_sel_f32(t == 0.0f, u, aclk_log_f32(w) * (u / t));
}

/* log-softmax's log of the sum: k max terms (each exp exactly 1) and s the others' sum */
ACLK_INLINE float r_lse(float k, float s)
{
    return aclk_log_f32(k) + r_log1p(s / k);
}

ACLK_INLINE void r_lse_n(const float *restrict k, float *restrict s, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        s[j] = r_lse(k[j], s[j]);
}

/* log-softmax's log of the sum of n short-axis columns, s[q] the sum of every exp of column q
   and t[q] that of its non-max terms: log(s) where s >= 2 (every output then at least log 2
   from 0: as accurate as softmax's 1/s), else log1p(t) (the max terms are exactly 1 each, so
   s < 2 means one of them; NaN: NaN) as r_log1p, log(1 + t) * (t / ((1 + t) - 1)). One log per
   column, straight-line (mask selects): a loop of VW columns vectorises. */
ACLK_INLINE void r_lse_st(float *restrict s, const float *restrict t, int n)
{
    for (int q = 0; q < n; q++) {
        const int big = s[q] >= 2.0f;
        const float w = 1.0f + t[q], wm = w - 1.0f;
        const float l = aclk_log_f32(aclk_sel_f32(big, s[q], w));
        s[q] = aclk_sel_f32(big, l, aclk_sel_f32(wm == 0.0f, t[q], l * (t[q] / wm)));
    }
}

ACLK_INLINE void r_recip_n(float *s, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        s[j] = 1.0f / s[j];
}

/* the forward column blocks' online max: the running max of columns [0, w) went from macc to
   nm (NaN where either is): where it rose, the sum so far is rescaled by the accurate
   exp(m_old - m_new) (relative error ~1 float32 ulp, one per rise); nm becomes the subtrahend
   of the sub-block's exps: the max, or 0 where it is -inf (the column -inf so far: its exps 0,
   not exp(-inf - -inf)) */
ACLK_INLINE void r_rescale(float *restrict macc, float *restrict nm, float *restrict sacc,
                           int64_t w)
{
    for (int64_t j = 0; j < w; j++) {
        const float mo = macc[j], mn = nm[j];
        if (mo != mn) {
            sacc[j] *= aclk_exp_neg_f32(mo - mn);
            macc[j] = mn;
        }
        nm[j] = mn == -INFINITY ? 0.0f : mn;
    }
}

/* a forward column block's sub-block a-rows: about RSUB_BYTES of 16-bit input */
ACLK_INLINE int64_t r_sub_rows(int64_t W)
{
    const int64_t A = RSUB_BYTES / 2 / W;
    return A < 4 ? 4 : A;
}

/* the base element and width of column block t */
ACLK_INLINE void r_block(int64_t axis, int64_t inner, int64_t W, int64_t nblk, int64_t t,
                         int64_t *base, int64_t *w)
{
    const int64_t o = t / nblk, i0 = (t % nblk) * W;
    *base = o * axis * inner + i0;
    *w = inner - i0 < W ? inner - i0 : W;
}

/* Item t of a column chunk that ends at t1: its block (base, w); the next item's (pbase, pw;
   0 when t is the chunk's last), whose lines the block prefetches; and, for the short-axis
   path, how many columns from the block's first to prefetch a-row by a-row: to the end of the
   a-row when the next item continues it, else the block's own. */
typedef struct {
    int64_t base, w, pbase, pw, pf_end;
} r_item_t;

ACLK_INLINE r_item_t r_item(int64_t axis, int64_t inner, int64_t W, int64_t nblk, int64_t t,
                            int64_t t1)
{
    r_item_t it = {0, 0, 0, 0, 0};
    r_block(axis, inner, W, nblk, t, &it.base, &it.w);
    if (t + 1 < t1)
        r_block(axis, inner, W, nblk, t + 1, &it.pbase, &it.pw);
    const int64_t i0 = (t % nblk) * W;
    it.pf_end = (t + 1 < t1 && it.pbase == it.base + it.w ? inner : i0 + it.w) - i0;
    return it;
}

/* the lines [i*L/nb, (i+1)*L/nb) of nbytes at pf into L2 (softmax.c's prefetch_part) */
ACLK_INLINE void r_prefetch_part(const char *pf, int64_t nbytes, int64_t i, int64_t nb)
{
    if (!pf)
        return;
    const int64_t lines = (nbytes + 63) / 64;
    for (int64_t l = i * lines / nb; l < (i + 1) * lines / nb; l++)
        __builtin_prefetch(pf + l * 64, 0, 2);
}

ACLK_INLINE void r_prefetch_run(const uint16_t *p, int64_t nbytes)
{
    const char *q = (const char *)p;
    for (int64_t k = 0; k < nbytes; k += 64)
        __builtin_prefetch(q + k, 0, 2);
    __builtin_prefetch(q + nbytes - 1, 0, 2);
}

/* softmax_backward column blocks: the a-rows ahead of the sum pass whose g and y lines it
   prefetches, about RBPF_BYTES ahead of each 16-bit stream (at least 2 a-rows) */
#define RBPF_BYTES 4096
ACLK_INLINE int64_t r_bwd_ahead(int64_t w)
{
    const int64_t k = RBPF_BYTES / (2 * w);
    return k < 2 ? 2 : k;
}

/* the line at p into cache for writing (prefetchw, a NOP where unsupported) */
ACLK_INLINE void r_prefetchw(const void *p)
{
#if defined(ACLK_X86) && (defined(__GNUC__) || defined(__clang__))
    __asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* The forward column blocks' streamed outputs (c->nt): a softmax block keeps its exps in a
   per-chunk 16-bit scratch (r_fcol_scratch) instead of in the output, the outputs pass then
   streams each a-row straight from registers (V_ST2NT_FCOL: 2*VW elements to a 32-byte aligned
   address at the AVX2 level, 64 at the AVX-512 level), 64-byte lines whole, the a-row's head
   up to its first 64-byte boundary and its tail after the last whole line stored normally.
   The scratch is RFCOL_SCRATCH elements at most (a block with more takes the normal stores
   of the unstreamed path: the same bits either way) */
#define RFCOL_SCRATCH 1048576

/* the elements of n at p before its first 64-byte boundary (all of them if p is odd) */
ACLK_INLINE int64_t r_fcol_head(const void *p, int64_t n)
{
    const uintptr_t a = (uintptr_t)p;
    const int64_t h = a % 2 ? n : (int64_t)((64 - a % 64) % 64) / 2;
    return h < n ? h : n;
}

/* a 64-byte aligned scratch of n 16-bit elements inside *raw (free(*raw) after), or NULL */
ACLK_INLINE uint16_t *r_fcol_scratch(int64_t n, void **raw)
{
    *raw = malloc((size_t)n * 2 + 64);
    if (!*raw)
        return NULL;
    return (uint16_t *)(((uintptr_t)*raw + 63) & ~(uintptr_t)63);
}

/* ------------------------------------------------------------------ generic level ----
 * One float at a time (VW 1), plain C: the fallback of every machine. */

ACLK_INLINE float r_exp_generic(float d)
{
    d = aclk_sel_f32(d < RD_LO, RD_LO, d);
    d = aclk_sel_f32(d > RD_HI, RD_HI, d);
    const float k = d * RLOG2E + 12582912.0f; /* 1.5 * 2^23: rounds to an integer */
    const float n = k - 12582912.0f;
    const float r = (d - n * RLN2_HI) - n * RLN2_LO;
    float p = RC4 * r + RC3;
    p = p * r + RC2;
    p = p * r + RC1;
    p = p * r + 1.0f;
    /* n from k's low bits (any bits for a NaN: p is NaN then); n in [-217, 145], each half
       a normal power of two */
    const int32_t ni = (int32_t)(aclk_f32_bits(k) - 0x4B400000u);
    const int32_t n1 = ni >> 1, n2 = ni - n1;
    return (p * aclk_bits_f32((uint32_t)(n1 + 127) << 23)) *
           aclk_bits_f32((uint32_t)(n2 + 127) << 23);
}

#define V float
#define VW 1
#define ATTR
#define SFX(name) name##_generic
#define V_SET1(f) (f)
#define V_ADD(a, b) ((a) + (b))
#define V_SUB(a, b) ((a) - (b))
#define V_MUL(a, b) ((a) * (b))
#define V_DIV(a, b) ((a) / (b))
#define V_MAX(a, b) ((b) > (a) ? (b) : (a))
#define V_FNMA(a, b, c) ((c) - (a) * (b))
#define V_EXP(d) r_exp_generic(d)
#define V_EXPN(d) r_exp_generic(d)
#define R_FAST 0
#define V_MIN(a, b) ((b) < (a) ? (b) : (a))
#define V_EXPN_F(d) V_EXPN(d)
#define V_EXPC(d) V_EXPN(d)
#define V_EXP_F(d) V_EXP(d)
#define V_ANY_LT(v, f) 0
#define V_ANY_LT4(d0, d1, d2, d3, f) 0
#define V_ANY_OUT2(y0, y1, lo, hi) 0
#define V_LD(p, bf) ((bf) ? aclk_bf16_to_f32(*(p)) : aclk_f16_to_f32(*(p)))
#define V_LDN(p, n, bf, pad) ((void)(n), (void)(pad), V_LD(p, bf))
#define V_ST(p, v, bf) (*(p) = (bf) ? aclk_f32_to_bf16(v) : aclk_f32_to_f16(v))
#define V_STN(p, v, n, bf) V_ST(p, v, bf)
#define V_LDF(p) (*(p))
#define V_LDFN(p, n) (*(p))
#define V_STF(p, v) (*(p) = (v))
#define V_STFN(p, v, n) (*(p) = (v))
#define V_CNT_EQ0(c, d) ((c) + ((d) == 0.0f ? 1.0f : 0.0f))
#define V_ADD_NE0(s, d, e) ((d) == 0.0f ? (s) : (s) + (e))
#define V_HSUM(v) (v)
#define V_HMAX(v) (v)
#define V_HMIN(v) (v)
#define R_STREAM(d, s, n) memcpy((d), (s), (size_t)(n) * 2)
#define V_EXPB(d) r_exp_generic(d)
#define V_EXPB_F(d) r_exp_generic(d)
#define V_FMAB(a, b, c) ((a) * (b) + (c))
#define V_LD2B(p, bf, v0, v1) ((v0) = V_LD(p, bf), (v1) = V_LD((p) + 1, bf))
#define V_ST2B(p, v0, v1, bf) (V_ST(p, v0, bf), V_ST((p) + 1, v1, bf))
#define V_ST2B_NT(p, v0, v1, bf) V_ST2B(p, v0, v1, bf) /* the level streams nothing */
#define V_LD2F(p, bf, v0, v1) V_LD2B(p, bf, v0, v1)
#define V_ST2F(p, v0, v1, bf) V_ST2B(p, v0, v1, bf)
#define V_ST2NT_FCOL(p, v0, v1, bf) (V_ST(p, v0, bf), V_ST((p) + 1, v1, bf))
#define V_ST2F_NT(p, v0, v1, bf) V_ST2F(p, v0, v1, bf) /* (no streaming here) */
#define R_SNT 0 /* the short-axis blocks store normally */
#include "softmax_relaxed_body.h"

#if defined(ACLK_X86)
/* --------------------------------------------------------------------- AVX2 level ---- */

ACLK_AVX2_INLINE __m256 r2_ld(const uint16_t *p, const int bf)
{
    return bf ? aclk_avx2_ld_bf16(p) : aclk_avx2_ld_f16_raw(p);
}

ACLK_AVX2_INLINE __m256 r2_ldn(const uint16_t *p, int64_t n, const int bf, uint16_t pad)
{
    uint16_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = i < n ? p[i] : pad;
    return r2_ld(t, bf);
}

/* 8 floats -> 8 bfloat16 rounded to nearest, ties away from zero: the top half of u + 0x8000
   (2 operations against round-to-even's 5 and its NaN select's 4; within the relaxed bound
   alike, half an ulp). No carry leaves the sign bit: a finite float above the largest
   bfloat16's midpoint gives the infinity it rounds to, and a NaN here (a bfloat16 input's, or
   the default one) has its low 16 bits 0, so it stays that NaN */
ACLK_AVX2_INLINE __m128i r2_cvt_bf16(__m256 v)
{
    const __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_castps_si256(v), _mm256_set1_epi32(0x8000)), 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

ACLK_AVX2_INLINE void r2_st(uint16_t *p, __m256 v, const int bf)
{
    _mm_storeu_si128((__m128i *)p, bf ? r2_cvt_bf16(v) : aclk_avx2_cvt_f16(v));
}

/* the forward column blocks' streamed store (V_ST2NT_FCOL): 16 elements v0, v1 (r2_st's
   conversion) to p, 32-byte aligned, as one non-temporal store */
ACLK_AVX2_INLINE void r2_st2nt_fcol(uint16_t *p, __m256 v0, __m256 v1, const int bf)
{
    const __m128i h0 = bf ? r2_cvt_bf16(v0) : aclk_avx2_cvt_f16(v0);
    const __m128i h1 = bf ? r2_cvt_bf16(v1) : aclk_avx2_cvt_f16(v1);
    _mm256_stream_si256((__m256i *)p, _mm256_set_m128i(h1, h0));
}

ACLK_AVX2_INLINE void r2_stn(uint16_t *p, __m256 v, int64_t n, const int bf)
{
    uint16_t t[8];
    r2_st(t, v, bf);
    memcpy(p, t, (size_t)n * 2);
}

ACLK_AVX2_INLINE __m256 r2_ldfn(const float *p, int64_t n)
{
    float t[8] = {0};
    memcpy(t, p, (size_t)n * 4);
    return _mm256_loadu_ps(t);
}

ACLK_AVX2_INLINE void r2_stfn(float *p, __m256 v, int64_t n)
{
    float t[8];
    _mm256_storeu_ps(t, v);
    memcpy(p, t, (size_t)n * 4);
}

ACLK_AVX2_INLINE __m256 r2_exp(__m256 d)
{
    /* max / min return their second operand when either is NaN: a NaN d stays NaN */
    d = _mm256_max_ps(_mm256_set1_ps(RD_LO), d);
    d = _mm256_min_ps(_mm256_set1_ps(RD_HI), d);
    /* n = round(d / ln2) by the RMAGIC addition (|d / ln2| < 2^22), its low bits n as an
       integer: no vroundps (two uops) nor conversion */
    const __m256 k = _mm256_fmadd_ps(d, _mm256_set1_ps(RLOG2E), _mm256_set1_ps(RMAGIC));
    const __m256 n = _mm256_sub_ps(k, _mm256_set1_ps(RMAGIC));
    const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(RLN2), d);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(RC4), r, _mm256_set1_ps(RC3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(RC2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(RC1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    /* 2^n as two normal powers of two (n in [-217, 145]); a NaN n gives any scale, p is NaN */
    const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(k), _mm256_set1_epi32(0x4B400000));
    const __m256i n1 = _mm256_srai_epi32(ni, 1);
    const __m256i n2 = _mm256_sub_epi32(ni, n1), b = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, b), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, b), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* exp(d) for d <= 0 or NaN (the forward operators' d = x - max): one clamp (-inf -> -150), n
   by the RMAGIC rounding (its low bits are n), the degree-3 polynomial, the two-multiply
   scaling */
ACLK_AVX2_INLINE __m256 r2_exp_neg(__m256 d)
{
    d = _mm256_max_ps(_mm256_set1_ps(RD_LO), d);
    const __m256 k = _mm256_fmadd_ps(d, _mm256_set1_ps(RLOG2E), _mm256_set1_ps(RMAGIC));
    const __m256 n = _mm256_sub_ps(k, _mm256_set1_ps(RMAGIC));
    const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(RLN2), d);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(RF3), r, _mm256_set1_ps(RF2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(RF1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i ni = _mm256_sub_epi32(_mm256_castps_si256(k), _mm256_set1_epi32(0x4B400000));
    const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    const __m256i b = _mm256_set1_epi32(127);
    const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, b), 23));
    const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, b), 23));
    return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

/* r2_exp_neg for d in [RD_NORM, 0] or NaN (a 16-bit input's NaN, whose low 13 payload bits
   are 0): no clamp, and 2^n added to p's exponent field (k's low bits are n: k << 23 is n << 23
   modulo 2^32), the same bits as r2_exp_neg's two multiplies there (RD_NORM); a NaN stays NaN
   (its k << 23 is 0) */
ACLK_AVX2_INLINE __m256 r2_exp_neg_fast(__m256 d)
{
    const __m256 k = _mm256_fmadd_ps(d, _mm256_set1_ps(RLOG2E), _mm256_set1_ps(RMAGIC));
    const __m256 n = _mm256_sub_ps(k, _mm256_set1_ps(RMAGIC));
    const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(RLN2), d);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(RF3), r, _mm256_set1_ps(RF2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(RF1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p),
                                                _mm256_slli_epi32(_mm256_castps_si256(k), 23)));
}

/* r2_exp for d in [RD_NORM, RD_FHI] or NaN, as r2_exp_neg_fast: the same bits as r2_exp */
ACLK_AVX2_INLINE __m256 r2_exp_fast(__m256 d)
{
    const __m256 k = _mm256_fmadd_ps(d, _mm256_set1_ps(RLOG2E), _mm256_set1_ps(RMAGIC));
    const __m256 n = _mm256_sub_ps(k, _mm256_set1_ps(RMAGIC));
    const __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(RLN2), d);
    __m256 p = _mm256_fmadd_ps(_mm256_set1_ps(RC4), r, _mm256_set1_ps(RC3));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(RC2));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(RC1));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p),
                                                _mm256_slli_epi32(_mm256_castps_si256(k), 23)));
}

/* whether a lane of v is below (above) f */
ACLK_AVX2_INLINE int r2_any_lt(__m256 v, float f)
{
    const __m256 m = _mm256_cmp_ps(v, _mm256_set1_ps(f), _CMP_LT_OQ);
    return !_mm256_testz_ps(m, m);
}

/* whether a lane of d0..d3 is below f, and whether a lane of y0, y1 is outside [lo, hi]:
   a compare per vector, not a min or max of the vectors first, which would let a NaN of one
   vector hide another's out-of-range lane (min and max return their second operand when
   either is NaN; a NaN lane itself is fine for the fast exp) */
ACLK_AVX2_INLINE int r2_any_lt4(__m256 d0, __m256 d1, __m256 d2, __m256 d3, float f)
{
    const __m256 v = _mm256_set1_ps(f);
    const __m256 m = _mm256_or_ps(
        _mm256_or_ps(_mm256_cmp_ps(d0, v, _CMP_LT_OQ), _mm256_cmp_ps(d1, v, _CMP_LT_OQ)),
        _mm256_or_ps(_mm256_cmp_ps(d2, v, _CMP_LT_OQ), _mm256_cmp_ps(d3, v, _CMP_LT_OQ)));
    return !_mm256_testz_ps(m, m);
}

ACLK_AVX2_INLINE int r2_any_out2(__m256 y0, __m256 y1, float lo, float hi)
{
    const __m256 l = _mm256_set1_ps(lo), h = _mm256_set1_ps(hi);
    const __m256 m = _mm256_or_ps(
        _mm256_or_ps(_mm256_cmp_ps(y0, l, _CMP_LT_OQ), _mm256_cmp_ps(y1, l, _CMP_LT_OQ)),
        _mm256_or_ps(_mm256_cmp_ps(y0, h, _CMP_GT_OQ), _mm256_cmp_ps(y1, h, _CMP_GT_OQ)));
    return !_mm256_testz_ps(m, m);
}

ACLK_AVX2_INLINE float r2_hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

ACLK_AVX2_INLINE float r2_hmax(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

ACLK_AVX2_INLINE float r2_hmin(__m256 v)
{
    __m128 s = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_min_ps(s, _mm_movehl_ps(s, s));
    s = _mm_min_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

ACLK_AVX2_INLINE __m256 r2_cnt_eq0(__m256 c, __m256 d)
{
    const __m256 eq = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_EQ_OQ);
    return _mm256_add_ps(c, _mm256_and_ps(eq, _mm256_set1_ps(1.0f)));
}

ACLK_AVX2_INLINE __m256 r2_add_ne0(__m256 s, __m256 d, __m256 e)
{
    const __m256 eq = _mm256_cmp_ps(d, _mm256_setzero_ps(), _CMP_EQ_OQ);
    return _mm256_add_ps(s, _mm256_andnot_ps(eq, e));
}

/* log_softmax_backward's exp (any d, NaN kept): r2_exp with the forward operators' degree-3
   polynomial (relative error 1.0e-4: 0.1 of the backward bound 2^-10 of the largest term, with
   the output's rounding at most 0.5 of it) */
ACLK_AVX2_INLINE __m256 r2_exp_b(__m256 d)
{
    /* the clamp at RD_HI, then r2_exp_neg's (the two clamps commute, and a NaN passes both
       as their second operand: the same bits as clamping in the other order) */
    return r2_exp_neg(_mm256_min_ps(_mm256_set1_ps(RD_HI), d));
}

/* r2_exp_b for d in [RD_NORM, RD_FHI] or NaN: no clamp, 2^n added to p's exponent field (n in
   [-125, 127], p * 2^n a normal float32: the same bits as r2_exp_b's two multiplies); a 16-bit
   input's NaN stays NaN (its low 13 bits are 0, so k << 23 is 0) */
ACLK_AVX2_INLINE __m256 r2_exp_b_fast(__m256 d)
{
    return r2_exp_neg_fast(d); /* the same steps: no clamp, the same degree-3 polynomial */
}

/* the backward kernels' vector pairs: 16 elements at p into v0, v1. float16: elements 0-7 and
   8-15. bfloat16: the even elements (a bfloat16 is the top half of its float32: the 32-bit
   lanes shifted left by 16) and the odd ones (the lanes with their low half cleared) */
#define R2B_LD2(p, bf, v0, v1)                                                                \
    do {                                                                                      \
        if (bf) {                                                                             \
            const __m256i w_ = _mm256_loadu_si256((const __m256i *)(p));                      \
            (v0) = _mm256_castsi256_ps(_mm256_slli_epi32(w_, 16));                            \
            (v1) = _mm256_castsi256_ps(_mm256_and_si256(w_, _mm256_set1_epi32(-65536)));      \
        } else {                                                                              \
            (v0) = aclk_avx2_ld_f16_raw(p), (v1) = aclk_avx2_ld_f16_raw((p) + 8);             \
        }                                                                                     \
    } while (0)

/* v0, v1 (in R2B_LD2's order) to 16 elements at p; bfloat16 rounded as r2_cvt_bf16 (the top
   half of u + 0x8000: the same bits) */
ACLK_AVX2_INLINE void r2b_st2(uint16_t *p, __m256 v0, __m256 v1, const int bf)
{
    if (bf) {
        const __m256i h = _mm256_set1_epi32(0x8000);
        const __m256i e = _mm256_srli_epi32(_mm256_add_epi32(_mm256_castps_si256(v0), h), 16);
        const __m256i o = _mm256_and_si256(_mm256_add_epi32(_mm256_castps_si256(v1), h),
                                           _mm256_set1_epi32(-65536));
        _mm256_storeu_si256((__m256i *)p, _mm256_or_si256(e, o));
    } else {
        r2_st(p, v0, 0), r2_st(p + 8, v1, 0);
    }
}

/* v0, v1 (in R2B_LD2's order) as 16 elements in memory's order, rounded as r2b_st2 */
ACLK_AVX2_INLINE __m256i r2b_pack2(__m256 v0, __m256 v1, const int bf)
{
    if (bf) {
        const __m256i h = _mm256_set1_epi32(0x8000);
        const __m256i e = _mm256_srli_epi32(_mm256_add_epi32(_mm256_castps_si256(v0), h), 16);
        const __m256i o = _mm256_and_si256(_mm256_add_epi32(_mm256_castps_si256(v1), h),
                                           _mm256_set1_epi32(-65536));
        return _mm256_or_si256(e, o);
    }
    return _mm256_inserti128_si256(_mm256_castsi128_si256(aclk_avx2_cvt_f16(v0)),
                                   aclk_avx2_cvt_f16(v1), 1);
}

/* r2b_st2 streamed: p 32-byte aligned (the forward rows' whole lines, two of these each) */
ACLK_AVX2_INLINE void r2b_st2_nt(uint16_t *p, __m256 v0, __m256 v1, const int bf)
{
    _mm256_stream_si256((__m256i *)p, r2b_pack2(v0, v1, bf));
}

/* the short-axis blocks' streamed line (R_SNT 4): two vector pairs (R2B_LD2's order, elements
   [0, 16) and [16, 32)) to the 64-byte aligned line at p by two back-to-back 32-byte
   non-temporal stores, which complete it; the bits of r2b_st2 */
ACLK_AVX2_INLINE void r2s_st4_nt(uint16_t *p, __m256 v0, __m256 v1, __m256 v2, __m256 v3,
                                 const int bf)
{
    const __m256i lo = r2b_pack2(v0, v1, bf), hi = r2b_pack2(v2, v3, bf);
    _mm256_stream_si256((__m256i *)p, lo);
    _mm256_stream_si256((__m256i *)(p + 16), hi);
}

#define V __m256
#define VW 8
#define ATTR ACLK_TARGET_AVX2
#define SFX(name) name##_avx2
#define V_SET1(f) _mm256_set1_ps(f)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_SUB(a, b) _mm256_sub_ps(a, b)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_DIV(a, b) _mm256_div_ps(a, b)
#define V_MAX(a, b) _mm256_max_ps(a, b)
#define V_FNMA(a, b, c) _mm256_fnmadd_ps(a, b, c)
#define V_EXP(d) r2_exp(d)
#define V_EXPN(d) r2_exp_neg(d)
#define R_FAST 1
#define V_MIN(a, b) _mm256_min_ps(a, b)
#define V_EXPN_F(d) r2_exp_neg_fast(d)
#define V_EXPC(d) r2_exp_neg(d)
#define V_EXP_F(d) r2_exp_fast(d)
#define V_ANY_LT(v, f) r2_any_lt(v, f)
#define V_ANY_LT4(d0, d1, d2, d3, f) r2_any_lt4(d0, d1, d2, d3, f)
#define V_ANY_OUT2(y0, y1, lo, hi) r2_any_out2(y0, y1, lo, hi)
#define V_LD(p, bf) r2_ld(p, bf)
#define V_LDN(p, n, bf, pad) r2_ldn(p, n, bf, pad)
#define V_ST(p, v, bf) r2_st(p, v, bf)
#define V_STN(p, v, n, bf) r2_stn(p, v, n, bf)
#define V_LDF(p) _mm256_loadu_ps(p)
#define V_LDFN(p, n) r2_ldfn(p, n)
#define V_STF(p, v) _mm256_storeu_ps(p, v)
#define V_STFN(p, v, n) r2_stfn(p, v, n)
#define V_CNT_EQ0(c, d) r2_cnt_eq0(c, d)
#define V_ADD_NE0(s, d, e) r2_add_ne0(s, d, e)
#define V_HSUM(v) r2_hsum(v)
#define V_HMAX(v) r2_hmax(v)
#define V_HMIN(v) r2_hmin(v)
#define R_STREAM(d, s, n) stream16(d, s, n)
#define V_EXPB(d) r2_exp_b(d)
#define V_EXPB_F(d) r2_exp_b_fast(d)
#define V_FMAB(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_LD2B(p, bf, v0, v1) R2B_LD2(p, bf, v0, v1)
#define V_ST2B(p, v0, v1, bf) r2b_st2(p, v0, v1, bf)
#define V_ST2B_NT(p, v0, v1, bf) r2b_st2_nt(p, v0, v1, bf)
#define V_LD2F(p, bf, v0, v1) R2B_LD2(p, bf, v0, v1)
#define V_ST2F(p, v0, v1, bf) r2b_st2(p, v0, v1, bf)
#define V_ST2NT_FCOL(p, v0, v1, bf) r2_st2nt_fcol(p, v0, v1, bf)
#define V_ST2F_NT(p, v0, v1, bf) r2b_st2_nt(p, v0, v1, bf)
#define R_SNT 4
#define V_ST4F_NT(p, v0, v1, v2, v3, bf) r2s_st4_nt(p, v0, v1, v2, v3, bf)
#include "softmax_relaxed_body.h"

/* ------------------------------------------------------------------ AVX-512 level ---- */

ACLK_AVX512_INLINE __m512 r5_cvt_in(__m256i h, const int bf)
{
    return bf ? _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16))
              : _mm512_cvtph_ps(h);
}

ACLK_AVX512_INLINE __m512 r5_ld(const uint16_t *p, const int bf)
{
    return r5_cvt_in(_mm256_loadu_si256((const __m256i *)p), bf);
}

ACLK_AVX512_INLINE __mmask16 r5_mask(int64_t n)
{
    return (__mmask16)((1u << n) - 1u);
}

ACLK_AVX512_INLINE __m512 r5_ldn(const uint16_t *p, int64_t n, const int bf, uint16_t pad)
{
    return r5_cvt_in(_mm256_mask_loadu_epi16(_mm256_set1_epi16((short)pad), r5_mask(n), p), bf);
}

ACLK_AVX512_INLINE __m256i r5_cvt_out(__m512 v, const int bf)
{
    return bf ? aclk_avx512_cvt_bf16(v) : aclk_avx512_cvt_f16(v);
}

/* the forward column blocks' streamed store (V_ST2NT_FCOL): 32 converted elements h0, h1 to
   p, 64-byte aligned: one whole line by one non-temporal store */
ACLK_AVX512_INLINE void r5_st2nt_fcol(uint16_t *p, __m256i h0, __m256i h1)
{
    _mm512_stream_si512((void *)p, _mm512_inserti64x4(_mm512_castsi256_si512(h0), h1, 1));
}

ACLK_AVX512_INLINE __m512 r5_exp(__m512 d)
{
    d = _mm512_max_ps(_mm512_set1_ps(RD_LO), d); /* NaN kept: see r2_exp */
    d = _mm512_min_ps(_mm512_set1_ps(RD_HI), d);
    /* n = round(d / ln2) by the RMAGIC addition (d is clamped: |d / ln2| < 2^22), one fused
       multiply-add and a subtraction instead of a multiply and vrndscaleps (two uops) */
    const __m512 n = _mm512_sub_ps(
        _mm512_fmadd_ps(d, _mm512_set1_ps(RLOG2E), _mm512_set1_ps(RMAGIC)),
        _mm512_set1_ps(RMAGIC));
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(RLN2), d);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(RC4), r, _mm512_set1_ps(RC3));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(RC2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(RC1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n); /* p * 2^n, one rounding, gradual underflow */
}

/* exp(d) for d <= 0 or NaN: r2_exp_neg's steps, scaled by vscalefps */
ACLK_AVX512_INLINE __m512 r5_exp_neg(__m512 d)
{
    d = _mm512_max_ps(_mm512_set1_ps(RD_LO), d);
    const __m512 k = _mm512_fmadd_ps(d, _mm512_set1_ps(RLOG2E), _mm512_set1_ps(RMAGIC));
    const __m512 n = _mm512_sub_ps(k, _mm512_set1_ps(RMAGIC));
    const __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(RLN2), d);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(RF3), r, _mm512_set1_ps(RF2));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(RF1));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, n);
}

/* the forward column blocks' exp(d) for d <= 0, -inf or NaN: 2^t for t = d * log2(e), as
   p(f) * 2^floor(t) with f = t - floor(t) in [0, 1]: vreduceps gives f (0 for -inf, NaN kept),
   vscalefps multiplies by 2^floor(t) (gradual underflow, one rounding; 0 for -inf), p the
   degree-4 minimax polynomial for 2^f on [0, 1] (relative error 2.7e-6 in float32). No clamp
   and no rounding constant: 7 operations against r5_exp_neg's 8 (its clamp, k, n and r, the
   degree-3 polynomial, the scaling), and fewer register copies. The degree-3 minimax on
   [0, 1] (7.5e-5, 6 operations) was tried: its error adds to the rounding of the exps that
   softmax keeps in its output, which took the worst output over 2 ulp (2.06, float16) */
#define RX0 1.0000026226043701f
#define RX1 0.6930038332939148f
#define RX2 0.2414427548646927f
#define RX3 0.052011460065841675f
#define RX4 0.013534167781472206f
ACLK_AVX512_INLINE __m512 r5_exp_col(__m512 d)
{
    const __m512 t = _mm512_mul_ps(d, _mm512_set1_ps(RLOG2E));
    const __m512 f = _mm512_reduce_ps(t, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 p = _mm512_fmadd_ps(_mm512_set1_ps(RX4), f, _mm512_set1_ps(RX3));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(RX2));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(RX1));
    p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(RX0));
    return _mm512_scalef_ps(p, t);
}

/* log_softmax_backward's exp (any d, NaN kept): r5_exp with the degree-3 polynomial (see
   r2_exp_b) */
ACLK_AVX512_INLINE __m512 r5_exp_b(__m512 d)
{
    return r5_exp_neg(_mm512_min_ps(_mm512_set1_ps(RD_HI), d)); /* as r2_exp_b */
}

ACLK_AVX512_INLINE __m512 r5_cnt_eq0(__m512 c, __m512 d)
{
    const __mmask16 eq = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_EQ_OQ);
    return _mm512_mask_add_ps(c, eq, c, _mm512_set1_ps(1.0f));
}

ACLK_AVX512_INLINE __m512 r5_add_ne0(__m512 s, __m512 d, __m512 e)
{
    const __mmask16 ne = _mm512_cmp_ps_mask(d, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    return _mm512_mask_add_ps(s, ne, s, e);
}

/* the forward rows' and the backward kernels' streamed output pairs: 32 elements (a whole
   line) at p, 64-byte aligned, v0 the first 16, by one store */
ACLK_AVX512_INLINE void r5_st2_nt(uint16_t *p, __m512 v0, __m512 v1, const int bf)
{
    _mm512_stream_si512((void *)p, _mm512_inserti64x4(_mm512_castsi256_si512(r5_cvt_out(v0, bf)),
                                                      r5_cvt_out(v1, bf), 1));
}

#define V __m512
#define VW 16
#define ATTR ACLK_TARGET_AVX512
#define SFX(name) name##_avx512
#define V_SET1(f) _mm512_set1_ps(f)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_SUB(a, b) _mm512_sub_ps(a, b)
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_DIV(a, b) _mm512_div_ps(a, b)
#define V_MAX(a, b) _mm512_max_ps(a, b)
#define V_FNMA(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define V_EXP(d) r5_exp(d)
#define V_EXPN(d) r5_exp_neg(d)
#define R_FAST 0 /* vscalefps scales in one instruction: no fast path */
#define V_MIN(a, b) _mm512_min_ps(a, b)
#define V_EXPN_F(d) V_EXPN(d)
#define V_EXPC(d) r5_exp_col(d)
#define V_EXP_F(d) V_EXP(d)
#define V_ANY_LT(v, f) 0
#define V_ANY_LT4(d0, d1, d2, d3, f) 0
#define V_ANY_OUT2(y0, y1, lo, hi) 0
#define V_LD(p, bf) r5_ld(p, bf)
#define V_LDN(p, n, bf, pad) r5_ldn(p, n, bf, pad)
#define V_ST(p, v, bf) _mm256_storeu_si256((__m256i *)(p), r5_cvt_out(v, bf))
#define V_STN(p, v, n, bf) _mm256_mask_storeu_epi16(p, r5_mask(n), r5_cvt_out(v, bf))
#define V_LDF(p) _mm512_loadu_ps(p)
#define V_LDFN(p, n) _mm512_maskz_loadu_ps(r5_mask(n), p)
#define V_STF(p, v) _mm512_storeu_ps(p, v)
#define V_STFN(p, v, n) _mm512_mask_storeu_ps(p, r5_mask(n), v)
#define V_CNT_EQ0(c, d) r5_cnt_eq0(c, d)
#define V_ADD_NE0(s, d, e) r5_add_ne0(s, d, e)
#define V_HSUM(v) _mm512_reduce_add_ps(v)
#define V_HMAX(v) _mm512_reduce_max_ps(v)
#define V_HMIN(v) _mm512_reduce_min_ps(v)
#define R_STREAM(d, s, n) stream16(d, s, n)
#define V_EXPB(d) r5_exp_b(d)
#define V_EXPB_F(d) r5_exp_b(d)
#define V_FMAB(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_LD2B(p, bf, v0, v1) ((v0) = V_LD(p, bf), (v1) = V_LD((p) + 16, bf))
#define V_ST2B(p, v0, v1, bf) (V_ST(p, v0, bf), V_ST((p) + 16, v1, bf))
#define V_ST2B_NT(p, v0, v1, bf) r5_st2_nt(p, v0, v1, bf)
#define V_LD2F(p, bf, v0, v1) ((v0) = V_LD(p, bf), (v1) = V_LD((p) + 16, bf))
#define V_ST2F(p, v0, v1, bf) (V_ST(p, v0, bf), V_ST((p) + 16, v1, bf))
#define R_SNT 2
#define V_ST2NT_FCOL(p, v0, v1, bf) r5_st2nt_fcol(p, r5_cvt_out(v0, bf), r5_cvt_out(v1, bf))
#define V_ST2F_NT(p, v0, v1, bf) r5_st2_nt(p, v0, v1, bf)
#include "softmax_relaxed_body.h"

/* ------------------------------------------------------- AVX-512 with AVX-512-BF16 ----
 * The AVX-512 level once more for bfloat16 on CPUs with vcvtneps2bf16: its rounding to nearest
 * even and its NaN (the top bits, quiet bit set) are aclk_avx512_cvt_bf16's bit for bit, but it
 * flushes float32 subnormals to zero, so a vector holding one takes the integer conversion. The
 * same bits as the AVX-512 level; one instruction (and a class test) instead of about ten for
 * each output vector. */
#define R5B_TARGET \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512bf16,avx2,f16c,fma")))

static inline __attribute__((always_inline)) R5B_TARGET __m256i r5b_cvt_out(__m512 v,
                                                                           const int bf)
{
    if (!bf)
        return aclk_avx512_cvt_f16(v);
    if (_mm512_fpclass_ps_mask(v, 0x20)) /* a subnormal */
        return aclk_avx512_cvt_bf16(v);
    return (__m256i)_mm512_cvtneps_pbh(v);
}

/* the forward kernels' output pairs (V_ST2F): 32 elements at p, v0 the first 16; bfloat16 by
   one vcvtne2ps2bf16 (the same rounding and NaN as vcvtneps2bf16) unless a lane of either is
   a float32 subnormal (flushed by it), then as r5b_cvt_out; one kortestw for both masks */
static inline __attribute__((always_inline)) R5B_TARGET void r5b_st2(uint16_t *p, __m512 v0,
                                                                    __m512 v1, const int bf)
{
    if (bf && _kortestz_mask16_u8(_mm512_fpclass_ps_mask(v0, 0x20),
                                  _mm512_fpclass_ps_mask(v1, 0x20))) {
        _mm512_storeu_si512((void *)p, (__m512i)_mm512_cvtne2ps_pbh(v1, v0));
        return;
    }
    _mm256_storeu_si256((__m256i *)p, r5b_cvt_out(v0, bf));
    _mm256_storeu_si256((__m256i *)(p + 16), r5b_cvt_out(v1, bf));
}

/* r5b_st2 streamed (p 64-byte aligned: a whole line by one store; bfloat16 pairs by one
   vcvtne2ps2bf16 as r5b_st2, a float32 subnormal lane by r5b_cvt_out's integer conversion) */
static inline __attribute__((always_inline)) R5B_TARGET void r5b_st2_nt(uint16_t *p, __m512 v0,
                                                                       __m512 v1, const int bf)
{
    __m512i w;
    if (bf && _kortestz_mask16_u8(_mm512_fpclass_ps_mask(v0, 0x20),
                                  _mm512_fpclass_ps_mask(v1, 0x20)))
        w = (__m512i)_mm512_cvtne2ps_pbh(v1, v0);
    else
        w = _mm512_inserti64x4(_mm512_castsi256_si512(r5b_cvt_out(v0, bf)), r5b_cvt_out(v1, bf),
                               1);
    _mm512_stream_si512((void *)p, w);
}

#define V __m512
#define VW 16
#define ATTR R5B_TARGET
#define SFX(name) name##_avx512bf
#define V_SET1(f) _mm512_set1_ps(f)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_SUB(a, b) _mm512_sub_ps(a, b)
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_DIV(a, b) _mm512_div_ps(a, b)
#define V_MAX(a, b) _mm512_max_ps(a, b)
#define V_FNMA(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define V_EXP(d) r5_exp(d)
#define V_EXPN(d) r5_exp_neg(d)
#define R_FAST 0 /* vscalefps scales in one instruction: no fast path */
#define V_MIN(a, b) _mm512_min_ps(a, b)
#define V_EXPN_F(d) V_EXPN(d)
#define V_EXPC(d) r5_exp_col(d)
#define V_EXP_F(d) V_EXP(d)
#define V_ANY_LT(v, f) 0
#define V_ANY_LT4(d0, d1, d2, d3, f) 0
#define V_ANY_OUT2(y0, y1, lo, hi) 0
#define V_LD(p, bf) r5_ld(p, bf)
#define V_LDN(p, n, bf, pad) r5_ldn(p, n, bf, pad)
#define V_ST(p, v, bf) _mm256_storeu_si256((__m256i *)(p), r5b_cvt_out(v, bf))
#define V_STN(p, v, n, bf) _mm256_mask_storeu_epi16(p, r5_mask(n), r5b_cvt_out(v, bf))
#define V_LDF(p) _mm512_loadu_ps(p)
#define V_LDFN(p, n) _mm512_maskz_loadu_ps(r5_mask(n), p)
#define V_STF(p, v) _mm512_storeu_ps(p, v)
#define V_STFN(p, v, n) _mm512_mask_storeu_ps(p, r5_mask(n), v)
#define V_CNT_EQ0(c, d) r5_cnt_eq0(c, d)
#define V_ADD_NE0(s, d, e) r5_add_ne0(s, d, e)
#define V_HSUM(v) _mm512_reduce_add_ps(v)
#define V_HMAX(v) _mm512_reduce_max_ps(v)
#define V_HMIN(v) _mm512_reduce_min_ps(v)
#define R_STREAM(d, s, n) stream16(d, s, n)
#define V_EXPB(d) r5_exp_b(d)
#define V_EXPB_F(d) r5_exp_b(d)
#define V_FMAB(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_LD2B(p, bf, v0, v1) ((v0) = V_LD(p, bf), (v1) = V_LD((p) + 16, bf))
#define V_ST2B(p, v0, v1, bf) (V_ST(p, v0, bf), V_ST((p) + 16, v1, bf))
#define V_ST2B_NT(p, v0, v1, bf) r5b_st2_nt(p, v0, v1, bf)
#define V_LD2F(p, bf, v0, v1) ((v0) = V_LD(p, bf), (v1) = V_LD((p) + 16, bf))
#define V_ST2F(p, v0, v1, bf) r5b_st2(p, v0, v1, bf)
#define R_SNT 2
#define V_ST2NT_FCOL(p, v0, v1, bf) \
    r5_st2nt_fcol(p, r5b_cvt_out(v0, bf), r5b_cvt_out(v1, bf))
#define V_ST2F_NT(p, v0, v1, bf) r5b_st2_nt(p, v0, v1, bf)
#include "softmax_relaxed_body.h"
#endif /* ACLK_X86 */

/* ------------------------------------------------------------------ entry points ---- */

#if defined(ACLK_X86)
/* bfloat16 on an AVX-512 CPU with AVX-512-BF16: the _avx512bf kernels (same bits) */
static int r_bf16_ok(int dtype)
{
    static int ok = -1; /* atomic: -1 until known */
    int v = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (v < 0) {
        v = __builtin_cpu_supports("avx512bf16") ? 1 : 0;
        __atomic_store_n(&ok, v, __ATOMIC_RELAXED);
    }
    return dtype == ACLK_BF16 && v;
}
#endif

/* items per chunk: about chunk elements, and at least 16 chunks when there are that many
   items (a shape-only choice) */
static int64_t r_grain(int64_t items, int64_t elems_per_item, int64_t chunk)
{
    int64_t g = chunk / (elems_per_item > 0 ? elems_per_item : 1);
    const int64_t even = (items + 15) / 16;
    if (g > even)
        g = even;
    return g < 1 ? 1 : g;
}

/* the column block width: whole rows of up to RWMAX columns, else a multiple of 32 columns
   (at least 64) whose block of axis x W halves is about RCOL_BYTES, so that its later passes
   read L2 */
static int64_t r_width(int64_t axis, int64_t inner)
{
    if (inner <= RWMAX)
        return inner;
    int64_t w = (RCOL_BYTES / 2 / axis) & ~(int64_t)31;
    return w < 64 ? 64 : (w > RWMAX ? RWMAX : w);
}

/* the chunk function KIND##_chunk (fwd_rows, fwd_cols, bwd_rows, bwd_cols) of the CPU's level
   for dtype (the AVX-512-BF16 instantiation for bfloat16 where the CPU has it) */
#if defined(ACLK_X86)
#define R_PICK(KIND, level, dtype)                                                           \
    ((level) >= ACLK_ISA_AVX512                                                               \
         ? (r_bf16_ok(dtype) ? KIND##_chunk_avx512bf : KIND##_chunk_avx512)                   \
         : (level) >= ACLK_ISA_AVX2 ? KIND##_chunk_avx2 : KIND##_chunk_generic)
#else
#define R_PICK(KIND, level, dtype) KIND##_chunk_generic
#endif

/* a launch's parallel items: the rows (inner == 1, W and nblk left 0), or the column blocks of
   r_width columns of each outer slab; epi: the elements of one item */
static void r_split(int64_t outer, int64_t axis, int64_t inner, int64_t *W, int64_t *nblk,
                    int64_t *items, int64_t *epi)
{
    if (inner == 1) {
        *items = outer, *epi = axis;
        return;
    }
    *W = r_width(axis, inner);
    *nblk = (inner + *W - 1) / *W;
    *items = outer * *nblk, *epi = axis * *W;
}

#if ACLK_IN_PART(1)
int aclk_softmax_fwd_relaxed(int dtype, const void *x, void *y, int64_t outer, int64_t axis,
                             int64_t inner, int log_softmax)
{
    if (dtype != ACLK_F16 && dtype != ACLK_BF16)
        return -1;
    if (outer <= 0 || axis <= 0 || inner <= 0)
        return 0;
    const int level = aclk_isa_level();
    rfwd_args c = {dtype, log_softmax != 0, aclk_use_nt(outer * axis * inner * 2), x, y,
                   outer, axis, inner, 0, 0};
    int64_t items, epi;
    r_split(outer, axis, inner, &c.W, &c.nblk, &items, &epi);
    aclk_range_fn fn = inner == 1 ? R_PICK(fwd_rows, level, dtype)
                                  : R_PICK(fwd_cols, level, dtype);
    (void)level;
    const int64_t chunk = inner == 1 || axis <= RSMALL ? RCHUNK : RCHUNK_FCOLS;
    aclk_parallel_for(items, r_grain(items, epi, chunk), fn, &c);
    return 0;
}

#endif /* ACLK_IN_PART(1) */

#if ACLK_IN_PART(2)
int aclk_softmax_bwd_relaxed(int dtype, const void *grad, const void *y, void *out,
                             int64_t outer, int64_t axis, int64_t inner, int log_softmax)
{
    if (dtype != ACLK_F16 && dtype != ACLK_BF16)
        return -1;
    if (outer <= 0 || axis <= 0 || inner <= 0)
        return 0;
    const int level = aclk_isa_level();
    rbwd_args c = {dtype, log_softmax != 0, aclk_use_nt(outer * axis * inner * 2), grad, y, out,
                   outer, axis, inner, 0, 0};
    int64_t items, epi;
    r_split(outer, axis, inner, &c.W, &c.nblk, &items, &epi);
    aclk_range_fn fn = inner == 1 ? R_PICK(bwd_rows, level, dtype)
                                  : R_PICK(bwd_cols, level, dtype);
    (void)level;
    /* log_softmax_backward column blocks of a long axis: chunks of several blocks, each block's
       outputs pass (an exp per element) prefetching the next block, as the forward ones;
       softmax_backward's lighter outputs pass gains nothing from that and loses L2 to it */
    const int64_t chunk = inner > 1 && axis > RSMALL && log_softmax ? RCHUNK_FCOLS : RCHUNK;
    aclk_parallel_for(items, r_grain(items, epi, chunk), fn, &c);
    return 0;
}
#endif /* ACLK_IN_PART(2) */
