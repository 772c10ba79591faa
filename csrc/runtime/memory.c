/*
 * Emulated device memory: host memory tracked in one sorted allocation table.
 *
 * The table is guarded by a reader/writer lock. Lookups, synchronous copies and every running
 * stream task hold it for reading; alloc and free take it for writing, so a free waits until the
 * task that is using the memory has finished, and the tasks after it find the memory gone
 * (a fault reported at synchronize) instead of touching freed memory.
 */
#define _GNU_SOURCE
#include "aclnn_emu.h"
#include "emu_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN_BYTES 64
#define MAX_DEVICES 64

typedef struct {
    uintptr_t base;
    uint64_t size;     /* bytes the user asked for: views must stay inside this */
    uint64_t reserved; /* bytes charged to the device: round_up(size, 32) (+ 32), as CANN does */
    int32_t device;
} alloc_entry;

static alloc_entry *table;
static int64_t table_len, table_cap;

/* Freed allocations wait in a FIFO quarantine before their memory goes back to the C library:
 * a stale pointer then still points at mapped memory (a stray host write cannot corrupt the
 * heap), it can be recognised as freed device memory, and its address is not handed out again
 * while it is remembered. The oldest entries are released past QUARANTINE_BYTES/_ENTRIES. */
#define QUARANTINE_ENTRIES 1024
#define QUARANTINE_BYTES (256ull << 20)
static alloc_entry quarantine[QUARANTINE_ENTRIES];
static int64_t q_head, q_len;
static uint64_t q_bytes;
static uint64_t used_bytes[MAX_DEVICES];
static pthread_rwlock_t table_lock;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#ifdef __GLIBC__
    /* a waiting free must not starve behind a busy stream */
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(&table_lock, &attr);
    pthread_rwlockattr_destroy(&attr);
}

void emu_mem_read_lock(void)
{
    pthread_once(&table_once, table_init);
    pthread_rwlock_rdlock(&table_lock);
}

void emu_mem_read_unlock(void) { pthread_rwlock_unlock(&table_lock); }

static void write_lock(void)
{
    pthread_once(&table_once, table_init);
    pthread_rwlock_wrlock(&table_lock);
}

