"""The checkers of ``ACLNN_EMU_CHECK``: ``race``, ``init`` and ``leak`` (docs/diagnostics.md).

They see the program through the API wrappers (:mod:`.wrap`): the order of the API calls is the
program order, and execution timing plays no part, so a report does not depend on how the
streams happened to run.

**race** is a happens-before check with vector clocks. Every stream and the host (all host
threads together: the checker cannot see the locks, queues and joins between Python threads)
have a clock. A task enqueued on a stream happens after everything the host did before the call
and after the stream's earlier tasks; ``aclrtRecordEvent`` snapshots the stream's clock into the
event, ``aclrtStreamWaitEvent`` merges the event's clock into the waiting stream, and the
synchronizes (stream, device, event, a completed ``aclrtQueryEventStatus``, and
``aclrtDestroyStream`` / ``aclrtResetDevice``, which drain) merge the streams' clocks into the
host's. Each device allocation has a shadow: byte intervals, each with the last write (who and
when) and the reads since. An access that is not ordered after a conflicting earlier access
(write/write, write/read, read/write) is a race. An operator's access through a strided view
keeps its exact byte pattern (:mod:`.strided`): it conflicts only with accesses whose bytes meet
its own, and a strided write keeps the earlier writes of the bytes between its elements. A
destroyed stream's entries leave the clocks (see _retire_dead), so the cost of a call does not
grow with the number of streams a program made.

**init** reports a read of device bytes that nothing wrote since their allocation (a copy, a
memset or a task's output marks them written).

Both are found when the call is made and reported by the next synchronize call (stream, device
or event) of any thread: it logs each report at ERROR (logger ``aclnn_py.check``), leaves it for
``acl.get_recent_err_msg()`` and returns the code of the first one, if the synchronize itself
succeeded: 507015 (ACL_ERROR_RT_AICORE_EXCEPTION) when the later access is an operator's task,
507013 (ACL_ERROR_RT_SYS_DMA) for a copy, a memset or a host operation, the codes a task fault
gets at synchronize. Reports still pending at aclrtResetDevice, aclFinalize or exit are logged
then.

**leak** lists at aclrtResetDevice (the device's allocations, streams and contexts) and at
aclFinalize (everything else still alive: devices never reset, events, host allocations,
executors never launched or destroyed) the objects the program created and did not release,
each with the place that created it, logged at WARNING (logger ``aclnn_py.check``).
"""

from __future__ import annotations

import atexit
import bisect
import logging
import threading
import weakref
from typing import Any, Callable, Optional

from .. import config, dtypes
from .. import runtime as rt
from ..executor import READY, aclOpExecutor
from ..status import aclError as E
from ..status import record
from . import strided
from .sites import site_text, user_site

LOG = logging.getLogger("aclnn_py.check")
HOST = "host"
FAULT_KERNEL = int(E.ACL_ERROR_RT_AICORE_EXCEPTION)  # 507015
FAULT_DMA = int(E.ACL_ERROR_RT_SYS_DMA)  # 507013
MAX_PENDING = 100  # reports waiting for a synchronize; more are counted
U64 = (1 << 64) - 1
_EVENT_COMPLETE = 1  # aclrtEventRecordedStatus.ACL_EVENT_RECORDED_STATUS_COMPLETE
_SYNC_DONE = (0, FAULT_KERNEL, FAULT_DMA)  # a synchronize that waited for every task


# calls only the memory checkers (race, init) need, and calls only the leak checker needs
_MEMORY_ONLY = frozenset({
    "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset", "aclrtMemsetAsync", "aclrtRecordEvent",
    "aclrtStreamWaitEvent", "aclrtSynchronizeStream", "aclrtSynchronizeStreamWithTimeout",
    "aclrtSynchronizeDevice", "aclrtSynchronizeEvent", "aclrtQueryEventStatus",
    "aclrtSynchronizeEventWithTimeout", "aclrtSynchronizeDeviceWithTimeout", "aclrtQueryEvent",
    "aclrtStreamQuery"})
_LEAK_ONLY = frozenset({
    "aclrtMallocHost", "aclrtFreeHost", "aclrtCreateStream", "aclrtCreateStreamWithConfig",
    "aclrtCreateEvent", "aclrtCreateEventWithFlag", "aclrtCreateEventExWithFlag",
    "aclrtSetDevice", "aclrtCreateContext",
    "aclDestroyAclOpExecutor"})


class Op:
    """An operation that touches device memory: an API call (and the plan step of a task)."""

    __slots__ = ("api", "step", "agent", "kernel", "site", "thread")

    def __init__(self, api: str, step: str, agent: Any, kernel: bool, site) -> None:
        self.api = api
        self.step = step
        self.agent = agent
        self.kernel = kernel
        self.site = site
        self.thread = threading.current_thread().name if agent == HOST else ""

    @property
    def where(self) -> str:
        if self.agent == HOST:
            return f"on the host (thread {self.thread})"
        st = rt.S.streams.get(self.agent)
        default = " (a default stream)" if st is not None and st.is_default else ""
        return f"on stream 0x{self.agent:x}{default}"

    def name(self) -> str:
        return f"{self.api} step {self.step}" if self.step else self.api

    def key(self) -> tuple:
        return (self.api, self.step, self.site)


