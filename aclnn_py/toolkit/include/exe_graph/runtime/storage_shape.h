/*
 * exe_graph/runtime/storage_shape.h: gert::StorageShape, a tensor's origin and storage shapes
 * (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H_

#include "exe_graph/runtime/shape.h"

namespace gert {
class StorageShape {
public:
    StorageShape() = default;
    StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
        : origin_(origin), storage_(storage) {}
    const Shape &GetOriginShape() const { return origin_; }
    const Shape &GetStorageShape() const { return storage_; }
    Shape &MutableOriginShape() { return origin_; }
    Shape &MutableStorageShape() { return storage_; }
    bool operator==(const StorageShape &o) const
    {
        return origin_ == o.origin_ && storage_ == o.storage_;
    }
    bool operator!=(const StorageShape &o) const { return !(*this == o); }

private:
    Shape origin_;
    Shape storage_;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H_
