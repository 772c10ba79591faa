/*
 * tiling/platform/platform_ascendc.h: platform_ascendc::PlatformAscendC, the SoC figures a
 * tiling function asks for (core counts, on-chip memory sizes), written for aclnn-py
 * (docs/custom_ops.md). The figures are those of the Atlas A2 class (Ascend910B4) that the
 * emulator reports by default.
 */
#ifndef ACLNN_PY_TILING_PLATFORM_PLATFORM_ASCENDC_H_
#define ACLNN_PY_TILING_PLATFORM_PLATFORM_ASCENDC_H_

#include <cstddef>
#include <cstdint>

#include "platform/platform_infos_def.h"

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };

enum class SocVersion {
    ASCEND910 = 0,
    ASCEND910B,
    ASCEND910_93,
    ASCEND310P,
    ASCEND310B,
    ASCEND610LITE,
    ASCEND910_95,
    RESERVED_VERSION = 99999
};

class PlatformAscendC {
public:
    PlatformAscendC() = default;
    explicit PlatformAscendC(fe::PlatFormInfos *infos) : infos_(infos) {}
    uint32_t GetCoreNum() const { return kAiv; }
    uint32_t GetCoreNumAic() const { return kAic; }
    uint32_t GetCoreNumAiv() const { return kAiv; }
    uint32_t GetCoreNumVector() const { return 0; }
    void GetCoreMemSize(CoreMemType type, uint64_t &size) const
    {
        switch (type) {
        case CoreMemType::L0_A: case CoreMemType::L0_B: size = 64 * 1024; break;
        case CoreMemType::L0_C: size = 128 * 1024; break;
        case CoreMemType::L1: size = 512 * 1024; break;
        case CoreMemType::L2: size = 96ULL * 1024 * 1024; break;
        case CoreMemType::UB: size = 192 * 1024; break;
        case CoreMemType::HBM: size = 32ULL * 1024 * 1024 * 1024; break;
        default: size = 0; break;
        }
    }
    void GetCoreMemBw(CoreMemType, uint64_t &bw) const { bw = 0; }
    SocVersion GetSocVersion() const { return SocVersion::ASCEND910B; }
    uint32_t GetLibApiWorkSpaceSize() const { return 16 * 1024 * 1024; }
    uint32_t GetResCubeGroupWorkSpaceSize() const { return 0; }
    uint32_t GetResGroupBarrierWorkSpaceSize() const { return 0; }
    uint32_t CalcTschBlockDim(uint32_t slice, uint32_t aic, uint32_t aiv) const
    {
        if (aic == 0 || aiv == 0 || aiv <= aic)
            return slice;
        uint32_t ratio = aiv / aic;
        return (slice + ratio - 1) / ratio;
    }
    uint64_t ReserveLocalMemory(int, size_t) const { return 0; }
    fe::PlatFormInfos *GetPlatFormInfos() const { return infos_; }

private:
    static constexpr uint32_t kAic = 20;
    static constexpr uint32_t kAiv = 40;
    fe::PlatFormInfos *infos_ = nullptr;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC *GetInstance()
    {
        static PlatformAscendC platform;
        return &platform;
    }
    static PlatformAscendC *GetInstance(const char *) { return GetInstance(); }
};
}  // namespace platform_ascendc

#endif  // ACLNN_PY_TILING_PLATFORM_PLATFORM_ASCENDC_H_
