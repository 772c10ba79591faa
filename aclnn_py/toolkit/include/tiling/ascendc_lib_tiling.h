/*
 * tiling/ascendc_lib_tiling.h: the host side of the Ascend C library's vector APIs as op_host
 * tiling functions call it (included by tiling/tiling_api.h), written for aclnn-py
 * (docs/custom_ops.md, "From an op_host source"). The declarations are CANN's (namespace
 * AscendC, the tiling data classes SoftMaxTiling, LayerNormTiling, PadTiling and UnPadTiling of
 * namespace optiling with CANN's fields); the figures are aclnn-py's own estimate of temporary
 * buffers, not CANN's: the emulator's kernels are NumPy and never read them. Temporary sizes:
 * an elementwise API wants one working copy of the source (two when the elements are narrower
 * than float, which the computation widens) at most and one 256-byte repeat of it at least; a
 * row-wise API (softmax, layernorm) the whole source in float plus one 32-byte block per row at
 * most, and one row of that at least; sizes are rounded up to 32-byte blocks.
 */
#ifndef ACLNN_PY_TILING_ASCENDC_LIB_TILING_H_
#define ACLNN_PY_TILING_ASCENDC_LIB_TILING_H_

#include <cstdint>

#include "graph/operator.h"
#include "kernel_tiling/kernel_tiling.h"
#include "register/tilingdata_base.h"
#include "tiling/platform/platform_ascendc.h"

namespace optiling {
#define ACLNN_PY_LIB_FIELD(type, name) TILING_DATA_FIELD_DEF(type, name)
BEGIN_TILING_DATA_DEF(SoftMaxTiling)
    ACLNN_PY_SOFTMAX_TILING_FIELDS(ACLNN_PY_LIB_FIELD)
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(LayerNormTiling)
    ACLNN_PY_LAYERNORM_TILING_FIELDS(ACLNN_PY_LIB_FIELD)
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(PadTiling)
    ACLNN_PY_PAD_TILING_FIELDS(ACLNN_PY_LIB_FIELD)
END_TILING_DATA_DEF;
BEGIN_TILING_DATA_DEF(UnPadTiling)
    ACLNN_PY_UNPAD_TILING_FIELDS(ACLNN_PY_LIB_FIELD)
END_TILING_DATA_DEF;
#undef ACLNN_PY_LIB_FIELD
}  // namespace optiling

namespace AscendC {
using TensorShape = ge::Shape;

namespace detail {
constexpr uint32_t kBlock = 32;    // bytes of one block
constexpr uint32_t kRepeat = 256;  // bytes one vector instruction repeat processes

inline uint32_t Blocks(uint64_t bytes)
{
    uint64_t n = (bytes + kBlock - 1) / kBlock * kBlock;
    return n > 0xffffffffULL ? 0xffffffffU : static_cast<uint32_t>(n);
}

inline uint64_t Elements(const ge::Shape &shape)
{
    int64_t n = shape.GetShapeSize();
    return n > 0 ? static_cast<uint64_t>(n) : 0;
}

/* rows and the last dimension of a shape (a scalar or empty shape: one row of one element) */
inline void RowsCols(const ge::Shape &shape, uint64_t &rows, uint64_t &cols)
{
    size_t dims = shape.GetDimNum();
    cols = dims ? static_cast<uint64_t>(shape.GetDim(dims - 1) > 0 ? shape.GetDim(dims - 1) : 0)
                : 1;
    uint64_t all = dims ? Elements(shape) : 1;
    rows = cols ? all / cols : 0;
}

inline void Elementwise(uint64_t elements, uint32_t typeSize, uint32_t &maxValue,
                        uint32_t &minValue)
{
    bool narrow = typeSize != 0 && typeSize < 4;  // widened to float: a second copy
    minValue = (narrow ? 2 : 1) * kRepeat;
    maxValue = narrow ? Blocks(elements * 4) + Blocks(elements * typeSize)
                      : Blocks(elements * (typeSize ? typeSize : 4));
    if (maxValue < minValue)
        maxValue = minValue;
}

inline void RowWise(const ge::Shape &shape, uint32_t &maxValue, uint32_t &minValue)
{
    uint64_t rows = 0, cols = 0;
    RowsCols(shape, rows, cols);
    uint32_t row = Blocks(cols * 4) + kBlock;
    minValue = rows ? row : 0;
    maxValue = Blocks(rows * cols * 4) + Blocks(rows * kBlock);
    if (maxValue < minValue)
        maxValue = minValue;
}
}  // namespace detail

/* elementwise APIs: max and min temporary bytes for a source of srcShape */
#define ACLNN_PY_ELEMENTWISE_TMP(Name) \
    inline void Get##Name##MaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize, \
                                         const bool isReuseSource, uint32_t &maxValue, \
                                         uint32_t &minValue) \
    { \
        (void)isReuseSource; \
        detail::Elementwise(detail::Elements(srcShape), typeSize, maxValue, minValue); \
    } \
    inline void Get##Name##TmpBufferFactorSize(const uint32_t typeSize, \
                                               uint32_t &maxLiveNodeCount, uint32_t &extraBuf) \
    { \
        maxLiveNodeCount = typeSize != 0 && typeSize < 4 ? 3 : 1; \
        extraBuf = 0; \
    }
