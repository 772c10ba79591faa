"""Device and host memory: allocation, free, copies, fills, and the one device range check.

Device memory is host memory the C core carves out of a reserved address range per device
(csrc/runtime/memory.c), so "is this device memory" is a range test, never a guess. Argument
checks, their order and codes follow CANN's aclrtMalloc / aclrtMemcpy / aclrtMemset
documentation; docs/runtime.md ("Device memory") describes the emulator's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

from .. import config
from ..cint import fits
from ..enums import MemRange, TaskType, aclrtMemAttr, aclrtMemcpyKind, aclrtMemMallocPolicy
from ..status import aclError as E
from ..status import record
from .core import ffi, lib
from .state import S, current_device, require_int
from .streams import add_range, new_task, resolve_stream, submit

_K = aclrtMemcpyKind
MEMCPY_H2H, MEMCPY_H2D, MEMCPY_D2H, MEMCPY_D2D, MEMCPY_DEFAULT, MEMCPY_H2B2D = (
    _K.ACL_MEMCPY_HOST_TO_HOST, _K.ACL_MEMCPY_HOST_TO_DEVICE, _K.ACL_MEMCPY_DEVICE_TO_HOST,
    _K.ACL_MEMCPY_DEVICE_TO_DEVICE, _K.ACL_MEMCPY_DEFAULT, _K.ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
# aclrtMemcpy accepts these six kinds (CANN's aclrt docs); INNER/INTER_DEVICE_TO_DEVICE (6, 7)
# exist in the enum but are rejected with ACL_ERROR_INVALID_PARAM.
_MEMCPY_KINDS: dict[int, tuple[str, Optional[bool], Optional[bool]]] = {
    MEMCPY_H2H: (MEMCPY_H2H.name, False, False),
    MEMCPY_H2D: (MEMCPY_H2D.name, True, False),
    MEMCPY_D2H: (MEMCPY_D2H.name, False, True),
    MEMCPY_D2D: (MEMCPY_D2D.name, True, True),
    MEMCPY_DEFAULT: (MEMCPY_DEFAULT.name, None, None),
    MEMCPY_H2B2D: (MEMCPY_H2B2D.name, True, False),
}  # kind -> (name, dst is device, src is device); None = decided from the pointer

# aclrtMemMallocPolicy values whose allocations CANN does not pad by 32 bytes
_HUGE1G_POLICIES = (aclrtMemMallocPolicy.ACL_MEM_MALLOC_HUGE1G_ONLY,
                    aclrtMemMallocPolicy.ACL_MEM_MALLOC_HUGE1G_ONLY_P2P)

# host addresses at or above this are kernel space (or not canonical) on every 64-bit target:
# a negative pointer wraps there (uintptr_t), and no host buffer can lie there
HOST_ADDRESS_END = 1 << 63

# ------------------------------------------------------------------ the allocation table ----


def check_range(addr: int, nbytes: int) -> tuple[int, int]:
    """The one device range check: (MemRange, device) for the bytes [addr, addr+nbytes).
    MemRange.OK: inside one live device allocation, on ``device``; PAST_END: starts in one and
    runs past its end; NOT_LIVE: in ``device``'s address range, in no live allocation; HOST: in
    no device's address range (device is -1)."""
    dev = ffi.new("int32_t *")
    rc = lib.emu_mem_check_range(addr, nbytes, dev)
    return rc, (-1 if rc == MemRange.HOST else dev[0])


# emu_mem_free_epoch(): a count of frees. While it has not moved, every range that was inside a
# live allocation still is (phase 1 uses it to skip re-checking the same addresses).
free_epoch: Callable[[], int] = lib.emu_mem_free_epoch


def range_device(addr: int, nbytes: int) -> int:
    """The fast form of :func:`check_range` for launch paths: the device of [addr, addr+nbytes)
    when it lies inside one live allocation, else ``-MemRange`` (-1 host, -2 past the end,
    -3 not live)."""
    return lib.emu_mem_range_device(addr, nbytes)  # type: ignore[no-any-return]


def find(addr: int) -> tuple[int, int, int]:
    """(base, size, device) of the live device allocation holding addr, or (0, 0, -1)."""
    base = ffi.new("uintptr_t *")
    size = ffi.new("uint64_t *")
    dev = ffi.new("int32_t *")
    if lib.emu_mem_find(addr, base, size, dev):
        return base[0], size[0], dev[0]
    return 0, 0, -1


