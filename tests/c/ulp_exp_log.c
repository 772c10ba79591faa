/*
 * ulp_exp_log.c: exhaustive accuracy test of aclk_exp_f32 and aclk_log_f32
 * (csrc/kernels/vecmath.h) against libm's double-precision exp and log, over every float32
 * input. tests/test_kernels_c.py builds it with the core's compiler and flags
 * (aclnn_py/_build.py) and checks the figures against the accuracy vecmath.h states:
 *
 *   cc <flags> -Icsrc/include -Icsrc/kernels tests/c/ulp_exp_log.c csrc/kernels/isa.c \
 *      csrc/kernels/cvt.c -o ulp_exp_log -pthread -lm
 *   ./ulp_exp_log [threads]
 *
 * Output, one line per function:
 *   exp max_ulp=<err> at=<bits of x> (<x>) checked=<inputs> specials_bad=<count>
 * and a line for aclk_exp_neg_f32 and its array form aclk_vexp_sub1_f32 (softmax's exp for
 * arguments <= 0), which must return the bits of aclk_exp_f32 for every x <= 0 (+-0 included),
 * -inf and NaN:
 *   exp_neg mismatches=<count> checked=<inputs>
 * Exit status 0, or 1 when a special value (NaN, +-inf) is wrong or exp_neg differs.
 *
 * Error of a result f for the input x: |f - r| / ulp(r), with r the exact value rounded to
 * double and ulp(r) the spacing of float32 numbers in r's binade (2^-149 below 2^-126). Values
 * at or above 2^128 (overflow; f = +inf included) count as 2^128, so an overflow to +inf where
 * the exact value overflows is exact, and a finite f there is measured from 2^128.
 *
 * Checked inputs: exp, every float32 but NaN and +-inf (those are the specials); log, every
 * positive normal float32 (its stated domain), with NaN and +inf as specials. Calling libm once
 * per input would take minutes, so r comes from libm through exact identities:
 *   exp: x = hi + lo, hi being x with the low 11 significand bits cleared (both parts are
 *        floats, the split is exact); r = exp(hi) * exp(lo), each factor from libm's exp. The
 *        2048 inputs sharing hi share exp(hi); the 2048 values of lo per sign and exponent
 *        share one table. Error of r: below 2 ulp of double, < 1e-8 float ulp.
 *   log: x = 2^k * m with m in [sqrt(1/2), sqrt(2)); r = (k*LN2_HI + log(m)) + k*LN2_LO with
 *        log(m) from libm once per significand and k*LN2_HI exact. |r| >= |log m| and
 *        |r| >= |k|*ln2/2, so nothing cancels: error of r below 2 ulp of double.
 * The inner loops run the function under test over a contiguous block, as the kernels do, in
 * the code of the ISA level the kernels run at (vecmath.h's ACLK_LEVELS, isa.c's level: the
 * CPU's best, or ACLNN_EMU_ISA's; all levels give the same bits).
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vecmath.h"

#define LOW 2048              /* exp: inputs per hi (11 low significand bits) */
#define NROWS 510             /* exp: (sign, biased exponent 0..254) rows of 2^23 inputs */
#define LOG_BLOCK 32768       /* log: significands per work item */
#define NEXP 254              /* log: biased exponents 1..254 (positive normals) */
#define LANES 16

static const double LN2_HI = 0x1.62e42feep-1;        /* 33 bits: k*LN2_HI exact, |k| < 2^20 */
static const double LN2_LO = 0x1.a39ef35793c76p-33;  /* ln2 - LN2_HI */

typedef struct {
    double max;               /* largest error seen */
    uint32_t at;              /* its input's bits */
    uint64_t checked;
} result_t;

/* |f - r| / ulp(r); r >= 0 for exp, any sign for log. Straight-line double arithmetic,
   selects and bit masks (no 64-bit integer compares, no division), so that loops around it
   vectorise. */
