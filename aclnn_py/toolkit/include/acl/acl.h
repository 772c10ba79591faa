/*
 * acl.h: the AscendCL umbrella header (acl/acl.h in CANN) for the aclnn-py emulator's toolkit:
 * the runtime (acl_rt.h, with acl_base.h), the single-operator API (acl_op.h) and the
 * offline-model API (acl_mdl.h), as CANN's acl.h includes them. aclInit, aclFinalize and
 * aclGetRecentErrMsg are in acl_rt.h, as in CANN. docs/c_api.md says what is implemented.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_rt.h"
#include "acl_op.h"
#include "acl_mdl.h"

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
