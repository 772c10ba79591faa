/*
 * softmax_relaxed_body.h: the relaxed softmax kernels' body, included by softmax_relaxed.c once
 * per ISA level with the vector operations of that level defined (see there for their meaning):
 * V (a vector of VW floats), V_LD / V_LDN / V_ST / V_STN (16-bit loads and stores, whole and
 * partial), V_EXP (V_EXPN: for d <= 0 or NaN), V_FNMA (c - a*b), V_CNT_EQ0 / V_ADD_NE0 (the
 * max-term count and the sum of the other terms), V_HSUM / V_HMAX, ATTR (the level's target
 * attribute), SFX(name). V_EXPC: the forward column blocks' exp for d <= 0 or NaN where no fast
 * exp is taken (V_EXPN, or the AVX-512 level's r5_exp_col).
 * No include guard: it is meant to be included several times.
 */

/* e0..e3 = exp(d0..d3) for d <= 0 or NaN: the level's fast exp when no lane is below its
   range (R_FAST; a compare per vector: see r2_any_lt4), else the clamped one */
#define R_EXPN4(d0, d1, d2, d3, e0, e1, e2, e3)                                               \
    do {                                                                                      \
        if (R_FAST && !V_ANY_LT4(d0, d1, d2, d3, RD_NORM)) {                                  \
            e0 = V_EXPN_F(d0), e1 = V_EXPN_F(d1), e2 = V_EXPN_F(d2), e3 = V_EXPN_F(d3);       \
        } else {                                                                              \
            e0 = V_EXPN(d0), e1 = V_EXPN(d1), e2 = V_EXPN(d2), e3 = V_EXPN(d3);               \
        }                                                                                     \
    } while (0)

/* e0, e1 = exp(y0), exp(y1) for any y: the level's fast exp when every lane is in its range
   (R_FAST; a NaN lane is fine there), else the clamped one */
#define R_EXP2(y0, y1, e0, e1)                                                                \
    do {                                                                                      \
        if (R_FAST && !V_ANY_OUT2(y0, y1, RD_NORM, RD_FHI))                                  \
            e0 = V_EXP_F(y0), e1 = V_EXP_F(y1);                                               \
        else                                                                                  \
            e0 = V_EXP(y0), e1 = V_EXP(y1);                                                   \
    } while (0)

/* ------------------------------------------------------------------ forward rows ---- */

/* whether the level's vector pairs (V_LD2F) hold 2*VW elements in another order than
   memory's, so that eb keeps a row's exps in that order from the row's start: bfloat16 at the
   AVX2 level (VW 8), as even and odd elements */
#if VW == 8
#define R_ROW_PERM(bf) (bf)
#else
#define R_ROW_PERM(bf) 0
#endif

/* the outputs [0, len) of a row's part at xp into d (ep: its exps in eb, when keep): whole
   vectors in loops of their own, 4 at a time (the per-vector length test and the keep / log
   choice hoisted: they cost more instructions than the outputs' arithmetic), then the tail.
   nt: d 64-byte aligned and len a multiple of 32 (whole lines), stored by V_ST2F_NT */
static inline __attribute__((always_inline)) ATTR void SFX(fwd_row_out)(
    const uint16_t *xp, uint16_t *d, const float *ep, int64_t len, const V vm, const V vf,
    const int fast, const int bf, const int lg, const int keep, const int nt)
{
    const uint16_t pad = bf ? BF16_NEG_INF : F16_NEG_INF;
    const int64_t lv = len / VW * VW;
#define R_ST2(p, v0, v1, bf)                                                                  \
    do {                                                                                      \
        if (nt)                                                                               \
            V_ST2F_NT(p, v0, v1, bf);                                                         \
        else                                                                                  \
            V_ST2F(p, v0, v1, bf);                                                            \
    } while (0)
    int64_t k = 0;
    if (lg) {
        for (; k + 4 * VW <= lv; k += 4 * VW) {
            V x0, x1, x2, x3;
            V_LD2F(xp + k, bf, x0, x1);
            V_LD2F(xp + k + 2 * VW, bf, x2, x3);
            R_ST2(d + k, V_SUB(V_SUB(x0, vm), vf), V_SUB(V_SUB(x1, vm), vf), bf);
            R_ST2(d + k + 2 * VW, V_SUB(V_SUB(x2, vm), vf), V_SUB(V_SUB(x3, vm), vf), bf);
        }
        for (; k + 2 * VW <= lv; k += 2 * VW) {
            V x0, x1;
            V_LD2F(xp + k, bf, x0, x1);
            R_ST2(d + k, V_SUB(V_SUB(x0, vm), vf), V_SUB(V_SUB(x1, vm), vf), bf);
        }
        for (; k < lv; k += VW)
            V_ST(d + k, V_SUB(V_SUB(V_LD(xp + k, bf), vm), vf), bf);
    } else if (keep) {
        for (; k + 4 * VW <= lv; k += 4 * VW) {
            const V v0 = V_MUL(V_LDF(ep + k), vf), v1 = V_MUL(V_LDF(ep + k + VW), vf);
            const V v2 = V_MUL(V_LDF(ep + k + 2 * VW), vf);
            const V v3 = V_MUL(V_LDF(ep + k + 3 * VW), vf);
            R_ST2(d + k, v0, v1, bf);
            R_ST2(d + k + 2 * VW, v2, v3, bf);
        }
        for (; k + 2 * VW <= lv; k += 2 * VW)
            R_ST2(d + k, V_MUL(V_LDF(ep + k), vf), V_MUL(V_LDF(ep + k + VW), vf), bf);
        for (; k < lv; k += VW)
            V_ST(d + k, V_MUL(V_LDF(ep + k), vf), bf);
    } else {
        for (; k + 2 * VW <= lv; k += 2 * VW) {
            V x0, x1;
            V_LD2F(xp + k, bf, x0, x1);
            const V d0 = V_SUB(x0, vm), d1 = V_SUB(x1, vm);
            R_ST2(d + k, V_MUL(fast ? V_EXPN_F(d0) : V_EXPN(d0), vf),
                  V_MUL(fast ? V_EXPN_F(d1) : V_EXPN(d1), vf), bf);
        }
        for (; k < lv; k += VW) {
            const V dx = V_SUB(V_LD(xp + k, bf), vm);
            V_ST(d + k, V_MUL(fast ? V_EXPN_F(dx) : V_EXPN(dx), vf), bf);
        }
    }
    if (k < len) {
        const int64_t l = len - k;
        V v;
        if (lg)
            v = V_SUB(V_SUB(V_LDN(xp + k, l, bf, pad), vm), vf);
        else
            v = V_MUL(keep ? V_LDFN(ep + k, l) : V_EXPN(V_SUB(V_LDN(xp + k, l, bf, pad), vm)),
                      vf);
        V_STN(d + k, v, l, bf);
    }
#undef R_ST2
}

#if VW == 8
/* the AVX2 level's streamed bfloat16 softmax row whose exps eb keeps in pair order (R_ROW_PERM)
   and whose output's first line starts h elements in, h % 16 == 8 (a row start 16 bytes past
   a line, as most large allocations of the C library): each pair group packed to memory's
   order (r2b_pack2), each 32 bytes of the lines [h, h + m) from two groups (the upper half
   of one, the lower of the next: one vperm2i128) and streamed; the groups wholly before and
   after by fwd_row_out, the half groups at either end of the lines by normal stores. The
   groups used end by the row's last whole pair group (h + m + 8 <= n / 16 * 16) */
static inline __attribute__((always_inline)) ATTR void SFX(fwd_row_half)(
    const uint16_t *xr, uint16_t *yr, const float *eb, int64_t n, int64_t h, int64_t m,
    const V vm, const V vf, const int fast)
{
    SFX(fwd_row_out)(xr, yr, eb, h - 8, vm, vf, fast, 1, 0, 1, 0);
    __m256i prev = r2b_pack2(V_MUL(V_LDF(eb + h - 8), vf), V_MUL(V_LDF(eb + h), vf), 1);
    _mm_storeu_si128((__m128i *)(yr + h - 8), _mm256_castsi256_si128(prev));
    for (int64_t k = h; k < h + m; k += 16) {
        const __m256i w = r2b_pack2(V_MUL(V_LDF(eb + k + 8), vf), V_MUL(V_LDF(eb + k + 16), vf),
                                    1);
        _mm256_stream_si256((__m256i *)(yr + k), _mm256_permute2x128_si256(prev, w, 0x21));
        prev = w;
    }
    _mm_storeu_si128((__m128i *)(yr + h + m), _mm256_extracti128_si256(prev, 1));
    const int64_t t = h + m + 8;
    SFX(fwd_row_out)(xr + t, yr + t, eb + t, n - t, vm, vf, fast, 1, 0, 1, 0);
}
#endif

/* one row of n elements at xr: max, exps (kept in eb when n <= RROWBUF), normalise. Whole
   2*VW groups from the row's start are loaded and stored as vector pairs (V_LD2F / V_ST2F, the
   level's lane order: bfloat16 at the AVX2 level as even and odd elements), eb holding them in
   that order; the row's last n % (2*VW) elements one vector at a time, in both passes alike */