ACLK_INLINE double ulp_error(float f, double r)
{
    double fd = (double)f;
    /* p = 2^e for |r| in [2^e, 2^(e+1)) (0 for r = 0), kept in the float32 binades
       [2^-126, 2^127]; 1 / ulp(r) = 2^(23 - e), built from p's exponent bits. (The clamps of r
       come after this: gcc does not vectorise the loop the other way round.) */
    double p = aclk_bits_f64(aclk_f64_bits(r) & 0x7FF0000000000000u);
    p = p > 0x1p-126 ? p : 0x1p-126;
    p = p < 0x1p127 ? p : 0x1p127;
    double inv_ulp = aclk_bits_f64(((uint64_t)(2 * 1023 + 23) << 52) - aclk_f64_bits(p));
    fd = fd < 0x1p128 ? fd : 0x1p128;
    r = r < 0x1p128 ? r : 0x1p128;
    return fabs(fd - r) * inv_ulp;
}

/* Fold the errors of one block into res: the max in LANES fixed lanes (so that it
   vectorises); only a block whose maximum beats res is scanned for its input, whose bits are
   base + i*step. A NaN result for a non-NaN input (its error is NaN, which the max would skip)
   counts as an infinite error. */
ACLK_INLINE void collect(result_t *res, const float *f, const double *err, int n, uint32_t base,
                         uint32_t step)
{
    double acc[LANES] = {0};
    int k = 0;
    for (; k + LANES <= n; k += LANES)
        for (int j = 0; j < LANES; j++)
            acc[j] = err[k + j] > acc[j] ? err[k + j] : acc[j];
    for (int j = 0; k + j < n; j++)
        acc[j] = err[k + j] > acc[j] ? err[k + j] : acc[j];
    double m = 0;
    for (int j = 0; j < LANES; j++)
        m = acc[j] > m ? acc[j] : m;
    int nan = 0;
    for (int i = 0; i < n; i++)
        nan += f[i] != f[i];
    if (nan)
        m = INFINITY;
    res->checked += (uint64_t)n;
    if (m > res->max) {
        for (int i = 0; i < n; i++) {
            if (err[i] >= m || f[i] != f[i]) {
                res->max = m;
                res->at = base + (uint32_t)i * step;
                break;
            }
        }
    }
}

/* ------------------------------------------------------------------------------ exp ---- */

/* The array forms' block choice with the specials: blocks of in-domain arguments (-1 ... -80)
   holding one NaN (quiet, signalling, either sign), -inf, or an argument just below
   EXP_NORMAL_MIN, at every position, each form (aclk_vexp_sub1_f32, aclk_vexp_sub_f32) against
   aclk_exp_neg_f32 element by element, bit for bit. Adds the count of wrong elements to *out. */
ACLK_LEVELS(exp_neg_blocks_bad, (uint64_t *out), (out))
{
    const uint32_t odd[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0xFF812345u, 0xFF800000u,
                            0xC2AC0001u, 0xC2D00000u};
    enum { N = 4 * EXP_UNROLL };
    float x[N], m[N], want[N], v[N], w[N];
    unsigned long long bad = 0;
    for (size_t s = 0; s < sizeof odd / sizeof odd[0]; s++)
        for (int pos = 0; pos < N; pos++) {
            for (int k = 0; k < N; k++) {
                x[k] = k == pos ? aclk_bits_f32(odd[s]) : -1.0f - (float)(k % 80);
                m[k] = 0.0f;
                want[k] = aclk_exp_neg_f32(x[k] - 0.0f);
            }
            aclk_vexp_sub1_f32(x, 0.0f, v, N);
            aclk_vexp_sub_f32(x, m, w, N);
            for (int k = 0; k < N; k++)
                bad += (aclk_f32_bits(v[k]) != aclk_f32_bits(want[k])) |
                       (aclk_f32_bits(w[k]) != aclk_f32_bits(want[k]));
        }
    *out += bad;
}

#define CHUNK 512 /* inputs per inner block (the arrays stay in L1) */