def find_freed(addr: int) -> tuple[int, int]:
    """(base, size) of the recently freed device allocation holding addr, or (0, 0)."""
    base = ffi.new("uintptr_t *")
    size = ffi.new("uint64_t *")
    if lib.emu_mem_find_freed(addr, base, size):
        return base[0], size[0]
    return 0, 0


def is_device(addr: int) -> bool:
    """True when addr lies in a device's address range (live or not): the emulator's test of
    "device memory", a range test, never a guess."""
    return bool(lib.emu_mem_is_device(addr))


def freed_text(addr: int) -> str:
    """' (freed device memory: ...)' when addr lies in recently freed device memory, else ''."""
    base, size = find_freed(addr)
    if not base:
        return ""
    how = S.freed.get(base, "by aclrtFree")
    return (f" (it lies in the device allocation [0x{base:x}, 0x{base + size:x}), freed {how}:"
            " a use after free)")


def not_live_text(what: str, addr: int, device: int) -> str:
    """Why an address in a device's address range is not usable: freed, allocated by the parent
    process before fork(), or never allocated."""
    base, _ = find_freed(addr)
    if base and base in S.parent_allocs:
        return (f"{what} 0x{addr:x} lies in device memory the parent process allocated before "
                "fork(): device memory does not cross fork(); allocate it again in this process")
    freed = freed_text(addr)
    if freed:
        return f"{what} 0x{addr:x} is not inside a live device allocation{freed}"
    base_p, size_p = ffi.new("uintptr_t *"), ffi.new("uint64_t *")
    if lib.emu_mem_find_before(addr, base_p, size_p):
        end = base_p[0] + size_p[0]
        return (f"{what} 0x{addr:x} lies {addr - end} bytes past the end of the device "
                f"allocation [0x{base_p[0]:x}, 0x{end:x}) ({size_p[0]} bytes), in device "
                f"{device}'s memory but not inside a live allocation")
    return (f"{what} 0x{addr:x} lies in device {device}'s memory but not inside a live "
            "allocation (never allocated)")


def check_device_range(api: str, what: str, addr: int, nbytes: int) -> int:
    """0 if [addr, addr+nbytes) lies in one live device allocation, else a recorded code."""
    rc, device = check_range(addr, nbytes)
    if rc == MemRange.OK:
        return 0
    if rc == MemRange.HOST:
        hint = " (it comes from aclrtMallocHost)" if addr in S.host_allocs else ""
        return record(api, E.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      f"{what} 0x{addr:x} is not device memory{hint}: expected a live "
                      "allocation of aclrtMalloc")
    if rc == MemRange.NOT_LIVE:
        return record(api, E.ACL_ERROR_RT_PARAM_INVALID, not_live_text(what, addr, device))
    base, size, _ = find(addr)
    return record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                  f"{what} bytes [0x{addr:x}, 0x{addr + nbytes:x}) run past the end of the "
                  f"device allocation [0x{base:x}, 0x{base + size:x}) ({size} bytes)")


def check_host_range(api: str, what: str, addr: int, nbytes: int) -> int:
    """0 when [addr, addr+nbytes) could be user-space host memory (what the emulator can tell;
    a garbage host pointer below that still faults, as in C), else a recorded 107016."""
    if addr >= HOST_ADDRESS_END or nbytes > HOST_ADDRESS_END - addr:
        return record(api, E.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      f"{what} bytes [0x{addr:x}, 0x{addr + nbytes:x}) are not host memory: "
                      "they reach past the user-space addresses of a 64-bit process (a negative "
                      "pointer wraps there, as uintptr_t does)")
    return 0


def _check_host(api: str, what: str, addr: int, nbytes: int = 0) -> int:
    ret = check_host_range(api, what, addr, nbytes)
    if ret:
        return ret
    if is_device(addr):
        live = find(addr)[0]
        state = "device memory" if live else f"in device memory{freed_text(addr)}"
        return record(api, E.ACL_ERROR_RT_INVALID_MEMORY_TYPE,
                      f"{what} 0x{addr:x} is {state}, but the copy kind says host memory")
    return 0