static inline __attribute__((always_inline)) ATTR void SFX(fwd_row)(
    const rfwd_args *c, const uint16_t *xr, uint16_t *yr, int64_t n, const char *pf,
    float *eb, uint16_t *hb, const int bf, const int lg)
{
    const uint16_t pad = bf ? BF16_NEG_INF : F16_NEG_INF;
    /* pass 1: max (a NaN may or may not win it: either way it reaches every output through
       the sum) */
    V m0 = V_SET1(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    /* and, where the level has a fast exp (R_FAST), the min: whether every x - max is in its
       range (a NaN dropped by max and min is fine there: see V_EXPN_F) */
    V n0 = V_SET1(INFINITY), n1 = n0;
    int64_t k = 0;
    for (; k + 4 * VW <= n; k += 4 * VW) {
        V x0, x1, x2, x3;
        V_LD2F(xr + k, bf, x0, x1);
        V_LD2F(xr + k + 2 * VW, bf, x2, x3);
        m0 = V_MAX(m0, x0), m1 = V_MAX(m1, x1), m2 = V_MAX(m2, x2), m3 = V_MAX(m3, x3);
        if (R_FAST)
            n0 = V_MIN(n0, V_MIN(x0, x1)), n1 = V_MIN(n1, V_MIN(x2, x3));
    }
    for (; k + VW <= n; k += VW) {
        const V x0 = V_LD(xr + k, bf);
        m0 = V_MAX(m0, x0);
        if (R_FAST)
            n0 = V_MIN(n0, x0);
    }
    if (k < n) {
        /* padded with -inf, which the min must not see: padded with the first element */
        m1 = V_MAX(m1, V_LDN(xr + k, n - k, bf, pad));
        if (R_FAST)
            n1 = V_MIN(n1, V_LDN(xr + k, n - k, bf, xr[0]));
    }
    const float mx = V_HMAX(V_MAX(V_MAX(m0, m1), V_MAX(m2, m3)));
    const V vm = V_SET1(mx);
    const int fast = R_FAST && V_HMIN(V_MIN(n0, n1)) - mx >= RD_NORM;

    /* pass 2: e = exp(x - m) and its sum, the next row prefetched a part per RPF_BLOCK
       elements */
    const int keep = !lg && n <= RROWBUF;
    const int64_t nparts = (n + RPF_BLOCK - 1) / RPF_BLOCK;
    V s0 = V_SET1(0.0f), s1 = s0, s2 = s0, s3 = s0, c0 = s0;
    /* 4 vectors at a time in loops of their own, one per choice of the exp (fast or not) and
       of keeping the exps, the output's lines prefetched for writing (one per 64 bytes): the
       choices tested per iteration, with a prefetch per 2 vectors, cost 7 of 37 instructions
       per 16 float16 elements at the AVX2 level */
#define R_ROW_EXPS4(EXP, KEEP, PFW)                                                           \
    for (; k + 4 * VW <= k1; k += 4 * VW) {                                                   \
        for (int q = 0; PFW && q < 4 * VW * 2; q += 64)                                       \
            r_prefetchw((const char *)(yr + k) + q);                                          \
        V x0, x1, x2, x3;                                                                     \
        V_LD2F(xr + k, bf, x0, x1);                                                           \
        V_LD2F(xr + k + 2 * VW, bf, x2, x3);                                                  \
        const V d0 = V_SUB(x0, vm), d1 = V_SUB(x1, vm);                                       \
        const V d2 = V_SUB(x2, vm), d3 = V_SUB(x3, vm);                                       \
        const V e0 = EXP(d0), e1 = EXP(d1), e2 = EXP(d2), e3 = EXP(d3);                       \
        s0 = V_ADD(s0, e0), s1 = V_ADD(s1, e1), s2 = V_ADD(s2, e2), s3 = V_ADD(s3, e3);       \
        if (KEEP) {                                                                           \
            V_STF(eb + k, e0), V_STF(eb + k + VW, e1);                                        \
            V_STF(eb + k + 2 * VW, e2), V_STF(eb + k + 3 * VW, e3);                           \
        }                                                                                     \
    }
    for (int64_t i = 0; i < nparts; i++) {
        const int64_t k0 = i * RPF_BLOCK, k1 = k0 + RPF_BLOCK < n ? k0 + RPF_BLOCK : n;
        k = k0;
        /* (streamed outputs: no prefetch for writing, the 4-vector loops all the same) */
        if (!c->nt && fast) {
            if (keep)
                R_ROW_EXPS4(V_EXPN_F, 1, 1)
            else
                R_ROW_EXPS4(V_EXPN_F, 0, 1)
        } else if (!c->nt) {
            if (keep)
                R_ROW_EXPS4(V_EXPN, 1, 1)
            else
                R_ROW_EXPS4(V_EXPN, 0, 1)
        } else if (fast) {
            if (keep)
                R_ROW_EXPS4(V_EXPN_F, 1, 0)
            else
                R_ROW_EXPS4(V_EXPN_F, 0, 0)
        } else {
            if (keep)
                R_ROW_EXPS4(V_EXPN, 1, 0)
            else
                R_ROW_EXPS4(V_EXPN, 0, 0)
        }
        for (; k + 2 * VW <= k1; k += 2 * VW) {
            if (!c->nt) /* the output's lines for writing, ahead of pass 3 */
                r_prefetchw(yr + k);
            V x0, x1;
            V_LD2F(xr + k, bf, x0, x1);
            const V d0 = V_SUB(x0, vm), d1 = V_SUB(x1, vm);
            const V e0 = fast ? V_EXPN_F(d0) : V_EXPN(d0);
            const V e1 = fast ? V_EXPN_F(d1) : V_EXPN(d1);
            s0 = V_ADD(s0, e0), s1 = V_ADD(s1, e1);
            if (keep)
                V_STF(eb + k, e0), V_STF(eb + k + VW, e1);
        }
        for (; k < k1; k += VW) {
            const int64_t len = k1 - k < VW ? k1 - k : VW;
            const V d0 = V_SUB(len < VW ? V_LDN(xr + k, len, bf, pad) : V_LD(xr + k, bf), vm);
            const V e0 = V_EXPN(d0); /* the padding's -inf: the clamped exp */
            s0 = V_ADD(s0, e0);
            if (keep)
                V_STF(eb + k, e0);
        }
        r_prefetch_part(pf, n * 2, i, nparts);
    }
#undef R_ROW_EXPS4
    float s = V_HSUM(V_ADD(V_ADD(s0, s2), V_ADD(s1, s3))), f;
    if (!lg) {
        f = 1.0f / s;
    } else if (s >= 2.0f) {
        /* log-softmax, the sum at least 2: every output is at least log 2 from 0, so log(s)
           keeps the sum's relative accuracy (as softmax's 1/s does) */
        f = aclk_log_f32(s);
    } else {
        /* a sum below 2 (one max term and the others' sum below 1: a dominant element, whose
           output -log1p(s) must keep the small s's digits), or NaN: the exps again, the max
           terms counted and the others summed, lse = log(k) + log1p(s/k) */
        s0 = V_SET1(0.0f), s1 = s0;
        for (k = 0; k < n; k += VW) {
            const int64_t len = n - k < VW ? n - k : VW;
            const V d0 = V_SUB(len < VW ? V_LDN(xr + k, len, bf, pad) : V_LD(xr + k, bf), vm);
            c0 = V_CNT_EQ0(c0, d0), s0 = V_ADD_NE0(s0, d0, V_EXPN(d0));
        }
        f = r_lse(V_HSUM(c0), V_HSUM(s0));
    }
    const V vf = V_SET1(f);

    /* pass 3: the outputs. Streamed (c->nt): from the registers where the row has whole
       64-byte lines of the output (V_ST2F_NT, each line by one or two adjacent stores), its
       head before the first line and its tail after the last by normal stores; the same
       arithmetic per element either way. Where the level's vector pairs keep their exps in
       another order (R_ROW_PERM: bfloat16 at the AVX2 level) and the row's head is not a
       whole number of pairs: half a pair by fwd_row_half, else the row goes through hb a
       piece at a time */
    if (!c->nt) {
        SFX(fwd_row_out)(xr, yr, eb, n, vm, vf, fast, bf, lg, keep, 0);
        return;
    }
    int64_t h = (int64_t)((64 - (uintptr_t)yr % 64) % 64 / 2);
    if ((uintptr_t)yr % 2 || h > n)
        h = n;
    int64_t m = (n - h) / 32 * 32;
#if VW == 8
    if (keep && bf && h % 16 == 8) {
        while (m > 0 && h + m + 8 > n / 16 * 16)
            m -= 32;
        if (m > 0) {
            SFX(fwd_row_half)(xr, yr, eb, n, h, m, vm, vf, fast);
            return;
        }
    }
#endif
    if (m > 0 && !(keep && R_ROW_PERM(bf) && h % (2 * VW))) {
        SFX(fwd_row_out)(xr, yr, eb, h, vm, vf, fast, bf, lg, keep, 0);
        SFX(fwd_row_out)(xr + h, yr + h, keep ? eb + h : eb, m, vm, vf, fast, bf, lg, keep, 1);
        SFX(fwd_row_out)(xr + h + m, yr + h + m, keep ? eb + h + m : eb, n - h - m, vm, vf,
                         fast, bf, lg, keep, 0);
        return;
    }
    for (int64_t p0 = 0; p0 < n; p0 += RPIECE) {
        const int64_t len = n - p0 < RPIECE ? n - p0 : RPIECE;
        SFX(fwd_row_out)(xr + p0, hb, keep ? eb + p0 : eb, len, vm, vf, fast, bf, lg, keep, 0);
        R_STREAM(yr + p0, hb, len);
    }
}

static ATTR void SFX(fwd_rows_chunk)(void *ctx, int64_t r0, int64_t r1)
{
    const rfwd_args *c = (const rfwd_args *)ctx;
    float eb[RROWBUF];
    uint16_t hb[RPIECE];
    const int64_t n = c->axis;
    for (int64_t r = r0; r < r1; r++) {
        const uint16_t *xr = (const uint16_t *)c->x + r * n;
        uint16_t *yr = (uint16_t *)c->y + r * n;
        const char *pf = r + 1 < r1 ? (const char *)(xr + n) : NULL;
        BF_LG_CALL(SFX(fwd_row), c, c, xr, yr, n, pf, eb, hb);
    }
    if (c->nt)
        aclk_nt_fence();
}

/* --------------------------------------------------------------- forward columns ---- */

/* one a-row's outputs [0, w) at yd, streamed (c->nt): V_FCOL(j) the vector of columns j..,
   V_FCOLN(j, l) its first l; the head up to yd's first 64-byte boundary and the tail after the
   last whole 4*VW group stored normally, the groups between streamed from registers */
#define R_FCOL_ROW_NT(yd, V_FCOL, V_FCOLN)                                                    \
    do {                                                                                      \
        const int64_t h_ = r_fcol_head(yd, w);                                                \
        int64_t j = 0;                                                                        \
        while (j < h_) {                                                                      \
            const int64_t l = h_ - j < VW ? h_ - j : VW;                                      \
            if (l < VW)                                                                       \
                V_STN((yd) + j, V_FCOLN(j, l), l, bf);                                        \
            else                                                                              \
                V_ST((yd) + j, V_FCOL(j), bf);                                                \
            j += l;                                                                           \
        }                                                                                     \
        for (; j + 4 * VW <= w; j += 4 * VW) {                                                \
            const V v0 = V_FCOL(j), v1 = V_FCOL(j + VW);                                      \
            const V v2 = V_FCOL(j + 2 * VW), v3 = V_FCOL(j + 3 * VW);                         \
            V_ST2NT_FCOL((yd) + j, v0, v1, bf);                                               \
            V_ST2NT_FCOL((yd) + j + 2 * VW, v2, v3, bf);                                      \
        }                                                                                     \
        for (; j < w; j += VW) {                                                              \
            const int64_t l = w - j < VW ? w - j : VW;                                        \
            if (l < VW)                                                                       \
                V_STN((yd) + j, V_FCOLN(j, l), l, bf);                                        \
            else                                                                              \
                V_ST((yd) + j, V_FCOL(j), bf);                                                \
        }                                                                                     \
    } while (0)

/* one block: outer index o, columns [i0, i0 + w) over the whole axis (a-rows inner apart);
   pf: the next block's first element, or NULL; es: a softmax block's exps when c->nt (at
   least axis x w elements, a-rows w apart), or NULL */
static inline __attribute__((always_inline)) ATTR void SFX(fwd_block)(
    const rfwd_args *c, int64_t base, int64_t w, const uint16_t *pf, int64_t pfw, rcol_ws *ws,
    uint16_t *es, const int bf, const int lg)
{
    const uint16_t pad = bf ? BF16_NEG_INF : F16_NEG_INF;
    const int64_t axis = c->axis, inner = c->inner;
    const uint16_t *x = (const uint16_t *)c->x + base;
    uint16_t *y = (uint16_t *)c->y + base;
    float *macc = ws->macc, *sacc = ws->sacc;
    const int64_t wv = w / VW * VW;

    float *nacc = ws->nacc;
    /* a-rows per sub-block: about RSUB_BYTES of 16-bit input, re-read from L1 */
    const int64_t A = r_sub_rows(c->W);
    /* softmax with the exps kept in the output (keepo): each sub-block's exps exp(x - m_b),
       m_b its running max, rounded into y, and m_b kept in gt (per sub-block and column); the
       outputs pass then multiplies each by g = exp(m_b - m) / sum (gt, computed once), with no
       second exp. Not when gt is too small. When streaming (c->nt) the exps go to the scratch
       es (ye, a-rows ys apart: the same bits), and without one (too large a block) the outputs
       are stored normally */
    float *gt = ws->gt, *mins = ws->mins;
    const int keepo = !lg && (axis + A - 1) / A * w <= RGTAB;
    const int nt = c->nt && !(keepo && !es);
    uint16_t *const ye = nt && keepo ? es : y;
    const int64_t ys = nt && keepo ? w : inner;
    for (int64_t j = 0; j < w; j++)
        macc[j] = -INFINITY, sacc[j] = 0.0f;
    /* one pass over the block, a sub-block of A a-rows at a time: its column max joined to the
       running max (nacc), the sums rescaled where it rose (r_rescale), then the sub-block's
       exps from L1 and their sums */
    for (int64_t a0 = 0; a0 < axis; a0 += A) {
        const int64_t a1 = a0 + A < axis ? a0 + A : axis;
        memcpy(nacc, macc, (size_t)w * sizeof(float));
        /* strips of 4 vectors with their accumulators in registers, then the rest; where the
           level has a fast exp (R_FAST), each strip's column min beside its max (in mins) */
        int64_t js = 0;
        for (; js + 4 * VW <= w; js += 4 * VW) {
            V m0 = V_LDF(nacc + js), m1 = V_LDF(nacc + js + VW);
            V m2 = V_LDF(nacc + js + 2 * VW), m3 = V_LDF(nacc + js + 3 * VW);
            V n0 = V_SET1(INFINITY), n1 = n0, n2 = n0, n3 = n0;
            for (int64_t a = a0; a < a1; a++) {
                const uint16_t *xa = x + a * inner + js;
                const V x0 = V_LD(xa, bf), x1 = V_LD(xa + VW, bf);
                const V x2 = V_LD(xa + 2 * VW, bf), x3 = V_LD(xa + 3 * VW, bf);
                m0 = V_MAX(m0, x0), m1 = V_MAX(m1, x1), m2 = V_MAX(m2, x2), m3 = V_MAX(m3, x3);
                if (R_FAST)
                    n0 = V_MIN(n0, x0), n1 = V_MIN(n1, x1), n2 = V_MIN(n2, x2),
                    n3 = V_MIN(n3, x3);
            }
            V_STF(nacc + js, m0), V_STF(nacc + js + VW, m1);
            V_STF(nacc + js + 2 * VW, m2), V_STF(nacc + js + 3 * VW, m3);
            if (R_FAST) {
                V_STF(mins + js, n0), V_STF(mins + js + VW, n1);
                V_STF(mins + js + 2 * VW, n2), V_STF(mins + js + 3 * VW, n3);
            }
        }
        for (int64_t a = a0; js < w && a < a1; a++) {
            const uint16_t *xa = x + a * inner;
            int64_t j = js;
            for (; j < wv; j += VW)
                V_STF(nacc + j, V_MAX(V_LDF(nacc + j), V_LD(xa + j, bf)));
            if (j < w)
                V_STFN(nacc + j, V_MAX(V_LDFN(nacc + j, w - j), V_LDN(xa + j, w - j, bf, pad)),
                       w - j);
        }
        r_rescale(macc, nacc, sacc, w);
        if (keepo)
            memcpy(gt + a0 / A * w, macc, (size_t)w * sizeof(float));
        /* the strip's exps and sums, by the fast exp where every x - max of the strip in the
           sub-block is in its range (its column min less the subtrahend: a column -inf so far
           has min -inf and subtrahend 0, the clamped exp; a NaN lane's sum is NaN anyway), one
           loop per choice: the choice and the prefetch's test (held in locals: c->nt reloaded
           from memory, the stores to y may alias it) out of the a-row loop */
#define R_STRIP_EXPS(EXP)                                                                     \
    for (int64_t a = a0; a < a1; a++) {                                                       \
        const uint16_t *xa = x + a * inner + j;                                               \
        if (pfa)                                                                              \
            for (int64_t k = 0; k < w * 2; k += 64)                                           \
                r_prefetchw((const char *)(y + a * inner) + k);                               \
        const V d0 = V_SUB(V_LD(xa, bf), u0), d1 = V_SUB(V_LD(xa + VW, bf), u1);              \
        const V d2 = V_SUB(V_LD(xa + 2 * VW, bf), u2);                                        \
        const V d3 = V_SUB(V_LD(xa + 3 * VW, bf), u3);                                        \
        const V e0 = EXP(d0), e1 = EXP(d1), e2 = EXP(d2), e3 = EXP(d3);                       \
        s0 = V_ADD(s0, e0), s1 = V_ADD(s1, e1);                                               \
        s2 = V_ADD(s2, e2), s3 = V_ADD(s3, e3);                                               \
        if (keepo) {                                                                          \
            uint16_t *ya = ye + a * ys + j;                                                   \
            V_ST(ya, e0, bf), V_ST(ya + VW, e1, bf);                                          \
            V_ST(ya + 2 * VW, e2, bf), V_ST(ya + 3 * VW, e3, bf);                             \
        }                                                                                     \
    }
        for (int64_t j = 0; j < js; j += 4 * VW) {
            const V u0 = V_LDF(nacc + j), u1 = V_LDF(nacc + j + VW);
            const V u2 = V_LDF(nacc + j + 2 * VW), u3 = V_LDF(nacc + j + 3 * VW);
            V s0 = V_LDF(sacc + j), s1 = V_LDF(sacc + j + VW);
            V s2 = V_LDF(sacc + j + 2 * VW), s3 = V_LDF(sacc + j + 3 * VW);
            /* the a-row's output lines for writing, so that their reads for ownership
               overlap this pass, not the outputs pass (which prefetches the next block):
               (64,4096,64) 1 thread cold, float16 softmax 8.3 -> 7.2 ms, log_softmax
               9.0 -> 7.1, bfloat16 log_softmax 9.1 -> 7.7, but bfloat16 softmax (the
               most arithmetic in its outputs pass) 8.7 -> 9.0: not there */
            const int pfa = j == 0 && !nt && (lg || !bf || keepo);
            if (R_FAST && !V_ANY_LT4(V_SUB(V_LDF(mins + j), u0),
                                     V_SUB(V_LDF(mins + j + VW), u1),
                                     V_SUB(V_LDF(mins + j + 2 * VW), u2),
                                     V_SUB(V_LDF(mins + j + 3 * VW), u3), RD_NORM)) {
                R_STRIP_EXPS(V_EXPN_F)
            } else {
                R_STRIP_EXPS(V_EXPC)
            }
            V_STF(sacc + j, s0), V_STF(sacc + j + VW, s1);
            V_STF(sacc + j + 2 * VW, s2), V_STF(sacc + j + 3 * VW, s3);
        }
#undef R_STRIP_EXPS
        for (int64_t a = a0; js < w && a < a1; a++) {
            const uint16_t *xa = x + a * inner;
            for (int64_t j = js; j < w; j += VW) {
                const int64_t l = w - j < VW ? w - j : VW;
                const V d = V_SUB(l < VW ? V_LDN(xa + j, l, bf, pad) : V_LD(xa + j, bf),
                                  l < VW ? V_LDFN(nacc + j, l) : V_LDF(nacc + j));
                const V e = V_EXPC(d);
                if (l < VW)
                    V_STFN(sacc + j, V_ADD(V_LDFN(sacc + j, l), e), l);
                else
                    V_STF(sacc + j, V_ADD(V_LDF(sacc + j), e));
                if (keepo && l < VW)
                    V_STN(ye + a * ys + j, e, l, bf);
                else if (keepo)
                    V_ST(ye + a * ys + j, e, bf);
            }
        }
    }
    /* sacc becomes the factor: 1/sum, or log-softmax's log of the sum: log(s) where the sum
       is at least 2 (every output then at least log 2 from 0, log(s) as accurate as
       softmax's 1/s, as for rows); elsewhere (one max term and the others' sum below 1: a
       dominant element, whose output -log1p(s) must keep the small s's digits; or NaN) the
       column vector's exps again from L2, the max terms counted and the others summed,
       lse = log(k) + log1p(s/k) */
    if (lg) {
        for (int64_t j = 0; j < w; j += VW) {
            const int64_t l = w - j < VW ? w - j : VW;
            int split = 0;
            for (int64_t q = j; q < j + l; q++)
                split |= !(sacc[q] >= 2.0f);
            float kk[VW] = {0}, tt[VW] = {0};
            if (split) {
                float *u = nacc + j; /* the subtrahend: the max, 0 where it is -inf */
                for (int64_t q = 0; q < l; q++)
                    u[q] = macc[j + q] == -INFINITY ? 0.0f : macc[j + q];
                const V vu = l < VW ? V_LDFN(u, l) : V_LDF(u);
                V k0 = V_SET1(0.0f), k1 = k0, t0 = k0, t1 = k0;
                int64_t a = 0;
                for (; a + 2 <= axis; a += 2) {
                    const uint16_t *x0 = x + a * inner + j, *x1 = x0 + inner;
                    const V d0 = V_SUB(l < VW ? V_LDN(x0, l, bf, pad) : V_LD(x0, bf), vu);
                    const V d1 = V_SUB(l < VW ? V_LDN(x1, l, bf, pad) : V_LD(x1, bf), vu);
                    k0 = V_CNT_EQ0(k0, d0), t0 = V_ADD_NE0(t0, d0, V_EXPN(d0));
                    k1 = V_CNT_EQ0(k1, d1), t1 = V_ADD_NE0(t1, d1, V_EXPN(d1));
                }
                if (a < axis) {
                    const uint16_t *x0 = x + a * inner + j;
                    const V d0 = V_SUB(l < VW ? V_LDN(x0, l, bf, pad) : V_LD(x0, bf), vu);
                    k0 = V_CNT_EQ0(k0, d0), t0 = V_ADD_NE0(t0, d0, V_EXPN(d0));
                }
                V_STF(kk, V_ADD(k0, k1)), V_STF(tt, V_ADD(t0, t1));
            }
            for (int64_t q = 0; q < l; q++)
                sacc[j + q] = sacc[j + q] >= 2.0f ? aclk_log_f32(sacc[j + q])
                                                  : r_lse(kk[q], tt[q]);
        }
    } else {
        r_recip_n(sacc, w);
    }
    if (keepo) {
        /* g = exp(m_b - m) / sum per sub-block and column (m_b == m: exactly 1 / sum; a column
           -inf until the sub-block: 0, its exps 0; all -inf: NaN, as the exps' 0 * inf) */
        for (int64_t b = 0; b * A < axis; b++) {
            float *g = gt + b * w;
            for (int64_t j = 0; j < w; j += VW) {
                const int64_t l = w - j < VW ? w - j : VW;
                const V m = l < VW ? V_LDFN(macc + j, l) : V_LDF(macc + j);
                const V f = l < VW ? V_LDFN(sacc + j, l) : V_LDF(sacc + j);
                const V e = V_MUL(V_EXP(V_SUB(l < VW ? V_LDFN(g + j, l) : V_LDF(g + j), m)), f);
                if (l < VW)
                    V_STFN(g + j, e, l);
                else
                    V_STF(g + j, e);
            }
        }
        /* pass 3, streamed: y = its exp * g from the scratch */
        for (int64_t a = 0; nt && a < axis; a++) {
            uint16_t *ya = y + a * inner;
            const float *g = gt + a / A * w;
            const uint16_t *ea = ye + a * ys;
#define R_FCOL_E(j) V_MUL(V_LD(ea + (j), bf), V_LDF(g + (j)))
#define R_FCOL_EN(j, l) V_MUL(V_LDN(ea + (j), l, bf, 0), V_LDFN(g + (j), l))
            R_FCOL_ROW_NT(ya, R_FCOL_E, R_FCOL_EN);
#undef R_FCOL_E
#undef R_FCOL_EN
            if (pf)
                r_prefetch_run(pf + a * inner, pfw * 2);
        }
        /* pass 3: y = its exp * g, in place from L2 */
        for (int64_t a = 0; !nt && a < axis; a++) {
            uint16_t *ya = y + a * inner;
            const float *g = gt + a / A * w;
            int64_t j = 0;
            for (; j + 4 * VW <= w; j += 4 * VW) {
                const V v0 = V_MUL(V_LD(ya + j, bf), V_LDF(g + j));
                const V v1 = V_MUL(V_LD(ya + j + VW, bf), V_LDF(g + j + VW));
                const V v2 = V_MUL(V_LD(ya + j + 2 * VW, bf), V_LDF(g + j + 2 * VW));
                const V v3 = V_MUL(V_LD(ya + j + 3 * VW, bf), V_LDF(g + j + 3 * VW));
                V_ST(ya + j, v0, bf), V_ST(ya + j + VW, v1, bf);
                V_ST(ya + j + 2 * VW, v2, bf), V_ST(ya + j + 3 * VW, v3, bf);
            }
            for (; j < w; j += VW) {
                const int64_t l = w - j < VW ? w - j : VW;
                if (l < VW)
                    V_STN(ya + j, V_MUL(V_LDN(ya + j, l, bf, 0), V_LDFN(g + j, l)), l, bf);
                else
                    V_ST(ya + j, V_MUL(V_LD(ya + j, bf), V_LDF(g + j)), bf);
            }
            if (pf)
                r_prefetch_run(pf + a * inner, pfw * 2);
        }
        return;
    }
    /* pass 3: outputs (log-softmax streamed: straight from registers) */
    for (int64_t a = 0; a < axis; a++) {
        const uint16_t *xa = x + a * inner;
        uint16_t *ya = y + a * inner, *d = nt ? ws->hb : ya;
        if (lg && nt) {
#define R_FCOL_L(j) V_SUB(V_SUB(V_LD(xa + (j), bf), V_LDF(macc + (j))), V_LDF(sacc + (j)))
#define R_FCOL_LN(j, l)                                                                       \
    V_SUB(V_SUB(V_LDN(xa + (j), l, bf, pad), V_LDFN(macc + (j), l)), V_LDFN(sacc + (j), l))
            R_FCOL_ROW_NT(ya, R_FCOL_L, R_FCOL_LN);
#undef R_FCOL_L
#undef R_FCOL_LN
            if (pf)
                r_prefetch_run(pf + a * inner, pfw * 2);
            continue;
        }
        if (!nt && !lg && bf && a + 16 < axis) /* bfloat16 softmax: 16 a-rows ahead */
            for (int64_t k = 0; k < w * 2; k += 64)
                r_prefetchw((const char *)(ya + 16 * inner) + k);
        int64_t j = 0;
        for (; j + 4 * VW <= w; j += 4 * VW) {
            const V d0 = V_SUB(V_LD(xa + j, bf), V_LDF(macc + j));
            const V d1 = V_SUB(V_LD(xa + j + VW, bf), V_LDF(macc + j + VW));
            const V d2 = V_SUB(V_LD(xa + j + 2 * VW, bf), V_LDF(macc + j + 2 * VW));
            const V d3 = V_SUB(V_LD(xa + j + 3 * VW, bf), V_LDF(macc + j + 3 * VW));
            const V f0 = V_LDF(sacc + j), f1 = V_LDF(sacc + j + VW);
            const V f2 = V_LDF(sacc + j + 2 * VW), f3 = V_LDF(sacc + j + 3 * VW);
            if (lg) {
                V_ST(d + j, V_SUB(d0, f0), bf), V_ST(d + j + VW, V_SUB(d1, f1), bf);
                V_ST(d + j + 2 * VW, V_SUB(d2, f2), bf), V_ST(d + j + 3 * VW, V_SUB(d3, f3), bf);
            } else {
                V e0, e1, e2, e3;
                if (R_FAST) {
                    R_EXPN4(d0, d1, d2, d3, e0, e1, e2, e3);
                } else {
                    e0 = V_EXPC(d0), e1 = V_EXPC(d1), e2 = V_EXPC(d2), e3 = V_EXPC(d3);
                }
                V_ST(d + j, V_MUL(e0, f0), bf), V_ST(d + j + VW, V_MUL(e1, f1), bf);
                V_ST(d + j + 2 * VW, V_MUL(e2, f2), bf), V_ST(d + j + 3 * VW, V_MUL(e3, f3), bf);
            }
        }
        for (; j < w; j += VW) {
            const int64_t l = w - j < VW ? w - j : VW;
            const V dx = V_SUB(l < VW ? V_LDN(xa + j, l, bf, pad) : V_LD(xa + j, bf),
                               l < VW ? V_LDFN(macc + j, l) : V_LDF(macc + j));
            const V f = l < VW ? V_LDFN(sacc + j, l) : V_LDF(sacc + j);
            const V v = lg ? V_SUB(dx, f) : V_MUL(V_EXPC(dx), f);
            if (l < VW)
                V_STN(d + j, v, l, bf);
            else
                V_ST(d + j, v, bf);
        }
        if (nt)
            R_STREAM(ya, ws->hb, w);
        if (pf)
            r_prefetch_run(pf + a * inner, pfw * 2);
    }
}


/* log-softmax's log of the sum of a short-axis column vector (r_lse_st, a vector loop): s
   each lane's sum of exps, t that of its non-max terms */
static inline __attribute__((always_inline)) ATTR V SFX(small_lse)(V s, V t)
{
    float ss[VW], tt[VW];
    V_STF(ss, s), V_STF(tt, t);
    r_lse_st(ss, tt, VW);
    return V_LDF(ss);
}

/* A short-axis column pair [j, j + 2*VW) of fwd_block_small: its axis values loaded into xv, xw
   (V_LD2F), the column max, then the exps (log-softmax: x - max) kept there and the factors
   *f0, *f1 (1/sum, or log-softmax's log of the sum: see r_lse_st) */
static inline __attribute__((always_inline)) ATTR void SFX(small_pair)(
    const uint16_t *xj, int64_t axis, int64_t inner, V *xv, V *xw, V *f0, V *f1, const int bf,
    const int lg)
{
    V m0 = V_SET1(-INFINITY), m1 = m0, n0 = V_SET1(INFINITY), n1 = n0;
    for (int64_t a = 0; a < axis; a++) {
        V_LD2F(xj + a * inner, bf, xv[a], xw[a]);
        m0 = V_MAX(m0, xv[a]), m1 = V_MAX(m1, xw[a]);
        if (R_FAST)
            n0 = V_MIN(n0, xv[a]), n1 = V_MIN(n1, xw[a]);
    }
    /* the fast exp where every x - max of both column vectors is in its range */
    const int fast = R_FAST && !V_ANY_LT(V_SUB(n0, m0), RD_NORM) &&
                     !V_ANY_LT(V_SUB(n1, m1), RD_NORM);
    V s0 = V_SET1(0.0f), s1 = s0, t0 = s0, t1 = s0;
    if (fast) {
        for (int64_t a = 0; a < axis; a++) {
            const V d0 = V_SUB(xv[a], m0), d1 = V_SUB(xw[a], m1);
            const V e0 = V_EXPN_F(d0), e1 = V_EXPN_F(d1);
            s0 = V_ADD(s0, e0), s1 = V_ADD(s1, e1);
            if (lg)
                t0 = V_ADD_NE0(t0, d0, e0), t1 = V_ADD_NE0(t1, d1, e1);
            xv[a] = lg ? d0 : e0, xw[a] = lg ? d1 : e1;
        }
    } else {
        for (int64_t a = 0; a < axis; a++) {
            const V d0 = V_SUB(xv[a], m0), d1 = V_SUB(xw[a], m1);
            const V e0 = V_EXPN(d0), e1 = V_EXPN(d1);
            s0 = V_ADD(s0, e0), s1 = V_ADD(s1, e1);
            if (lg)
                t0 = V_ADD_NE0(t0, d0, e0), t1 = V_ADD_NE0(t1, d1, e1);
            xv[a] = lg ? d0 : e0, xw[a] = lg ? d1 : e1;
        }
    }
    if (lg) {
        *f0 = SFX(small_lse)(s0, t0), *f1 = SFX(small_lse)(s1, t1);
    } else {
        *f0 = V_DIV(V_SET1(1.0f), s0), *f1 = V_DIV(V_SET1(1.0f), s1);
    }
}

/* fwd_block_small's columns [j0, j1) one column vector at a time (the last one partial),
   stored normally */
static inline __attribute__((always_inline)) ATTR void SFX(small_vecs)(
    const uint16_t *x, uint16_t *y, int64_t axis, int64_t inner, int64_t j0, int64_t j1,
    int64_t pf_end, V *xv, const int bf, const int lg)
{
    const uint16_t pad = bf ? BF16_NEG_INF : F16_NEG_INF;
    for (int64_t j = j0; j < j1; j += VW) {
        const int64_t l = j1 - j < VW ? j1 - j : VW;
        if ((j * 2) % 64 == 0 && j + RPF_COLS < pf_end)
            for (int64_t a = 0; a < axis; a++) {
                __builtin_prefetch(x + a * inner + j + RPF_COLS, 0, 3);
                r_prefetchw(y + a * inner + j + RPF_COLS);
            }
        V m = V_SET1(-INFINITY), mn = V_SET1(INFINITY);
        for (int64_t a = 0; a < axis; a++) {
            xv[a] = l < VW ? V_LDN(x + a * inner + j, l, bf, pad) : V_LD(x + a * inner + j, bf);
            m = V_MAX(m, xv[a]);
            if (R_FAST)
                mn = V_MIN(mn, xv[a]);
        }
        /* the fast exp where every x - max of the column vector is in its range */
        const int fast = R_FAST && !V_ANY_LT(V_SUB(mn, m), RD_NORM);
        V s = V_SET1(0.0f), t = s, f;
        for (int64_t a = 0; a < axis; a++) {
            const V d = V_SUB(xv[a], m), e = fast ? V_EXPN_F(d) : V_EXPN(d);
            s = V_ADD(s, e);
            if (lg)
                t = V_ADD_NE0(t, d, e);
            xv[a] = lg ? d : e;
        }
        f = lg ? SFX(small_lse)(s, t) : V_DIV(V_SET1(1.0f), s);
        for (int64_t a = 0; a < axis; a++) {
            const V v = lg ? V_SUB(xv[a], f) : V_MUL(xv[a], f);
            uint16_t *d = y + a * inner + j;
            if (l < VW)
                V_STN(d, v, l, bf);
            else
                V_ST(d, v, bf);
        }
    }
}

/* A block of a short axis (axis <= RSMALL): column vectors, two at a time (two independent
   exp chains, half the loop overhead; loaded and stored as a pair, V_LD2F / V_ST2F) then one,
   their axis values held in xv / xw (registers / L1) through max, exp and output, so that each
   element is read from memory once and its exp computed once; the columns RPF_COLS ahead
   prefetched a line per a-row. log-softmax sums every exp and those of the non-max terms (see
   r_lse_st).
   Streamed outputs (c->nt) at the vector levels, where every block's a-rows start on a line
   (the output 64-byte aligned, inner a multiple of 32: so are W and every block's first
   column): whole 64-byte lines straight from registers, each by one store (AVX-512: a column
   pair, one zmm; AVX2: two pairs, two back-to-back ymm stores; R_SNT column vectors a line),
   so no line is read for ownership and one a-row's line is complete before the next a-row's
   starts (16 a-rows' lines built up across the a-row loop would be more than the
   write-combining buffers hold); the input alone prefetched. Elsewhere normal stores: a head
   of normal stores before each block's first line boundary (an output 16 bytes past a line)
   made the block's streamed path 5-10 % slower than its normal one. Each column's arithmetic
   is the same either way: the same bits. */
static inline __attribute__((always_inline)) ATTR void SFX(fwd_block_small)(
    const rfwd_args *c, int64_t base, int64_t w, int64_t pf_end, const int bf, const int lg)
{
    const int64_t axis = c->axis, inner = c->inner;
    const uint16_t *x = (const uint16_t *)c->x + base;
    uint16_t *y = (uint16_t *)c->y + base;
    V xv[RSMALL], xw[RSMALL];
    int64_t j = 0;
#if R_SNT
    if (c->nt && inner % 32 == 0 && (uintptr_t)c->y % 64 == 0) {
#if R_SNT == 4
        V xv2[RSMALL], xw2[RSMALL];
#endif
        for (; j + 32 <= w; j += 32) {
            /* the input two lines of each a-row at a time */
            if (j % 64 == 0 && j + RPF_COLS < pf_end) {
                const uint16_t *px = x + j + RPF_COLS;
                const int two = j + RPF_COLS + 32 < pf_end;
                for (int64_t a = 0; a < axis; a++, px += inner) {
                    __builtin_prefetch(px, 0, 3);
                    if (two)
                        __builtin_prefetch(px + 32, 0, 3);
                }
            }
            V f0, f1;
            SFX(small_pair)(x + j, axis, inner, xv, xw, &f0, &f1, bf, lg);
#if R_SNT == 4
            V f2, f3;
            SFX(small_pair)(x + j + 2 * VW, axis, inner, xv2, xw2, &f2, &f3, bf, lg);
            for (int64_t a = 0; a < axis; a++)
                V_ST4F_NT(y + a * inner + j, lg ? V_SUB(xv[a], f0) : V_MUL(xv[a], f0),
                          lg ? V_SUB(xw[a], f1) : V_MUL(xw[a], f1),
                          lg ? V_SUB(xv2[a], f2) : V_MUL(xv2[a], f2),
                          lg ? V_SUB(xw2[a], f3) : V_MUL(xw2[a], f3), bf);
#else
            for (int64_t a = 0; a < axis; a++)
                V_ST2F_NT(y + a * inner + j, lg ? V_SUB(xv[a], f0) : V_MUL(xv[a], f0),
                          lg ? V_SUB(xw[a], f1) : V_MUL(xw[a], f1), bf);
#endif
        }
        /* none left while W and inner are multiples of 32 (r_width) */
        SFX(small_vecs)(x, y, axis, inner, j, w, pf_end, xv, bf, lg);
        return;
    }
#endif
    for (; j + 2 * VW <= w; j += 2 * VW) {
        /* two lines of each a-row at a time (one a-row loop per 128 bytes, not per 64: its
           overhead was 5 of its 7 instructions per line) */
        if ((j * 2) % 128 == 0 && j + RPF_COLS < pf_end) {
            const uint16_t *px = x + j + RPF_COLS;
            uint16_t *py = y + j + RPF_COLS;
            if (j + RPF_COLS + 32 < pf_end) {
                for (int64_t a = 0; a < axis; a++, px += inner, py += inner) {
                    __builtin_prefetch(px, 0, 3), __builtin_prefetch(px + 32, 0, 3);
                    r_prefetchw(py), r_prefetchw(py + 32);
                }
            } else {
                for (int64_t a = 0; a < axis; a++, px += inner, py += inner)
                    __builtin_prefetch(px, 0, 3), r_prefetchw(py);
            }
        }
        V f0, f1;
        SFX(small_pair)(x + j, axis, inner, xv, xw, &f0, &f1, bf, lg);
        for (int64_t a = 0; a < axis; a++)
            V_ST2F(y + a * inner + j, lg ? V_SUB(xv[a], f0) : V_MUL(xv[a], f0),
                   lg ? V_SUB(xw[a], f1) : V_MUL(xw[a], f1), bf);
    }
    SFX(small_vecs)(x, y, axis, inner, j, w, pf_end, xv, bf, lg);
}

#undef V_LD2F
#undef V_ST2F
#undef V_ST2F_NT
#undef R_ROW_PERM
#undef R_SNT
#undef V_ST4F_NT

static ATTR void SFX(fwd_cols_chunk)(void *ctx, int64_t t0, int64_t t1)
{
    const rfwd_args *c = (const rfwd_args *)ctx;
    rcol_ws ws;
    /* streamed softmax blocks keep their exps in a scratch (see fwd_block) */
    void *raw = NULL;
    const int64_t A = r_sub_rows(c->W);
    uint16_t *es = c->nt && !c->lg && !(c->axis <= RSMALL && c->inner >= VW) &&
                           c->axis * c->W <= RFCOL_SCRATCH && (c->axis + A - 1) / A * c->W <= RGTAB
                       ? r_fcol_scratch(c->axis * c->W, &raw)
                       : NULL;
    for (int64_t t = t0; t < t1; t++) {
        const r_item_t it = r_item(c->axis, c->inner, c->W, c->nblk, t, t1);
        if (c->axis <= RSMALL && c->inner >= VW) {
            BF_LG_CALL(SFX(fwd_block_small), c, c, it.base, it.w, it.pf_end);
            continue;
        }
        const uint16_t *pf = t + 1 < t1 ? (const uint16_t *)c->x + it.pbase : NULL;
        BF_LG_CALL(SFX(fwd_block), c, c, it.base, it.w, pf, it.pw, &ws, es);
    }
    if (c->nt)
        aclk_nt_fence();
    free(raw);
}
#undef R_FCOL_ROW_NT
#undef V_ST2NT_FCOL

/* ------------------------------------------------------------------ backward rows ---- */

/* The backward kernels' own operations: V_EXPB (log_softmax_backward's exp, any argument;
   V_EXPB_F: the fast one for [RD_NORM, RD_FHI] or NaN), V_FMAB (a*b + c, fused at the vector
   levels), and vector pairs (V_LD2B / V_ST2B): 2*VW elements loaded into two vectors in the
   level's own lane order (bfloat16 at the AVX2 level: the even elements, then the odd, two
   operations per input pair and five per output pair, no shuffles) and stored back in the same
   order; their column sums (sacc) are kept in that order too, so the pass that builds them and
   the pass that reads them pair the same columns. */

/* log_softmax_backward's outputs d[k] = g[k] - s*exp(y[k]) for k in [0, n), n a multiple of
   2*VW: s the broadcast vs, or (col) the column sums at sp (pair order); with the level's fast
   exp where fast (R_FAST levels), y's running min and max joined to *lo and *hi (they ignore a
   NaN lane, which the fast exp keeps NaN): where they leave [RD_NORM, RD_FHI] (R_OUT), the
   caller computes these outputs again with fast 0 (the clamped exp, any y); nt: streamed
   (V_ST2B_NT: d aligned to a pair, n whole 64-byte lines) */
static inline __attribute__((always_inline)) ATTR void SFX(bwd_lg_pairs)(
    uint16_t *d, const uint16_t *gp, const uint16_t *yp, const float *sp, V vs, int64_t n,
    V *plo, V *phi, const int bf, const int col, const int fast, const int nt)
{
    V lo = *plo, hi = *phi;
    for (int64_t k = 0; k < n; k += 2 * VW) {
        V g0, g1, y0, y1, e0, e1;
        V_LD2B(gp + k, bf, g0, g1);
        V_LD2B(yp + k, bf, y0, y1);
        const V s0 = col ? V_LDF(sp + k) : vs, s1 = col ? V_LDF(sp + k + VW) : vs;
        if (R_FAST && fast) {
            /* min(y, lo): lo where y is NaN (vminps returns its second operand then) */
            lo = V_MIN(y0, lo), hi = V_MAX(y0, hi);
            lo = V_MIN(y1, lo), hi = V_MAX(y1, hi);
            e0 = V_EXPB_F(y0), e1 = V_EXPB_F(y1);
        } else {
            e0 = V_EXPB(y0), e1 = V_EXPB(y1);
        }
        if (nt)
            V_ST2B_NT(d + k, V_FNMA(s0, e0, g0), V_FNMA(s1, e1, g1), bf);
        else
            V_ST2B(d + k, V_FNMA(s0, e0, g0), V_FNMA(s1, e1, g1), bf);
    }
    *plo = lo, *phi = hi;
}

/* whether a y joined to lo, hi (bwd_lg_pairs) was outside the fast exp's range */
#define R_OUT(lo, hi) (R_FAST && V_ANY_OUT2(lo, hi, RD_NORM, RD_FHI))

/* a row's outputs [0, len) at d from g, y at gp, yp: whole vector pairs, then a vector, then
   the tail (the length tests out of the loop); *fast as bwd_row's. nt: streamed (d 64-byte
   aligned, len a multiple of 32); a part computed again with the clamped exp is stored after a
   fence, so that it lands after the streamed stores it replaces */
static inline __attribute__((always_inline)) ATTR void SFX(bwd_row_out)(
    uint16_t *d, const uint16_t *gp, const uint16_t *yp, V vs, int64_t len, int *fast,
    const int bf, const int lg, const int nt)
{
    const int64_t lv = len / VW * VW, l2 = len / (2 * VW) * (2 * VW);
    int64_t k;
    if (lg) {
        V lo = V_SET1(0.0f), hi = lo;
        if (R_FAST && *fast) {
            SFX(bwd_lg_pairs)(d, gp, yp, NULL, vs, l2, &lo, &hi, bf, 0, 1, nt);
            if (R_OUT(lo, hi)) {
                *fast = 0;
                if (nt)
                    aclk_nt_fence();
            }
        }
        if (!(R_FAST && *fast))
            SFX(bwd_lg_pairs)(d, gp, yp, NULL, vs, l2, &lo, &hi, bf, 0, 0, nt);
    } else {
        for (k = 0; k < l2; k += 2 * VW) {
            V g0, g1, y0, y1;
            V_LD2B(gp + k, bf, g0, g1);
            V_LD2B(yp + k, bf, y0, y1);
            const V o0 = V_MUL(V_SUB(g0, vs), y0), o1 = V_MUL(V_SUB(g1, vs), y1);
            if (nt)
                V_ST2B_NT(d + k, o0, o1, bf);
            else
                V_ST2B(d + k, o0, o1, bf);
        }
    }
    for (k = l2; k < lv; k += VW) {
        const V vg = V_LD(gp + k, bf), vy = V_LD(yp + k, bf);
        V_ST(d + k, lg ? V_FNMA(vs, V_EXPB(vy), vg) : V_MUL(V_SUB(vg, vs), vy), bf);
    }
    if (k < len) {
        const int64_t l = len - k;
        const V vg = V_LDN(gp + k, l, bf, 0), vy = V_LDN(yp + k, l, bf, 0);
        V_STN(d + k, lg ? V_FNMA(vs, V_EXPB(vy), vg) : V_MUL(V_SUB(vg, vs), vy), l, bf);
    }
}

/* one row: s = sum(g*y) (lg: sum(g)), then out = (g - s)*y (lg: g - s*exp(y)); *fast: whether
   log_softmax_backward still tries the fast exp (cleared by a piece with a y out of its range,
   for the rest of the chunk: at most one piece a chunk computed twice) */
static inline __attribute__((always_inline)) ATTR void SFX(bwd_row)(
    const rbwd_args *c, int64_t base, int64_t n, const char *pfg, const char *pfy,
    uint16_t *hb, int *fast, const int bf, const int lg)
{
    const uint16_t *g = (const uint16_t *)c->g + base, *y = (const uint16_t *)c->yv + base;
    uint16_t *out = (uint16_t *)c->out + base;
    V s0 = V_SET1(0.0f), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 4 * VW <= n; k += 4 * VW) {
        V g0, g1, g2, g3;
        V_LD2B(g + k, bf, g0, g1);
        V_LD2B(g + k + 2 * VW, bf, g2, g3);
        if (lg) {
            /* y's lines fetched along with g's (pass 2 reads both) */
            for (int64_t q = 0; q < 4 * VW * 2; q += 64)
                __builtin_prefetch((const char *)(y + k) + q, 0, 2);
            s0 = V_ADD(s0, g0), s1 = V_ADD(s1, g1), s2 = V_ADD(s2, g2), s3 = V_ADD(s3, g3);
        } else {
            V y0, y1, y2, y3;
            V_LD2B(y + k, bf, y0, y1);
            V_LD2B(y + k + 2 * VW, bf, y2, y3);
            s0 = V_FMAB(g0, y0, s0), s1 = V_FMAB(g1, y1, s1);
            s2 = V_FMAB(g2, y2, s2), s3 = V_FMAB(g3, y3, s3);
        }
    }
    for (; k < n; k += VW) {
        const int64_t l = n - k < VW ? n - k : VW;
        const V vg = l < VW ? V_LDN(g + k, l, bf, 0) : V_LD(g + k, bf);
        s0 = lg ? V_ADD(s0, vg) : V_FMAB(vg, l < VW ? V_LDN(y + k, l, bf, 0) : V_LD(y + k, bf),
                                         s0);
    }
    const V vs = V_SET1(V_HSUM(V_ADD(V_ADD(s0, s1), V_ADD(s2, s3))));
    /* streamed outputs (the vector levels): the head up to a 64-byte line
       stored normally, then pieces from there, their whole lines streamed straight from the
       registers, the last piece's tail stored normally */
    const uintptr_t oa = (uintptr_t)out;
    const int nt = VW > 1 && c->nt && oa % 2 == 0;
    int64_t h = nt ? (int64_t)((64 - oa % 64) % 64) / 2 : 0;
    h = h < n ? h : n;
    if (h)
        SFX(bwd_row_out)(out, g, y, vs, h, fast, bf, lg, 0);
    const int64_t m = n - h, nparts = (m + RBPIECE - 1) / RBPIECE;
    for (int64_t i = 0; i < nparts; i++) {
        const int64_t p0 = h + i * RBPIECE, len = n - p0 < RBPIECE ? n - p0 : RBPIECE;
        if (nt) {
            const int64_t body = len / 32 * 32;
            if (body)
                SFX(bwd_row_out)(out + p0, g + p0, y + p0, vs, body, fast, bf, lg, 1);
            if (body < len)
                SFX(bwd_row_out)(out + p0 + body, g + p0 + body, y + p0 + body, vs, len - body,
                                 fast, bf, lg, 0);
        } else if (c->nt) { /* an odd address: through the buffer */
            SFX(bwd_row_out)(hb, g + p0, y + p0, vs, len, fast, bf, lg, 0);
            R_STREAM(out + p0, hb, len);
        } else {
            SFX(bwd_row_out)(out + p0, g + p0, y + p0, vs, len, fast, bf, lg, 0);
        }
        r_prefetch_part(pfg, n * 2, i, nparts);
        r_prefetch_part(pfy, n * 2, i, nparts);
    }
}

