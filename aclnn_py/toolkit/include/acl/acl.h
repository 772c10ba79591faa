/*
 * acl.h: the AscendCL umbrella header (acl/acl.h in CANN) for the aclnn-py emulator's toolkit:
 * the runtime (acl_rt.h, with acl_base.h) and the single-operator API (acl_op.h), as CANN's
 * acl.h includes them. CANN's acl.h also includes the offline-model API (acl_mdl.h), which the
 * toolkit does not have (docs/c_api.md). aclInit, aclFinalize and aclGetRecentErrMsg are in
 * acl_rt.h, as in CANN.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
