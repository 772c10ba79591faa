/*
 * exe_graph/runtime/tiling_data.h: gert::TilingData, the raw tiling buffer a tiling function
 * fills (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_DATA_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_DATA_H_

#include <cstddef>
#include <cstring>
#include <vector>

#include "graph/ge_error_codes.h"

namespace gert {
class TilingData {
public:
    explicit TilingData(size_t capacity = 64 * 1024) : bytes_(capacity) {}
    void *GetData() { return bytes_.data(); }
    const void *GetData() const { return bytes_.data(); }
    size_t GetCapacity() const { return bytes_.size(); }
    size_t GetDataSize() const { return size_; }
    void SetDataSize(size_t n) { size_ = n > bytes_.size() ? bytes_.size() : n; }
    template <typename T>
    ge::graphStatus Append(const T &value)
    {
        if (size_ + sizeof(T) > bytes_.size())
            return ge::GRAPH_FAILED;
        std::memcpy(bytes_.data() + size_, &value, sizeof(T));
        size_ += sizeof(T);
        return ge::GRAPH_SUCCESS;
    }

private:
    std::vector<unsigned char> bytes_;
    size_t size_ = 0;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_DATA_H_
