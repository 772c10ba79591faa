/*
 * cvt_x86.h: x86 vector forms of the float16 / bfloat16 conversions of dtype.h, for the
 * kernels' AVX2 and AVX-512 code (cvt.c, hardsigmoid.c, cast.c). Empty on other machines.
 *
 * No -m flag builds any of this: each function carries its instruction set in a target
 * attribute, and only runs after isa.c found that instruction set on the CPU. The helpers are
 * forced inline into callers with the same (or a larger) target.
 *
 * Bits are those of the scalar functions in dtype.h, for every input:
 *   - f16 -> f32: vcvtph2ps (exact), except that it quiets a signaling NaN; the _exact loads
 *     clear the float's quiet bit again in those lanes. The _raw loads skip that fix-up: for
 *     a value that goes into float arithmetic first (which quiets a signaling NaN anyway, with
 *     the same payload) the results are the same bits.
 *   - f32 -> f16: vcvtps2ph with round to nearest even (imm 0x08: rounding from the
 *     immediate, exceptions suppressed): the same as aclk_f32_to_f16, NaNs included
 *     (quiet bit set, top 10 payload bits kept), whatever MXCSR's FTZ / DAZ say.
 *   - bfloat16: widening is a 16-bit shift; narrowing is aclk_f32_to_bf16's integer rounding
 *     to nearest even on vectors (not AVX-512-BF16's vcvtneps2bf16, which flushes float32
 *     subnormal inputs to zero).
 */
#ifndef ACLK_CVT_X86_H
#define ACLK_CVT_X86_H

#include "dtype.h"

#if defined(__x86_64__) || defined(__i386__)
#define ACLK_X86 1

#include <immintrin.h>

#define ACLK_TARGET_AVX2 __attribute__((target("avx2,f16c,fma")))
#define ACLK_TARGET_AVX512 \
    __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")))
#define ACLK_AVX2_INLINE static inline __attribute__((always_inline, target("avx2,f16c,fma")))
#define ACLK_AVX512_INLINE                          \
    static inline __attribute__((always_inline,     \
                                 target("avx512f,avx512bw,avx512dq,avx512vl,avx2,f16c,fma")))

#define ACLK_F16_RNE (_MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)

/* ------------------------------------------------------------------------- AVX2 ---- */

/* 8 halves -> 8 floats; a signaling NaN comes out quiet (see above) */
ACLK_AVX2_INLINE __m256 aclk_avx2_ld_f16_raw(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

/* 8 halves -> 8 floats, bit for bit aclk_f16_to_f32 */
ACLK_AVX2_INLINE __m256 aclk_avx2_ld_f16(const uint16_t *p)
{
    __m128i h = _mm_loadu_si128((const __m128i *)p);
    __m256 f = _mm256_cvtph_ps(h);
    /* signaling NaN: magnitude in (0x7C00, 0x7E00) (exponent all ones, quiet bit clear,
       mantissa not zero); 16-bit signed compares are right for magnitudes <= 0x7FFF */
    __m128i mag = _mm_and_si128(h, _mm_set1_epi16(0x7FFF));
    __m128i sn = _mm_and_si128(_mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7C00)),
                               _mm_cmpgt_epi16(_mm_set1_epi16(0x7E00), mag));
    if (_mm_testz_si128(sn, sn))
        return f;
    __m256i quiet = _mm256_and_si256(_mm256_cvtepi16_epi32(sn), _mm256_set1_epi32(0x00400000));
    return _mm256_castsi256_ps(_mm256_andnot_si256(quiet, _mm256_castps_si256(f)));
}

/* 8 bfloat16 -> 8 floats (exact) */
ACLK_AVX2_INLINE __m256 aclk_avx2_ld_bf16(const uint16_t *p)
{
    __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
}

/* 8 floats -> 8 halves, round to nearest even */
ACLK_AVX2_INLINE __m128i aclk_avx2_cvt_f16(__m256 v)
{
    return _mm256_cvtps_ph(v, ACLK_F16_RNE);
}

