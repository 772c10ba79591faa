"""Configuration: environment variables, overridden by the same keys in acl.init's JSON file.

Every key is documented in docs/configuration.md. Values are read each time they are used, so a
program (or a test) can change the environment between calls: a new memory limit applies to the
next allocation, a new device count to the next device call.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Callable, Optional

from . import soc as _soc
from .enums import Accumulation

KEYS = (
    "ACLNN_EMU_SOC",
    "ACLNN_EMU_DEVICE_COUNT",
    "ACLNN_EMU_MEM_LIMIT",
    "ACLNN_EMU_NUM_THREADS",
    "ACLNN_EMU_POISON",
    "ACLNN_EMU_CHECK",
    "ACLNN_EMU_ACCUMULATION",
    "ACL_LAUNCH_BLOCKING",
    "ASCEND_LAUNCH_BLOCKING",
    "ASCEND_RT_VISIBLE_DEVICES",
    "ACLNN_EMU_TRACE",
    "ACLNN_EMU_TRACE_EVENTS",
    "ASCEND_GLOBAL_LOG_LEVEL",
    "ASCEND_SLOG_PRINT_TO_STDOUT",
)

_overrides: dict[str, str] = {}
# called after the overrides change (the toolkit's C paths follow ACL_LAUNCH_BLOCKING)
on_change: list[Callable[[], None]] = []

# What the C core can hold: device ids index fixed tables of MAX_DEVICES entries, and each
# device's memory is one reserved virtual address range of MAX_MEM_LIMIT bytes.
MAX_DEVICES = 64
MAX_MEM_LIMIT = 1 << 40
# The kernel pool's limit (EMU_MAX_THREADS in csrc/include/aclnn_emu.h).
MAX_THREADS = 1024


class ConfigError(ValueError):
    """A configuration value that cannot be used; the message names the key and the rule."""


# CPython's os.environ keeps its values in a dict of encoded keys: reading that dict directly
# (phase 1 and 2 read ACLNN_EMU_SOC and ACL_LAUNCH_BLOCKING at every call) costs a tenth of
# os.environ.get. Anywhere else, os.environ.get.
_ENV_DATA = getattr(os.environ, "_data", None)
_ENV_ENCODE = getattr(os.environ, "encodekey", None)
_ENV_DECODE = getattr(os.environ, "decodevalue", None)
_ENV_KEYS: dict[str, object] = {}


def _raw(key: str) -> Optional[str]:
    if _overrides and key in _overrides:
        return _overrides[key]
    if _ENV_DATA is None or _ENV_ENCODE is None or _ENV_DECODE is None:
        return os.environ.get(key)
    encoded = _ENV_KEYS.get(key)
    if encoded is None:
        encoded = _ENV_KEYS[key] = _ENV_ENCODE(key)
    value = _ENV_DATA.get(encoded)
    return None if value is None else _ENV_DECODE(value)


def load_json(path: str) -> None:
    """Apply the emulator keys of an acl.init JSON file (other keys are CANN's and ignored).

    Raises:
        FileNotFoundError: no such file.  json.JSONDecodeError: not JSON.
        ConfigError: a key of ours with a bad value, or the top level is not an object.
    """
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object")
    found = {k: str(v) for k, v in data.items() if k in KEYS}
    previous = dict(_overrides)
    _overrides.update(found)
    try:
        validate(found)  # the file's keys only: a bad environment value is not the file's fault
    except ConfigError:
        _overrides.clear()
        _overrides.update(previous)
        raise
    finally:
        _changed()


def clear_overrides() -> None:
    _overrides.clear()
    _changed()


def override(key: str) -> Optional[str]:
    """The value aclInit's configuration file gave ``key``, or None."""
    return _overrides.get(key)


def _changed() -> None:
    for fn in on_change:
        fn()


def validate(keys=KEYS) -> None:
    """Parse every key (or the given ones) once, so that a bad value is reported early.

    Raises ConfigError naming the key."""
    for key in KEYS:
        if key in keys:
            _GETTERS[key]()


def checked(api: str, getter, code: int = 100000):
    """``(getter(), 0)``, or ``(None, code)`` with the ConfigError's message recorded for ``api``.

    For API paths, which return status codes and never raise: a bad value found after acl.init
    (the environment changed since) gives ACL_ERROR_INVALID_PARAM (100000) by default."""
    try:
        return getter(), 0
    except ConfigError as exc:
        from .status import record

        return None, record(api, code, f"configuration: {exc}")


def soc_profile() -> _soc.SocProfile:
    value = _raw("ACLNN_EMU_SOC")
    if not value:
        return _soc.PROFILES[_soc.DEFAULT_SOC]
    try:
        return _soc.profile(value)
    except ValueError as exc:
        raise ConfigError(f"ACLNN_EMU_SOC: {exc}") from None


def _int(key: str, default: int, minimum: int) -> int:
    value = _raw(key)
    if value is None or value.strip() == "":
        return default
    try:
        n = int(value.strip(), 0)
    except ValueError:
        raise ConfigError(f"{key}={value!r} is not an integer") from None
    if n < minimum:
        raise ConfigError(f"{key}={n} must be at least {minimum}")
    return n


def physical_device_count() -> int:
    """ACLNN_EMU_DEVICE_COUNT: the emulated machine's devices, before ASCEND_RT_VISIBLE_DEVICES."""
    n = _int("ACLNN_EMU_DEVICE_COUNT", 1, 1)
    if n > MAX_DEVICES:
        raise ConfigError(f"ACLNN_EMU_DEVICE_COUNT={n} is more than the emulator can hold: at "
                          f"most {MAX_DEVICES} devices (MAX_DEVICES)")
    return n


def visible_devices() -> Optional[tuple[int, ...]]:
    """ASCEND_RT_VISIBLE_DEVICES as CANN documents it: the physical device ids this process
    may use, comma separated, in ascending order; the process sees them as devices 0..n-1 in
    that order. None when unset or empty (every device is visible).

    CANN stops reading at the first character or id it cannot use and keeps the ids before it;
    the emulator refuses such a value instead, naming the entry."""
    value = _raw("ASCEND_RT_VISIBLE_DEVICES")
    if value is None or value.strip() == "":
        return None
    total = physical_device_count()
    ids: list[int] = []
    for i, part in enumerate(value.strip().split(",")):
        if not re.fullmatch(r"[0-9]+", part):
            raise ConfigError(f"ASCEND_RT_VISIBLE_DEVICES={value!r}: entry {i} ({part!r}) is not "
                              "a device id (comma-separated digits, no spaces)")
        n = int(part)
        if n >= total:
            raise ConfigError(f"ASCEND_RT_VISIBLE_DEVICES={value!r}: device {n} does not exist: "
                              f"the emulator has {total} device(s), ids 0..{total - 1} "
                              "(ACLNN_EMU_DEVICE_COUNT)")
        if ids and n <= ids[-1]:
            raise ConfigError(f"ASCEND_RT_VISIBLE_DEVICES={value!r}: device {n} "
                              f"{'is repeated' if n in ids else 'is out of order'}: list each "
                              "id once, in ascending order, as CANN requires")
        ids.append(n)
    return tuple(ids)


def device_count() -> int:
    """The devices this process sees: ACLNN_EMU_DEVICE_COUNT, or as many as
    ASCEND_RT_VISIBLE_DEVICES lists."""
    visible = visible_devices()
    return physical_device_count() if visible is None else len(visible)


_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str, key: str = "size") -> int:
    # ASCII only: the C core reads ACLNN_EMU_LLC by the same grammar (kernels/isa.c parse_llc)
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)i?B?\s*", str(text), re.IGNORECASE | re.ASCII)
    if not m:
        raise ConfigError(f"{key}={text!r} is not a byte count (digits with an optional K/M/G/T)")
    return int(m.group(1)) * _SUFFIX[m.group(2).upper()]


