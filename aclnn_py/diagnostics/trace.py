"""The timeline trace (``ACLNN_EMU_TRACE=FILE.json``): a Chrome / Perfetto trace of the program.

- every public API call is a complete event ("X") on its host thread's track (pid: this process,
  tid: the OS thread id), with its return code and, for copies and fills, the byte count;
- every task a stream runs is an "X" event on the stream's track, from the real start and end
  times the C core records (the streams of device ``d`` form the pseudo-process
  ``DEVICE_PID + d``, one track per stream), with a flow arrow from the API call that enqueued
  it;
- an event record and the stream waits on it are joined by a flow arrow;
- "M" metadata events name the processes and the tracks.

The trace is bounded: it keeps the most recent ``ACLNN_EMU_TRACE_EVENTS`` API calls and as many
tasks (config.trace_events, 100 000 by default); older ones are dropped and counted, and a
trace that lost some says so (``otherData`` and a global instant event "trace truncated").

The file is written at aclFinalize and at exit (to a temporary file, then renamed, so it is
never half-written). The C core records the tasks only while tracing is on (one flag tested per
task otherwise). docs/diagnostics.md shows a trace.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
from collections import deque
from typing import Any, Optional

from .. import config
from .. import runtime as rt
from ..enums import TaskType

DEVICE_PID = 1 << 24  # above any Linux pid: the emulated devices' pseudo-processes
_BYTES_OF = {"aclrtMemcpy": "count", "aclrtMemcpyAsync": "count", "aclrtMemset": "count",
             "aclrtMemsetAsync": "count", "aclrtMalloc": "size", "aclrtMallocHost": "size"}
_TASK_NAMES = {int(TaskType.MEMCPY): "memcpy", int(TaskType.MEMSET): "memset",
               int(TaskType.EVENT_RECORD): "record", int(TaskType.EVENT_WAIT): "wait",
               int(TaskType.EVENT_RESET): "reset", int(TaskType.KERNEL): "kernel"}


class Tracer:
    """Collects API calls and task records; writes the trace file."""

    def __init__(self, path: str, capacity: Optional[int] = None) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.pid = os.getpid()
        self.t0 = rt.now_ns()
        if capacity is None:
            try:
                capacity = config.trace_events()
            except config.ConfigError:  # reported by acl.init; the default meanwhile
                capacity = config.DEFAULT_TRACE_EVENTS
        self.capacity = capacity
        # the most recent calls and tasks: (api, tid, t0, t1, ret, raised, bytes), and
        # rt.trace_drain() records
        self.calls: deque[tuple] = deque(maxlen=capacity)
        self.tasks: deque[tuple] = deque(maxlen=capacity)
        self.threads: dict[int, str] = {}
        self.ncalls = 0  # every call and every drained task seen
        self.ntasks = 0
        self.dropped_c = 0  # tasks the C buffer dropped between two drains
        self.reported = (0, 0)  # the dropped counts of the last events()
        self.closed = False
        rt.trace_enable(True)
        atexit.register(self.write)

    # ---------------------------------------------------------------------------- recording --

    def api_call(self, api: str, t0: int, t1: int, names: tuple, args: tuple,
                 ret: Optional[int], raised: Optional[str] = None) -> None:
        if os.getpid() != self.pid:  # a forked child: the trace is the parent's
            return
        tid = threading.get_native_id()
        nbytes = None
        key = _BYTES_OF.get(api)
        if key and key in names:
            i = names.index(key)
            if i < len(args) and isinstance(args[i], int):
                nbytes = int(args[i])
        with self.lock:
            if tid not in self.threads:
                self.threads[tid] = threading.current_thread().name
            self.calls.append((api, tid, t0, t1, ret, raised or None, nbytes))
            self.ncalls += 1
        if api in ("aclrtSynchronizeStream", "aclrtSynchronizeDevice", "aclrtSynchronizeEvent"):
            self.drain()  # keep the C buffer small
        elif api == "aclFinalize":
            self.write()

    def drain(self) -> None:
        records, dropped = rt.trace_drain()
        with self.lock:
            self.tasks.extend(records)
            self.ntasks += len(records)
            self.dropped_c = dropped

    @property
    def dropped_calls(self) -> int:
        """API calls seen and no longer kept."""
        return self.ncalls - len(self.calls)

    @property
    def dropped_tasks(self) -> int:
        """Tasks run and not kept: dropped here (the oldest) or by the C buffer."""
        return self.ntasks - len(self.tasks) + self.dropped_c

    # ------------------------------------------------------------------------------ output ----

    def _us(self, ns: int) -> float:
        return (ns - self.t0) / 1000.0

    def events(self) -> list[dict]:
        """The trace's events (after draining the C buffer)."""
        self.drain()
        with self.lock:
            calls = list(self.calls)
            tasks = list(self.tasks)
            threads = dict(self.threads)
            dropped_calls, dropped_tasks = self.dropped_calls, self.dropped_tasks
        self.reported = (dropped_calls, dropped_tasks)
        pid = self.pid
        out: list[dict] = [
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
             "args": {"name": f"host (pid {pid})"}},
            {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
             "args": {"sort_index": 0}},
        ]
        if dropped_calls or dropped_tasks:
            first = min([c[2] for c in calls[:1]] + [t[9] for t in tasks[:1]] or [self.t0])
            out.append({"ph": "i", "s": "g", "cat": "aclnn-py", "name": "trace truncated",
                        "pid": pid, "tid": 0, "ts": self._us(first),
                        "args": {"dropped_api_calls": dropped_calls,
                                 "dropped_tasks": dropped_tasks,
                                 "kept_per_kind": self.capacity,
                                 "why": "the trace keeps the most recent ACLNN_EMU_TRACE_EVENTS "
                                        "API calls and tasks; older ones were dropped"}})
        for tid, name in sorted(threads.items()):
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                        "args": {"name": f"{name} (tid {tid})"}})
        for api, tid, t0, t1, ret, raised, nbytes in calls:
            info: dict[str, Any] = {}
            if ret is not None:
                info["ret"] = ret
            if raised:
                info["raised"] = raised
            if nbytes is not None:
                info["bytes"] = nbytes
            out.append({"ph": "X", "cat": "api", "name": api, "pid": pid, "tid": tid,
                        "ts": self._us(t0), "dur": max((t1 - t0) / 1000.0, 0.001),
                        "args": info})
        tracks: dict[int, tuple[int, int]] = {}  # stream -> (pid, tid)
        devices: set[int] = set()
        flows: dict[tuple[int, int], int] = {}  # (event, record seq) -> flow id
        for (stream, device, kind, _kernel, status, enq_tid, run_tid, flow, enq_ns, start_ns,
             end_ns, n, event, seq, op, step) in tasks:
            track = tracks.get(stream)
            if track is None:
                dpid = DEVICE_PID + device
                track = tracks[stream] = (dpid, len(tracks) + 1)
                if device not in devices:
                    devices.add(device)
                    out.append({"ph": "M", "name": "process_name", "pid": dpid, "tid": 0,
                                "args": {"name": f"device {device} (emulated)"}})
                    out.append({"ph": "M", "name": "process_sort_index", "pid": dpid, "tid": 0,
                                "args": {"sort_index": 1 + device}})
                out.append({"ph": "M", "name": "thread_name", "pid": dpid, "tid": track[1],
                            "args": {"name": f"stream 0x{stream:x}"}})
            dpid, stid = track
            args: dict[str, Any] = {"stream": f"0x{stream:x}", "task": _TASK_NAMES.get(kind, kind),
                                    "ran_on_tid": run_tid}
            if n:
                args["bytes"] = n
            if status == -1:
                args["skipped"] = "an earlier task of the stream faulted"
            elif status:
                args["fault"] = status
            name = f"{op}: {step}" if step else op
            out.append({"ph": "X", "cat": "task", "name": name, "pid": dpid, "tid": stid,
                        "ts": self._us(start_ns), "dur": max((end_ns - start_ns) / 1000.0, 0.001),
                        "args": args})
            if flow and enq_tid:
                out.append({"ph": "s", "cat": "enqueue", "name": "enqueue", "id": flow,
                            "pid": pid, "tid": enq_tid, "ts": self._us(enq_ns)})
                out.append({"ph": "f", "bp": "e", "cat": "enqueue", "name": "enqueue",
                            "id": flow, "pid": dpid, "tid": stid, "ts": self._us(start_ns)})
            if event and kind in (TaskType.EVENT_RECORD, TaskType.EVENT_WAIT) and seq > 0:
                fid = flows.get((event, seq))
                if fid is None:
                    fid = flows[(event, seq)] = (1 << 40) + len(flows)
                if kind == TaskType.EVENT_RECORD:
                    out.append({"ph": "s", "cat": "event", "name": "event", "id": fid,
                                "pid": dpid, "tid": stid, "ts": self._us(start_ns)})
                else:
                    out.append({"ph": "f", "bp": "e", "cat": "event", "name": "event",
                                "id": fid, "pid": dpid, "tid": stid,
                                "ts": self._us(max(end_ns - 1, start_ns))})
        return out

    def write(self) -> None:
        """Write the trace file (all the events so far)."""
        if os.getpid() != self.pid:  # a forked child: the file is the parent's
            return
        events = self.events()
        dropped_calls, dropped_tasks = self.reported  # the counts of these events
        doc = {"traceEvents": events, "displayTimeUnit": "ms",
               "otherData": {"producer": "aclnn-py", "dropped_api_calls": dropped_calls,
                             "dropped_tasks": dropped_tasks, "kept_per_kind": self.capacity}}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except OSError as exc:
            import logging

            logging.getLogger("aclnn_py.trace").error(
                "ACLNN_EMU_TRACE=%s: cannot write the trace: %s", self.path, exc)

    def discard(self) -> None:
        """Tracing stops and nothing is written (a process that only starts the traced one)."""
        if self.closed:
            return
        self.closed = True
        rt.trace_enable(False)
        atexit.unregister(self.write)

    def close(self) -> None:
        """Tracing stops (the configuration changed): write what was gathered."""
        if self.closed:
            return
        self.closed = True
        self.write()
        rt.trace_enable(False)
        atexit.unregister(self.write)


__all__ = ["Tracer", "DEVICE_PID"]