#define ACLNN_PY_ELEMENTWISE_APIS(X) \
    X(Acos) X(Acosh) X(Asin) X(Asinh) X(Atan) X(Atanh) X(Axpy) X(Ceil) X(Clamp) X(Cos) X(Cosh) \
    X(Digamma) X(DropOut) X(Erf) X(Erfc) X(Exp) X(Floor) X(Fmod) X(Frac) X(GeGLU) X(Hypot) \
    X(Lgamma) X(Log) X(Log10) X(Log2) X(ReGlu) X(Sigmoid) X(Sign) X(Silu) X(Sin) X(Sinh) \
    X(Swish) X(Tan) X(Tanh) X(Trunc) X(Xor)
ACLNN_PY_ELEMENTWISE_APIS(ACLNN_PY_ELEMENTWISE_TMP)
#undef ACLNN_PY_ELEMENTWISE_TMP

/* the elementwise APIs whose sizes also take the platform */
#define ACLNN_PY_PLATFORM_TMP(Name) \
    inline void Get##Name##MaxMinTmpSize(const platform_ascendc::PlatformAscendC &, \
                                         const ge::Shape &srcShape, const uint32_t typeSize, \
                                         const bool isReuseSource, uint32_t &maxValue, \
                                         uint32_t &minValue) \
    { \
        (void)isReuseSource; \
        detail::Elementwise(detail::Elements(srcShape), typeSize, maxValue, minValue); \
    }
ACLNN_PY_PLATFORM_TMP(Round) ACLNN_PY_PLATFORM_TMP(Rint) ACLNN_PY_PLATFORM_TMP(Where)
ACLNN_PY_PLATFORM_TMP(IsInf) ACLNN_PY_PLATFORM_TMP(IsNan) ACLNN_PY_PLATFORM_TMP(SinCos)
ACLNN_PY_PLATFORM_TMP(Fma)
#undef ACLNN_PY_PLATFORM_TMP