# ----------------------------------------------------------------------- device memory ----


def device_alloc(api: str, device: int, size: int, policy: int = 0) -> tuple[int, int]:
    """(pointer, 0), or (0, recorded code): device memory under ACLNN_EMU_MEM_LIMIT, filled with
    the ACLNN_EMU_POISON byte. Not in aclrtMalloc's table of user allocations (the functional
    layer's buffers use it directly)."""
    limit, ret = config.checked(api, config.mem_limit)
    if ret:
        return 0, ret
    poison, ret = config.checked(api, config.poison)
    if ret:
        return 0, ret
    enabled, byte = poison
    out = ffi.new("uintptr_t *")
    pad = 0 if (policy & 0xFF) in _HUGE1G_POLICIES else 1
    code = lib.emu_mem_alloc(device, size, limit, 1 if enabled else 0, byte, pad, out)
    if code == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT:
        return 0, record(api, code, _IN_KERNEL)
    if code:
        used = lib.emu_mem_used(device)
        return 0, record(api, code,
                         f"cannot allocate {size} bytes on device {device}: {used} of "
                         f"{limit} bytes are in use (ACLNN_EMU_MEM_LIMIT)")
    with S.lock:
        S.freed.pop(out[0], None)
    return out[0], 0


_IN_KERNEL = ("called from a custom operator's kernel, which a stream runs while it holds the "
              "device memory table: a kernel cannot allocate or free device memory (on the "
              "device, a kernel cannot call the runtime at all)")


def malloc(size, policy) -> tuple[int, int]:
    """aclrtMalloc: ``(dev_ptr, ret)``: ``size`` bytes of device memory on the current device,
    64-byte aligned, filled with the ACLNN_EMU_POISON byte. ret 100000 for size 0 or a policy
    outside uint32; 107002 without a device; 207001 beyond ACLNN_EMU_MEM_LIMIT.
    docs/runtime.md "Device memory"."""
    api = "aclrtMalloc"
    size = require_int(api, "size", size)
    policy = require_int(api, "policy", policy, ctype="uint32")
    if not fits(policy, "uint32"):
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                         f"policy {policy} does not fit the uint32 aclrtMemMallocPolicy parameter")
    if size <= 0:
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                         f"size must be greater than 0, got {size}")
    device, ret = current_device(api)
    if ret:
        return 0, ret
    ptr, ret = device_alloc(api, device, size, policy)
    if ptr:
        with S.lock:
            S.user_allocs[ptr] = device
    return ptr, ret


def device_free(api: str, ptr: int) -> int:
    """Free an allocation's start address, with a message naming what ptr is when it is not."""
    code = lib.emu_mem_free(ptr)
    if code == E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT:
        return record(api, code, _IN_KERNEL)
    if code:
        how = S.freed.get(ptr)
        if how:
            return record(api, code, f"0x{ptr:x} was already freed ({how}): double free")
        base, size, dev = find(ptr)
        if base:
            return record(api, code, f"0x{ptr:x} is inside the device allocation 0x{base:x} "
                          f"({size} bytes) but is not its start address")
        if ptr in S.host_allocs:
            return record(api, code, f"0x{ptr:x} comes from aclrtMallocHost: free it with "
                          "aclrtFreeHost")
        return record(api, code, f"0x{ptr:x} is not a device allocation of aclrtMalloc")
    with S.lock:
        S.user_allocs.pop(ptr, None)
        S.freed[ptr] = f"by {api}"
        if len(S.freed) > 4096:
            S.freed.pop(next(iter(S.freed)))
    return 0


def free(dev_ptr) -> int:
    """aclrtFree: free an aclrtMalloc allocation by its start address. Returns 0; 100000 for null;
    207002 for anything that is not a live allocation's start (double free, inside one, host)."""
    api = "aclrtFree"
    ptr = require_int(api, "devPtr", dev_ptr, allow_none=True)
    if ptr == 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, "devPtr is null")
    return device_free(api, ptr)


def detach_device_memory(device_id: int) -> list[int]:
    """What aclrtMalloc gave out on a device, taken out of the table of user allocations (the
    caller holds S.lock); release_device_memory frees it after the lock is released."""
    ptrs = [p for p, d in S.user_allocs.items() if d == device_id]
    for p in ptrs:
        del S.user_allocs[p]
    return ptrs


