/*
 * register/op_def_registry.h: OP_ADD, which registers an OpDef subclass under its class name
 * (written for aclnn-py's op_host reader, docs/custom_ops.md). The registry keeps, for each
 * OP_ADD, the name, a function that constructs the definition, and the file and line.
 */
#ifndef ACLNN_PY_REGISTER_OP_DEF_REGISTRY_H_
#define ACLNN_PY_REGISTER_OP_DEF_REGISTRY_H_

#include <vector>

#include "register/op_def.h"
#include "register/op_impl_registry.h"

namespace ops {
namespace detail {
struct OpDefEntry {
    const char *name;
    OpDef *(*make)(const char *name);
    const char *file;
    int line;
};

inline std::vector<OpDefEntry> &OpDefRegistry()
{
    static std::vector<OpDefEntry> entries;
    return entries;
}

inline int AddOpDef(const char *name, OpDef *(*make)(const char *), const char *file, int line)
{
    OpDefRegistry().push_back(OpDefEntry{name, make, file, line});
    return 0;
}
}  // namespace detail
}  // namespace ops

/* OP_ADD(ClassName) or OP_ADD(ClassName, CompileInfoType...): the extra arguments are CANN's
   compile-info types, which aclnn-py does not need */
#define OP_ADD(opType, ...) \
    static const int g_aclnn_py_op_added_##opType __attribute__((unused)) = \
        ::ops::detail::AddOpDef(#opType, \
                                [](const char *aclnn_py_name) -> ::ops::OpDef * { \
                                    return new opType(aclnn_py_name); \
                                }, \
                                __FILE__, __LINE__)

#endif  // ACLNN_PY_REGISTER_OP_DEF_REGISTRY_H_
