/*
 * cvt_exhaustive.c: the array conversions of the ISA level in use (ACLNN_EMU_ISA, see
 * csrc/kernels/isa.c) against dtype.h's scalar conversions, bit for bit, over every input:
 * all 2^16 float16 and bfloat16 patterns widened (through the table and aclk_load_f32), all
 * 2^32 float32 patterns narrowed to float16 and to bfloat16 (blocks of 2^16 inputs alternating
 * between normal and non-temporal stores, at shifting destination alignments), and a sample of
 * float32 patterns narrowed again with MXCSR's flush-to-zero and denormals-are-zero bits set
 * (x86). Lengths 0..80 at every source / destination alignment check the vector loops' heads
 * and tails, aclk_store_f32_nt, and that nothing is written outside [0, n) (guard elements).
 * At the generic level the table is dtype.h's scalar code itself, so there a sample of every
 * 7th float32 pattern is narrowed (it checks the wiring, not the arithmetic).
 * tests/test_isa.py builds it with the core's flags and runs it once per level.
 *
 * Output: "level NAME", then one line per check, "NAME checked=N bad=M"; exit status 1 if any
 * check found a difference (the first few are printed).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aclnn_emu.h"
#include "dtype.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define HAVE_MXCSR 1
#endif

#define BLOCK 65536

static int g_shown;

static int64_t report(const char *what, uint64_t checked, uint64_t bad)
{
    printf("%s checked=%llu bad=%llu\n", what, (unsigned long long)checked,
           (unsigned long long)bad);
    fflush(stdout);
    return (int64_t)bad;
}

static void show(const char *what, uint32_t in, uint32_t got, uint32_t want)
{
    if (g_shown++ < 10)
        fprintf(stderr, "%s: input 0x%08x gives 0x%08x, want 0x%08x\n", what, in, got, want);
}

/* references: the scalar functions in plain loops, not inlined into the checked code. The
   compiler vectorises them for the baseline, or for AVX2 where the CPU has it (the same C,
   only faster: the 2^32 inputs take a few seconds) */
#define REF_BODY(FN)                                                             \
    for (int64_t i = 0; i < n; i++)                                              \
        d[i] = FN(s[i]);

__attribute__((noinline)) static void ref_f16_base(const float *s, uint16_t *d, int64_t n)
{
    REF_BODY(aclk_f32_to_f16)
}

__attribute__((noinline)) static void ref_bf16_base(const float *s, uint16_t *d, int64_t n)
{
    REF_BODY(aclk_f32_to_bf16)
}

typedef void (*ref_fn)(const float *s, uint16_t *d, int64_t n);
static ref_fn ref_f32_to_f16 = ref_f16_base, ref_f32_to_bf16 = ref_bf16_base;

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((noinline, target("avx2"))) static void ref_f16_avx2(const float *s, uint16_t *d,
                                                                   int64_t n)
{
    REF_BODY(aclk_f32_to_f16)
}

__attribute__((noinline, target("avx2"))) static void ref_bf16_avx2(const float *s,
                                                                    uint16_t *d, int64_t n)
{
    REF_BODY(aclk_f32_to_bf16)
}

static void pick_refs(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
        ref_f32_to_f16 = ref_f16_avx2;
        ref_f32_to_bf16 = ref_bf16_avx2;
    }
}
#else
static void pick_refs(void)
{
}
#endif

static uint64_t cmp16(const char *what, const float *in, const uint16_t *got,
                      const uint16_t *want, int64_t n)
{
    if (memcmp(got, want, (size_t)n * 2) == 0)
        return 0;
    uint64_t bad = 0;
    for (int64_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            show(what, aclk_f32_bits(in[i]), got[i], want[i]);
            bad++;
        }
    return bad;
}

/* every float32 pattern (a sample: every stride-th one) through the level's narrowing, blocks
   alternating between the normal and the streaming stores (the same vector conversion, at a
   destination alignment that changes from block to block); two threads, each its half */
struct narrow_job {
    uint64_t first_block, end_block, stride;
    int ftz_daz;
    uint64_t bad[4], checked[4];
};

