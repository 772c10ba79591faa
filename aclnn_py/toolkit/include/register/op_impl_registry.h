/*
 * register/op_impl_registry.h: the function types of op_host code (tiling, tiling parse, shape,
 * shape range and data type inference) and CANN's IMPL_OP registration macros, written for
 * aclnn-py's op_host reader (docs/custom_ops.md). aclnn-py reads the definitions; it records
 * these registrations but does not call them.
 */
#ifndef ACLNN_PY_REGISTER_OP_IMPL_REGISTRY_H_
#define ACLNN_PY_REGISTER_OP_IMPL_REGISTRY_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "exe_graph/runtime/infer_datatype_context.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/infer_shape_range_context.h"
#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/tiling_parse_context.h"
#include "graph/ascend_string.h"
#include "graph/ge_error_codes.h"
#include "graph/types.h"

namespace gert {
class OpImplRegisterV2 {
public:
    using InferShapeKernelFunc = ge::graphStatus (*)(InferShapeContext *);
    using InferShapeRangeKernelFunc = ge::graphStatus (*)(InferShapeRangeContext *);
    using InferDataTypeKernelFunc = ge::graphStatus (*)(InferDataTypeContext *);
    using TilingKernelFunc = ge::graphStatus (*)(TilingContext *);
    using TilingParseFunc = ge::graphStatus (*)(TilingParseContext *);
    using KernelFunc = ge::graphStatus (*)(void *);

    explicit OpImplRegisterV2(const char *op_type) : op_type_(op_type ? op_type : "") {}
    OpImplRegisterV2 &InferShape(InferShapeKernelFunc f)
    {
        infer_shape_ = f;
        return *this;
    }
    OpImplRegisterV2 &InferShapeRange(InferShapeRangeKernelFunc f)
    {
        infer_shape_range_ = f;
        return *this;
    }
    OpImplRegisterV2 &InferDataType(InferDataTypeKernelFunc f)
    {
        infer_data_type_ = f;
        return *this;
    }
    OpImplRegisterV2 &Tiling(TilingKernelFunc f, size_t max_tiling_data_size = 2048)
    {
        tiling_ = f;
        max_tiling_size_ = max_tiling_data_size;
        return *this;
    }
    template <typename CompileInfo>
    OpImplRegisterV2 &TilingParse(TilingParseFunc f)
    {
        tiling_parse_ = f;
        return *this;
    }
    template <typename CompileInfo>
    OpImplRegisterV2 &TilingParse(KernelFunc, TilingParseFunc f)
    {
        tiling_parse_ = f;
        return *this;
    }
    OpImplRegisterV2 &InputsDataDependency(std::initializer_list<int32_t>) { return *this; }
    OpImplRegisterV2 &TilingInputsDataDependency(std::initializer_list<int32_t>)
    {
        return *this;
    }
    template <typename... Args>
    OpImplRegisterV2 &TilingInputsDataDependency(Args...) { return *this; }
    template <typename T>
    OpImplRegisterV2 &PrivateAttr(const char *, const T &) { return *this; }
    OpImplRegisterV2 &PrivateAttr(const char *) { return *this; }
    OpImplRegisterV2 &OutputShapeDependOnCompute(std::initializer_list<int32_t>)
    {
        return *this;
    }
    OpImplRegisterV2 &InputsDataDependency(const std::vector<int32_t> &) { return *this; }
    OpImplRegisterV2 &HostInputs(std::initializer_list<int32_t>) { return *this; }
    OpImplRegisterV2 &OpExecuteFunc(void *) { return *this; }
    const char *GetOpType() const { return op_type_.c_str(); }

private:
    std::string op_type_;
    InferShapeKernelFunc infer_shape_ = nullptr;
    InferShapeRangeKernelFunc infer_shape_range_ = nullptr;
    InferDataTypeKernelFunc infer_data_type_ = nullptr;
    TilingKernelFunc tiling_ = nullptr;
    TilingParseFunc tiling_parse_ = nullptr;
    size_t max_tiling_size_ = 0;
};
}  // namespace gert

#define ACLNN_PY_IMPL_CAT_(a, b) a##b
#define ACLNN_PY_IMPL_CAT(a, b) ACLNN_PY_IMPL_CAT_(a, b)
#define ACLNN_PY_IMPL_VAR ACLNN_PY_IMPL_CAT(g_aclnn_py_op_impl_, __COUNTER__)

#define IMPL_OP(op_type) \
    static ::gert::OpImplRegisterV2 ACLNN_PY_IMPL_VAR __attribute__((unused)) = \
        ::gert::OpImplRegisterV2(#op_type)
#define IMPL_OP_DEFAULT() IMPL_OP(DefaultImpl)
#define IMPL_OP_INFERSHAPE(op_type) IMPL_OP(op_type)
#define IMPL_OP_OPTILING(op_type) IMPL_OP(op_type)

#endif  // ACLNN_PY_REGISTER_OP_IMPL_REGISTRY_H_