inline void GetGeluMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                 uint32_t &maxValue, uint32_t &minValue)
{
    detail::Elementwise(detail::Elements(srcShape), typeSize, maxValue, minValue);
}
inline void GetSwiGLUMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                   uint32_t &maxValue, uint32_t &minValue,
                                   const bool isReuseSource = false)
{
    (void)isReuseSource;
    detail::Elementwise(detail::Elements(srcShape), typeSize, maxValue, minValue);
}
inline void GetAscendQuantMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                        uint32_t &maxValue, uint32_t &minValue)
{
    detail::Elementwise(detail::Elements(srcShape), typeSize, maxValue, minValue);
}
inline void GetAscendDequantMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                          uint32_t &maxValue, uint32_t &minValue)
{
    detail::Elementwise(detail::Elements(srcShape), typeSize, maxValue, minValue);
}
inline void GetPowerMaxMinTmpSize(const ge::Shape &srcShape1, const ge::Shape &srcShape2,
                                  const bool typeIsInt, const uint32_t typeSize,
                                  const bool isReuseSource, uint32_t &maxValue,
                                  uint32_t &minValue)
{
    (void)srcShape2, (void)typeIsInt, (void)isReuseSource;
    detail::Elementwise(detail::Elements(srcShape1), typeSize, maxValue, minValue);
}

/* broadcast srcShape to dstShape: one working copy of the destination (none when the shapes
   hold as many elements) */
inline void GetBroadCastMaxMinTmpSize(const platform_ascendc::PlatformAscendC &ascendcPlatform,
                                      const ge::Shape &srcShape, const ge::Shape &dstShape,
                                      uint32_t typeSize, const bool isReuseSource,
                                      uint32_t &maxValue, uint32_t &minValue)
{
    (void)ascendcPlatform, (void)isReuseSource;
    uint64_t src = detail::Elements(srcShape), dst = detail::Elements(dstShape);
    if (src == dst) {
        maxValue = minValue = 0;
        return;
    }
    uint32_t size = typeSize == 1 ? 2 : typeSize;  // 8-bit data is widened
    maxValue = detail::Blocks(dst * size);
    minValue = detail::kRepeat < maxValue ? detail::kRepeat : maxValue;
}

/* reductions of n elements to one */
inline void GetMeanMaxMinTmpSize(const uint32_t n, const uint32_t srcTypeSize,
                                 const uint32_t accTypeSize, const bool isReuseSource,
                                 uint32_t &maxSize, uint32_t &minSize)
{
    (void)srcTypeSize, (void)isReuseSource;
    maxSize = detail::Blocks(static_cast<uint64_t>(n) * (accTypeSize ? accTypeSize : 4));
    minSize = detail::kBlock < maxSize ? detail::kBlock : maxSize;
}
inline void GetMeanTmpBufferFactorSize(const uint32_t typeSize, uint32_t &maxLiveNodeCount,
                                       uint32_t &extraBuffer)
{
    maxLiveNodeCount = typeSize != 0 && typeSize < 4 ? 2 : 1;
    extraBuffer = detail::kBlock;
}
inline void GetSumMaxMinTmpSize(const uint32_t n, const uint32_t typeSize,
                                const bool isReuseSource, uint32_t &maxSize, uint32_t &minSize)
{
    GetMeanMaxMinTmpSize(n, typeSize, typeSize, isReuseSource, maxSize, minSize);
}