# An access kept in a shadow: (agent, clock, op, argument name, bytes), the bytes None for all of
# the interval that keeps it, or a placed strided pattern (strided.py) for a strided view
Access = tuple
# a write ordered before everything to come: memory the checker did not see allocated, or the
# writes of a destroyed stream once forgotten (see Checker._sweep)
_UNKNOWN: Access = (None, 0, None, None, None)
MAX_ENTRIES = 64  # accesses kept per interval before the ordered ones are dropped (_bound)
SWEEP = 1024  # destroyed streams remembered before the shadows forget their accesses


class Shadow:
    """One device allocation: byte intervals [starts[i], starts[i+1]) with, for each, the writes
    that may still matter (Accesses; none when never written: usually one, the last, but a write
    through a strided view keeps the earlier writes of the bytes between its elements) and the
    reads since."""

    __slots__ = ("base", "size", "device", "site", "api", "starts", "states")

    def __init__(self, base: int, size: int, device: int, site, api: str,
                 known: bool = True) -> None:
        self.base, self.size, self.device, self.site, self.api = base, size, device, site, api
        self.starts = [0]
        self.states: list[list] = [[[] if known else [_UNKNOWN], []]]

    def _split(self, off: int) -> int:
        i = bisect.bisect_right(self.starts, off) - 1
        if self.starts[i] == off:
            return i
        writes, reads = self.states[i]
        self.starts.insert(i + 1, off)
        self.states.insert(i + 1, [list(writes), list(reads)])
        return i + 1

    def end(self, k: int) -> int:
        return self.starts[k + 1] if k + 1 < len(self.starts) else self.size

    def span(self, lo: int, hi: int) -> tuple[int, int]:
        i = self._split(lo) if lo > 0 else 0
        j = self._split(hi) if hi < self.size else len(self.starts)
        return i, j

    def text(self, lo: int, hi: int) -> str:
        made = f", allocated by {self.api} at {site_text(self.site)}" if self.site else ""
        return (f"bytes [0x{self.base + lo:x}, 0x{self.base + hi:x}) (offsets {lo}..{hi} of the "
                f"{self.size}-byte device allocation 0x{self.base:x}{made})")


def _advice(a: Op, b: Op) -> str:
    if HOST in (a.agent, b.agent):
        return ("Synchronize the stream (aclrtSynchronizeStream, or aclrtSynchronizeEvent on an "
                "event recorded after its task) before the host touches the bytes")
    return ("Order them with aclrtRecordEvent after the first and aclrtStreamWaitEvent before "
            "the second, or synchronize in between")


def _join(into: dict, other: dict) -> None:
    for k, v in other.items():
        if into.get(k, 0) < v:
            into[k] = v


def _int(v) -> int:
    return 0 if v is None else int(v) & U64


def _plan_accesses(ex: aclOpExecutor) -> list[tuple[str, list[tuple]]]:
    """Per task of an executor's plan: (step name, [(writes, base slot, offset, bytes, tensor
    name, pattern)]), the reads first: the device ranges of its C templates, each matched with
    the plan buffer it came from (executor.lower lists a step's non-empty sources, then its
    destination); the pattern (strided.pattern) is None for a contiguous view."""
    out = []
    for step, t in zip(ex.plan.steps, ex.templates):
        bufs = [b for b in (*step.srcs, step.dst) if b.span()[1]]
        touched = []
        for j in range(min(t.nranges, len(bufs))):
            r = t.ranges[j]
            b = bufs[j]
            write = j == len(bufs) - 1 and b is step.dst
            touched.append((write, int(r.base), int(r.ptr), int(r.nbytes), b.label or b.where,
                            strided.pattern(b.shape, b.strides, dtypes.itemsize(b.dtype))))
        touched.sort(key=lambda a: a[0])  # reads first
        out.append((step.name, touched))
    return out


def _host_accesses(ex: aclOpExecutor) -> list[tuple[str, list[tuple]]]:
    """A custom operator's launch as one task (step: the operator's name) that reads every
    input tensor and writes every output tensor: the bytes of each view at the address bound
    now (absolute: base slot -1), with its strided pattern (None for a contiguous view)."""
    touched = []
    for write, pairs, addrs in ((False, ex.inputs, ex.in_addrs),
                                (True, ex.outputs, ex.out_addrs)):
        for (label, t), addr in zip(pairs, addrs):
            if t is None or t.is_empty():
                continue
            touched.append((write, -1, (addr + t.lo) & U64, t.hi - t.lo, label,
                            strided.pattern(t.view_dims, t.strides, t.itemsize)))
    op = getattr(getattr(ex.host, "op", None), "name", None) or "Kernel"
    return [(op, touched)]


