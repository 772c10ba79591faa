/*
 * platform/platform_info.h: fe::PlatFormInfos and fe::LocalMemType, as op_host tiling code
 * includes them (aclnn-py, docs/custom_ops.md).
 */
#ifndef ACLNN_PY_PLATFORM_PLATFORM_INFO_H_
#define ACLNN_PY_PLATFORM_PLATFORM_INFO_H_

#include "platform/platform_infos_def.h"

#endif  // ACLNN_PY_PLATFORM_PLATFORM_INFO_H_
