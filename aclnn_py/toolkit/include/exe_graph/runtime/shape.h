/*
 * exe_graph/runtime/shape.h: gert::Shape, the shape op_host tiling and inference functions
 * read and write (written for aclnn-py's op_host reader, docs/custom_ops.md).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_SHAPE_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_SHAPE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace gert {
class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    static constexpr int64_t kInvalidDimValue = INT64_MIN;

    Shape() = default;
    Shape(std::initializer_list<int64_t> dims)
    {
        for (int64_t d : dims)
            AppendDim(d);
    }
    size_t GetDimNum() const { return num_; }
    void SetDimNum(size_t n) { num_ = n > kMaxDimNum ? kMaxDimNum : n; }
    int64_t GetDim(size_t i) const { return i < num_ ? dims_[i] : kInvalidDimValue; }
    Shape &SetDim(size_t i, int64_t v)
    {
        if (i < kMaxDimNum)
            dims_[i] = v;
        return *this;
    }
    Shape &AppendDim(int64_t v)
    {
        if (num_ < kMaxDimNum)
            dims_[num_++] = v;
        return *this;
    }
    bool IsScalar() const { return num_ == 0; }
    void SetScalar() { num_ = 0; }
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (size_t i = 0; i < num_; i++) {
            if (dims_[i] < 0)
                return -1;
            n *= dims_[i];
        }
        return n;
    }
    const int64_t &operator[](size_t i) const { return dims_[i]; }
    int64_t &operator[](size_t i) { return dims_[i]; }
    bool operator==(const Shape &o) const
    {
        if (num_ != o.num_)
            return false;
        for (size_t i = 0; i < num_; i++)
            if (dims_[i] != o.dims_[i])
                return false;
        return true;
    }
    bool operator!=(const Shape &o) const { return !(*this == o); }

private:
    size_t num_ = 0;
    int64_t dims_[kMaxDimNum] = {};
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_SHAPE_H_
