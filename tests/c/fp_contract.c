/*
 * fp_contract.c: runs the float32 softmax-family and hard-sigmoid kernels on given inputs, for
 * tests/test_kernels_c.py, which links it with csrc/kernels compiled with FMA allowed and
 * contraction asked for (-mfma -ffp-contract=fast): the kernel files switch contraction off
 * themselves, so the results must be the bits of the normal build.
 *
 *   fp_contract IN OUT outer axis inner
 * IN: x[N], g[N] as float32 (N = outer*axis*inner). OUT: float32, in this order:
 *   softmax(x), log_softmax(x), softmax_bwd(g, softmax(x)), log_softmax_bwd(g, log_softmax(x)),
 *   hardsigmoid(x; 1/6, 1/2), hardsigmoid_bwd(g, x; 1/6, 1/2),
 *   hardsigmoid(x; 0.2, 0.5), hardsigmoid_bwd(g, x; 0.2, 0.5),
 *   and the reference kernels' hardsigmoid(x; 1/6, 1/2), hardsigmoid_bwd(g, x; 0.2, 0.5)
 */
#include <stdio.h>
#include <stdlib.h>

#include "aclnn_emu.h"

#define NOUT 10

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: fp_contract IN OUT outer axis inner\n");
        return 2;
    }
    int64_t outer = atoll(argv[3]), axis = atoll(argv[4]), inner = atoll(argv[5]);
    size_t n = (size_t)(outer * axis * inner);
    float *in = malloc(2 * n * sizeof(float)), *out = malloc(NOUT * n * sizeof(float));
    FILE *fi = fopen(argv[1], "rb");
    if (!in || !out || !fi || fread(in, sizeof(float), 2 * n, fi) != 2 * n) {
        fprintf(stderr, "fp_contract: cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(fi);
    const float *x = in, *g = in + n;
    float *o[NOUT];
    for (int i = 0; i < NOUT; i++)
        o[i] = out + (size_t)i * n;
    int rc = 0;
    rc |= aclk_softmax_fwd(ACLK_F32, x, o[0], outer, axis, inner, 0);
    rc |= aclk_softmax_fwd(ACLK_F32, x, o[1], outer, axis, inner, 1);
    rc |= aclk_softmax_bwd(ACLK_F32, g, o[0], o[2], outer, axis, inner, 0);
    rc |= aclk_softmax_bwd(ACLK_F32, g, o[1], o[3], outer, axis, inner, 1);
    rc |= aclk_hardsigmoid_fwd(ACLK_F32, x, o[4], (int64_t)n, 1.0 / 6.0, 0.5);
    rc |= aclk_hardsigmoid_bwd(ACLK_F32, g, x, o[5], (int64_t)n, 1.0 / 6.0, 0.5);
    rc |= aclk_hardsigmoid_fwd(ACLK_F32, x, o[6], (int64_t)n, 0.2, 0.5);
    rc |= aclk_hardsigmoid_bwd(ACLK_F32, g, x, o[7], (int64_t)n, 0.2, 0.5);
    rc |= aclk_ref_hardsigmoid_fwd(ACLK_F32, x, o[8], (int64_t)n, 1.0 / 6.0, 0.5);
    rc |= aclk_ref_hardsigmoid_bwd(ACLK_F32, g, x, o[9], (int64_t)n, 0.2, 0.5);
    FILE *fo = fopen(argv[2], "wb");
    if (rc || !fo || fwrite(out, sizeof(float), NOUT * n, fo) != NOUT * n) {
        fprintf(stderr, "fp_contract: kernel status %d or cannot write %s\n", rc, argv[2]);
        return 2;
    }
    fclose(fo);
    free(in);
    free(out);
    return 0;
}
