/*
 * exe_graph/runtime/tensor.h: gert::Tensor, gert::StorageFormat and gert::CompileTimeTensorDesc,
 * what op_host functions learn of a tensor (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_TENSOR_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_TENSOR_H_

#include <cstddef>
#include <cstdint>

#include "exe_graph/runtime/storage_shape.h"
#include "graph/types.h"

namespace gert {
class StorageFormat {
public:
    StorageFormat() = default;
    StorageFormat(ge::Format origin, ge::Format storage) : origin_(origin), storage_(storage) {}
    ge::Format GetOriginFormat() const { return origin_; }
    ge::Format GetStorageFormat() const { return storage_; }
    void SetOriginFormat(ge::Format f) { origin_ = f; }
    void SetStorageFormat(ge::Format f) { storage_ = f; }

private:
    ge::Format origin_ = ge::FORMAT_ND;
    ge::Format storage_ = ge::FORMAT_ND;
};

class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const { return dtype_; }
    void SetDataType(ge::DataType dt) { dtype_ = dt; }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    const StorageFormat &GetFormat() const { return format_; }
    void SetStorageFormat(ge::Format f) { format_.SetStorageFormat(f); }
    void SetOriginFormat(ge::Format f) { format_.SetOriginFormat(f); }

private:
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    StorageFormat format_;
};

class Tensor {
public:
    Tensor() = default;
    Tensor(const StorageShape &shape, const StorageFormat &format, ge::DataType dtype)
        : shape_(shape), format_(format), dtype_(dtype) {}
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    ge::DataType GetDataType() const { return dtype_; }
    void SetDataType(ge::DataType dt) { dtype_ = dt; }
    const Shape &GetStorageShape() const { return shape_.GetStorageShape(); }
    const Shape &GetOriginShape() const { return shape_.GetOriginShape(); }
    Shape &MutableStorageShape() { return shape_.MutableStorageShape(); }
    Shape &MutableOriginShape() { return shape_.MutableOriginShape(); }
    const StorageShape &GetShape() const { return shape_; }
    StorageShape &GetShape() { return shape_; }
    const StorageFormat &GetFormat() const { return format_; }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    const void *GetAddr() const { return addr_; }
    void *GetAddr() { return addr_; }
    void SetData(void *addr, size_t size)
    {
        addr_ = addr;
        size_ = size;
    }
    size_t GetSize() const { return size_; }
    template <typename T>
    const T *GetData() const { return static_cast<const T *>(addr_); }
    template <typename T>
    T *GetData() { return static_cast<T *>(addr_); }

private:
    StorageShape shape_;
    StorageFormat format_;
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    void *addr_ = nullptr;
    size_t size_ = 0;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_TENSOR_H_
