/*
 * cvt.c: the array conversion tables of dtype.h (aclk_cvt_ops), one per ISA level: float16 /
 * bfloat16 <-> float32 and float32 copies, with normal or non-temporal stores. isa.c picks the
 * table when the library loads; aclk_load_f32 / aclk_store_f32 / aclk_store_f32_nt call it
 * once per chunk.
 *
 * Every table gives the bits of dtype.h's scalar functions for every input (see cvt_x86.h for
 * why the vector forms do; tests/c/cvt_exhaustive.c checks all 2^16 and 2^32 inputs per
 * level). The _nt forms store the unaligned head and the tail normally and the aligned body
 * with streaming stores; the generic table has no streaming stores (aclk_use_nt says 0 there)
 * and its _nt forms are the normal ones.
 */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <string.h>

#include "aclnn_emu.h"
#include "cvt_x86.h"
#include "dtype.h"

/* ---------------------------------------------------------------------- generic ---- */

static void gen_f16_to_f32(const uint16_t *restrict s, float *restrict d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = aclk_f16_to_f32(s[i]);
}

static void gen_bf16_to_f32(const uint16_t *restrict s, float *restrict d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = aclk_bf16_to_f32(s[i]);
}

static void gen_f32_to_f16(const float *restrict s, uint16_t *restrict d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = aclk_f32_to_f16(s[i]);
}

static void gen_f32_to_bf16(const float *restrict s, uint16_t *restrict d, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        d[i] = aclk_f32_to_bf16(s[i]);
}

static void gen_copy_f32(float *restrict d, const float *restrict s, int64_t n)
{
    memcpy(d, s, (size_t)n * sizeof(float));
}

const aclk_cvt_ops aclk_cvt_generic = {
    ACLK_ISA_GENERIC, gen_f16_to_f32, gen_bf16_to_f32, gen_f32_to_f16, gen_f32_to_bf16,
    gen_f32_to_f16, gen_f32_to_bf16, gen_copy_f32,
};

#ifdef ACLK_X86

/* ------------------------------------------------------------------------- AVX2 ---- */

ACLK_TARGET_AVX2 static void avx2_f16_to_f32(const uint16_t *restrict s, float *restrict d,
                                             int64_t n)
{
    int64_t i = 0;
    /* 32 halves per step with one signaling-NaN test for all of them (about 1.6x faster in L1
       than testing every 8); a step that holds one is converted 8 at a time with the fix-up */
    const __m256i mag = _mm256_set1_epi16(0x7FFF), lo = _mm256_set1_epi16(0x7C00),
                  hi = _mm256_set1_epi16(0x7E00);
    for (; i + 32 <= n; i += 32) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + i + 16));
        __m256i ma = _mm256_and_si256(a, mag), mb = _mm256_and_si256(b, mag);
        __m256i sn = _mm256_or_si256(
            _mm256_and_si256(_mm256_cmpgt_epi16(ma, lo), _mm256_cmpgt_epi16(hi, ma)),
            _mm256_and_si256(_mm256_cmpgt_epi16(mb, lo), _mm256_cmpgt_epi16(hi, mb)));
        if (!_mm256_testz_si256(sn, sn)) {
            for (int k = 0; k < 32; k += 8)
                _mm256_storeu_ps(d + i + k, aclk_avx2_ld_f16(s + i + k));
            continue;
        }
        _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm256_castsi256_si128(a)));
        _mm256_storeu_ps(d + i + 8, _mm256_cvtph_ps(_mm256_extracti128_si256(a, 1)));
        _mm256_storeu_ps(d + i + 16, _mm256_cvtph_ps(_mm256_castsi256_si128(b)));
        _mm256_storeu_ps(d + i + 24, _mm256_cvtph_ps(_mm256_extracti128_si256(b, 1)));
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, aclk_avx2_ld_f16(s + i));
    for (; i < n; i++)
        d[i] = aclk_f16_to_f32(s[i]);
}

