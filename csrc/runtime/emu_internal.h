/* Declarations shared by the runtime's C files; not part of the cffi interface. */
#ifndef EMU_INTERNAL_H
#define EMU_INTERNAL_H

#include <stdint.h>

void emu_mem_read_lock(void);
void emu_mem_read_unlock(void);
/* emu_mem_check_range without taking the lock: the caller holds the read lock */
int emu_mem_check_range_locked(uintptr_t addr, uint64_t nbytes, int32_t *device);

#endif
