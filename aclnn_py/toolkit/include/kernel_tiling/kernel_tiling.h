/*
 * kernel_tiling/kernel_tiling.h: the tiling structures the Ascend C library's kernels read,
 * shared by host and kernel code (AscendC::tiling::TCubeTiling), written for aclnn-py
 * (docs/custom_ops.md). The fields are CANN's, as int32_t in CANN's order.
 */
#ifndef ACLNN_PY_KERNEL_TILING_KERNEL_TILING_H_
#define ACLNN_PY_KERNEL_TILING_KERNEL_TILING_H_

#include <cstdint>
#include <cstring>

/* X(name) for each field of TCubeTiling, in order */
#define ACLNN_PY_TCUBE_TILING_FIELDS(X) \
    X(usedCoreNum) X(M) X(N) X(Ka) X(Kb) X(singleCoreM) X(singleCoreN) X(singleCoreK) \
    X(baseM) X(baseN) X(baseK) X(depthA1) X(depthB1) X(stepM) X(stepN) X(isBias) \
    X(transLength) X(iterateOrder) X(shareMode) X(shareL1Size) X(shareL0CSize) X(shareUbSize) \
    X(batchM) X(batchN) X(singleBatchM) X(singleBatchN) X(stepKa) X(stepKb) \
    X(depthAL1CacheUB) X(depthBL1CacheUB) X(dbL0A) X(dbL0B) X(dbL0C) X(ALayoutInfoB) \
    X(ALayoutInfoS) X(ALayoutInfoN) X(ALayoutInfoG) X(ALayoutInfoD) X(BLayoutInfoB) \
    X(BLayoutInfoS) X(BLayoutInfoN) X(BLayoutInfoG) X(BLayoutInfoD) X(CLayoutInfoB) \
    X(CLayoutInfoS1) X(CLayoutInfoN) X(CLayoutInfoG) X(CLayoutInfoS2) X(BatchNum) \
    X(mxTypePara)

namespace AscendC {
namespace tiling {
struct TCubeTiling {
#define ACLNN_PY_CUBE_MEMBER(name) int32_t name = 0;
    ACLNN_PY_TCUBE_TILING_FIELDS(ACLNN_PY_CUBE_MEMBER)
#undef ACLNN_PY_CUBE_MEMBER
};

inline void SetField(TCubeTiling &t, const char *name, int32_t v)
{
#define ACLNN_PY_CUBE_SET(field) \
    if (std::strcmp(name, #field) == 0) { \
        t.field = v; \
        return; \
    }
    ACLNN_PY_TCUBE_TILING_FIELDS(ACLNN_PY_CUBE_SET)
#undef ACLNN_PY_CUBE_SET
}
}  // namespace tiling
}  // namespace AscendC

#endif  // ACLNN_PY_KERNEL_TILING_KERNEL_TILING_H_
