/*
 * platform/platform_infos_def.h: fe::PlatFormInfos, the SoC description op_host tiling
 * functions receive (aclnn-py: the emulated SoC's figures).
 */
#ifndef ACLNN_PY_PLATFORM_PLATFORM_INFOS_DEF_H_
#define ACLNN_PY_PLATFORM_PLATFORM_INFOS_DEF_H_

#include <cstdint>
#include <map>
#include <string>

namespace fe {
enum class LocalMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };

class PlatFormInfos {
public:
    /* the emulated SoC's (an Ascend910B4's) on-chip memory sizes */
    void GetLocalMemSize(const LocalMemType &type, uint64_t &size)
    {
        switch (type) {
        case LocalMemType::L0_A: case LocalMemType::L0_B: size = 64 * 1024; break;
        case LocalMemType::L0_C: size = 128 * 1024; break;
        case LocalMemType::L1: size = 512 * 1024; break;
        case LocalMemType::L2: size = 96ULL * 1024 * 1024; break;
        case LocalMemType::UB: size = 192 * 1024; break;
        case LocalMemType::HBM: size = 32ULL * 1024 * 1024 * 1024; break;
        default: size = 0; break;
        }
    }
    void GetLocalMemBw(const LocalMemType &, uint64_t &bw) { bw = 0; }
    bool GetPlatformRes(const std::string &label, const std::string &key, std::string &val)
    {
        auto it = res_.find(label + "/" + key);
        if (it == res_.end())
            return false;
        val = it->second;
        return true;
    }
    bool GetPlatformResWithLock(const std::string &label, const std::string &key,
                                std::string &val)
    {
        return GetPlatformRes(label, key, val);
    }
    void SetPlatformRes(const std::string &label, const std::string &key, const std::string &val)
    {
        res_[label + "/" + key] = val;
    }
    uint32_t GetCoreNum() const { return core_num_; }
    void SetCoreNum(uint32_t n) { core_num_ = n; }

private:
    std::map<std::string, std::string> res_;
    uint32_t core_num_ = 40;
};
}  // namespace fe

#endif  // ACLNN_PY_PLATFORM_PLATFORM_INFOS_DEF_H_
