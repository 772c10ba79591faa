/*
 * kernel_tiling/kernel_tiling.h: the tiling structures the Ascend C library's kernels read,
 * shared by host and kernel code (AscendC::tiling::TCubeTiling), written for aclnn-py
 * (docs/custom_ops.md): the matmul's TCubeTiling and the vector library's SoftMaxTiling,
 * LayerNormTiling, PadTiling and UnPadTiling. The fields are CANN's, of CANN's types, in CANN's
 * order.
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

/* X(type, name) for each field of the vector library's tiling structures, in order */
#define ACLNN_PY_SOFTMAX_TILING_FIELDS(X) \
    X(uint32_t, srcM) X(uint32_t, srcK) X(uint32_t, srcSize) X(uint32_t, outMaxM) \
    X(uint32_t, outMaxK) X(uint32_t, outMaxSize) X(uint32_t, splitM) X(uint32_t, splitK) \
    X(uint32_t, splitSize) X(uint32_t, reduceM) X(uint32_t, reduceK) X(uint32_t, reduceSize) \
    X(uint32_t, rangeM) X(uint32_t, tailM) X(uint32_t, tailSplitSize) \
    X(uint32_t, tailReduceSize)
#define ACLNN_PY_LAYERNORM_TILING_FIELDS(X) \
    X(uint32_t, bLength) X(uint32_t, sLength) X(uint32_t, hLength) \
    X(uint32_t, originalHLength) X(uint32_t, inputXSize) X(uint32_t, meanVarSize) \
    X(uint32_t, numberOfTmpBuf) X(uint32_t, meanTmpTensorPos) X(uint32_t, meanTmpTensorSize) \
    X(uint32_t, varianceTmpTensorPos) X(uint32_t, varianceTmpTensorSize) \
    X(uint32_t, tmpBufSize) X(uint32_t, oneTmpSize) X(uint32_t, firstTmpStartPos) \
    X(uint32_t, secondTmpStartPos) X(uint32_t, thirdTmpStartPos) X(uint32_t, loopRound) \
    X(uint32_t, inputRoundSize) X(uint32_t, inputTailSize) X(uint32_t, inputTailPos) \
    X(uint32_t, meanVarRoundSize) X(uint32_t, meanVarTailSize) X(uint32_t, meanVarTailPos) \
    X(uint32_t, bshCurLength) X(uint32_t, bsCurLength) X(float, lastDimValueBack)
#define ACLNN_PY_UNPAD_TILING_FIELDS(X) \
    X(uint32_t, srcHeight) X(uint32_t, srcWidth) X(uint32_t, tmpBuffer1BlockNum) \
    X(uint32_t, tmpBuffer1RowNum) X(uint32_t, tmpBuffer2Offset) X(uint32_t, widthTiling) \
    X(uint32_t, widthFractal) X(uint32_t, widthFractalTail)
#define ACLNN_PY_PAD_TILING_FIELDS(X) \
    X(uint32_t, srcHeight) X(uint32_t, srcWidth) X(uint32_t, srcOriWidth) \
    X(uint32_t, widthWithoutLastBlock) X(uint32_t, blocksPerRow) X(uint32_t, heightTiling) \
    X(uint32_t, heightFractal) X(uint32_t, heightFractalTail) X(uint32_t, mainLoopOffset) \
    X(uint32_t, tailBlockOffset) X(uint32_t, tmpBuffer1BlockNum) X(uint32_t, tmpBuffer1RowNum) \
    X(uint32_t, tmpBuffer2Offset) X(uint32_t, widthTiling) X(uint32_t, widthFractal) \
    X(uint32_t, widthFractalTail) X(uint32_t, widthFractalTailAlingned) X(uint32_t, brcbTiling) \
    X(uint32_t, brcbFractal) X(uint32_t, brcbFractalTail) X(uint32_t, maxRepeatTimes) \
    X(uint32_t, brcbTilingRepeatTimes) X(uint32_t, brcbTilingRepeatTimesTail) \
    X(uint32_t, brcbFractalTailRepeatTimes) X(uint32_t, brcbFractalTailRepeatTimesTail) \
    X(uint32_t, reserved)

namespace AscendC {
namespace tiling {
#define ACLNN_PY_PLAIN_MEMBER(type, name) type name = 0;
struct SoftMaxTiling {
    ACLNN_PY_SOFTMAX_TILING_FIELDS(ACLNN_PY_PLAIN_MEMBER)
};
struct LayerNormTiling {
    ACLNN_PY_LAYERNORM_TILING_FIELDS(ACLNN_PY_PLAIN_MEMBER)
};
struct PadTiling {
    ACLNN_PY_PAD_TILING_FIELDS(ACLNN_PY_PLAIN_MEMBER)
};
struct UnPadTiling {
    ACLNN_PY_UNPAD_TILING_FIELDS(ACLNN_PY_PLAIN_MEMBER)
};
#undef ACLNN_PY_PLAIN_MEMBER

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
