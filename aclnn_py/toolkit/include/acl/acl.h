/*
 * acl.h: the AscendCL umbrella header (acl.h in CANN) for the aclnn-py emulator's toolkit: the
 * runtime (acl_rt.h) and the process-level calls. Prototypes are CANN's. CANN's acl.h also
 * pulls in the model and single-operator APIs (acl_mdl.h, acl_op.h), which the emulator does not
 * implement.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
ACL_FUNC_VISIBILITY const char *aclGetRecentErrMsg(void);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
