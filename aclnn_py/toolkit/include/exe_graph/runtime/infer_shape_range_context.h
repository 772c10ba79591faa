/*
 * exe_graph/runtime/infer_shape_range_context.h: gert::InferShapeRangeContext
 * (OpDef::SetInferShapeRange) (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_SHAPE_RANGE_CONTEXT_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_SHAPE_RANGE_CONTEXT_H_

#include <cstddef>
#include <vector>

#include "exe_graph/runtime/extended_kernel_context.h"
#include "exe_graph/runtime/range.h"
#include "exe_graph/runtime/shape.h"

namespace gert {
class InferShapeRangeContext : public ExtendedKernelContext {
public:
    const Range<Shape> *GetInputShapeRange(size_t i) const { return At(in_ranges_, i); }
    const Range<Shape> *GetOptionalInputShapeRange(size_t ir) const
    {
        return At(in_ranges_, Instance(ir, 0));
    }
    const Range<Shape> *GetDynamicInputShapeRange(size_t ir, size_t rel) const
    {
        return At(in_ranges_, Instance(ir, rel));
    }
    Range<Shape> *GetOutputShapeRange(size_t i) { return At(out_ranges_, i); }

protected:
    std::vector<Range<Shape>> in_ranges_;
    std::vector<Range<Shape>> out_ranges_;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_SHAPE_RANGE_CONTEXT_H_