/* softmax over the last dimension of srcShape */
inline uint32_t GetSoftMaxMaxTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                                     const bool isReuseSource)
{
    (void)dataTypeSize, (void)isReuseSource;
    uint32_t maxValue = 0, minValue = 0;
    detail::RowWise(srcShape, maxValue, minValue);
    return maxValue;
}
inline uint32_t GetSoftMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                                     const bool isReuseSource)
{
    (void)dataTypeSize, (void)isReuseSource;
    uint32_t maxValue = 0, minValue = 0;
    detail::RowWise(srcShape, maxValue, minValue);
    return minValue;
}
inline uint32_t GetSoftMaxFlashMaxTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                                          const bool isUpdate, const bool isReuseSource)
{
    (void)isUpdate;
    return GetSoftMaxMaxTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetSoftMaxFlashMinTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                                          const bool isUpdate, const bool isReuseSource)
{
    (void)isUpdate;
    return GetSoftMaxMinTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetSoftMaxGradMaxTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                                         const bool isFront, const bool isReuseSource)
{
    (void)isFront;
    return GetSoftMaxMaxTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetSoftMaxGradMinTmpSize(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                                         const bool isFront, const bool isReuseSource)
{
    (void)isFront;
    return GetSoftMaxMinTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetSoftMaxFlashV2MaxTmpSize(const ge::Shape &srcShape,
                                            const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate,
                                            const bool isBasicBlock = false,
                                            const bool isFlashOutputBrc = false)
{
    (void)dataTypeSize2, (void)isUpdate, (void)isBasicBlock, (void)isFlashOutputBrc;
    return GetSoftMaxMaxTmpSize(srcShape, dataTypeSize1, false);
}
inline uint32_t GetSoftMaxFlashV2MinTmpSize(const ge::Shape &srcShape,
                                            const uint32_t dataTypeSize1,
                                            const uint32_t dataTypeSize2, const bool isUpdate,
                                            const bool isBasicBlock = false,
                                            const bool isFlashOutputBrc = false)
{
    (void)dataTypeSize2, (void)isUpdate, (void)isBasicBlock, (void)isFlashOutputBrc;
    return GetSoftMaxMinTmpSize(srcShape, dataTypeSize1, false);
}
inline uint32_t GetLogSoftMaxMaxTmpSize(const ge::Shape srcShape, const uint32_t dataTypeSize,
                                        const bool isReuseSource)
{
    return GetSoftMaxMaxTmpSize(srcShape, dataTypeSize, isReuseSource);
}
inline uint32_t GetLogSoftMaxMinTmpSize(const ge::Shape srcShape, const uint32_t dataTypeSize,
                                        const bool isReuseSource)
{
    return GetSoftMaxMinTmpSize(srcShape, dataTypeSize, isReuseSource);
}

namespace detail {
/* rows of srcShape split into the row blocks that localWorkSpaceSize bytes hold */
template <typename T>
inline void SoftMaxSplit(const ge::Shape &srcShape, const uint32_t dataTypeSize,
                         const uint32_t localWorkSpaceSize, T &t)
{
    uint64_t rows = 0, cols = 0;
    RowsCols(srcShape, rows, cols);
    uint32_t m = static_cast<uint32_t>(rows), k = static_cast<uint32_t>(cols);
    uint32_t perBlock = kBlock / (dataTypeSize ? dataTypeSize : 4);
    uint32_t row = Blocks(static_cast<uint64_t>(k) * 4) + kBlock;
    uint32_t split = row ? localWorkSpaceSize / row : 0;
    if (split == 0)
        split = 1;
    if (split > m)
        split = m;
    t.srcM = m;
    t.srcK = k;
    t.srcSize = m * k;
    t.outMaxM = m;
    t.outMaxK = perBlock;
    t.outMaxSize = m * perBlock;
    t.splitM = split;
    t.splitK = k;
    t.splitSize = split * k;
    t.reduceM = split;
    t.reduceK = perBlock;
    t.reduceSize = split * perBlock;
    t.rangeM = split ? m / split : 0;
    t.tailM = split ? m % split : 0;
    t.tailSplitSize = t.tailM * k;
    t.tailReduceSize = t.tailM * perBlock;
}
}  // namespace detail

#define ACLNN_PY_SOFTMAX_TILING_FUNCS(Tiling) \
    inline void SoftMaxTilingFunc(const ge::Shape &srcShape, const uint32_t dataTypeSize, \
                                  const uint32_t localWorkSpaceSize, Tiling &softmaxTiling) \
    { \
        detail::SoftMaxSplit(srcShape, dataTypeSize, localWorkSpaceSize, softmaxTiling); \
    } \
    inline void SoftMaxFlashTilingFunc(const ge::Shape &srcShape, const uint32_t dataTypeSize, \
                                       const uint32_t localWorkSpaceSize, Tiling &tiling, \
                                       const bool isUpdate = false) \
    { \
        (void)isUpdate; \
        detail::SoftMaxSplit(srcShape, dataTypeSize, localWorkSpaceSize, tiling); \
    } \
    inline void SoftMaxGradTilingFunc(const ge::Shape &srcShape, const uint32_t dataTypeSize, \
                                      const uint32_t localWorkSpaceSize, Tiling &tiling, \
                                      const bool isFront = false) \
    { \
        (void)isFront; \
        detail::SoftMaxSplit(srcShape, dataTypeSize, localWorkSpaceSize, tiling); \
    } \
    inline void SoftMaxFlashV2TilingFunc(const ge::Shape &srcShape, \
                                         const uint32_t dataTypeSize1, \
                                         const uint32_t dataTypeSize2, \
                                         const uint32_t localWorkSpaceSize, Tiling &tiling, \
                                         const bool isUpdate, const bool isBasicBlock = false, \
                                         const bool isFlashOutputBrc = false) \
    { \
        (void)dataTypeSize2, (void)isUpdate, (void)isBasicBlock, (void)isFlashOutputBrc; \
        detail::SoftMaxSplit(srcShape, dataTypeSize1, localWorkSpaceSize, tiling); \
    } \
    inline void LogSoftMaxTilingFunc(const ge::Shape srcShape, const uint32_t dataTypeSize, \
                                     const uint32_t localWorkSpaceSize, Tiling &tiling) \
    { \
        detail::SoftMaxSplit(srcShape, dataTypeSize, localWorkSpaceSize, tiling); \
    } \
    /* a basic block: whole 64-element rows (under 2048) in groups of 8 rows */ \
    inline bool IsBasicBlockInSoftMax(Tiling &tiling, const uint32_t dataTypeSize = 2) \
    { \
        (void)dataTypeSize; \
        return tiling.srcK % 64 == 0 && tiling.srcK < 2048 && tiling.splitM % 8 == 0; \
    }
ACLNN_PY_SOFTMAX_TILING_FUNCS(optiling::SoftMaxTiling)
ACLNN_PY_SOFTMAX_TILING_FUNCS(AscendC::tiling::SoftMaxTiling)
#undef ACLNN_PY_SOFTMAX_TILING_FUNCS

/* layernorm over the last dimension of a [B, S, H] source */
inline void GetLayerNormMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                      const bool isReuseSource, uint32_t &maxValue,
                                      uint32_t &minValue)
{
    (void)typeSize, (void)isReuseSource;
    detail::RowWise(srcShape, maxValue, minValue);
    maxValue *= 2;  // the centred source and its squares
    minValue *= 2;
}
inline void GetLayerNormMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                      const bool isReuseSource, const bool isComputeRstd,
                                      const bool isOnlyOutput, uint32_t &maxValue,
                                      uint32_t &minValue)
{
    (void)isComputeRstd, (void)isOnlyOutput;
    GetLayerNormMaxMinTmpSize(srcShape, typeSize, isReuseSource, maxValue, minValue);
}

