/*
 * isa.c: the instruction-set level the kernels run at, picked once when the library loads.
 *
 * Levels (dtype.h's ACLK_ISA_*):
 *   "avx512"  AVX-512 F + BW + DQ + VL, enabled by the OS (x86 only)
 *   "avx2"    AVX2 + F16C + FMA, enabled by the OS (x86 only)
 *   "generic" the portable C code, compiled for the baseline of the build target (SSE2 on
 *             x86-64, NEON on aarch64, which gcc and clang vectorise the loops with)
 * ACLNN_EMU_ISA=generic|avx2|avx512 asks for a level (to compare them, or to rule one out); a
 * level the CPU lacks gives the best one it has, and aclk_isa_name() names the level in use.
 * Any other value is ignored.
 *
 * Why this way:
 *   - No -march / -m flag at build time (a wheel built on one machine must run on any x86-64
 *     or aarch64 one): the vector code carries its instruction set in per-function target
 *     attributes (cvt_x86.h) and is only called after the CPU check here. CPU features come
 *     from __builtin_cpu_supports, which also checks that the OS saves the vector registers
 *     (XGETBV), and CPUID for F16C (clang 14's builtin does not know "f16c").
 *   - float16 / bfloat16 are converted with F16C (or AVX-512F) and AVX2 integer code, and all
 *     arithmetic stays float32 on every level: AVX-512-FP16 / AVX-512-BF16 arithmetic would
 *     round differently, and the results must be the same bits on every machine, every level
 *     and every thread count. vcvtneps2bf16 is not used either (it flushes subnormals); see
 *     dtype.h and cvt_x86.h.
 *   - Non-temporal stores for outputs larger than half the last-level cache (aclk_use_nt):
 *     such an output cannot stay in cache anyway, and streaming it saves the read for
 *     ownership of each line; smaller outputs keep normal stores so that whatever reads them
 *     next finds them in cache. The cache size is read once (sysfs, sysconf), 32 MiB if
 *     unknown; ACLNN_EMU_LLC replaces it for this policy only (aclk_store_llc_bytes), so that
 *     a machine with a large L3 can run the store policy of the 32 MiB L3 most users have.
 *
 * Initialisation runs from a constructor when the library is loaded, and under pthread_once
 * from every aclk_isa_level() call, so a call before the constructor (a static link with an
 * unusual start-up) is still right and thread-safe. Until then the conversion table is the
 * generic one, which gives the same bits.
 */
#define _GNU_SOURCE /* sysconf's _SC_LEVEL3_CACHE_SIZE */

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aclnn_emu.h"
#include "dtype.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ISA_X86 1
#endif

const aclk_cvt_ops *aclk_cvt_cur = &aclk_cvt_generic;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_level = ACLK_ISA_GENERIC;
static int64_t g_nt_min_bytes = (int64_t)16 << 20;

static const char *const NAMES[] = {"generic", "avx2", "avx512"};

/* the best level this CPU (and OS) supports */
static int cpu_best(void)
{
#ifdef ISA_X86
    __builtin_cpu_init();
    unsigned a = 0, b = 0, c = 0, d = 0;
    int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c))
        return ACLK_ISA_GENERIC;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return ACLK_ISA_AVX512;
    return ACLK_ISA_AVX2;
#else
    return ACLK_ISA_GENERIC;
#endif
}

static const aclk_cvt_ops *table(int level)
{
#ifdef ISA_X86
    if (level == ACLK_ISA_AVX512)
        return &aclk_cvt_avx512;
    if (level == ACLK_ISA_AVX2)
        return &aclk_cvt_avx2;
#endif
    (void)level;
    return &aclk_cvt_generic;
}

