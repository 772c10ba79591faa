/*
 * exe_graph/runtime/tiling_parse_context.h: gert::TilingParseContext
 * (AICore().SetTilingParse, IMPL_OP_OPTILING(...).TilingParse) (aclnn-py).
 */
#ifndef ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_PARSE_CONTEXT_H_
#define ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_PARSE_CONTEXT_H_

#include "exe_graph/runtime/extended_kernel_context.h"
#include "platform/platform_infos_def.h"

namespace gert {
class TilingParseContext : public ExtendedKernelContext {
public:
    const char *GetCompiledJson() const { return json_; }
    template <typename T>
    T *GetCompiledInfo() { return static_cast<T *>(compile_info_); }
    fe::PlatFormInfos *GetPlatformInfo() const { return platform_; }

protected:
    const char *json_ = "{}";
    void *compile_info_ = nullptr;
    fe::PlatFormInfos *platform_ = nullptr;
};
}  // namespace gert

#endif  // ACLNN_PY_EXE_GRAPH_RUNTIME_TILING_PARSE_CONTEXT_H_
