/*
 * graph/ge_error_codes.h: the status type of CANN's op_host functions (tiling, shape and data
 * type inference), written for aclnn-py's op_host reader (docs/custom_ops.md).
 */
#ifndef ACLNN_PY_GRAPH_GE_ERROR_CODES_H_
#define ACLNN_PY_GRAPH_GE_ERROR_CODES_H_

#include <cstdint>

namespace ge {
using graphStatus = uint32_t;
const graphStatus GRAPH_SUCCESS = 0U;
const graphStatus GRAPH_FAILED = 0xFFFFFFFFU;
const graphStatus GRAPH_PARAM_INVALID = 50331649U;
const graphStatus GRAPH_NOT_CHANGED = 1343242304U;
const graphStatus GRAPH_NODE_WITHOUT_CONST_INPUT = 50331648U;
}  // namespace ge

#endif  // ACLNN_PY_GRAPH_GE_ERROR_CODES_H_