def release_device_memory(device_id: int, ptrs: list[int]) -> None:
    """Free detached allocations (aclrtResetDevice releases the device's resources). Without
    S.lock: a free waits for every running task, and a custom operator's kernel may need the
    lock to finish."""
    freed = [p for p in ptrs if lib.emu_mem_free(p) == 0]
    with S.lock:
        for p in freed:
            S.freed[p] = f"by aclrtResetDevice({device_id})"
        while len(S.freed) > 4096:
            S.freed.pop(next(iter(S.freed)))


def raw_memcpy(dst: int, src: int, nbytes: int) -> int:
    """The core's synchronous copy with no argument checks, for buffers the caller allocated
    itself (the functional layer): 0, or MemRange.NOT_LIVE / PAST_END when a side that lies in
    device memory is no longer inside one live allocation (nothing was copied)."""
    return int(lib.emu_memcpy(dst, src, nbytes))


def raw_free(ptr: int) -> int:
    """Free a device_alloc'd buffer with no bookkeeping or message (the functional layer's):
    0, or 207002 when ptr is not a live allocation's start."""
    return int(lib.emu_mem_free(ptr))


# ------------------------------------------------------------------------- host memory ----


def malloc_host(size) -> tuple[int, int]:
    """aclrtMallocHost: ``(host_ptr, ret)``: ``size`` bytes of 64-byte aligned host memory.
    ret 100000 for size 0; 207001 when the host is out of memory."""
    api = "aclrtMallocHost"
    size = require_int(api, "size", size)
    if size <= 0:
        return 0, record(api, E.ACL_ERROR_INVALID_PARAM, f"size must be greater than 0, got {size}")
    ptr = lib.emu_host_alloc(size)
    if not ptr:
        return 0, record(api, E.ACL_ERROR_RT_MEMORY_ALLOCATION, f"cannot allocate {size} bytes")
    with S.lock:
        S.host_allocs[ptr] = size
    return ptr, 0


def free_host(host_ptr) -> int:
    """aclrtFreeHost: free an aclrtMallocHost allocation. Returns 0; 100000 for null; 207002
    for anything else (device memory, double free)."""
    api = "aclrtFreeHost"
    ptr = require_int(api, "hostPtr", host_ptr, allow_none=True)
    if ptr == 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, "hostPtr is null")
    with S.lock:
        if ptr not in S.host_allocs:
            if find(ptr)[0]:
                return record(api, E.ACL_ERROR_RT_MEMORY_FREE,
                              f"0x{ptr:x} is device memory: free it with aclrtFree")
            return record(api, E.ACL_ERROR_RT_MEMORY_FREE,
                          f"0x{ptr:x} is not a live aclrtMallocHost allocation (double free?)")
        del S.host_allocs[ptr]
    lib.emu_host_free(ptr)
    return 0


def buffer_address(data) -> int:
    """The address of a bytes-like object's buffer (the object must stay alive while the address
    is used)."""
    return int(ffi.cast("uintptr_t", ffi.from_buffer(data)))


def host_buffer(addr: int, nbytes: int) -> Any:
    """A writable buffer over ``nbytes`` of host memory at ``addr`` (no copy, no check)."""
    return ffi.buffer(ffi.cast("char *", addr), nbytes)


# ------------------------------------------------------------------ copies and fills ------