ACLK_TARGET_AVX2 static void avx2_bf16_to_f32(const uint16_t *restrict s, float *restrict d,
                                              int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(d + i, aclk_avx2_ld_bf16(s + i));
    for (; i < n; i++)
        d[i] = aclk_bf16_to_f32(s[i]);
}

/* narrowing, normal or streaming (16-byte stores of 8 elements, 16-byte aligned; bfloat16 in
   32-byte stores of 16 where it can, so that one NaN test covers 16 elements). The streaming
   head is scalar only up to 16-byte alignment (32 would put normal stores into lines that are
   also streamed wherever the destination is 16 bytes off 32, as large mallocs are: a float32 ->
   bfloat16 store of SEG pieces measured 2x slower), then one 8-element step up to 32 bytes. */
ACLK_AVX2_INLINE void avx2_narrow(int bf, int nt, const float *restrict s,
                                  uint16_t *restrict d, int64_t n)
{
    int64_t i = nt ? aclk_nt_head(d, 2, 16, n) : 0;
    for (int64_t k = 0; k < i; k++)
        d[k] = bf ? aclk_f32_to_bf16(s[k]) : aclk_f32_to_f16(s[k]);
    if (bf && nt && ((uintptr_t)(d + i) & 31) && i + 8 <= n) {
        _mm_stream_si128((__m128i *)(d + i), aclk_avx2_cvt_bf16(_mm256_loadu_ps(s + i)));
        i += 8;
    }
    for (; bf && i + 16 <= n; i += 16) {
        __m256i r = aclk_avx2_cvt2_bf16(_mm256_loadu_ps(s + i), _mm256_loadu_ps(s + i + 8));
        if (nt)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(s + i);
        __m128i r = bf ? aclk_avx2_cvt_bf16(v) : aclk_avx2_cvt_f16(v);
        if (nt)
            _mm_stream_si128((__m128i *)(d + i), r);
        else
            _mm_storeu_si128((__m128i *)(d + i), r);
    }
    for (; i < n; i++)
        d[i] = bf ? aclk_f32_to_bf16(s[i]) : aclk_f32_to_f16(s[i]);
}

ACLK_TARGET_AVX2 static void avx2_f32_to_f16(const float *restrict s, uint16_t *restrict d,
                                             int64_t n)
{
    avx2_narrow(0, 0, s, d, n);
}

ACLK_TARGET_AVX2 static void avx2_f32_to_bf16(const float *restrict s, uint16_t *restrict d,
                                              int64_t n)
{
    avx2_narrow(1, 0, s, d, n);
}

ACLK_TARGET_AVX2 static void avx2_f32_to_f16_nt(const float *restrict s, uint16_t *restrict d,
                                                int64_t n)
{
    avx2_narrow(0, 1, s, d, n);
}

ACLK_TARGET_AVX2 static void avx2_f32_to_bf16_nt(const float *restrict s,
                                                 uint16_t *restrict d, int64_t n)
{
    avx2_narrow(1, 1, s, d, n);
}

ACLK_TARGET_AVX2 static void avx2_copy_f32_nt(float *restrict d, const float *restrict s,
                                              int64_t n)
{
    int64_t i = aclk_nt_head(d, 4, 32, n);
    memcpy(d, s, (size_t)i * sizeof(float));
    for (; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(s + i), b = _mm256_loadu_ps(s + i + 8);
        _mm256_stream_ps(d + i, a);
        _mm256_stream_ps(d + i + 8, b);
    }
    for (; i + 8 <= n; i += 8)
        _mm256_stream_ps(d + i, _mm256_loadu_ps(s + i));
    memcpy(d + i, s + i, (size_t)(n - i) * sizeof(float));
}

const aclk_cvt_ops aclk_cvt_avx2 = {
    ACLK_ISA_AVX2, avx2_f16_to_f32, avx2_bf16_to_f32, avx2_f32_to_f16, avx2_f32_to_bf16,
    avx2_f32_to_f16_nt, avx2_f32_to_bf16_nt, avx2_copy_f32_nt,
};