static atomic_ullong neg_mismatch, neg_checked;

/* all inputs of one (sign, biased exponent) row; E < 255. Negative rows also compare
   aclk_exp_neg_f32, and the array form aclk_vexp_sub1_f32 (which takes
   aclk_exp_neg_normal_f32 for a block of arguments all in its domain), with aclk_exp_f32 bit
   for bit. */
ACLK_LEVELS(exp_row, (uint32_t sign, uint32_t E, result_t *res), (sign, E, res))
{
    static _Thread_local double elo[LOW];
    float f[CHUNK], g[CHUNK], x[CHUNK], v[CHUNK];
    unsigned long long mism = 0, nchk = 0;
    double err[CHUNK];
    /* lo = k * 2^(max(E,1) - 150): the low significand bits' weight (subnormals: 2^-149) */
    int lsb = (E == 0 ? 1 : (int)E) - 150;
    for (int k = 0; k < LOW; k++)
        elo[k] = exp((sign ? -1.0 : 1.0) * ldexp((double)k, lsb));
    for (uint32_t h = 0; h < (1u << 12); h++) {
        const uint32_t hb = (sign << 31) | (E << 23) | (h << 11);
        const double ehi = exp((double)aclk_bits_f32(hb));
        for (uint32_t c = 0; c < LOW; c += CHUNK) {
            for (uint32_t k = 0; k < CHUNK; k++)
                f[k] = aclk_exp_f32(aclk_bits_f32(hb | (c + k)));
            if (sign) {
                for (uint32_t k = 0; k < CHUNK; k++)
                    g[k] = aclk_exp_neg_f32(x[k] = aclk_bits_f32(hb | (c + k)));
                aclk_vexp_sub1_f32(x, 0.0f, v, CHUNK);
                for (uint32_t k = 0; k < CHUNK; k++)
                    mism += (aclk_f32_bits(g[k]) != aclk_f32_bits(f[k])) |
                            (aclk_f32_bits(v[k]) != aclk_f32_bits(f[k]));
                nchk += CHUNK;
            }
            for (uint32_t k = 0; k < CHUNK; k++)
                err[k] = ulp_error(f[k], ehi * elo[c + k]);
            collect(res, f, err, CHUNK, hb | c, 1);
        }
    }
    atomic_fetch_add(&neg_mismatch, mism);
    atomic_fetch_add(&neg_checked, nchk);
}

/* ------------------------------------------------------------------------------ log ---- */

/* all positive normal inputs whose significand bits are in [j0, j0 + LOG_BLOCK) */
ACLK_LEVELS(log_block, (uint32_t j0, result_t *res), (j0, res))
{
    float f[NEXP];
    double err[NEXP], khi[2][NEXP], klo[2][NEXP];
    for (int up = 0; up < 2; up++) {
        for (int i = 0; i < NEXP; i++) {
            double k = (double)(i + 1 - 127 + up);         /* biased exponent i + 1 */
            khi[up][i] = k * LN2_HI;
            klo[up][i] = k * LN2_LO;
        }
    }
    for (uint32_t j = j0; j < j0 + LOG_BLOCK; j++) {
        double m = 1.0 + ldexp((double)j, -23);           /* [1, 2) */
        int up = m >= 1.4142135623730951;                 /* m >= sqrt(2): use m/2, k + 1 */
        double lm = log(up ? m * 0.5 : m);
        const double *kh = khi[up], *kl = klo[up];
        for (int i = 0; i < NEXP; i++)
            f[i] = aclk_log_f32(aclk_bits_f32(((uint32_t)(i + 1) << 23) | j));
        for (int i = 0; i < NEXP; i++)
            err[i] = ulp_error(f[i], (kh[i] + lm) + kl[i]);
        collect(res, f, err, NEXP, (1u << 23) | j, 1u << 23);
    }
}

/* --------------------------------------------------------------------------- driver ---- */

static atomic_int next_item;

enum { EXP_ITEMS = NROWS, LOG_ITEMS = (1 << 23) / LOG_BLOCK };

