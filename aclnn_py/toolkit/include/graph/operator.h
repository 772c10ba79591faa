/*
 * graph/operator.h: the part of ge::Operator that op_host check-support and format-selection
 * functions name in their signatures (aclnn-py reads op_host definitions; it does not run
 * these functions).
 */
#ifndef ACLNN_PY_GRAPH_OPERATOR_H_
#define ACLNN_PY_GRAPH_OPERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/types.h"

namespace ge {
class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t> &dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    std::vector<int64_t> GetDims() const { return dims_; }
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (int64_t d : dims_)
            n *= d;
        return n;
    }

private:
    std::vector<int64_t> dims_;
};

class TensorDesc {
public:
    Shape GetShape() const { return shape_; }
    Shape GetOriginShape() const { return shape_; }
    DataType GetDataType() const { return dtype_; }
    Format GetFormat() const { return format_; }
    Format GetOriginFormat() const { return format_; }

private:
    Shape shape_;
    DataType dtype_ = DT_UNDEFINED;
    Format format_ = FORMAT_ND;
};

class Operator {
public:
    Operator() = default;
    explicit Operator(const char *type) : type_(type) {}
    graphStatus GetName(AscendString &name) const
    {
        name = AscendString(type_.c_str());
        return GRAPH_SUCCESS;
    }
    graphStatus GetOpType(AscendString &type) const
    {
        type = AscendString(type_.c_str());
        return GRAPH_SUCCESS;
    }
    TensorDesc GetInputDesc(uint32_t) const { return TensorDesc(); }
    TensorDesc GetInputDescByName(const char *) const { return TensorDesc(); }
    TensorDesc GetOutputDesc(uint32_t) const { return TensorDesc(); }
    TensorDesc GetOutputDescByName(const char *) const { return TensorDesc(); }
    size_t GetInputsSize() const { return 0; }
    size_t GetOutputsSize() const { return 0; }
    template <typename T>
    graphStatus GetAttr(const char *, T &) const { return GRAPH_FAILED; }

private:
    std::string type_;
};
}  // namespace ge

#endif  // ACLNN_PY_GRAPH_OPERATOR_H_
