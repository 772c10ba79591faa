/*
 * exe_graph/runtime/runtime_attrs.h: gert::RuntimeAttrs, an operator's attribute values in the
 * order of its definition (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "exe_graph/runtime/continuous_vector.h"

namespace gert {
class RuntimeAttrs {
public:
    size_t GetAttrNum() const { return values_.size(); }
    template <typename T>
    const T *GetAttrPointer(size_t i) const
    {
        return i < values_.size() ? static_cast<const T *>(values_[i]) : nullptr;
    }
    const int64_t *GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
    const float *GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
    const bool *GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
    const char *GetStr(size_t i) const { return GetAttrPointer<char>(i); }
    const TypedContinuousVector<int64_t> *GetListInt(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<int64_t>>(i);
    }
    const TypedContinuousVector<float> *GetListFloat(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<float>>(i);
    }
    const TypedContinuousVector<bool> *GetListBool(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<bool>>(i);
    }
    const ContinuousVector *GetListListInt(size_t i) const
    {
        return GetAttrPointer<ContinuousVector>(i);
    }
    void AppendAttr(const void *value) { values_.push_back(value); }

private:
    std::vector<const void *> values_;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H_