static ATTR void SFX(bwd_rows_chunk)(void *ctx, int64_t r0, int64_t r1)
{
    const rbwd_args *c = (const rbwd_args *)ctx;
    uint16_t hb[RPIECE];
    const int64_t n = c->axis;
    int fast = R_FAST;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t base = r * n;
        const char *pfg = NULL, *pfy = NULL;
        if (r + 1 < r1) {
            pfg = (const char *)((const uint16_t *)c->g + base + n);
            pfy = (const char *)((const uint16_t *)c->yv + base + n);
        }
        BF_LG_CALL(SFX(bwd_row), c, c, base, n, pfg, pfy, hb, &fast);
    }
    if (c->nt)
        aclk_nt_fence();
}

/* -------------------------------------------------------------- backward columns ---- */

/* *fast: as bwd_row's, checked per block (its outputs pass run again where it fails) */
static inline __attribute__((always_inline)) ATTR void SFX(bwd_block)(
    const rbwd_args *c, int64_t base, int64_t w, int64_t pbase, int64_t pw, rcol_ws *ws,
    int *fast, const int bf, const int lg)
{
    const int64_t axis = c->axis, inner = c->inner, wv = w / VW * VW;
    const uint16_t *g = (const uint16_t *)c->g + base, *y = (const uint16_t *)c->yv + base;
    uint16_t *out = (uint16_t *)c->out + base;
    float *sacc = ws->sacc;
    for (int64_t j = 0; j < w; j++)
        sacc[j] = 0.0f;
    /* pass 1: column sums of g*y (lg: of g), at the AVX2 level strips of 8 vectors (four
       pairs, in pair order), then of 4 at every level, in registers, then the rest one vector
       at a time; a strip reads each a-row's lines of its columns once, so that a block of 64
       columns is read once by one 8-vector strip at the AVX2 level rather than twice (the
       second time from L2) by two 4-vector strips (the AVX-512 level's 4-vector strip is 64
       columns already) */
    int64_t js = 0;
    const int64_t ahead = r_bwd_ahead(w);
    for (; VW == 8 && js + 8 * VW <= w; js += 8 * VW) {
        V s0 = V_SET1(0.0f), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
        for (int64_t a = 0; a < axis; a++) {
            const uint16_t *ga = g + a * inner + js, *ya = y + a * inner + js;
            V g0, g1, g2, g3, g4, g5, g6, g7;
            if (!lg && a + ahead < axis) { /* as the 4-vector strips below */
                for (int64_t q = 0; q < 8 * VW * 2; q += 64) {
                    __builtin_prefetch((const char *)(ga + ahead * inner) + q, 0, 2);
                    __builtin_prefetch((const char *)(ya + ahead * inner) + q, 0, 2);
                }
            }
            V_LD2B(ga, bf, g0, g1);
            V_LD2B(ga + 2 * VW, bf, g2, g3);
            V_LD2B(ga + 4 * VW, bf, g4, g5);
            V_LD2B(ga + 6 * VW, bf, g6, g7);
            if (lg) {
                if (js == 0)
                    r_prefetch_run(y + a * inner, w * 2);
                s0 = V_ADD(s0, g0), s1 = V_ADD(s1, g1);
                s2 = V_ADD(s2, g2), s3 = V_ADD(s3, g3);
                s4 = V_ADD(s4, g4), s5 = V_ADD(s5, g5);
                s6 = V_ADD(s6, g6), s7 = V_ADD(s7, g7);
            } else {
                V y0, y1;
                V_LD2B(ya, bf, y0, y1);
                s0 = V_FMAB(g0, y0, s0), s1 = V_FMAB(g1, y1, s1);
                V_LD2B(ya + 2 * VW, bf, y0, y1);
                s2 = V_FMAB(g2, y0, s2), s3 = V_FMAB(g3, y1, s3);
                V_LD2B(ya + 4 * VW, bf, y0, y1);
                s4 = V_FMAB(g4, y0, s4), s5 = V_FMAB(g5, y1, s5);
                V_LD2B(ya + 6 * VW, bf, y0, y1);
                s6 = V_FMAB(g6, y0, s6), s7 = V_FMAB(g7, y1, s7);
            }
        }
        V_STF(sacc + js, s0), V_STF(sacc + js + VW, s1);
        V_STF(sacc + js + 2 * VW, s2), V_STF(sacc + js + 3 * VW, s3);
        V_STF(sacc + js + 4 * VW, s4), V_STF(sacc + js + 5 * VW, s5);
        V_STF(sacc + js + 6 * VW, s6), V_STF(sacc + js + 7 * VW, s7);
    }
    for (; js + 4 * VW <= w; js += 4 * VW) {
        V s0 = V_SET1(0.0f), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t a = 0; a < axis; a++) {
            const uint16_t *ga = g + a * inner + js, *ya = y + a * inner + js;
            V g0, g1, g2, g3;
            if (!lg && a + ahead < axis) {
                /* the strip's g and y lines `ahead` a-rows on (over dim 1 the hardware prefetch
                   alone leaves this pass slower than a read of the same bytes) */
                for (int64_t q = 0; q < 4 * VW * 2; q += 64) {
                    __builtin_prefetch((const char *)(ga + ahead * inner) + q, 0, 2);
                    __builtin_prefetch((const char *)(ya + ahead * inner) + q, 0, 2);
                }
            }
            V_LD2B(ga, bf, g0, g1);
            V_LD2B(ga + 2 * VW, bf, g2, g3);
            if (lg) {
                /* y is not read here: its a-row's lines fetched along with g's, so that pass 2
                   finds both in cache */
                if (js == 0)
                    r_prefetch_run(y + a * inner, w * 2);
                s0 = V_ADD(s0, g0), s1 = V_ADD(s1, g1);
                s2 = V_ADD(s2, g2), s3 = V_ADD(s3, g3);
            } else {
                V y0, y1, y2, y3;
                V_LD2B(ya, bf, y0, y1);
                V_LD2B(ya + 2 * VW, bf, y2, y3);
                s0 = V_FMAB(g0, y0, s0), s1 = V_FMAB(g1, y1, s1);
                s2 = V_FMAB(g2, y2, s2), s3 = V_FMAB(g3, y3, s3);
            }
        }
        V_STF(sacc + js, s0), V_STF(sacc + js + VW, s1);
        V_STF(sacc + js + 2 * VW, s2), V_STF(sacc + js + 3 * VW, s3);
    }
    for (int64_t a = 0; js < w && a < axis; a++) {
        const uint16_t *ga = g + a * inner, *ya = y + a * inner;
        int64_t j = js;
        if (lg && js == 0)
            r_prefetch_run(ya, w * 2);
        if (!lg && a + ahead < axis) { /* the rest of the a-row's lines, as above */
            r_prefetch_run(ga + js + ahead * inner, (w - js) * 2);
            r_prefetch_run(ya + js + ahead * inner, (w - js) * 2);
        }
        for (; j < wv; j += VW) {
            const V vg = V_LD(ga + j, bf);
            V_STF(sacc + j, lg ? V_ADD(V_LDF(sacc + j), vg)
                               : V_FMAB(vg, V_LD(ya + j, bf), V_LDF(sacc + j)));
        }
        if (j < w) {
            const V vg = V_LDN(ga + j, w - j, bf, 0), vs = V_LDFN(sacc + j, w - j);
            V_STFN(sacc + j, lg ? V_ADD(vs, vg) : V_FMAB(vg, V_LDN(ya + j, w - j, bf, 0), vs),
                   w - j);
        }
    }
    /* pass 2: outputs, the next block prefetched a-row by a-row; log_softmax_backward with
       the fast exp first where *fast, once more with the clamped one if a y of the block was
       out of its range (after a fence where streamed). Streamed outputs whose a-rows start
       64-byte aligned (nts): the pairs' whole lines streamed straight from the registers, the
       rest [js, w) stored normally; other streamed outputs through the buffer */
    const int nts = VW > 1 && c->nt && (uintptr_t)out % 64 == 0 && (inner * 2) % 64 == 0;
    int try_fast = lg && R_FAST && *fast;