def _memcpy_checks(api, dst, dest_max, src, count, kind):
    """CANN's order: count 0 -> success; null -> 100000; bad kind -> 100000;
    count > destMax -> 107000; then the emulator's memory-kind checks."""
    dst = require_int(api, "dst", dst, allow_none=True)
    src = require_int(api, "src", src, allow_none=True)
    dest_max = require_int(api, "destMax", dest_max)
    count = require_int(api, "count", count)
    kind = require_int(api, "kind", kind, ctype="int32")
    if count == 0:
        return None, 0
    if dst == 0 or src == 0:
        which = "dst" if dst == 0 else "src"
        return None, record(api, E.ACL_ERROR_INVALID_PARAM, f"{which} is null")
    if kind not in _MEMCPY_KINDS:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"kind {kind} is not a copy kind aclrtMemcpy accepts (0..5: "
                            "HOST_TO_HOST, HOST_TO_DEVICE, DEVICE_TO_HOST, DEVICE_TO_DEVICE, "
                            "DEFAULT, HOST_TO_BUF_TO_DEVICE)")
    if count < 0 or dest_max < 0 or count > dest_max:
        return None, record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                            f"count {count} is greater than destMax {dest_max}")
    name, dst_dev, src_dev = _MEMCPY_KINDS[kind]
    if dst_dev is None:  # ACL_MEMCPY_DEFAULT: the system decides from the pointers
        dst_dev, src_dev = is_device(dst), is_device(src)
    for what, addr, on_dev in (("dst", dst, dst_dev), ("src", src, src_dev)):
        ret = (check_device_range(api, f"{what} ({name})", addr, count) if on_dev
               else _check_host(api, f"{what} ({name})", addr, count))
        if ret:
            return None, ret
    return (dst, src, count, kind, dst_dev, src_dev), 0


def memcpy(dst, dest_max, src, count, kind) -> int:
    """aclrtMemcpy: copy ``count`` bytes from ``src`` to ``dst`` (destination capacity
    ``dest_max``) as ``kind`` (aclrtMemcpyKind 0..5) says. Checks in CANN's order: count 0 is a
    no-op; null 100000; bad kind 100000; count > destMax 107000; then the memory kinds: a device
    side not inside one live allocation 107000, a side of the wrong memory type 107016.
    docs/runtime.md "Copies and memsets"."""
    api = "aclrtMemcpy"
    args, ret = _memcpy_checks(api, dst, dest_max, src, count, kind)
    if args is None:
        return ret
    dst, src, count = args[0], args[1], args[2]
    if lib.emu_memcpy(dst, src, count) != 0:  # re-checked under the table's lock
        return record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                      f"the device memory of the copy [0x{dst:x} <- 0x{src:x}, {count} bytes) "
                      "was freed by another thread during the call; nothing was copied")
    return 0


def memcpy_async(dst, dest_max, src, count, kind, stream) -> int:
    """aclrtMemcpyAsync: memcpy's checks, then the copy is a task on ``stream`` (null: the
    default stream). Host-to-host 207000; a bad stream 107017 / 107002. A copy whose device memory
    is freed before it runs faults at synchronize (507013)."""
    api = "aclrtMemcpyAsync"
    args, ret = _memcpy_checks(api, dst, dest_max, src, count, kind)
    if args is None:
        return ret  # count 0 returns success before any other check, the stream included
    dst, src, count, kind, dst_dev, src_dev = args
    if not dst_dev and not src_dev:
        return record(api, E.ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
                      "host-to-host copies cannot be asynchronous: use aclrtMemcpy")
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return ret
    assert st is not None
    tasks, t = new_task(api, "Memcpy", TaskType.MEMCPY)
    t.a, t.c, t.n = src, dst, count
    if dst_dev:
        add_range(t, "dst", dst, count)
    if src_dev:
        add_range(t, "src", src, count)
    return submit(api, st, tasks, 1)


def _memset_checks(api, dev_ptr, max_count, value, count, device_only):
    ptr = require_int(api, "devPtr", dev_ptr, allow_none=True)
    max_count = require_int(api, "maxCount", max_count)
    value = require_int(api, "value", value, ctype="int32")
    count = require_int(api, "count", count)
    if count == 0:
        return None, 0
    if ptr == 0:
        return None, record(api, E.ACL_ERROR_INVALID_PARAM, "devPtr is null")
    if not fits(value, "int32"):
        return None, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"value {value} does not fit the int32_t parameter")
    if count < 0 or max_count < 0 or count > max_count:
        return None, record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                            f"count {count} is greater than maxCount {max_count}")
    if is_device(ptr) or device_only:
        ret = check_device_range(api, "devPtr", ptr, count)
    else:  # aclrtMemset on host memory: "decided by the system from the pointer"
        ret = check_host_range(api, "devPtr", ptr, count)
    if ret:
        return None, ret
    return (ptr, value, count), 0