namespace detail {
template <typename T>
inline void LayerNormSplit(const ge::Shape &srcShape, const uint32_t stackBufferSize,
                           const uint32_t typeSize, T &t)
{
    (void)typeSize;
    size_t dims = srcShape.GetDimNum();
    uint32_t h = dims ? static_cast<uint32_t>(srcShape.GetDim(dims - 1)) : 1;
    uint32_t s = dims > 1 ? static_cast<uint32_t>(srcShape.GetDim(dims - 2)) : 1;
    uint64_t all = dims ? Elements(srcShape) : 1;
    uint32_t b = h && s ? static_cast<uint32_t>(all / h / s) : 0;
    uint32_t elems = stackBufferSize / 4;  // the stack buffer, in float elements
    uint32_t one = elems / 2 / (h ? h : 1) * (h ? h : 1);  // whole rows per temporary
    uint32_t x = b * s * h;
    t.bLength = b;
    t.sLength = s;
    t.hLength = h;
    t.originalHLength = h;
    t.inputXSize = x;
    t.meanVarSize = b * s;
    t.numberOfTmpBuf = 2;
    t.meanTmpTensorPos = 0;
    t.meanTmpTensorSize = 0;
    t.varianceTmpTensorPos = 0;
    t.varianceTmpTensorSize = 0;
    t.tmpBufSize = elems;
    t.oneTmpSize = one;
    t.firstTmpStartPos = 0;
    t.secondTmpStartPos = one;
    t.thirdTmpStartPos = 2 * one;
    t.loopRound = one ? x / one : 0;
    t.inputRoundSize = one;
    t.inputTailSize = one ? x % one : x;
    t.inputTailPos = one ? x - x % one : 0;
    t.meanVarRoundSize = h ? one / h : 0;
    t.meanVarTailSize = h ? t.inputTailSize / h : 0;
    t.meanVarTailPos = h ? t.inputTailPos / h : 0;
    t.bshCurLength = one;
    t.bsCurLength = h ? one / h : 0;
    t.lastDimValueBack = h ? 1.0f / static_cast<float>(h) : 0.0f;
}
}  // namespace detail