again:;
    V lo = V_SET1(0.0f), hi = lo;
    for (int64_t a = 0; a < axis; a++) {
        const uint16_t *ga = g + a * inner, *ya = y + a * inner;
        uint16_t *oa = out + a * inner, *d = c->nt && !nts ? ws->hb : oa;
        if (!c->nt && a + 16 < axis) /* the output lines 16 a-rows ahead, for writing */
            for (int64_t k = 0; k < w * 2; k += 64)
                r_prefetchw((const char *)(oa + 16 * inner) + k);
        if (lg) {
            /* nt and fast as constants: each loop compiled for its case */
            if (nts && try_fast)
                SFX(bwd_lg_pairs)(d, ga, ya, sacc, V_SET1(0.0f), js, &lo, &hi, bf, 1, 1, 1);
            else if (nts)
                SFX(bwd_lg_pairs)(d, ga, ya, sacc, V_SET1(0.0f), js, &lo, &hi, bf, 1, 0, 1);
            else if (try_fast)
                SFX(bwd_lg_pairs)(d, ga, ya, sacc, V_SET1(0.0f), js, &lo, &hi, bf, 1, 1, 0);
            else
                SFX(bwd_lg_pairs)(d, ga, ya, sacc, V_SET1(0.0f), js, &lo, &hi, bf, 1, 0, 0);
        } else if (nts) {
            for (int64_t j = 0; j < js; j += 2 * VW) {
                V g0, g1, y0, y1;
                V_LD2B(ga + j, bf, g0, g1);
                V_LD2B(ya + j, bf, y0, y1);
                const V s0 = V_LDF(sacc + j), s1 = V_LDF(sacc + j + VW);
                V_ST2B_NT(d + j, V_MUL(V_SUB(g0, s0), y0), V_MUL(V_SUB(g1, s1), y1), bf);
            }
        } else {
            for (int64_t j = 0; j < js; j += 2 * VW) {
                V g0, g1, y0, y1;
                V_LD2B(ga + j, bf, g0, g1);
                V_LD2B(ya + j, bf, y0, y1);
                const V s0 = V_LDF(sacc + j), s1 = V_LDF(sacc + j + VW);
                V_ST2B(d + j, V_MUL(V_SUB(g0, s0), y0), V_MUL(V_SUB(g1, s1), y1), bf);
            }
        }
        for (int64_t j = js; j < w; j += VW) {
            const int64_t l = w - j < VW ? w - j : VW;
            const V vg = l < VW ? V_LDN(ga + j, l, bf, 0) : V_LD(ga + j, bf);
            const V vy = l < VW ? V_LDN(ya + j, l, bf, 0) : V_LD(ya + j, bf);
            const V vs = l < VW ? V_LDFN(sacc + j, l) : V_LDF(sacc + j);
            const V v = lg ? V_FNMA(vs, V_EXPB(vy), vg) : V_MUL(V_SUB(vg, vs), vy);
            if (l < VW)
                V_STN(d + j, v, l, bf);
            else
                V_ST(d + j, v, bf);
        }
        if (c->nt && !nts)
            R_STREAM(oa, ws->hb, w);
        if (pw) {
            r_prefetch_run((const uint16_t *)c->g + pbase + a * inner, pw * 2);
            r_prefetch_run((const uint16_t *)c->yv + pbase + a * inner, pw * 2);
        }
    }
    if (try_fast && R_OUT(lo, hi)) {
        try_fast = 0, *fast = 0;
        if (nts)
            aclk_nt_fence();
        goto again;
    }
}


