/*
 * fork(): the runtime's fork handlers, registered when the library is loaded.
 *
 * The parent takes the runtime's locks before fork() (the handle table, the allocation table's
 * edit lock, the streams' event and trace locks, in that order; never one that waits for a
 * running task) and releases them after; the child, which has
 * only the forking thread, forgets every handle and stream of its parent and starts with empty
 * device memory (see each module's atfork functions). This file sits above handle.c, memory.c
 * and stream.c, which know nothing of one another's fork handling: none of them calls back into
 * it (the kernel thread pool registers its own handler, pool.c).
 */
#include "aclnn_emu.h"
#include "emu_internal.h"

#include <pthread.h>

static void prepare(void)
{
    emu_handle_atfork_prepare();
    emu_mem_atfork_prepare();
    emu_stream_atfork_prepare();
}

static void parent(void)
{
    emu_stream_atfork_parent();
    emu_mem_atfork_parent();
    emu_handle_atfork_parent();
}

static void child(void)
{
    emu_handle_atfork_child();
    emu_stream_atfork_child();
    emu_mem_atfork_child();
}

__attribute__((constructor)) static void register_fork_handlers(void)
{
    pthread_atfork(prepare, parent, child);
}
