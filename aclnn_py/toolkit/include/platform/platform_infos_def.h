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
class PlatFormInfos {
public:
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
    uint32_t core_num_ = 0;
};
}  // namespace fe

#endif  // ACLNN_PY_PLATFORM_PLATFORM_INFOS_DEF_H_