/* backward blocks of a short axis (bwd_block_small): columns [j, j1) of the block at g, y, out,
   one column vector pair at a time, then one vector (stored normally) */
static inline __attribute__((always_inline)) ATTR void SFX(bwd_small_cols)(
    const rbwd_args *c, const uint16_t *g, const uint16_t *y, uint16_t *out, int64_t j,
    int64_t j1, int64_t pf_end, int *fast, const int bf, const int lg)
{
    const int64_t axis = c->axis, inner = c->inner;
    V gv[RSMALL], yv[RSMALL];
    /* two column vectors at a time (whole lines, two sum chains, pair order), then one */
    for (; j + 2 * VW <= j1; j += 2 * VW) {
        if ((j * 2) % 64 == 0 && j + RPF_COLS < pf_end)
            for (int64_t a = 0; a < axis; a++) {
                __builtin_prefetch(g + a * inner + j + RPF_COLS, 0, 3);
                __builtin_prefetch(y + a * inner + j + RPF_COLS, 0, 3);
                if (!c->nt)
                    r_prefetchw(out + a * inner + j + RPF_COLS);
            }
        V s0 = V_SET1(0.0f), s1 = s0;
        for (int64_t a = 0; a < axis; a++) {
            const int64_t o = a * inner + j;
            V g0, g1;
            V_LD2B(g + o, bf, g0, g1);
            if (lg) {
                s0 = V_ADD(s0, g0), s1 = V_ADD(s1, g1);
            } else {
                V y0, y1;
                V_LD2B(y + o, bf, y0, y1);
                s0 = V_FMAB(g0, y0, s0), s1 = V_FMAB(g1, y1, s1);
            }
        }
        if (lg && R_FAST && *fast) {
            V lo = V_SET1(0.0f), hi = lo;
            for (int64_t a = 0; a < axis; a++) {
                const int64_t o = a * inner + j;
                V g0, g1, y0, y1;
                V_LD2B(g + o, bf, g0, g1);
                V_LD2B(y + o, bf, y0, y1);
                lo = V_MIN(y0, lo), hi = V_MAX(y0, hi);
                lo = V_MIN(y1, lo), hi = V_MAX(y1, hi);
                V_ST2B(out + o, V_FNMA(s0, V_EXPB_F(y0), g0), V_FNMA(s1, V_EXPB_F(y1), g1), bf);
            }
            if (!V_ANY_OUT2(lo, hi, RD_NORM, RD_FHI))
                continue;
            *fast = 0; /* a y out of the fast exp's range: the pair again, clamped */
        }
        for (int64_t a = 0; a < axis; a++) {
            const int64_t o = a * inner + j;
            V g0, g1, y0, y1;
            V_LD2B(g + o, bf, g0, g1);
            V_LD2B(y + o, bf, y0, y1);
            V_ST2B(out + o, lg ? V_FNMA(s0, V_EXPB(y0), g0) : V_MUL(V_SUB(g0, s0), y0),
                   lg ? V_FNMA(s1, V_EXPB(y1), g1) : V_MUL(V_SUB(g1, s1), y1), bf);
        }
    }
    for (; j < j1; j += VW) {
        const int64_t l = j1 - j < VW ? j1 - j : VW;
        if ((j * 2) % 64 == 0 && j + RPF_COLS < pf_end)
            for (int64_t a = 0; a < axis; a++) {
                __builtin_prefetch(g + a * inner + j + RPF_COLS, 0, 3);
                __builtin_prefetch(y + a * inner + j + RPF_COLS, 0, 3);
                if (!c->nt)
                    r_prefetchw(out + a * inner + j + RPF_COLS);
            }
        V s = V_SET1(0.0f);
        for (int64_t a = 0; a < axis; a++) {
            const int64_t o = a * inner + j;
            gv[a] = l < VW ? V_LDN(g + o, l, bf, 0) : V_LD(g + o, bf);
            yv[a] = l < VW ? V_LDN(y + o, l, bf, 0) : V_LD(y + o, bf);
            s = lg ? V_ADD(s, gv[a]) : V_FMAB(gv[a], yv[a], s);
        }
        for (int64_t a = 0; a < axis; a++) {
            const V v = lg ? V_FNMA(s, V_EXPB(yv[a]), gv[a]) : V_MUL(V_SUB(gv[a], s), yv[a]);
            uint16_t *d = out + a * inner + j;
            if (l < VW)
                V_STN(d, v, l, bf);
            else
                V_ST(d, v, bf);
        }
    }
}