/* index of the last entry with base <= addr, or -1 */
static int64_t find_index(uintptr_t addr)
{
    int64_t lo = 0, hi = table_len - 1, found = -1;
    while (lo <= hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (table[mid].base <= addr) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

int emu_mem_check_range_locked(uintptr_t addr, uint64_t nbytes, int32_t *device)
{
    int64_t i = find_index(addr);
    if (i < 0 || addr >= table[i].base + table[i].size)
        return 1;
    if (device)
        *device = table[i].device;
    if (nbytes > table[i].base + table[i].size - addr)
        return 2;
    return 0;
}

int emu_mem_alloc(int32_t device, uint64_t size, uint64_t limit, int poison, int poison_byte,
                  int pad, uintptr_t *out_ptr)
{
    *out_ptr = 0;
    if (device < 0 || device >= MAX_DEVICES || size == 0)
        return 100000;
    uint64_t reserved = ((size + 31) / 32) * 32 + (pad ? 32 : 0);
    if (reserved < size)
        return 207001;
    write_lock();
    int rc = 0;
    if (used_bytes[device] + reserved > limit || used_bytes[device] + reserved < reserved) {
        rc = 207001;
        goto out;
    }
    if (table_len == table_cap) {
        int64_t cap = table_cap ? table_cap * 2 : 256;
        alloc_entry *grown = realloc(table, (size_t)cap * sizeof *table);
        if (!grown) {
            rc = 207001;
            goto out;
        }
        table = grown;
        table_cap = cap;
    }
    void *p = NULL;
    if (posix_memalign(&p, ALIGN_BYTES, (size_t)reserved) != 0 || !p) {
        rc = 207001;
        goto out;
    }
    if (poison)
        memset(p, poison_byte & 0xff, (size_t)reserved);
    uintptr_t base = (uintptr_t)p;
    int64_t at = find_index(base) + 1;
    memmove(table + at + 1, table + at, (size_t)(table_len - at) * sizeof *table);
    table[at] = (alloc_entry){base, size, reserved, device};
    table_len++;
    used_bytes[device] += reserved;
    *out_ptr = base;
out:
    pthread_rwlock_unlock(&table_lock);
    return rc;
}

int emu_mem_free(uintptr_t ptr)
{
    write_lock();
    int64_t i = find_index(ptr);
    if (i < 0 || table[i].base != ptr) {
        pthread_rwlock_unlock(&table_lock);
        return 207002;
    }
    alloc_entry e = table[i];
    memmove(table + i, table + i + 1, (size_t)(table_len - i - 1) * sizeof *table);
    table_len--;
    used_bytes[e.device] -= e.reserved;
    /* quarantine it; release the oldest entries beyond the budget */
    void *release[QUARANTINE_ENTRIES + 1];
    int nrelease = 0;
    while (q_len > 0 && (q_len == QUARANTINE_ENTRIES || q_bytes + e.reserved > QUARANTINE_BYTES)) {
        alloc_entry old = quarantine[q_head];
        q_head = (q_head + 1) % QUARANTINE_ENTRIES;
        q_len--;
        q_bytes -= old.reserved;
        release[nrelease++] = (void *)old.base;
    }
    if (e.reserved <= QUARANTINE_BYTES) {
        quarantine[(q_head + q_len) % QUARANTINE_ENTRIES] = e;
        q_len++;
        q_bytes += e.reserved;
    } else {
        release[nrelease++] = (void *)e.base;
    }
    pthread_rwlock_unlock(&table_lock);
    for (int k = 0; k < nrelease; k++)
        free(release[k]);
    return 0;
}

int emu_mem_find_freed(uintptr_t addr, uintptr_t *base, uint64_t *size)
{
    int found = 0;
    emu_mem_read_lock();
    for (int64_t k = 0; k < q_len; k++) {
        const alloc_entry *e = &quarantine[(q_head + k) % QUARANTINE_ENTRIES];
        if (addr >= e->base && addr < e->base + e->reserved) {
            *base = e->base;
            *size = e->size;
            found = 1;
            break;
        }
    }
    emu_mem_read_unlock();
    return found;
}

int emu_mem_find(uintptr_t addr, uintptr_t *base, uint64_t *size, int32_t *device)
{
    emu_mem_read_lock();
    int64_t i = find_index(addr);
    int found = i >= 0 && addr < table[i].base + table[i].size;
    if (found) {
        *base = table[i].base;
        *size = table[i].size;
        *device = table[i].device;
    }
    emu_mem_read_unlock();
    return found;
}

int emu_mem_check_range(uintptr_t addr, uint64_t nbytes, int32_t *device)
{
    emu_mem_read_lock();
    int rc = emu_mem_check_range_locked(addr, nbytes, device);
    emu_mem_read_unlock();
    return rc;
}

uint64_t emu_mem_used(int32_t device)
{
    if (device < 0 || device >= MAX_DEVICES)
        return 0;
    emu_mem_read_lock();
    uint64_t used = used_bytes[device];
    emu_mem_read_unlock();
    return used;
}

int64_t emu_mem_count(void)
{
    emu_mem_read_lock();
    int64_t n = table_len;
    emu_mem_read_unlock();
    return n;
}

int emu_memcpy(uintptr_t dst, uintptr_t src, uint64_t n)
{
    emu_mem_read_lock();
    if (dst != src)
        memmove((void *)dst, (const void *)src, (size_t)n);
    emu_mem_read_unlock();
    return 0;
}

int emu_memset(uintptr_t dst, int value, uint64_t n)
{
    emu_mem_read_lock();
    memset((void *)dst, value & 0xff, (size_t)n);
    emu_mem_read_unlock();
    return 0;
}

uintptr_t emu_host_alloc(uint64_t size)
{
    void *p = NULL;
    if (size == 0 || posix_memalign(&p, ALIGN_BYTES, (size_t)size) != 0)
        return 0;
    return (uintptr_t)p;
}

void emu_host_free(uintptr_t ptr) { free((void *)ptr); }
