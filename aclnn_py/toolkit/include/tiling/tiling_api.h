/*
 * tiling/tiling_api.h: the host-side tiling API header op_host sources include; here the tiling
 * data classes, the platform figures and the op_host contexts (aclnn-py, docs/custom_ops.md).
 * The Ascend C library's tiling helpers: the matmul's (tiling/matmul_tiling.h) and the vector
 * APIs' temporary sizes and tilings (tiling/ascendc_lib_tiling.h).
 */
#ifndef ACLNN_PY_TILING_TILING_API_H_
#define ACLNN_PY_TILING_TILING_API_H_

#include "register/op_impl_registry.h"
#include "register/tilingdata_base.h"
#include "tiling/ascendc_lib_tiling.h"
#include "tiling/matmul_tiling.h"
#include "tiling/platform/platform_ascendc.h"

#endif  // ACLNN_PY_TILING_TILING_API_H_