/* the same, streamed: columns from j while four column vectors (two pairs) fit before j1, each
   a-row's 8*VW bytes (j at a 64-byte line of every a-row) stored at once as whole streamed
   lines (two adjacent stores at the AVX2 level, two lines of one store each at the AVX-512
   level), so that no line stays partly written across the a-row loop (an axis of 16 would
   keep 16 such lines open, more than a core's write-combining buffers); the same sums, lane by
   lane, as bwd_small_cols. A pair computed again with the clamped exp is stored after a
   fence. Returns the first column not done. */
static inline __attribute__((always_inline)) ATTR int64_t SFX(bwd_small_nt)(
    const rbwd_args *c, const uint16_t *g, const uint16_t *y, uint16_t *out, int64_t j,
    int64_t j1, int64_t pf_end, int *fast, const int bf, const int lg)
{
    const int64_t axis = c->axis, inner = c->inner;
    for (; j + 4 * VW <= j1; j += 4 * VW) {
        if (j + RPF_COLS < pf_end)
            for (int64_t a = 0; a < axis; a++)
                for (int64_t q = 0; q < 4 * VW; q += 32) {
                    __builtin_prefetch(g + a * inner + j + RPF_COLS + q, 0, 3);
                    __builtin_prefetch(y + a * inner + j + RPF_COLS + q, 0, 3);
                }
        V s0 = V_SET1(0.0f), s1 = s0, s2 = s0, s3 = s0;
        for (int64_t a = 0; a < axis; a++) {
            const int64_t o = a * inner + j;
            V g0, g1, g2, g3;
            V_LD2B(g + o, bf, g0, g1);
            V_LD2B(g + o + 2 * VW, bf, g2, g3);
            if (lg) {
                s0 = V_ADD(s0, g0), s1 = V_ADD(s1, g1), s2 = V_ADD(s2, g2), s3 = V_ADD(s3, g3);
            } else {
                V y0, y1, y2, y3;
                V_LD2B(y + o, bf, y0, y1);
                V_LD2B(y + o + 2 * VW, bf, y2, y3);
                s0 = V_FMAB(g0, y0, s0), s1 = V_FMAB(g1, y1, s1);
                s2 = V_FMAB(g2, y2, s2), s3 = V_FMAB(g3, y3, s3);
            }
        }
        if (lg && R_FAST && *fast) {
            V lo = V_SET1(0.0f), hi = lo;
            for (int64_t a = 0; a < axis; a++) {
                const int64_t o = a * inner + j;
                V g0, g1, g2, g3, y0, y1, y2, y3;
                V_LD2B(g + o, bf, g0, g1);
                V_LD2B(y + o, bf, y0, y1);
                V_LD2B(g + o + 2 * VW, bf, g2, g3);
                V_LD2B(y + o + 2 * VW, bf, y2, y3);
                lo = V_MIN(y0, lo), hi = V_MAX(y0, hi);
                lo = V_MIN(y1, lo), hi = V_MAX(y1, hi);
                lo = V_MIN(y2, lo), hi = V_MAX(y2, hi);
                lo = V_MIN(y3, lo), hi = V_MAX(y3, hi);
                V_ST2B_NT(out + o, V_FNMA(s0, V_EXPB_F(y0), g0), V_FNMA(s1, V_EXPB_F(y1), g1),
                          bf);
                V_ST2B_NT(out + o + 2 * VW, V_FNMA(s2, V_EXPB_F(y2), g2),
                          V_FNMA(s3, V_EXPB_F(y3), g3), bf);
            }
            if (!V_ANY_OUT2(lo, hi, RD_NORM, RD_FHI))
                continue;
            *fast = 0; /* a y out of the fast exp's range: the pairs again, clamped */
            aclk_nt_fence();
        }
        for (int64_t a = 0; a < axis; a++) {
            const int64_t o = a * inner + j;
            V g0, g1, g2, g3, y0, y1, y2, y3;
            V_LD2B(g + o, bf, g0, g1);
            V_LD2B(y + o, bf, y0, y1);
            V_LD2B(g + o + 2 * VW, bf, g2, g3);
            V_LD2B(y + o + 2 * VW, bf, y2, y3);
            V_ST2B_NT(out + o, lg ? V_FNMA(s0, V_EXPB(y0), g0) : V_MUL(V_SUB(g0, s0), y0),
                      lg ? V_FNMA(s1, V_EXPB(y1), g1) : V_MUL(V_SUB(g1, s1), y1), bf);
            V_ST2B_NT(out + o + 2 * VW,
                      lg ? V_FNMA(s2, V_EXPB(y2), g2) : V_MUL(V_SUB(g2, s2), y2),
                      lg ? V_FNMA(s3, V_EXPB(y3), g3) : V_MUL(V_SUB(g3, s3), y3), bf);
        }
    }
    return j;
}

