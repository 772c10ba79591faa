/*
 * exe_graph/runtime/tiling_context.h: gert::TilingContext, what a tiling function
 * (AICore().SetTiling) reads and sets (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exe_graph/runtime/extended_kernel_context.h"
#include "exe_graph/runtime/storage_shape.h"
#include "exe_graph/runtime/tensor.h"
#include "exe_graph/runtime/tiling_data.h"
#include "platform/platform_infos_def.h"

namespace gert {
class TilingContext : public ExtendedKernelContext {
public:
    const StorageShape *GetInputShape(size_t i) const { return InShape(i); }
    const StorageShape *GetOptionalInputShape(size_t ir) const { return InShape(Instance(ir, 0)); }
    const StorageShape *GetRequiredInputShape(size_t ir) const { return InShape(Instance(ir, 0)); }
    const StorageShape *GetDynamicInputShape(size_t ir, size_t rel) const
    {
        return InShape(Instance(ir, rel));
    }
    const StorageShape *GetOutputShape(size_t i) const { return At(out_shapes_, i); }
    const Tensor *GetInputTensor(size_t i) const { return At(inputs_, i); }
    const Tensor *GetOptionalInputTensor(size_t ir) const { return At(inputs_, Instance(ir, 0)); }
    const Tensor *GetRequiredInputTensor(size_t ir) const { return At(inputs_, Instance(ir, 0)); }
    const Tensor *GetDynamicInputTensor(size_t ir, size_t rel) const
    {
        return At(inputs_, Instance(ir, rel));
    }
    ge::graphStatus SetBlockDim(uint32_t n)
    {
        block_dim_ = n;
        return ge::GRAPH_SUCCESS;
    }
    uint32_t GetBlockDim() const { return block_dim_; }
    ge::graphStatus SetTilingKey(uint64_t key)
    {
        tiling_key_ = key;
        return ge::GRAPH_SUCCESS;
    }
    uint64_t GetTilingKey() const { return tiling_key_; }
    ge::graphStatus SetScheduleMode(uint32_t mode)
    {
        schedule_mode_ = mode;
        return ge::GRAPH_SUCCESS;
    }
    uint32_t GetScheduleMode() const { return schedule_mode_; }
    ge::graphStatus SetNeedAtomic(bool atomic)
    {
        atomic_ = atomic;
        return ge::GRAPH_SUCCESS;
    }
    bool NeedAtomic() const { return atomic_; }
    ge::graphStatus SetLocalMemorySize(uint32_t) { return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetTilingCond(int32_t cond)
    {
        tiling_cond_ = cond;
        return ge::GRAPH_SUCCESS;
    }
    int32_t GetTilingCond() const { return tiling_cond_; }
    int32_t GetDeterministic() const { return 0; }
    TilingData *GetRawTilingData() { return &tiling_; }
    template <typename T>
    T *GetTilingData()
    {
        if (sizeof(T) > tiling_.GetCapacity())
            return nullptr;
        tiling_.SetDataSize(sizeof(T));
        return static_cast<T *>(tiling_.GetData());
    }
    size_t *GetWorkspaceSizes(size_t n)
    {
        if (workspaces_.size() < n)
            workspaces_.resize(n);
        return workspaces_.data();
    }
    size_t GetWorkspaceNum() const { return workspaces_.size(); }
    fe::PlatFormInfos *GetPlatformInfo() const { return platform_; }
    const void *GetCompileInfo() const { return compile_info_; }
    template <typename T>
    const T *GetCompileInfo() const { return static_cast<const T *>(compile_info_); }

protected:
    const StorageShape *InShape(size_t i) const
    {
        return i < inputs_.size() ? &inputs_[i].GetShape() : nullptr;
    }

    std::vector<Tensor> inputs_;
    std::vector<StorageShape> out_shapes_;
    TilingData tiling_;
    std::vector<size_t> workspaces_;
    fe::PlatFormInfos *platform_ = nullptr;
    const void *compile_info_ = nullptr;
    uint32_t block_dim_ = 0;
    uint64_t tiling_key_ = 0;
    uint32_t schedule_mode_ = 0;
    int32_t tiling_cond_ = 0;
    bool atomic_ = false;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_CONTEXT_H_
