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

#ifdef __cplusplus
extern "C" {
#endif

/* float16 <-> float, as CANN's acl_base.h has them (CANN's samples fill and check float16
   buffers with these). Like CANN's, they do not keep NaN and infinity:
   aclFloatToFloat16 rounds to nearest even and saturates (+-inf and overflow -> +-65504, NaN ->
   65504); aclFloat16ToFloat reads the all-ones exponent as 2^16 (+-inf -> +-65536, the quiet
   NaN 0x7E00 -> 98304). */
ACL_FUNC_VISIBILITY float aclFloat16ToFloat(aclFloat16 value);
ACL_FUNC_VISIBILITY aclFloat16 aclFloatToFloat16(float value);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_BASE_H_ */