/* backward blocks of a short axis, one column vector pair at a time as fwd_block_small: grad
   and y read from memory once; *fast as bwd_row's, per column pair. Streamed outputs whose
   a-rows share their offset in a 64-byte line: the columns up to the first line boundary
   stored normally, then bwd_small_nt, the rest normally */
static inline __attribute__((always_inline)) ATTR void SFX(bwd_block_small)(
    const rbwd_args *c, int64_t base, int64_t w, int64_t pf_end, int *fast, const int bf,
    const int lg)
{
    const uint16_t *g = (const uint16_t *)c->g + base, *y = (const uint16_t *)c->yv + base;
    uint16_t *out = (uint16_t *)c->out + base;
    const uintptr_t ob = (uintptr_t)out;
    int64_t j = 0;
    if (VW > 1 && c->nt && ob % 2 == 0 && (c->inner * 2) % 64 == 0) {
        const int64_t jh = (int64_t)((64 - ob % 64) % 64) / 2;
        j = jh < w ? jh : w;
        if (j)
            SFX(bwd_small_cols)(c, g, y, out, 0, j, pf_end, fast, bf, lg);
        j = SFX(bwd_small_nt)(c, g, y, out, j, w, pf_end, fast, bf, lg);
    }
    if (j < w)
        SFX(bwd_small_cols)(c, g, y, out, j, w, pf_end, fast, bf, lg);
}

