/*
 * exe_graph/runtime/infer_shape_context.h: gert::InferShapeContext, what a shape inference
 * function (OpDef::SetInferShape) reads and sets (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H_

#include <cstddef>
#include <vector>

#include "exe_graph/runtime/extended_kernel_context.h"
#include "exe_graph/runtime/shape.h"
#include "exe_graph/runtime/tensor.h"

namespace gert {
class InferShapeContext : public ExtendedKernelContext {
public:
    const Shape *GetInputShape(size_t i) const { return At(in_shapes_, i); }
    const Shape *GetOptionalInputShape(size_t ir) const { return At(in_shapes_, Instance(ir, 0)); }
    const Shape *GetRequiredInputShape(size_t ir) const { return At(in_shapes_, Instance(ir, 0)); }
    const Shape *GetDynamicInputShape(size_t ir, size_t rel) const
    {
        return At(in_shapes_, Instance(ir, rel));
    }
    Shape *GetOutputShape(size_t i) { return At(out_shapes_, i); }
    const Tensor *GetInputTensor(size_t i) const { return At(inputs_, i); }
    const Tensor *GetOptionalInputTensor(size_t ir) const { return At(inputs_, Instance(ir, 0)); }
    const Tensor *GetRequiredInputTensor(size_t ir) const { return At(inputs_, Instance(ir, 0)); }

protected:
    std::vector<Shape> in_shapes_;
    std::vector<Shape> out_shapes_;
    std::vector<Tensor> inputs_;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_INFER_SHAPE_CONTEXT_H_