/* 8 floats -> 8 bfloat16 in 32-bit lanes: aclk_f32_to_bf16 */
ACLK_AVX2_INLINE __m256i aclk_avx2_bf16_bits(__m256 v)
{
    __m256i u = _mm256_castps_si256(v);
    __m256i hi = _mm256_srli_epi32(u, 16);
    __m256i odd = _mm256_and_si256(hi, _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd);
    r = _mm256_srli_epi32(r, 16);
    __m256i nan = _mm256_or_si256(hi, _mm256_set1_epi32(0x0040));
    __m256 isnan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q); /* |u| > 0x7F800000 */
    return _mm256_castps_si256(
        _mm256_blendv_ps(_mm256_castsi256_ps(r), _mm256_castsi256_ps(nan), isnan));
}

/* 8 floats -> 8 bfloat16 (values < 2^16, so the saturating pack is exact) */
ACLK_AVX2_INLINE __m128i aclk_avx2_cvt_bf16(__m256 v)
{
    __m256i r = aclk_avx2_bf16_bits(v);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

/* 16 floats (v0 then v1) -> 16 halves / bfloat16 in one vector */
ACLK_AVX2_INLINE __m256i aclk_avx2_cvt2_f16(__m256 v0, __m256 v1)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(aclk_avx2_cvt_f16(v0)),
                                   aclk_avx2_cvt_f16(v1), 1);
}

/* aclk_avx2_bf16_bits for lanes that are not NaN */
ACLK_AVX2_INLINE __m256i aclk_avx2_bf16_bits_num(__m256 v)
{
    __m256i u = _mm256_castps_si256(v);
    __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    return _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7FFF)), odd),
                             16);
}

ACLK_AVX2_INLINE __m256i aclk_avx2_cvt2_bf16(__m256 v0, __m256 v1)
{
    /* One compare finds a NaN in either vector; without one (the common case) the rounding
       needs no NaN select, which is 3 of its 8 operations. */
    __m256 nan = _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q);
    __m256i r0, r1;
    if (_mm256_testz_ps(nan, nan)) {
        r0 = aclk_avx2_bf16_bits_num(v0);
        r1 = aclk_avx2_bf16_bits_num(v1);
    } else {
        r0 = aclk_avx2_bf16_bits(v0);
        r1 = aclk_avx2_bf16_bits(v1);
    }
    /* the pack works within 128-bit halves: 0-3 of v0, 0-3 of v1, 4-7 of v0, 4-7 of v1 */
    __m256i p = _mm256_packus_epi32(r0, r1);
    return _mm256_permute4x64_epi64(p, 0xD8);
}

/* A pair for elementwise kernels: 16 bfloat16 -> two vectors of floats in the unpack's lane
   order (v0: elements 0-3 and 8-11, v1: 4-7 and 12-15), and two such vectors -> 16 bfloat16 in
   element order (the 32 -> 16 pack undoes the unpack's order within each 128-bit half). One
   load and two unpacks instead of two widening loads and two shifts; no permute. */
ACLK_AVX2_INLINE void aclk_avx2_ld2_bf16_lanes(const uint16_t *p, __m256 *v0, __m256 *v1)
{
    __m256i w = _mm256_loadu_si256((const __m256i *)p), z = _mm256_setzero_si256();
    *v0 = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, w));
    *v1 = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, w));
}

ACLK_AVX2_INLINE __m256i aclk_avx2_cvt2_bf16_lanes(__m256 v0, __m256 v1)
{
    __m256 nan = _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q);
    if (_mm256_testz_ps(nan, nan))
        return _mm256_packus_epi32(aclk_avx2_bf16_bits_num(v0), aclk_avx2_bf16_bits_num(v1));
    return _mm256_packus_epi32(aclk_avx2_bf16_bits(v0), aclk_avx2_bf16_bits(v1));
}

/* ---------------------------------------------------------------------- AVX-512 ---- */

