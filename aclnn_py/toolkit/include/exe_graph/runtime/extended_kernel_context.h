/*
 * exe_graph/runtime/extended_kernel_context.h: what every op_host context knows of its node:
 * the inputs' and outputs' descriptions, the attributes, the names (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "exe_graph/runtime/runtime_attrs.h"
#include "exe_graph/runtime/tensor.h"
#include "graph/ge_error_codes.h"
#include "graph/types.h"

namespace gert {
class ExtendedKernelContext {
public:
    const CompileTimeTensorDesc *GetInputDesc(size_t i) const { return At(in_desc_, i); }
    const CompileTimeTensorDesc *GetOptionalInputDesc(size_t ir) const
    {
        return At(in_desc_, Instance(ir, 0));
    }
    const CompileTimeTensorDesc *GetRequiredInputDesc(size_t ir) const
    {
        return At(in_desc_, Instance(ir, 0));
    }
    const CompileTimeTensorDesc *GetDynamicInputDesc(size_t ir, size_t rel) const
    {
        return At(in_desc_, Instance(ir, rel));
    }
    const CompileTimeTensorDesc *GetOutputDesc(size_t i) const { return At(out_desc_, i); }
    const RuntimeAttrs *GetAttrs() const { return &attrs_; }
    const char *GetNodeName() const { return name_.c_str(); }
    const char *GetNodeType() const { return type_.c_str(); }
    size_t GetComputeNodeInputNum() const { return in_desc_.size(); }
    size_t GetComputeNodeOutputNum() const { return out_desc_.size(); }
    /* (first instance, instance count) of each input of the definition */
    const std::pair<size_t, size_t> *GetIrInputInstanceInfo(size_t ir) const
    {
        return ir < instances_.size() ? &instances_[ir] : nullptr;
    }

protected:
    template <typename T>
    static const T *At(const std::vector<T> &v, size_t i) { return i < v.size() ? &v[i] : nullptr; }
    template <typename T>
    static T *At(std::vector<T> &v, size_t i) { return i < v.size() ? &v[i] : nullptr; }
    size_t Instance(size_t ir, size_t rel) const
    {
        if (ir >= instances_.size())
            return static_cast<size_t>(-1);
        if (rel >= instances_[ir].second)
            return static_cast<size_t>(-1);
        return instances_[ir].first + rel;
    }

    std::vector<CompileTimeTensorDesc> in_desc_;
    std::vector<CompileTimeTensorDesc> out_desc_;
    std::vector<std::pair<size_t, size_t>> instances_;
    RuntimeAttrs attrs_;
    std::string name_;
    std::string type_;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_EXTENDED_KERNEL_CONTEXT_H_