inline void GetLayerNormNDTilingInfo(const ge::Shape &srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource,
                                     optiling::LayerNormTiling &tiling)
{
    (void)isReuseSource;
    detail::LayerNormSplit(srcShape, stackBufferSize, typeSize, tiling);
}
inline void GetLayerNormNDTilingInfo(const ge::Shape &srcShape, const uint32_t stackBufferSize,
                                     const uint32_t typeSize, const bool isReuseSource,
                                     AscendC::tiling::LayerNormTiling &tiling)
{
    (void)isReuseSource;
    detail::LayerNormSplit(srcShape, stackBufferSize, typeSize, tiling);
}
/* CANN's earlier spelling, kept by CANN as deprecated */
inline void GetLayerNormNDTillingInfo(const ge::Shape &srcShape, const uint32_t stackBufferSize,
                                      const uint32_t typeSize, const bool isReuseSource,
                                      optiling::LayerNormTiling &tilling)
{
    GetLayerNormNDTilingInfo(srcShape, stackBufferSize, typeSize, isReuseSource, tilling);
}

/* Pad: widen the rows of a [height, width] source to 32-byte blocks; UnPad: the reverse */
inline void GetPadMaxMinTmpSize(const ge::Shape &srcShape, const uint32_t typeSize,
                                uint32_t &maxValue, uint32_t &minValue)
{
    uint64_t rows = 0, cols = 0;
    detail::RowsCols(srcShape, rows, cols);
    minValue = detail::Blocks(cols * typeSize);
    maxValue = detail::Blocks(rows * cols * typeSize);
    if (maxValue < minValue)
        maxValue = minValue;
}
inline void GetUnPadMaxMinTmpSize(const platform_ascendc::PlatformAscendC &ascendcPlatform,
                                  const ge::Shape &srcShape, const uint32_t typeSize,
                                  uint32_t &maxValue, uint32_t &minValue)
{
    (void)ascendcPlatform;
    GetPadMaxMinTmpSize(srcShape, typeSize, maxValue, minValue);
}