class Checker:
    """The state of the checkers named in ``checks`` (a subset of race, init, leak)."""

    def __init__(self, checks: frozenset, operators: tuple = ()) -> None:
        """``operators``: the phase-2 names of custom operators loaded before the checker
        started (wrap.adopt); later ones come through add_operators."""
        self.race = "race" in checks
        self.init = "init" in checks
        self.leak = "leak" in checks
        self.lock = threading.RLock()
        self.host: dict = {HOST: 0}
        self.streams: dict[int, dict] = {}  # stream -> its clock
        self.events: dict[int, dict] = {}  # event -> the clock of its last record
        # destroyed streams: their clock entries are gone (everything they did is ordered before
        # what follows their destroy); the shadows forget their accesses every SWEEP of them
        self.retired: set[int] = set()
        self.dying: list[int] = []  # drained by a call that may destroy them (see _drained)
        self.shadows: dict[int, Shadow] = {}  # allocation base -> shadow
        self.bases: list[int] = []  # the shadows' bases, sorted (kept by _add / _drop)
        self.plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # plan -> accesses
        self.pending: list[tuple[int, str]] = []
        self.seen: set = set()
        self.suppressed = 0
        # leak: what the program created, with where
        self.host_allocs: dict[int, tuple] = {}  # ptr -> (size, site)
        self.stream_sites: dict[int, tuple] = {}  # stream -> (device, site, api)
        self.event_sites: dict[int, tuple] = {}  # event -> (site, api)
        self.context_sites: dict[int, tuple] = {}  # context -> (device, site)
        self.device_sets: dict[int, list] = {}  # device -> sites of aclrtSetDevice
        self.executors: dict[int, tuple] = {}  # id -> (weakref, site, op)
        post: dict[str, Callable] = {
            "aclrtMalloc": self._malloc, "aclrtFree": self._free,
            "aclrtMallocHost": self._malloc_host, "aclrtFreeHost": self._free_host,
            "aclrtMemcpy": self._memcpy, "aclrtMemcpyAsync": self._memcpy_async,
            "aclrtMemset": self._memset, "aclrtMemsetAsync": self._memset_async,
            "aclrtCreateStream": self._create_stream,
            "aclrtCreateStreamWithConfig": self._create_stream,
            "aclrtDestroyStream": self._destroy_stream,
            "aclrtCreateEvent": self._create_event, "aclrtCreateEventWithFlag": self._create_event,
            "aclrtCreateEventExWithFlag": self._create_event,
            "aclrtDestroyEvent": self._destroy_event, "aclrtRecordEvent": self._record_event,
            "aclrtStreamWaitEvent": self._wait_event,
            "aclrtSynchronizeStream": self._synchronized,
            "aclrtSynchronizeStreamWithTimeout": self._synchronized,
            "aclrtSynchronizeDevice": self._synchronized,
            "aclrtSynchronizeEvent": self._synchronized,
            "aclrtSynchronizeEventWithTimeout": self._synchronized,
            "aclrtSynchronizeDeviceWithTimeout": self._synchronized,
            "aclrtQueryEventStatus": self._queried,
            "aclrtQueryEvent": self._queried, "aclrtStreamQuery": self._queried,
            "aclrtSetDevice": self._set_device, "aclrtResetDevice": self._reset_device,
            "aclrtCreateContext": self._create_context,
            "aclrtDestroyContext": self._destroy_context,
            "aclFinalize": self._finalize, "aclDestroyAclOpExecutor": self._destroy_executor,
        }
        pre: dict[str, Callable] = {
            "aclrtSynchronizeStream": self._pre_sync_stream,
            "aclrtSynchronizeStreamWithTimeout": self._pre_sync_stream,
            "aclrtSynchronizeDevice": self._pre_sync_device,
            "aclrtSynchronizeEvent": self._pre_event, "aclrtQueryEventStatus": self._pre_event,
            "aclrtSynchronizeEventWithTimeout": self._pre_event,
            "aclrtSynchronizeDeviceWithTimeout": self._pre_sync_device,
            "aclrtQueryEvent": self._pre_event, "aclrtStreamQuery": self._pre_sync_stream,
            "aclrtResetDevice": self._pre_reset_device,
            "aclrtDestroyContext": self._pre_destroy_context, "aclFinalize": self._pre_finalize,
        }
        from ..ops import REGISTRY

        for op in list(REGISTRY) + list(operators):
            post[op] = self._launch
            post[op + "GetWorkspaceSize"] = self._phase1
        # only the calls the enabled checkers need go through them
        if not (self.race or self.init):
            for api in _MEMORY_ONLY:
                post.pop(api, None)
                pre.pop(api, None)
        if not self.leak:
            for api in list(post):
                if api in _LEAK_ONLY or api.endswith("GetWorkspaceSize"):
                    del post[api]
        self._post, self._pre = post, pre
        self.post_hooks = frozenset(post)
        self.pre_hooks = frozenset(pre)
        atexit.register(self._at_exit)

    def add_operators(self, names: list[str]) -> None:
        """Custom operators loaded since the checker started (wrap.adopt): their phases go
        through the same hooks as the built-in operators'."""
        with self.lock:
            for name in names:
                if name.endswith("GetWorkspaceSize"):
                    if self.leak:
                        self._post[name] = self._phase1
                else:
                    self._post[name] = self._launch
            self.post_hooks = frozenset(self._post)

    # ----------------------------------------------------------------------- entry points ----

    def pre(self, api: str, vals: tuple) -> Any:
        try:
            with self.lock:
                return self._pre[api](vals)
        except Exception:  # a checker must never break the program it checks
            LOG.exception("internal error of the checkers before %s (the call runs normally)",
                          api)
            return None

    def post(self, api: str, vals: tuple, result: Any, state: Any) -> Any:
        try:
            with self.lock:
                return self._post[api](api, vals, result, state)
        except Exception:
            LOG.exception("internal error of the checkers after %s (its result is unchanged)",
                          api)
            return result

    def restart(self) -> None:
        """fork(): in the child, forget the parent's streams, events and memory and start afresh
        with the same checks."""
        atexit.unregister(self._at_exit)
        ops = tuple(api for api, hook in self._post.items()
                    if hook == self._launch and not api.endswith("GetWorkspaceSize"))
        self.__init__(frozenset(name for name in ("race", "init", "leak")  # type: ignore[misc]
                                if getattr(self, name)), ops)

    def close(self) -> None:
        """The checkers are switched off (the configuration changed): report what is left."""
        with self.lock:
            self._flush("when the checkers were switched off")
        atexit.unregister(self._at_exit)

    def _at_exit(self) -> None:
        with self.lock:
            self._flush("at exit")

    # ----------------------------------------------------------------------------- clocks ----

    def _stream(self, stream) -> Optional[int]:
        """The handle of a stream argument (None / 0: the current context's default stream)."""
        h = rt.ptr(stream)
        if h:
            return h
        ctx = rt.current()
        st = ctx.default_stream if ctx is not None else None
        return st.handle if st is not None else None

    def _clock(self, h: int) -> dict:
        vc = self.streams.get(h)
        if vc is None:
            vc = self.streams[h] = {h: 0}
        return vc

    def _enqueue(self, h: int) -> tuple[dict, int]:
        """A task enqueued on stream h now: its clock and its tick. Under ACL_LAUNCH_BLOCKING=1
        the call waited for the stream, as a synchronize does (see _blocked)."""
        vc = self._clock(h)
        _join(vc, self.host)
        vc[h] = vc.get(h, 0) + 1
        clk = vc[h]
        if h not in rt.S.streams:
            # destroyed by another thread since the call enqueued: the destroy drains the
            # stream, this task included
            self._drained(h)
            self._retire_dead()
        return vc, clk

    def _blocked(self, h: int) -> None:
        """After an enqueue on h: with ACL_LAUNCH_BLOCKING=1 the call returned once the stream
        had run the task, so what follows on the host is ordered after it."""
        try:
            blocking = config.launch_blocking()
        except config.ConfigError:
            return
        if blocking:
            _join(self.host, self.streams.get(h, {}))

    def _host_tick(self) -> int:
        self.host[HOST] += 1
        return self.host[HOST]

    # ----------------------------------------------------------------------------- memory ----

    def _add(self, sh: Shadow) -> None:
        if sh.base not in self.shadows:
            bisect.insort(self.bases, sh.base)
        self.shadows[sh.base] = sh

    def _drop(self, base: int) -> Optional[Shadow]:
        sh = self.shadows.pop(base, None)
        if sh is not None:
            del self.bases[bisect.bisect_left(self.bases, base)]
        return sh

    def _shadow(self, addr: int) -> Optional[Shadow]:
        i = bisect.bisect_right(self.bases, addr) - 1
        if i >= 0:
            sh = self.shadows[self.bases[i]]
            if addr < sh.base + sh.size:
                return sh
        base, size, device = rt.find(addr)
        if not base:
            return None  # host memory
        # an allocation the checker did not see made (before it was switched on)
        sh = Shadow(base, size, device, None, "", known=False)
        self._add(sh)
        return sh

    def _unordered(self, other: Access, vc: dict) -> bool:
        """Whether an earlier access of another agent is not ordered before one with clock vc
        (a destroyed stream's accesses are all ordered before what follows its destroy)."""
        return vc.get(other[0], 0) < other[1] and other[0] not in self.retired

    def _touch(self, addr: int, nbytes: int, write: bool, vc: dict, clk: int, op: Op,
               arg: str, pat: Optional[tuple] = None) -> None:
        """One access to device bytes [addr, addr + nbytes): checked, then recorded. ``pat``:
        the strided pattern of a view (strided.pattern) whose span these bytes are, None when
        the access covers them all."""
        if nbytes <= 0 or not (self.race or self.init):
            return
        sh = self._shadow(addr)
        if sh is None:
            return  # host memory
        lo = addr - sh.base
        hi = min(lo + nbytes, sh.size)
        i, j = sh.span(lo, hi)
        placed = None if pat is None else (lo, pat[0], pat[1])
        agent = op.agent
        me: Access = (agent, clk, op, arg, placed)
        conflicts: list[list] = []  # [lo, hi, other access, other is a write]
        uninit: list[list] = []
        meets = strided.meets

        def note(into: list, s: int, e: int, *what) -> None:
            if into and into[-1][1] == s and into[-1][2:] == list(what):
                into[-1][1] = e
            else:
                into.append([s, e, *what])

        for k in range(i, j):
            s, e = sh.starts[k], sh.end(k)
            writes, reads = sh.states[k]
            if self.race:
                for w in writes:
                    if w[0] != agent and self._unordered(w, vc) and (
                            (placed is None and w[4] is None) or meets(w[4], placed, s, e)):
                        note(conflicts, s, e, w, True)
                if write:
                    for r in reads:
                        if r[0] != agent and self._unordered(r, vc) and (
                                (placed is None and r[4] is None) or meets(r[4], placed, s, e)):
                            note(conflicts, s, e, r, False)
            if not write:
                if self.init and not writes and (placed is None or meets(placed, None, s, e)):
                    note(uninit, s, e)
                if reads:  # this agent's earlier reads of the same bytes are ordered before
                    reads[:] = [r for r in reads
                                if r[0] != agent or not strided.covers(placed, r[4])]
                reads.append(me)
                if len(reads) > MAX_ENTRIES:
                    self._bound(reads, False)
            elif placed is not None:  # the bytes between the view's elements keep their past
                writes[:] = [w for w in writes if not strided.covers(placed, w[4])]
                writes.append(me)
                reads[:] = [r for r in reads if not strided.covers(placed, r[4])]
                if len(writes) > MAX_ENTRIES:
                    self._bound(writes, True)
        if write and placed is None:  # one interval, written by this access
            del sh.starts[i + 1:j]
            del sh.states[i + 1:j]
            sh.states[i] = [[me], []]
        verb = "writes" if write else "reads"
        for s, e, other, other_write in conflicts:
            o: Op = other[2]
            views = (" (strided views: elements of both lie in these bytes)"
                     if placed is not None or other[4] is not None else "")
            self._report(("race", op.key(), arg, write, o.key(), other[3], other_write),
                         FAULT_KERNEL if op.kernel else FAULT_DMA,
                         f"race: {op.name()} {verb} '{arg}' {op.where} (called at "
                         f"{site_text(op.site)}), and {o.name()} "
                         f"{'writes' if other_write else 'reads'} '{other[3]}' {o.where} "
                         f"(called at {site_text(o.site)}), with nothing ordering the two: "
                         f"{sh.text(s, e)}{views}. {_advice(op, o)}")
        for s, e in uninit:
            self._report(("init", op.key(), arg), FAULT_KERNEL if op.kernel else FAULT_DMA,
                         f"init: {op.name()} reads '{arg}' {op.where} (called at "
                         f"{site_text(op.site)}): {sh.text(s, e)} were never written since "
                         "their allocation (fresh device memory holds the ACLNN_EMU_POISON byte)")

    def _bound(self, entries: list, writes: bool) -> None:
        """An interval kept more than MAX_ENTRIES accesses of one kind (strided views that do not
        cover each other). Drop those ordered before the host, which nothing to come can race
        with (every later access is ordered after the host's clock of now); if still too many,
        widen the oldest to the whole interval and keep one per agent of those: reports then
        err on the side of a race the exact bytes would not show, never miss one."""
        host = self.host
        keep = [a for a in entries
                if a[0] is not None and host.get(a[0], 0) < a[1] and a[0] not in self.retired]
        if writes and not keep:
            keep = [_UNKNOWN]  # written before everything to come (for the init checker)
        if len(keep) > MAX_ENTRIES:
            old, keep = keep[:-MAX_ENTRIES // 2], keep[-MAX_ENTRIES // 2:]
            latest: dict = {}
            for a in old:  # one agent's later access is ordered after its earlier ones
                latest[a[0]] = (a[0], a[1], a[2], a[3], None)
            keep = list(latest.values()) + keep
        entries[:] = keep

    def _report(self, key: tuple, code: int, text: str) -> None:
        if key in self.seen or len(self.pending) >= MAX_PENDING:
            self.suppressed += 1
            return
        self.seen.add(key)
        self.pending.append((code, text))

    def _deliver(self, api: str, result: Any) -> Any:
        """A synchronize: log and record the pending reports; the first one's code when the
        synchronize itself succeeded."""
        if not self.pending:
            return result
        pending, self.pending = self.pending, []
        for code, text in pending:
            LOG.error("%s", text)
            record(api, code, f"ACLNN_EMU_CHECK: {text}")
        if result == 0:
            return pending[0][0]
        return result

    def _flush(self, when: str) -> None:
        pending, self.pending = self.pending, []
        for _code, text in pending:
            LOG.error("%s (found after the last synchronize; reported %s)", text, when)
        if self.suppressed:
            LOG.error("ACLNN_EMU_CHECK: %d more report(s) repeating an earlier one (same calls, "
                      "same places) were not shown", self.suppressed)
            self.suppressed = 0

    # ------------------------------------------------------------------------- the calls ----

    def _malloc(self, api, vals, result, state):
        ptr, ret = result
        if ret == 0 and ptr:
            base, size, device = rt.find(ptr)
            if base:
                self._add(Shadow(base, size, device, user_site(), api))
        return result

    def _free(self, api, vals, result, state):
        if result != 0:
            return result
        sh = self._drop(_int(vals[0]))
        if sh is not None and self.race:
            self._freed(sh, Op(api, "", HOST, False, user_site()))
        return result

    def _freed(self, sh: Shadow, op: Op) -> None:
        """aclrtFree as a host write of the whole allocation: an access of a queued task not
        ordered before it would use freed memory."""
        self._host_tick()
        vc = self.host
        for k in range(len(sh.starts)):
            writes, reads = sh.states[k]
            s, e = sh.starts[k], sh.end(k)
            others = [(w, True) for w in writes
                      if w[0] not in (None, HOST) and self._unordered(w, vc)]
            others += [(r, False) for r in reads if r[0] != HOST and self._unordered(r, vc)]
            for other, other_write in others:
                o: Op = other[2]
                self._report(("race", op.key(), "devPtr", True, o.key(), other[3], other_write),
                             FAULT_DMA,
                             f"race: {op.name()} frees 'devPtr' {op.where} (called at "
                             f"{site_text(op.site)}), and {o.name()} "
                             f"{'writes' if other_write else 'reads'} '{other[3]}' {o.where} "
                             f"(called at {site_text(o.site)}), with nothing ordering the two: "
                             f"{sh.text(s, e)}. Synchronize the stream before freeing memory "
                             "its tasks use")

    def _malloc_host(self, api, vals, result, state):
        ptr, ret = result
        if ret == 0 and ptr and self.leak:
            self.host_allocs[ptr] = (_int(vals[0]), user_site())
        return result

    def _free_host(self, api, vals, result, state):
        if result == 0:
            self.host_allocs.pop(_int(vals[0]), None)
        return result

    def _copy(self, api: str, h: Optional[int], dst: int, src: int, count: int) -> None:
        if h is None:
            op = Op(api, "", HOST, False, user_site())
            vc, clk = self.host, self._host_tick()
        else:
            op = Op(api, "", h, False, user_site())
            vc, clk = self._enqueue(h)
        self._touch(src, count, False, vc, clk, op, "src")
        self._touch(dst, count, True, vc, clk, op, "dst")
        if h is not None:
            self._blocked(h)

    def _memcpy(self, api, vals, result, state):
        if result == 0:
            self._copy(api, None, _int(vals[0]), _int(vals[2]), _int(vals[3]))
        return result

    def _memcpy_async(self, api, vals, result, state):
        if result == 0 and _int(vals[3]):
            self._copy(api, self._stream(vals[5]), _int(vals[0]), _int(vals[2]), _int(vals[3]))
        return result

    def _memset(self, api, vals, result, state):
        if result == 0 and _int(vals[3]):
            op = Op(api, "", HOST, False, user_site())
            self._touch(_int(vals[0]), _int(vals[3]), True, self.host, self._host_tick(), op,
                        "devPtr")
        return result

    def _memset_async(self, api, vals, result, state):
        if result == 0 and _int(vals[3]):
            h = self._stream(vals[4])
            if h is not None:
                op = Op(api, "", h, False, user_site())
                vc, clk = self._enqueue(h)
                self._touch(_int(vals[0]), _int(vals[3]), True, vc, clk, op, "devPtr")
                self._blocked(h)
        return result

    def _phase1(self, api, vals, result, state):
        _ws, ex, ret = result
        if ret == 0 and ex is not None and self.leak:
            self.executors[id(ex)] = (weakref.ref(ex), user_site(), api)
        return result

    def _destroy_executor(self, api, vals, result, state):
        if result == 0:
            self.executors.pop(id(vals[0]), None)
        return result

    def _launch(self, api, vals, result, state):
        ex = vals[2]
        if type(ex) is not aclOpExecutor:
            return result
        if ex.state is not READY:
            self.executors.pop(id(ex), None)
        if result != 0 or not ex.ntasks or not (self.race or self.init):
            return result
        h = self._stream(vals[3])
        if h is None:
            return result
        if ex.host is not None:  # a custom operator's kernel: its tensors, as bound now
            accesses = _host_accesses(ex)
        else:
            accesses = self.plans.get(ex.plan)
            if accesses is None:
                accesses = self.plans[ex.plan] = _plan_accesses(ex)
        site = user_site()
        vc, clk = self._enqueue(h)
        bases = ex.bases
        for step, touched in accesses:
            op = Op(api, step, h, True, site)
            for write, slot, offset, nbytes, name, pat in touched:
                addr = (bases[slot] + offset) & U64 if slot >= 0 else offset
                self._touch(addr, nbytes, write, vc, clk, op, name, pat)
        self._blocked(h)
        return result

    # ----------------------------------------------------------------- streams and events ----

    def _create_stream(self, api, vals, result, state):
        h, ret = result
        if ret == 0 and h and self.leak:
            st = rt.S.streams.get(h)
            self.stream_sites[h] = (st.device if st is not None else -1, user_site(), api)
        return result

    def _drained(self, h: int) -> None:
        """Stream h ran all its tasks and the host waited: a destroy, or what destroys it
        (aclrtResetDevice, aclrtDestroyContext, aclFinalize); _retire_dead forgets it once it
        is gone."""
        _join(self.host, self.streams.pop(h, {}))
        self.dying.append(h)

    def _retire_dead(self) -> None:
        """Forget the clock entries of the drained streams that no longer exist, so that the
        clocks hold only live streams (and the cost of a call does not grow with the number of
        streams a program ever made): their accesses are ordered before everything to come,
        which self.retired says to _unordered until the shadows forget them (_sweep)."""
        dying, self.dying = self.dying, []
        for h in dying:
            if h in rt.S.streams:  # drained, not destroyed (the call failed): still a stream
                continue
            self.host.pop(h, None)
            for vc in self.streams.values():
                vc.pop(h, None)
            for vc in self.events.values():
                vc.pop(h, None)
            self.retired.add(h)
        if len(self.retired) > SWEEP:
            self._sweep()

    def _sweep(self) -> None:
        """Drop the destroyed streams' accesses from the shadows (a write becomes _UNKNOWN, so
        the init checker still sees the bytes written), then forget the streams."""
        gone = self.retired
        for sh in self.shadows.values():
            for state in sh.states:
                writes, reads = state
                if any(w[0] in gone for w in writes):
                    kept = [w for w in writes if w[0] not in gone]
                    state[0] = kept or [_UNKNOWN]
                if any(r[0] in gone for r in reads):
                    state[1] = [r for r in reads if r[0] not in gone]
        self.retired = set()

    def _destroy_stream(self, api, vals, result, state):
        if result == 0:
            h = _int(vals[0])
            self._drained(h)  # destroy waits for the stream's tasks
            self._retire_dead()
            self.stream_sites.pop(h, None)
        return result

    def _create_event(self, api, vals, result, state):
        h, ret = result
        if ret == 0 and h and self.leak:
            self.event_sites[h] = (user_site(), api)
        return result

    def _destroy_event(self, api, vals, result, state):
        if result == 0:
            h = _int(vals[0])
            self.event_sites.pop(h, None)
            self.events.pop(h, None)
        return result

    def _record_event(self, api, vals, result, state):
        if result == 0:
            h = self._stream(vals[1])
            if h is not None:
                vc, _ = self._enqueue(h)
                self.events[_int(vals[0])] = dict(vc)
                self._blocked(h)
        return result

    def _wait_event(self, api, vals, result, state):
        if result == 0:
            h = self._stream(vals[0])
            if h is not None:
                vc = self._clock(h)
                _join(vc, self.host)
                _join(vc, self.events.get(_int(vals[1]), {}))
        return result

    def _pre_sync_stream(self, vals):
        h = self._stream(vals[0])
        return dict(self.streams.get(h, {})) if h is not None else {}

    def _pre_sync_device(self, vals):
        ctx = rt.current()
        snap: dict = {}
        if ctx is not None:
            for h, st in list(rt.S.streams.items()):
                if st.device == ctx.device and not st.private:
                    _join(snap, self.streams.get(h, {}))
        return snap

    def _pre_event(self, vals):
        return dict(self.events.get(_int(vals[0]), {}))

    def _synchronized(self, api, vals, result, state):
        if result in _SYNC_DONE and state:
            _join(self.host, state)
        return self._deliver(api, result)

    def _queried(self, api, vals, result, state):
        status, ret = result
        # complete: aclrtEventRecordedStatus 1; aclrtEventStatus and aclrtStreamStatus 0
        done = _EVENT_COMPLETE if api == "aclrtQueryEventStatus" else 0
        if ret == 0 and status == done and state:
            _join(self.host, state)
        return result

    # ------------------------------------------------------------------ devices, contexts ----

    def _set_device(self, api, vals, result, state):
        if result == 0 and self.leak:
            self.device_sets.setdefault(_int(vals[0]), []).append(user_site())
        return result

    def _pre_reset_device(self, vals):
        device = _int(vals[0])
        if rt.S.device_refs.get(device) != 1:
            return None
        for h, st in list(rt.S.streams.items()):  # the last reset drains them
            if st.device == device:
                self._drained(h)
        if self.leak:
            self._leak_report(f"aclrtResetDevice({device})", self._device_objects(device))
        return device

    def _reset_device(self, api, vals, result, state):
        if result != 0:
            return result
        device = _int(vals[0])
        if state is None:  # not the last reference
            sets = self.device_sets.get(device)
            if sets:
                sets.pop()
            return result
        self._forget_device(device)
        self._retire_dead()
        self._flush(f"at aclrtResetDevice({device})")
        return result

    def _device_objects(self, device: int) -> list[str]:
        items = []
        for sh in self.shadows.values():
            if sh.device == device and sh.api:
                items.append(f"device memory 0x{sh.base:x} ({sh.size} bytes) from {sh.api} at "
                             f"{site_text(sh.site)}")
        for h, (dev, site, api) in self.stream_sites.items():
            if dev == device:
                items.append(f"stream 0x{h:x} from {api} at {site_text(site)}")
        for h, (dev, site) in self.context_sites.items():
            if dev == device:
                items.append(f"context 0x{h:x} from aclrtCreateContext at {site_text(site)}")
        return items

    def _forget_device(self, device: int) -> None:
        self.device_sets.pop(device, None)
        for base in [b for b, sh in self.shadows.items() if sh.device == device]:
            self._drop(base)
        for table in (self.stream_sites, self.context_sites):
            for h in [h for h, v in table.items() if v[0] == device]:
                del table[h]

    def _create_context(self, api, vals, result, state):
        h, ret = result
        if ret == 0 and h and self.leak:
            self.context_sites[h] = (_int(vals[0]), user_site())
        return result

    def _pre_destroy_context(self, vals):
        ctx = rt.S.contexts.get(_int(vals[0]))
        return [st.handle for st in ctx.streams] if ctx is not None else []

    def _destroy_context(self, api, vals, result, state):
        if result == 0:
            self.context_sites.pop(_int(vals[0]), None)
            for h in state or ():
                self._drained(h)
                self.stream_sites.pop(h, None)
            self._retire_dead()
        return result

    def _pre_finalize(self, vals):
        if not rt.S.initialized:
            return None
        if self.leak:
            items = []
            for device, sites in sorted(self.device_sets.items()):
                for site in sites:
                    items.append(f"device {device}, set by aclrtSetDevice at {site_text(site)} "
                                 "and never reset (aclrtResetDevice)")
                items += self._device_objects(device)
            for h, (site, api) in self.event_sites.items():
                items.append(f"event 0x{h:x} from {api} at {site_text(site)}")
            for ptr, (size, site) in self.host_allocs.items():
                items.append(f"host memory 0x{ptr:x} ({size} bytes) from aclrtMallocHost at "
                             f"{site_text(site)}")
            for ref, site, api in self.executors.values():
                ex = ref()
                if ex is None:
                    how = "never launched or destroyed; the program dropped its last reference"
                elif ex.state is not READY:
                    continue
                elif ex.repeatable:
                    how = "repeatable, never destroyed with aclDestroyAclOpExecutor"
                else:
                    how = "single-use, never launched nor destroyed"
                items.append(f"executor of {api[:-len('GetWorkspaceSize')]} ({how}) from {api} "
                             f"at {site_text(site)}")
            self._leak_report("aclFinalize", items)
        for h, st in list(rt.S.streams.items()):  # finalize drains every device
            if not st.private:
                self._drained(h)
        return True

    def _finalize(self, api, vals, result, state):
        if result == 0 and state:
            self._retire_dead()
            self._flush("at aclFinalize")
            self.shadows.clear()
            self.bases.clear()
            self.stream_sites.clear()
            self.context_sites.clear()
            self.device_sets.clear()
            self.event_sites.clear()
            self.events.clear()
            self.host_allocs.clear()
            self.executors.clear()
        return result

    def _leak_report(self, when: str, items: list[str]) -> None:
        if not items:
            return
        lines = "\n".join(f"  - {item}" for item in items)
        LOG.warning("leak: at %s, %d object(s) the program created %s still alive:\n%s", when,
                    len(items), "is" if len(items) == 1 else "are", lines)


__all__ = ["Checker", "Op", "Shadow", "LOG", "FAULT_KERNEL", "FAULT_DMA"]