/* ---------------------------------------------------------------------- AVX-512 ---- */

ACLK_TARGET_AVX512 static void avx512_f16_to_f32(const uint16_t *restrict s, float *restrict d,
                                                 int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(d + i, aclk_avx512_ld_f16(s + i));
    for (; i < n; i++)
        d[i] = aclk_f16_to_f32(s[i]);
}

ACLK_TARGET_AVX512 static void avx512_bf16_to_f32(const uint16_t *restrict s,
                                                  float *restrict d, int64_t n)
{
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(d + i, aclk_avx512_ld_bf16(s + i));
    for (; i < n; i++)
        d[i] = aclk_bf16_to_f32(s[i]);
}

/* narrowing, normal or streaming (float16: 32-byte stores of 16 elements, 32-byte aligned;
   bfloat16: 64-byte stores of 32, 64-byte aligned, then at most one 32-byte store of 16) */
ACLK_AVX512_INLINE void avx512_narrow(int bf, int nt, const float *restrict s,
                                      uint16_t *restrict d, int64_t n)
{
    int64_t i = nt ? aclk_nt_head(d, 2, bf ? 64 : 32, n) : 0;
    for (int64_t k = 0; k < i; k++)
        d[k] = bf ? aclk_f32_to_bf16(s[k]) : aclk_f32_to_f16(s[k]);
    /* bfloat16 32 at a time: one NaN compare and one pack for two vectors, 64-byte stores */
    for (; bf && i + 32 <= n; i += 32) {
        __m512i r = aclk_avx512_cvt2_bf16(_mm512_loadu_ps(s + i), _mm512_loadu_ps(s + i + 16));
        if (nt)
            _mm512_stream_si512((void *)(d + i), r);
        else
            _mm512_storeu_si512((void *)(d + i), r);
    }
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(s + i);
        __m256i r = bf ? aclk_avx512_cvt_bf16(v) : aclk_avx512_cvt_f16(v);
        if (nt)
            _mm256_stream_si256((__m256i *)(d + i), r);
        else
            _mm256_storeu_si256((__m256i *)(d + i), r);
    }
    for (; i < n; i++)
        d[i] = bf ? aclk_f32_to_bf16(s[i]) : aclk_f32_to_f16(s[i]);
}

ACLK_TARGET_AVX512 static void avx512_f32_to_f16(const float *restrict s, uint16_t *restrict d,
                                                 int64_t n)
{
    avx512_narrow(0, 0, s, d, n);
}

ACLK_TARGET_AVX512 static void avx512_f32_to_bf16(const float *restrict s,
                                                  uint16_t *restrict d, int64_t n)
{
    avx512_narrow(1, 0, s, d, n);
}

ACLK_TARGET_AVX512 static void avx512_f32_to_f16_nt(const float *restrict s,
                                                    uint16_t *restrict d, int64_t n)
{
    avx512_narrow(0, 1, s, d, n);
}

ACLK_TARGET_AVX512 static void avx512_f32_to_bf16_nt(const float *restrict s,
                                                     uint16_t *restrict d, int64_t n)
{
    avx512_narrow(1, 1, s, d, n);
}

ACLK_TARGET_AVX512 static void avx512_copy_f32_nt(float *restrict d, const float *restrict s,
                                                  int64_t n)
{
    int64_t i = aclk_nt_head(d, 4, 64, n);
    memcpy(d, s, (size_t)i * sizeof(float));
    for (; i + 16 <= n; i += 16)
        _mm512_stream_ps(d + i, _mm512_loadu_ps(s + i));
    memcpy(d + i, s + i, (size_t)(n - i) * sizeof(float));
}

const aclk_cvt_ops aclk_cvt_avx512 = {
    ACLK_ISA_AVX512, avx512_f16_to_f32, avx512_bf16_to_f32, avx512_f32_to_f16,
    avx512_f32_to_bf16, avx512_f32_to_f16_nt, avx512_f32_to_bf16_nt, avx512_copy_f32_nt,
};

#endif /* ACLK_X86 */