namespace detail {
template <typename T>
inline void PadSplit(const ge::Shape &srcShape, const ge::Shape &oriSrcShape,
                     const uint32_t stackBufferSize, const uint32_t typeSize, T &t)
{
    uint64_t rows = 0, cols = 0, oriRows = 0, oriCols = 0;
    RowsCols(srcShape, rows, cols);
    RowsCols(oriSrcShape, oriRows, oriCols);
    uint32_t size = typeSize ? typeSize : 2;
    uint32_t perBlock = kBlock / size;
    uint32_t w = static_cast<uint32_t>(cols), h = static_cast<uint32_t>(rows);
    uint32_t blocks = perBlock ? (w + perBlock - 1) / perBlock : 0;
    uint32_t rowBytes = blocks * kBlock;
    uint32_t fit = rowBytes ? stackBufferSize / rowBytes : 0;
    t.srcHeight = h;
    t.srcWidth = w;
    t.srcOriWidth = static_cast<uint32_t>(oriCols);
    t.widthWithoutLastBlock = blocks ? (blocks - 1) * perBlock : 0;
    t.blocksPerRow = blocks;
    t.heightTiling = fit < h ? fit : h;
    t.heightFractal = t.heightTiling ? h / t.heightTiling : 0;
    t.heightFractalTail = t.heightTiling ? h % t.heightTiling : h;
    t.mainLoopOffset = t.heightTiling * w;
    t.tailBlockOffset = t.widthWithoutLastBlock;
    t.tmpBuffer1BlockNum = blocks;
    t.tmpBuffer1RowNum = t.heightTiling;
    t.tmpBuffer2Offset = blocks * perBlock * t.heightTiling;
    t.widthTiling = w;
    t.widthFractal = 1;
    t.widthFractalTail = 0;
    t.widthFractalTailAlingned = 0;
    t.brcbTiling = perBlock;
    t.brcbFractal = perBlock ? h / perBlock : 0;
    t.brcbFractalTail = perBlock ? h % perBlock : 0;
    t.maxRepeatTimes = 255;
    t.brcbTilingRepeatTimes = t.brcbFractal;
    t.brcbTilingRepeatTimesTail = 0;
    t.brcbFractalTailRepeatTimes = t.brcbFractalTail ? 1 : 0;
    t.brcbFractalTailRepeatTimesTail = 0;
    t.reserved = 0;
}

template <typename T>
inline void UnPadSplit(const ge::Shape &srcShape, const uint32_t stackBufferSize,
                       const uint32_t typeSize, T &t)
{
    uint64_t rows = 0, cols = 0;
    RowsCols(srcShape, rows, cols);
    uint32_t size = typeSize ? typeSize : 2;
    uint32_t perBlock = kBlock / size;
    uint32_t w = static_cast<uint32_t>(cols), h = static_cast<uint32_t>(rows);
    uint32_t blocks = perBlock ? (w + perBlock - 1) / perBlock : 0;
    uint32_t rowBytes = blocks * kBlock;
    uint32_t fit = rowBytes ? stackBufferSize / rowBytes : 0;
    t.srcHeight = h;
    t.srcWidth = w;
    t.tmpBuffer1BlockNum = blocks;
    t.tmpBuffer1RowNum = fit < h ? fit : h;
    t.tmpBuffer2Offset = blocks * perBlock * t.tmpBuffer1RowNum;
    t.widthTiling = w;
    t.widthFractal = 1;
    t.widthFractalTail = 0;
}
}  // namespace detail

inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape,
                          const uint32_t stackBufferSize, const uint32_t typeSize,
                          optiling::PadTiling &tiling)
{
    detail::PadSplit(srcShape, oriSrcShape, stackBufferSize, typeSize, tiling);
}
inline void PadTilingFunc(const ge::Shape srcShape, const ge::Shape oriSrcShape,
                          const uint32_t stackBufferSize, const uint32_t typeSize,
                          AscendC::tiling::PadTiling &tiling)
{
    detail::PadSplit(srcShape, oriSrcShape, stackBufferSize, typeSize, tiling);
}
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize,
                            const uint32_t typeSize, optiling::UnPadTiling &tiling)
{
    detail::UnPadSplit(srcShape, stackBufferSize, typeSize, tiling);
}
inline void UnPadTilingFunc(const ge::Shape srcShape, const uint32_t stackBufferSize,
                            const uint32_t typeSize, AscendC::tiling::UnPadTiling &tiling)
{
    detail::UnPadSplit(srcShape, stackBufferSize, typeSize, tiling);
}
}  // namespace AscendC

#endif  // ACLNN_PY_TILING_ASCENDC_LIB_TILING_H_