static ATTR void SFX(bwd_cols_chunk)(void *ctx, int64_t t0, int64_t t1)
{
    const rbwd_args *c = (const rbwd_args *)ctx;
    rcol_ws ws;
    int fast = R_FAST;
    for (int64_t t = t0; t < t1; t++) {
        const r_item_t it = r_item(c->axis, c->inner, c->W, c->nblk, t, t1);
        if (c->axis <= RSMALL && c->inner >= VW) {
            BF_LG_CALL(SFX(bwd_block_small), c, c, it.base, it.w, it.pf_end, &fast);
            continue;
        }
        BF_LG_CALL(SFX(bwd_block), c, c, it.base, it.w, it.pbase, it.pw, &ws, &fast);
    }
    if (c->nt)
        aclk_nt_fence();
}

/* the instantiation's parameters, undefined for the next one */
#undef V
#undef VW
#undef ATTR
#undef SFX
#undef V_SET1
#undef V_ADD
#undef V_SUB
#undef V_MUL
#undef V_DIV
#undef V_MAX
#undef V_FNMA
#undef V_EXP
#undef V_EXPN
#undef R_FAST
#undef V_MIN
#undef V_EXPN_F
#undef V_EXPC
#undef V_EXP_F
#undef V_ANY_LT
#undef V_ANY_LT4
#undef V_ANY_OUT2
#undef V_LD
#undef V_LDN
#undef V_ST
#undef V_STN
#undef V_LDF
#undef V_LDFN
#undef V_STF
#undef V_STFN
#undef V_CNT_EQ0
#undef V_ADD_NE0
#undef V_HSUM
#undef V_HMAX
#undef V_HMIN
#undef R_EXPN4
#undef R_EXP2
#undef R_STREAM
#undef V_EXPB
#undef V_EXPB_F
#undef V_FMAB
#undef V_LD2B
#undef V_ST2B
#undef V_ST2B_NT
#undef R_OUT