ACLK_AVX512_INLINE __m512 aclk_avx512_ld_f16_raw(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

ACLK_AVX512_INLINE __m512 aclk_avx512_ld_f16(const uint16_t *p)
{
    __m256i h = _mm256_loadu_si256((const __m256i *)p);
    __m512 f = _mm512_cvtph_ps(h);
    __m256i mag = _mm256_and_si256(h, _mm256_set1_epi16(0x7FFF));
    __mmask16 sn = _mm256_cmpgt_epi16_mask(mag, _mm256_set1_epi16(0x7C00)) &
                   _mm256_cmpgt_epi16_mask(_mm256_set1_epi16(0x7E00), mag);
    __m512i fb = _mm512_castps_si512(f);
    /* lanes in sn: ~0x00400000 & f; others: f */
    return _mm512_castsi512_ps(
        _mm512_mask_andnot_epi32(fb, sn, _mm512_set1_epi32(0x00400000), fb));
}

ACLK_AVX512_INLINE __m512 aclk_avx512_ld_bf16(const uint16_t *p)
{
    __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

ACLK_AVX512_INLINE __m256i aclk_avx512_cvt_f16(__m512 v)
{
    return _mm512_cvtps_ph(v, ACLK_F16_RNE);
}

/* the bfloat16 bits of 16 floats that are not NaN, one per 32-bit lane (values < 2^16):
   aclk_f32_to_bf16's round to nearest even */
ACLK_AVX512_INLINE __m512i aclk_avx512_bf16_bits_num(__m512 v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    return _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7FFF)), odd),
                             16);
}

/* the same for any floats: a NaN keeps its top bits, with the quiet bit set */
ACLK_AVX512_INLINE __m512i aclk_avx512_bf16_bits(__m512 v)
{
    __m512i nan = _mm512_or_si512(_mm512_srli_epi32(_mm512_castps_si512(v), 16),
                                  _mm512_set1_epi32(0x0040));
    __mmask16 isnan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_mask_blend_epi32(isnan, aclk_avx512_bf16_bits_num(v), nan);
}

ACLK_AVX512_INLINE __m256i aclk_avx512_cvt_bf16(__m512 v)
{
    return _mm512_cvtepi32_epi16(aclk_avx512_bf16_bits(v));
}

/* The AVX-512 form of the elementwise pair (see aclk_avx2_ld2_bf16_lanes): 32 bfloat16 -> two
   vectors in the unpack's lane order (v0: elements 0-3, 8-11, ... of each 128-bit lane's 8,
   v1: 4-7, ...), and two such vectors -> 32 bfloat16 in element order (the pack within
   128-bit lanes undoes the unpack). One compare finds a NaN in either vector; without one (the
   common case) the rounding skips the NaN select. */
ACLK_AVX512_INLINE void aclk_avx512_ld2_bf16_lanes(const uint16_t *p, __m512 *v0, __m512 *v1)
{
    __m512i w = _mm512_loadu_si512((const void *)p), z = _mm512_setzero_si512();
    *v0 = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, w));
    *v1 = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, w));
}

ACLK_AVX512_INLINE __m512i aclk_avx512_cvt2_bf16_lanes(__m512 v0, __m512 v1)
{
    if (!_mm512_cmp_ps_mask(v0, v1, _CMP_UNORD_Q))
        return _mm512_packus_epi32(aclk_avx512_bf16_bits_num(v0), aclk_avx512_bf16_bits_num(v1));
    return _mm512_packus_epi32(aclk_avx512_bf16_bits(v0), aclk_avx512_bf16_bits(v1));
}

/* 32 floats (v0 then v1) -> 32 bfloat16 in element order: the lanes' pack (0-3 of v0, 0-3 of
   v1, 4-7 of v0, 4-7 of v1 per 128-bit lane) put back in order by 64-bit pieces */
ACLK_AVX512_INLINE __m512i aclk_avx512_cvt2_bf16(__m512 v0, __m512 v1)
{
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7),
                                    aclk_avx512_cvt2_bf16_lanes(v0, v1));
}

/* elements to store with normal stores before dst + i*esize is aligned to `align` bytes
   (at most n; all n when dst is not even aligned to esize) */
static inline int64_t aclk_nt_head(const void *dst, int64_t esize, int64_t align, int64_t n)
{
    uintptr_t a = (uintptr_t)dst;
    if (a % (uintptr_t)esize)
        return n;
    int64_t h = (int64_t)(((uintptr_t)align - a % (uintptr_t)align) % (uintptr_t)align) / esize;
    return h < n ? h : n;
}

#endif /* x86 */

#endif /* ACLK_CVT_X86_H */