LLC_MIN, LLC_MAX = 64 << 10, 64 << 30


def parse_llc(text: str) -> int:
    """ACLNN_EMU_LLC's value: a byte count (parse_size) from 64K to 64G. The C core reads the
    variable itself, when it loads, by the same rule (kernels/isa.c parse_llc), and ignores a
    value this refuses."""
    n = parse_size(text, "ACLNN_EMU_LLC")
    if not LLC_MIN <= n <= LLC_MAX:
        raise ConfigError(f"ACLNN_EMU_LLC={text!r} ({n} bytes) is not from 64K to 64G")
    return n


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 64 << 30


def default_mem_limit() -> int:
    """32 GiB (an Ascend 910B4's HBM), but never more than half of this machine's memory,
    so that filling fresh allocations with the poison pattern cannot exhaust the host."""
    return min(32 << 30, _physical_memory() // 2)


def mem_limit() -> int:
    value = _raw("ACLNN_EMU_MEM_LIMIT")
    if value is None or value.strip() == "":
        return default_mem_limit()
    n = parse_size(value, "ACLNN_EMU_MEM_LIMIT")
    if n <= 0:
        raise ConfigError("ACLNN_EMU_MEM_LIMIT must be greater than 0")
    if n > MAX_MEM_LIMIT:
        raise ConfigError(f"ACLNN_EMU_MEM_LIMIT={value.strip()} ({n} bytes) is more than the "
                          f"emulator can hold: at most {MAX_MEM_LIMIT} bytes (1T, the address "
                          "range of one device)")
    return n


def default_num_threads() -> int:
    """The cores this process may run on (its CPU affinity), at most MAX_THREADS."""
    n = (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
         else (os.cpu_count() or 1))
    return max(1, min(n, MAX_THREADS))


def num_threads() -> int:
    """The kernel threads shared by every stream (the stream's own thread counted)."""
    n = _int("ACLNN_EMU_NUM_THREADS", default_num_threads(), 1)
    if n > MAX_THREADS:
        raise ConfigError(f"ACLNN_EMU_NUM_THREADS={n} is more than the emulator can hold: at "
                          f"most {MAX_THREADS} threads (MAX_THREADS)")
    return n


def poison() -> tuple[bool, int]:
    """(enabled, byte). The default 0xFF reads as NaN in every float type."""
    value = _raw("ACLNN_EMU_POISON")
    if value is None or value.strip() == "":
        return True, 0xFF
    v = value.strip().lower()
    if v in ("off", "0x", "none", "no", "false"):
        return False, 0
    try:
        byte = int(v, 0)
    except ValueError:
        raise ConfigError(f"ACLNN_EMU_POISON={value!r}: expected a byte value (0-255) or 'off'") \
            from None
    if not 0 <= byte <= 255:
        raise ConfigError(f"ACLNN_EMU_POISON={value!r}: a byte value must be 0-255")
    return True, byte


def _switch(key: str) -> Optional[bool]:
    """A 0/1 variable: None when unset or empty."""
    value = _raw(key)
    if value is None:
        return None
    v = value.strip().lower()
    if v == "":
        return None
    if v in ("0", "false", "no", "off"):
        return False
    if v in ("1", "true", "yes", "on"):
        return True
    raise ConfigError(f"{key}={value!r}: expected 0 or 1")


def launch_blocking() -> bool:
    """ACL_LAUNCH_BLOCKING, or CANN's name for it, ASCEND_LAUNCH_BLOCKING (1: launch
    synchronously). Both set to different values is an error naming both."""
    acl = _switch("ACL_LAUNCH_BLOCKING")
    ascend = _switch("ASCEND_LAUNCH_BLOCKING")
    if acl is not None and ascend is not None and acl != ascend:
        raise ConfigError(f"ACL_LAUNCH_BLOCKING={_raw('ACL_LAUNCH_BLOCKING')!r} and "
                          f"ASCEND_LAUNCH_BLOCKING={_raw('ASCEND_LAUNCH_BLOCKING')!r} disagree: "
                          "set one of them, or both to the same value")
    return bool(acl or ascend)


# Opt-in checkers (docs/diagnostics.md); an unknown name is an error rather than a silent no-op.
KNOWN_CHECKS: frozenset = frozenset({"race", "init", "leak"})


def checks() -> frozenset:
    value = _raw("ACLNN_EMU_CHECK")
    if not value:
        return frozenset()
    items = {v.strip().lower() for v in value.split(",") if v.strip()}
    items.discard("off")
    unknown = items - KNOWN_CHECKS
    if unknown:
        raise ConfigError(
            f"ACLNN_EMU_CHECK: checker(s) {sorted(unknown)} not available in this version; "
            f"available: {sorted(KNOWN_CHECKS) or 'none'}"
        )
    return frozenset(items)


# oneDNN's accumulation modes (docs/onednn.md), the names its attribute takes
ACCUMULATION_MODES = tuple(m.name.lower() for m in Accumulation)


def accumulation() -> str:
    """ACLNN_EMU_ACCUMULATION (an emulator extension): the accumulation mode of the softmax
    family's executors, recorded at phase 1: "strict" (the default), "relaxed" or "any"."""
    value = _raw("ACLNN_EMU_ACCUMULATION")
    if value is None or value.strip() == "":
        return "strict"
    v = value.strip().lower()
    if v not in ACCUMULATION_MODES:
        raise ConfigError(f"ACLNN_EMU_ACCUMULATION={value!r}: expected one of "
                          f"{', '.join(ACCUMULATION_MODES)} (oneDNN's accumulation modes)")
    return v


def trace_path() -> Optional[str]:
    """ACLNN_EMU_TRACE: the Chrome / Perfetto trace file to write, or None (off)."""
    value = _raw("ACLNN_EMU_TRACE")
    if value is None or value.strip() == "":
        return None
    return value.strip()


DEFAULT_TRACE_EVENTS = 100_000
MAX_TRACE_EVENTS = 1 << 26


def trace_events() -> int:
    """ACLNN_EMU_TRACE_EVENTS: how many API calls, and how many tasks, the trace keeps (the
    most recent; older ones are dropped and counted), 1 to 2**26."""
    n = _int("ACLNN_EMU_TRACE_EVENTS", DEFAULT_TRACE_EVENTS, 1)
    if n > MAX_TRACE_EVENTS:
        raise ConfigError(f"ACLNN_EMU_TRACE_EVENTS={n} must be at most {MAX_TRACE_EVENTS} "
                          "(2**26)")
    return n


# ASCEND_GLOBAL_LOG_LEVEL's values, as CANN defines them
LOG_LEVELS = {0: "debug", 1: "info", 2: "warning", 3: "error", 4: "null"}


def log_level() -> Optional[int]:
    """ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info, 2 warning, 3 error, 4 null), or None when it
    is unset and ASCEND_SLOG_PRINT_TO_STDOUT is off: API logging off. With only
    ASCEND_SLOG_PRINT_TO_STDOUT=1, CANN's default level, 3 (error)."""
    value = _raw("ASCEND_GLOBAL_LOG_LEVEL")
    if value is None or value.strip() == "":
        return 3 if log_to_stdout() else None
    try:
        n = int(value.strip())
    except ValueError:
        n = -1
    if n not in LOG_LEVELS:
        raise ConfigError(f"ASCEND_GLOBAL_LOG_LEVEL={value!r}: expected 0 (debug), 1 (info), "
                          "2 (warning), 3 (error) or 4 (null)")
    return n


def log_to_stdout() -> bool:
    """ASCEND_SLOG_PRINT_TO_STDOUT=1: the API log also goes to standard output."""
    return bool(_switch("ASCEND_SLOG_PRINT_TO_STDOUT"))


_GETTERS = {
    "ACLNN_EMU_SOC": soc_profile,
    "ACLNN_EMU_DEVICE_COUNT": device_count,
    "ACLNN_EMU_MEM_LIMIT": mem_limit,
    "ACLNN_EMU_NUM_THREADS": num_threads,
    "ACLNN_EMU_POISON": poison,
    "ACLNN_EMU_CHECK": checks,
    "ACLNN_EMU_ACCUMULATION": accumulation,
    "ACL_LAUNCH_BLOCKING": launch_blocking,
    "ASCEND_LAUNCH_BLOCKING": launch_blocking,
    "ASCEND_RT_VISIBLE_DEVICES": visible_devices,
    "ACLNN_EMU_TRACE": trace_path,
    "ACLNN_EMU_TRACE_EVENTS": trace_events,
    "ASCEND_GLOBAL_LOG_LEVEL": log_level,
    "ASCEND_SLOG_PRINT_TO_STDOUT": log_to_stdout,
}


def describe() -> dict[str, Any]:
    """The effective configuration (for the CLI and docs)."""
    enabled, byte = poison()
    return {
        "ACLNN_EMU_SOC": soc_profile().name,
        "ACLNN_EMU_DEVICE_COUNT": device_count(),
        "ACLNN_EMU_MEM_LIMIT": mem_limit(),
        "ACLNN_EMU_NUM_THREADS": num_threads(),
        "ACLNN_EMU_POISON": f"0x{byte:02x}" if enabled else "off",
        "ACLNN_EMU_CHECK": ",".join(sorted(checks())) or "off",
        "ACLNN_EMU_ACCUMULATION": accumulation(),
        "ACL_LAUNCH_BLOCKING": int(launch_blocking()),
        "ASCEND_RT_VISIBLE_DEVICES": ",".join(map(str, visible_devices() or ())) or "all",
        "ACLNN_EMU_TRACE": trace_path() or "off",
        "ACLNN_EMU_TRACE_EVENTS": trace_events(),
        "ASCEND_GLOBAL_LOG_LEVEL": "off" if log_level() is None else log_level(),
    }
