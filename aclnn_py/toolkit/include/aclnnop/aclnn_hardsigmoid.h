/*
 * aclnn_hardsigmoid.h: aclnnHardsigmoid / aclnnInplaceHardsigmoid: clip(x / 6 + 1 / 2, 0, 1).
 * Prototypes are CANN's (the operator's page in CANN's aclnn API reference). The first phase
 * checks the arguments and sizes the workspace; the second enqueues the work on the stream.
 * Usable from C (C99) and C++.
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_HARDSIGMOID_H_
#define OP_API_INC_LEVEL2_ACLNN_HARDSIGMOID_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnHardsigmoidGetWorkspaceSize(const aclTensor *self, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnHardsigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    const aclrtStream stream);

ACLNN_API aclnnStatus aclnnInplaceHardsigmoidGetWorkspaceSize(const aclTensor *self, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnInplaceHardsigmoid(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    const aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_HARDSIGMOID_H_ */
