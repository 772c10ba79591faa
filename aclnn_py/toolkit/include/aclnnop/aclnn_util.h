/*
 * aclnn_util.h: the export macro of the aclnn operator headers (aclnnop/aclnn_util.h in CANN).
 */
#ifndef OP_API_INC_ACLNN_UTIL_H_
#define OP_API_INC_ACLNN_UTIL_H_

#if defined(__GNUC__)
#define ACLNN_API __attribute__((visibility("default")))
#else
#define ACLNN_API
#endif

#endif /* OP_API_INC_ACLNN_UTIL_H_ */
