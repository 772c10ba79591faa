/*
 * CANN's CHECK_RET(cond, ...; return ...) pattern: a failed check returns from main without
 * aclFinalize. A copy on stream 2 reads bytes a memset on stream 1 writes, with nothing ordering
 * the two (a race ACLNN_EMU_CHECK=race reports), then a check "fails" and main returns 2.
 *
 *   exit_without_finalize fail              return from main, no aclFinalize
 *   exit_without_finalize finalize          synchronize, release, aclFinalize, return 0
 *   exit_without_finalize atexit_finalize   as fail, with aclFinalize in an atexit handler the
 *                                           program registered before its first ACL call
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acl/acl.h"

#define CHECK_RET(cond, return_expr) \
    do {                             \
        if (!(cond)) {               \
            return_expr;             \
        }                            \
    } while (0)

static void finalize_at_exit(void)
{
    printf("atexit aclFinalize %d\n", (int)aclFinalize());
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fail";
    aclrtStream s1 = NULL, s2 = NULL;
    void *a = NULL, *b = NULL;
    if (strcmp(mode, "atexit_finalize") == 0)
        atexit(finalize_at_exit);
    CHECK_RET(aclInit(NULL) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtSetDevice(0) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtCreateStream(&s1) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtCreateStream(&s2) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtMalloc(&a, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtMalloc(&b, 4096, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtMemsetAsync(a, 4096, 1, 4096, s1) == ACL_SUCCESS, return 1);
    CHECK_RET(aclrtMemcpyAsync(b, 4096, a, 4096, ACL_MEMCPY_DEVICE_TO_DEVICE, s2) ==
                  ACL_SUCCESS,
              return 1);
    printf("queued\n");
    fflush(stdout);
    if (strcmp(mode, "finalize") == 0) {
        printf("synchronize %d\n", (int)aclrtSynchronizeStream(s2));
        printf("synchronize %d\n", (int)aclrtSynchronizeStream(s1));
        aclrtFree(a);
        aclrtFree(b);
        aclrtDestroyStream(s1);
        aclrtDestroyStream(s2);
        aclrtResetDevice(0);
        printf("aclFinalize %d\n", (int)aclFinalize());
        return 0;
    }
    CHECK_RET(a == NULL, printf("check failed\n"); fflush(stdout); return 2);
    return 0;
}