static void *narrow_run(void *arg)
{
    struct narrow_job *j = arg;
    float *in = malloc(BLOCK * sizeof(float));
    uint16_t *want = malloc(BLOCK * sizeof(uint16_t)), *got = malloc((BLOCK + 64) * 2);
    if (!in || !want || !got) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
#ifdef HAVE_MXCSR
    if (j->ftz_daz)
        _mm_setcsr(_mm_getcsr() | 0x8040u);
#endif
    const aclk_cvt_ops *t = aclk_cvt();
    static const char *names[4] = {"f32_to_f16", "f32_to_bf16", "f32_to_f16_nt",
                                   "f32_to_bf16_nt"};
    for (uint64_t k = j->first_block; k < j->end_block; k++) {
        uint32_t base = (uint32_t)(k * (uint64_t)BLOCK * j->stride), st = (uint32_t)j->stride;
        for (int i = 0; i < BLOCK; i++)
            in[i] = aclk_bits_f32(base + (uint32_t)i * st);
        int nt = (int)(k & 1), off = nt ? (int)(k % 13) : 0;
        for (int bf = 0; bf < 2; bf++) {
            int v = 2 * nt + bf;
            (bf ? ref_f32_to_bf16 : ref_f32_to_f16)(in, want, BLOCK);
            if (nt)
                (bf ? t->f32_to_bf16_nt : t->f32_to_f16_nt)(in, got + off, BLOCK);
            else
                (bf ? t->f32_to_bf16 : t->f32_to_f16)(in, got, BLOCK);
            aclk_nt_fence();
            j->bad[v] += cmp16(names[v], in, got + off, want, BLOCK);
            j->checked[v] += BLOCK;
        }
    }
    free(in);
    free(want);
    free(got);
    return NULL;
}

