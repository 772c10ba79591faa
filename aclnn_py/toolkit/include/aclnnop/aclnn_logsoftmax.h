/*
 * aclnn_logsoftmax.h: aclnnLogSoftmax: out = log(softmax(self)) along dim.
 * Prototypes are CANN's (the operator's page in CANN's aclnn API reference). The first phase
 * checks the arguments and sizes the workspace; the second enqueues the work on the stream.
 * Usable from C (C99) and C++.
 */
#ifndef OP_API_INC_LEVEL2_ACLNN_LOGSOFTMAX_H_
#define OP_API_INC_LEVEL2_ACLNN_LOGSOFTMAX_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {
#endif

ACLNN_API aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor *self, int64_t dim, aclTensor *out, uint64_t *workspaceSize,
    aclOpExecutor **executor);

ACLNN_API aclnnStatus aclnnLogSoftmax(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif /* OP_API_INC_LEVEL2_ACLNN_LOGSOFTMAX_H_ */
