/*
 * exe_graph/runtime/range.h: gert::Range, a shape range for InferShapeRange (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_RANGE_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_RANGE_H_

namespace gert {
template <typename T>
class Range {
public:
    Range() = default;
    Range(T *min, T *max) : min_(min), max_(max) {}
    const T *GetMin() const { return min_; }
    const T *GetMax() const { return max_; }
    T *GetMin() { return min_; }
    T *GetMax() { return max_; }
    void SetMin(T *min) { min_ = min; }
    void SetMax(T *max) { max_ = max; }

private:
    T *min_ = nullptr;
    T *max_ = nullptr;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_RANGE_H_
