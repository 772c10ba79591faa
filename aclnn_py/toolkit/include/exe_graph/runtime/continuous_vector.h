/*
 * exe_graph/runtime/continuous_vector.h: gert::ContinuousVector, how list attributes reach
 * op_host functions (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H_

#include <cstddef>
#include <cstring>
#include <vector>

namespace gert {
class ContinuousVector {
public:
    ContinuousVector() = default;
    ContinuousVector(const void *data, size_t size, size_t item)
        : bytes_(static_cast<const char *>(data), static_cast<const char *>(data) + size * item),
          size_(size) {}
    size_t GetSize() const { return size_; }
    size_t GetCapacity() const { return size_; }
    const void *GetData() const { return bytes_.data(); }
    void *MutableData() { return bytes_.data(); }

private:
    std::vector<char> bytes_;
    size_t size_ = 0;
};

template <typename T>
class TypedContinuousVector : public ContinuousVector {
public:
    TypedContinuousVector() = default;
    TypedContinuousVector(const T *data, size_t size) : ContinuousVector(data, size, sizeof(T)) {}
    const T *GetData() const { return static_cast<const T *>(ContinuousVector::GetData()); }
    T *MutableData() { return static_cast<T *>(ContinuousVector::MutableData()); }
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H_