def memset(dev_ptr, max_count, value, count) -> int:
    """aclrtMemset: fill ``count`` bytes at ``dev_ptr`` (capacity ``max_count``) with the low byte
    of ``value``; host memory is allowed (decided from the pointer). count 0 is a no-op; null or a
    value outside int32 100000; count > maxCount 107000; memory checks as memcpy."""
    api = "aclrtMemset"
    args, ret = _memset_checks(api, dev_ptr, max_count, value, count, device_only=False)
    if args is None:
        return ret
    ptr, value, count = args
    # host or device: "decided by the system from the pointer" (by address range here)
    if lib.emu_memset(ptr, value, count) != 0:  # re-checked under the table's lock
        return record(api, E.ACL_ERROR_RT_PARAM_INVALID,
                      f"devPtr 0x{ptr:x} was freed by another thread during the call; nothing "
                      "was written")
    return 0


def memset_async(dev_ptr, max_count, value, count, stream) -> int:
    """aclrtMemsetAsync: memset's checks on device memory only, then the fill is a task on
    ``stream`` (null: the default stream)."""
    api = "aclrtMemsetAsync"
    args, ret = _memset_checks(api, dev_ptr, max_count, value, count, device_only=True)
    if args is None:
        return ret
    ptr, value, count = args
    with S.lock:
        st, ret = resolve_stream(api, stream)
    if ret:
        return ret
    assert st is not None
    tasks, t = new_task(api, "Memset", TaskType.MEMSET)
    t.c, t.n, t.value = ptr, count, value
    add_range(t, "devPtr", ptr, count)
    return submit(api, st, tasks, 1)


_MEM_ATTR_MAX = int(max(aclrtMemAttr))  # 17


def mem_flush(dev_ptr, size) -> int:
    """aclrtMemFlush: write the cache lines of ``size`` bytes at ``dev_ptr`` back to memory;
    the emulator's device memory is host memory with no cache of its own, so this checks the
    range and returns 0. 107000 / 207... for a range outside one live device allocation, as
    the memcpy checks; 100000 for size 0."""
    return _cache_op("aclrtMemFlush", dev_ptr, size)


def mem_invalidate(dev_ptr, size) -> int:
    """aclrtMemInvalidate: mem_flush's counterpart (drop cached lines): the same checks."""
    return _cache_op("aclrtMemInvalidate", dev_ptr, size)


def _cache_op(api: str, dev_ptr, size) -> int:
    addr = require_int(api, "devPtr", dev_ptr)
    size = require_int(api, "size", size)
    if addr == 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, "devPtr is null")
    if size == 0:
        return record(api, E.ACL_ERROR_INVALID_PARAM, "size is 0")
    return check_device_range(api, "devPtr", addr, size)


def get_mem_info(attr) -> tuple[int, int, int]:
    """aclrtGetMemInfo: ``(free, total, ret)`` of the current device's memory: total is
    ACLNN_EMU_MEM_LIMIT. ret 100000 for an attr outside aclrtMemAttr (0..17); 107002 without a
    device."""
    api = "aclrtGetMemInfo"
    attr = require_int(api, "attr", attr, ctype="int32")
    if not 0 <= attr <= _MEM_ATTR_MAX:
        return 0, 0, record(api, E.ACL_ERROR_INVALID_PARAM,
                            f"attr {attr} is not an aclrtMemAttr (expected 0..{_MEM_ATTR_MAX})")
    device, ret = current_device(api)
    if ret:
        return 0, 0, ret
    total, ret = config.checked(api, config.mem_limit)
    if ret:
        return 0, 0, ret
    used = lib.emu_mem_used(device)
    return max(total - used, 0), total, 0


__all__ = [
    "MEMCPY_H2H", "MEMCPY_H2D", "MEMCPY_D2H", "MEMCPY_D2D", "MEMCPY_DEFAULT", "MEMCPY_H2B2D",
    "HOST_ADDRESS_END", "check_range", "range_device", "find", "find_freed", "is_device",
    "freed_text", "not_live_text", "check_device_range", "check_host_range", "device_alloc",
    "malloc", "device_free", "free", "detach_device_memory", "release_device_memory",
    "raw_memcpy", "raw_free",
    "malloc_host", "free_host", "buffer_address", "host_buffer", "memcpy", "memcpy_async",
    "memset", "memset_async", "get_mem_info",
]