static void isa_init(void)
{
    int best = cpu_best(), level = best;
    const char *want = getenv("ACLNN_EMU_ISA");
    if (want != NULL) {
        for (int i = 0; i < (int)(sizeof NAMES / sizeof NAMES[0]); i++)
            if (strcmp(want, NAMES[i]) == 0)
                level = i < best ? i : best;
    }
    g_nt_min_bytes = aclk_store_llc_bytes() / 2;
    g_level = level;
    __atomic_store_n(&aclk_cvt_cur, table(level), __ATOMIC_RELEASE);
}

/* sysfs first: glibc's sysconf reports the L3 of the whole package on some CPUs (256 MiB on an
   8-complex EPYC, whose cores each share 32 MiB), which would keep outputs that cannot stay in
   the cache a core uses on normal stores */
static int64_t read_llc(void)
{
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r");
    if (f) {
        long v = 0;
        char unit = 'K';
        int got = fscanf(f, "%ld%c", &v, &unit);
        fclose(f);
        if (got >= 1 && v > 0)
            return (int64_t)v * (unit == 'M' ? 1 << 20 : unit == 'G' ? 1 << 30 : unit == 'K' ? 1 << 10 : 1);
    }
    long s = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    s = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return s > 0 ? (int64_t)s : (int64_t)32 << 20;
}

static pthread_once_t g_llc_once = PTHREAD_ONCE_INIT;
static int64_t g_llc;

static void llc_init(void)
{
    g_llc = read_llc();
}

int64_t aclk_llc_bytes(void)
{
    pthread_once(&g_llc_once, llc_init);
    return g_llc;
}

/* ACLNN_EMU_LLC: a byte count in the grammar of the emulator's other sizes (aclnn_py/config.py
   parse_size, ACLNN_EMU_MEM_LIMIT's): optional spaces, ASCII digits, optional spaces, an
   optional K / M / G / T (powers of 1024, either case), an optional "i", an optional "B",
   optional spaces ("32M", "32 MiB", "33554432B"); then from 64K to 64G. Anything else (an empty
   value, another character, a size out of range) is ignored, as ACLNN_EMU_ISA's unknown values
   are (`aclnn-py env` names it). */
static int llc_space(char ch)
{
    return ch == ' ' || (ch >= '\t' && ch <= '\r');
}

static int64_t parse_llc(const char *s)
{
    const int64_t most = (int64_t)64 << 30;
    if (s == NULL)
        return 0;
    while (llc_space(*s))
        s++;
    if (*s < '0' || *s > '9')
        return 0;
    int64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > most)
            return 0;
    }
    while (llc_space(*s))
        s++;
    int shift = 0;
    switch (*s) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: break;
    }
    if (shift)
        s++;
    if (*s == 'i' || *s == 'I')
        s++;
    if (*s == 'B' || *s == 'b')
        s++;
    while (llc_space(*s))
        s++;
    if (*s != '\0' || v > (most >> shift))
        return 0;
    v <<= shift;
    return v >= ((int64_t)64 << 10) ? v : 0;
}

static pthread_once_t g_store_once = PTHREAD_ONCE_INIT;
static int64_t g_store_llc;

static void store_llc_init(void)
{
    int64_t asked = parse_llc(getenv("ACLNN_EMU_LLC"));
    g_store_llc = asked ? asked : aclk_llc_bytes();
}

int64_t aclk_store_llc_bytes(void)
{
    pthread_once(&g_store_once, store_llc_init);
    return g_store_llc;
}

__attribute__((constructor)) static void isa_load(void)
{
    pthread_once(&g_once, isa_init);
}

int aclk_isa_level(void)
{
    pthread_once(&g_once, isa_init);
    return g_level;
}

int aclk_isa_ran = -1;

int emu_test_isa_ran(void)
{
    return __atomic_exchange_n(&aclk_isa_ran, -1, __ATOMIC_RELAXED);
}

const char *aclk_isa_name(void)
{
    return NAMES[aclk_isa_level()];
}

int aclk_use_nt(int64_t output_bytes)
{
    return aclk_isa_level() != ACLK_ISA_GENERIC && output_bytes > g_nt_min_bytes;
}