static int64_t narrow_all(const char *tag, uint64_t stride, int ftz_daz)
{
    uint64_t blocks = ((1ull << 32) / stride + BLOCK - 1) / BLOCK;
    struct narrow_job jobs[2];
    pthread_t th[2];
    for (int w = 0; w < 2; w++) {
        memset(&jobs[w], 0, sizeof jobs[w]);
        jobs[w].first_block = blocks * (uint64_t)w / 2;
        jobs[w].end_block = blocks * (uint64_t)(w + 1) / 2;
        jobs[w].stride = stride;
        jobs[w].ftz_daz = ftz_daz;
        if (pthread_create(&th[w], NULL, narrow_run, &jobs[w]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(2);
        }
    }
    for (int w = 0; w < 2; w++)
        pthread_join(th[w], NULL);
    static const char *names[2] = {"f32_to_f16", "f32_to_bf16"};
    int64_t total = 0;
    for (int bf = 0; bf < 2; bf++) {
        /* normal + streaming blocks together cover the inputs once */
        uint64_t checked = 0, bad = 0;
        for (int w = 0; w < 2; w++)
            for (int nt = 0; nt < 2; nt++) {
                checked += jobs[w].checked[2 * nt + bf];
                bad += jobs[w].bad[2 * nt + bf];
            }
        char name[64];
        snprintf(name, sizeof name, "%s%s", names[bf], tag);
        total += report(name, checked, bad);
    }
    return total;
}

/* every 16-bit pattern widened, through the table and through aclk_load_f32 */
static int64_t widen_all(void)
{
    static uint16_t in[65536];
    static float got[65536], want[65536];
    const aclk_cvt_ops *t = aclk_cvt();
    int64_t total = 0;
    for (int i = 0; i < 65536; i++)
        in[i] = (uint16_t)i;
    for (int bf = 0; bf < 2; bf++) {
        const char *what = bf ? "bf16_to_f32" : "f16_to_f32";
        for (int i = 0; i < 65536; i++)
            want[i] = bf ? aclk_bf16_to_f32(in[i]) : aclk_f16_to_f32(in[i]);
        uint64_t bad = 0;
        for (int pass = 0; pass < 2; pass++) {
            memset(got, 0, sizeof got);
            if (pass == 0)
                (bf ? t->bf16_to_f32 : t->f16_to_f32)(in, got, 65536);
            else
                aclk_load_f32(bf ? ACLK_BF16 : ACLK_F16, in, 0, 65536, got);
            for (int i = 0; i < 65536; i++)
                if (aclk_f32_bits(got[i]) != aclk_f32_bits(want[i])) {
                    show(what, in[i], aclk_f32_bits(got[i]), aclk_f32_bits(want[i]));
                    bad++;
                }
        }
        total += report(what, 65536, bad);
    }
    return total;
}

/* lengths 0..80 at source / destination offsets 0..17: heads, tails, and no write outside */
static int64_t edges(void)
{
    enum { MAXN = 80, MAXOFF = 18, GUARD = 24, SZ = MAXN + MAXOFF + 2 * GUARD };
    static float src[SZ], fdst[SZ], fwant[SZ];
    static uint16_t hsrc[SZ], hdst[SZ], hwant[SZ];
    const aclk_cvt_ops *t = aclk_cvt();
    uint64_t checked = 0, bad = 0;
    uint32_t seed = 12345u;
    for (int i = 0; i < SZ; i++) {
        seed = seed * 1664525u + 1013904223u;
        src[i] = aclk_bits_f32(seed);
        hsrc[i] = (uint16_t)(seed >> 16);
    }
    for (int n = 0; n <= MAXN; n++)
        for (int so = 0; so < MAXOFF; so++)
            for (int dof = 0; dof < MAXOFF; dof++) {
                const float *s = src + GUARD + so;
                const uint16_t *hs = hsrc + GUARD + so;
                /* 16-bit outputs: f16, bf16, normal and streaming, table and dtype.h helpers */
                for (int v = 0; v < 6; v++) {
                    memset(hdst, 0xA5, sizeof hdst);
                    memset(hwant, 0xA5, sizeof hwant);
                    uint16_t *d = hdst + GUARD + dof, *w = hwant + GUARD + dof;
                    int bf = v & 1;
                    (bf ? ref_f32_to_bf16 : ref_f32_to_f16)(s, w, n);
                    if (v < 2)
                        (bf ? t->f32_to_bf16 : t->f32_to_f16)(s, d, n);
                    else if (v < 4)
                        (bf ? t->f32_to_bf16_nt : t->f32_to_f16_nt)(s, d, n);
                    else
                        aclk_store_f32_nt(bf ? ACLK_BF16 : ACLK_F16, hdst + GUARD, dof, n, s);
                    aclk_nt_fence();
                    checked++;
                    if (memcmp(hdst, hwant, sizeof hdst) != 0) {
                        bad++;
                        if (g_shown++ < 10)
                            fprintf(stderr, "narrow variant %d n=%d src+%d dst+%d differs\n", v,
                                    n, so, dof);
                    }
                }
                /* float32 outputs: widening and the streaming copy */
                for (int v = 0; v < 4; v++) {
                    memset(fdst, 0x5A, sizeof fdst);
                    memset(fwant, 0x5A, sizeof fwant);
                    float *d = fdst + GUARD + dof, *w = fwant + GUARD + dof;
                    for (int i = 0; i < n; i++)
                        w[i] = v == 0 ? aclk_f16_to_f32(hs[i])
                               : v == 1 ? aclk_bf16_to_f32(hs[i])
                                        : s[i];
                    if (v == 0)
                        t->f16_to_f32(hs, d, n);
                    else if (v == 1)
                        t->bf16_to_f32(hs, d, n);
                    else if (v == 2)
                        t->copy_f32_nt(d, s, n);
                    else
                        aclk_store_f32_nt(ACLK_F32, fdst + GUARD, dof, n, s);
                    aclk_nt_fence();
                    checked++;
                    if (memcmp(fdst, fwant, sizeof fdst) != 0) {
                        bad++;
                        if (g_shown++ < 10)
                            fprintf(stderr, "f32 variant %d n=%d src+%d dst+%d differs\n", v, n,
                                    so, dof);
                    }
                }
            }
    return report("edges", checked, bad);
}

int main(void)
{
    printf("level %s\n", aclk_isa_name());
    pick_refs();
    int64_t bad = widen_all();
    bad += edges();
    /* the generic level's table is these scalar functions themselves (compared with their own
       copy it only checks the wiring): a sample of every 7th input there */
    bad += narrow_all("", aclk_isa_level() == ACLK_ISA_GENERIC ? 7 : 1, 0);
#ifdef HAVE_MXCSR
    /* flush-to-zero and denormals-are-zero on: the same bits (a sample of inputs) */
    bad += narrow_all("_ftz_daz", 61, 1);
#endif
    return bad ? 1 : 0;
}
