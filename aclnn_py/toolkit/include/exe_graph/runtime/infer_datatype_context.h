/*
 * exe_graph/runtime/infer_datatype_context.h: gert::InferDataTypeContext, what a data type
 * inference function (OpDef::SetInferDataType) reads and sets (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H_

#include <cstddef>
#include <vector>

#include "exe_graph/runtime/extended_kernel_context.h"
#include "graph/types.h"

namespace gert {
class InferDataTypeContext : public ExtendedKernelContext {
public:
    ge::DataType GetInputDataType(size_t i) const { return Get(in_types_, i); }
    ge::DataType GetOptionalInputDataType(size_t ir) const
    {
        return Get(in_types_, Instance(ir, 0));
    }
    ge::DataType GetRequiredInputDataType(size_t ir) const
    {
        return Get(in_types_, Instance(ir, 0));
    }
    ge::DataType GetDynamicInputDataType(size_t ir, size_t rel) const
    {
        return Get(in_types_, Instance(ir, rel));
    }
    ge::DataType GetOutputDataType(size_t i) const { return Get(out_types_, i); }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType dt)
    {
        if (i >= out_types_.size())
            return ge::GRAPH_FAILED;
        out_types_[i] = dt;
        return ge::GRAPH_SUCCESS;
    }

protected:
    static ge::DataType Get(const std::vector<ge::DataType> &v, size_t i)
    {
        return i < v.size() ? v[i] : ge::DT_UNDEFINED;
    }
    std::vector<ge::DataType> in_types_;
    std::vector<ge::DataType> out_types_;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_DATATYPE_CONTEXT_H_