typedef struct {
    result_t exp, log;
} thread_result_t;

static void *worker(void *arg)
{
    thread_result_t *tr = (thread_result_t *)arg;
    for (;;) {
        int item = atomic_fetch_add(&next_item, 1);
        if (item < EXP_ITEMS)
            exp_row((uint32_t)(item / 255), (uint32_t)(item % 255), &tr->exp);
        else if (item < EXP_ITEMS + LOG_ITEMS)
            log_block((uint32_t)(item - EXP_ITEMS) * LOG_BLOCK, &tr->log);
        else
            return NULL;
    }
}

/* NaN, +inf and -inf: every NaN pattern must give a NaN; exp(+inf) = +inf, exp(-inf) = +0,
   log(+inf) = +inf. Returns the number of wrong results. */
static uint64_t specials(int is_log)
{
    uint64_t bad = 0;
    for (uint32_t sign = 0; sign < 2; sign++) {
        for (uint32_t mant = 1; mant < (1u << 23); mant++) {
            float x = aclk_bits_f32((sign << 31) | 0x7F800000u | mant);
            float f = is_log ? aclk_log_f32(x) : aclk_exp_f32(x);
            bad += f == f;
        }
    }
    if (is_log) {
        bad += aclk_log_f32(INFINITY) != INFINITY;
    } else {
        bad += aclk_exp_f32(INFINITY) != INFINITY;
        bad += aclk_f32_bits(aclk_exp_f32(-INFINITY)) != 0u;
        /* exp_neg: NaNs stay NaN, -inf -> +0, +0 -> 1 (as aclk_exp_f32) */
        for (uint32_t sign = 0; sign < 2; sign++)
            for (uint32_t mant = 1; mant < (1u << 23); mant++) {
                float g = aclk_exp_neg_f32(aclk_bits_f32((sign << 31) | 0x7F800000u | mant));
                bad += g == g;
            }
        bad += aclk_f32_bits(aclk_exp_neg_f32(-INFINITY)) != 0u;
        bad += aclk_f32_bits(aclk_exp_neg_f32(0.0f)) != aclk_f32_bits(aclk_exp_f32(0.0f));
        exp_neg_blocks_bad(&bad);
    }
    return bad;
}

static void report(const char *name, const result_t *r, uint64_t bad)
{
    printf("%s max_ulp=%.9f at=0x%08x (%.9g) checked=%llu specials_bad=%llu\n", name, r->max,
           r->at, (double)aclk_bits_f32(r->at), (unsigned long long)r->checked,
           (unsigned long long)bad);
}

static void merge(result_t *into, const result_t *r)
{
    if (r->max > into->max) {
        into->max = r->max;
        into->at = r->at;
    }
    into->checked += r->checked;
}

int main(int argc, char **argv)
{
    long nt = argc > 1 ? atol(argv[1]) : sysconf(_SC_NPROCESSORS_ONLN);
    nt = nt < 1 ? 1 : nt > 64 ? 64 : nt;
    pthread_t th[64];
    thread_result_t tr[64];
    memset(tr, 0, sizeof tr);
    atomic_init(&next_item, 0);
    for (long i = 0; i < nt; i++) {
        if (pthread_create(&th[i], NULL, worker, &tr[i]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 2;
        }
    }
    result_t ex = {0}, lg = {0};
    for (long i = 0; i < nt; i++) {
        pthread_join(th[i], NULL);
        merge(&ex, &tr[i].exp);
        merge(&lg, &tr[i].log);
    }
    uint64_t bad_exp = specials(0), bad_log = specials(1);
    report("exp", &ex, bad_exp);
    report("log", &lg, bad_log);
    unsigned long long nm = atomic_load(&neg_mismatch);
    printf("exp_neg mismatches=%llu checked=%llu\n", nm, (unsigned long long)atomic_load(&neg_checked));
    return (bad_exp || bad_log || nm) ? 1 : 0;
}
