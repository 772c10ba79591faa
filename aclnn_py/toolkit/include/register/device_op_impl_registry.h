/*
 * register/device_op_impl_registry.h: DEVICE_IMPL_OP_OPTILING, the registration of a tiling
 * function that CANN runs on the device ("tiling sink") (aclnn-py records nothing of it).
 */
#ifndef ACLNN_PY_REGISTER_DEVICE_OP_IMPL_REGISTRY_H_
#define ACLNN_PY_REGISTER_DEVICE_OP_IMPL_REGISTRY_H_

#include "register/op_impl_registry.h"

#define DEVICE_IMPL_OP_OPTILING(op_type) IMPL_OP(op_type)

#endif  // ACLNN_PY_REGISTER_DEVICE_OP_IMPL_REGISTRY_H_
