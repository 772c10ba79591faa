/*
 * acl_base.h: AscendCL's base types and status codes (acl_base.h in CANN), for the aclnn-py
 * emulator's toolkit. The types live in acl_base_rt.h, as in CANN's split headers.
 */
#ifndef INC_EXTERNAL_ACL_ACL_BASE_H_
#define INC_EXTERNAL_ACL_ACL_BASE_H_

#include <stdint.h>
#include <stddef.h>
#include "acl_base_rt.h"
#include "error_codes/rt_error_codes.h"

#endif /* INC_EXTERNAL_ACL_ACL_BASE_H_ */
