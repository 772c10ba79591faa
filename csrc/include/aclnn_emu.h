/*
 * aclnn_emu.h: the one C interface of aclnn-py.
 *
 * Everything between CDEF-BEGIN and CDEF-END is read verbatim by aclnn_py/_build.py as the cffi
 * cdef, and every C source includes this same file, so Python and C cannot drift. Keep that part
 * free of preprocessor conditionals and of anything cffi's cdef parser does not understand.
 *
 * Conventions: addresses cross the boundary as uintptr_t (Python passes plain ints); element
 * strides and shapes are int64_t; dtype codes are CANN's aclDataType values.
 */
#ifndef ACLNN_EMU_H
#define ACLNN_EMU_H

#include <stddef.h>
#include <stdint.h>

/* CDEF-BEGIN */

/* dtype codes (aclDataType values) understood by the kernels */
#define ACLK_F32 0
#define ACLK_F16 1
#define ACLK_I8 2
#define ACLK_I32 3
#define ACLK_U8 4
#define ACLK_F64 11
#define ACLK_BF16 27
#define ACLK_F8_E5M2 35  /* SoftmaxEx only (oneDNN's f8 data) */
#define ACLK_F8_E4M3 36  /* FLOAT8_E4M3FN: no infinities, NaN = S.1111.111 */

#define EMU_MAX_DIMS 8
#define EMU_MAX_RANGES 3
#define EMU_MSG_LEN 512
#define EMU_MAX_DEVICES 64
#define EMU_DEVICE_VA_BYTES 0x20000000000
    /* 2 TiB of virtual addresses reserved per device on its first allocation */
#define EMU_MAX_MEM_LIMIT 0x10000000000
    /* 1 TiB: the largest per-device memory limit the address space holds */

/* emu_mem_check_range results */
#define EMU_MEM_OK 0
#define EMU_MEM_HOST 1       /* not in any device's address range: host memory */
#define EMU_MEM_PAST_END 2   /* starts in a live allocation but runs past its end */
#define EMU_MEM_NOT_LIVE 3   /* in a device's range, outside every live allocation */

/* ---------------------------------------------------------------- kernels (csrc/kernels) ----
 * Each returns 0, or -1 for a dtype it does not implement. Kernels never allocate, never touch
 * the allocation table, and never read or write outside the extents they are given.
 * Float16 and bfloat16 are computed in float32 and stored rounded to nearest even; float64 is
 * computed in float64. Softmax-family tensors are contiguous and seen as outer x axis x inner. */
int aclk_softmax_fwd(int dtype, const void *x, void *y,
                     int64_t outer, int64_t axis, int64_t inner, int log_softmax);
int aclk_softmax_bwd(int dtype, const void *grad, const void *y, void *out,
                     int64_t outer, int64_t axis, int64_t inner, int log_softmax);
int aclk_hardsigmoid_fwd(int dtype, const void *x, void *y, int64_t n, double alpha, double beta);
int aclk_hardsigmoid_bwd(int dtype, const void *grad, const void *x, void *out, int64_t n,
                         double alpha, double beta);
int aclk_cast(int src_dtype, const void *src, int dst_dtype, void *dst, int64_t n);
int aclk_strided_copy(int64_t elem_size, int ndim, const int64_t *shape,
                      const void *src, const int64_t *src_strides,
                      void *dst, const int64_t *dst_strides);
/* Kernel threads (runtime/pool.c): one pool shared by every stream; at most n threads compute
   kernel chunks at once in the whole process. set_num_threads(n), 1 <= n <= EMU_MAX_THREADS
   (clamped), takes effect for the next kernel and may be called at any time from any thread;
   the default is 1 until Python applies ACLNN_EMU_NUM_THREADS. */
#define EMU_MAX_THREADS 1024
int aclk_num_threads(void);
void aclk_set_num_threads(int n);
/* The benchmark floor (runtime/pool.c): same-footprint memory operations on the kernel pool.
   copy: dst = src, nbytes bytes; add: out = a + b as 32-bit words (wrapping), nbytes bytes (a
   multiple of 4). */
void aclk_floor_copy(void *dst, const void *src, int64_t nbytes);
void aclk_floor_add(const void *a, const void *b, void *out, int64_t nbytes);
/* The benchmark's compute probe (runtime/pool.c): n chunks of a fixed float workload in L1, no
   memory traffic, on the kernel pool; n <= 0 does nothing. */
void aclk_probe(int64_t n);
/* TEST HOOKS of the pool (tests/test_threads.py), not an API:
   emu_test_parallel_sum(n, grain): aclk_parallel_for over [0, n); 0 if every item was visited
   exactly once in chunks [k*grain, min((k+1)*grain, n)), -1 if not, -2 out of memory.
   emu_test_parallel_busy(nchunks, chunk_us): a parallel_for of nchunks chunks that each
   busy-wait chunk_us microseconds. emu_test_parallel_overhead_us(nchunks, reps): the mean time
   of a parallel_for of nchunks empty chunks. emu_test_pool_track(1) starts counting the threads
   that compute chunks of split kernels (and zeroes the peak; call it while no kernel runs),
   emu_test_pool_track(0) stops; emu_test_pool_peak(): the most seen at once.
   emu_test_pool_workers(): the pool's worker threads (0 before the pool exists).
   emu_test_pool_min_stack(nchunks): a parallel_for of nchunks chunks of 2 ms each; the smallest
   stack size (bytes) of the pool workers that ran one, 0 if none did, -1 where the C library
   cannot tell (not glibc). */
int emu_test_parallel_sum(int64_t n, int64_t grain);
void emu_test_parallel_busy(int64_t nchunks, int64_t chunk_us);
double emu_test_parallel_overhead_us(int64_t nchunks, int64_t reps);
int64_t emu_test_pool_min_stack(int64_t nchunks);
void emu_test_pool_track(int on);
int emu_test_pool_peak(void);
int emu_test_pool_workers(void);
/* The instruction-set level the kernels were dispatched to at load ("generic", "avx2",
   "avx512"). */
const char *aclk_isa_name(void);
/* Testing hook: the level (0 generic, 1 avx2, 2 avx512) whose code the last kernel built once
   per level ran (kernels/vecmath.h's ACLK_LEVELS: the chunks of the softmax family's 32-bit
   compute and of SoftmaxEx's float32 compute, its post-ops), -1 if none ran since the last
   call (each call forgets it). */
int emu_test_isa_ran(void);
/* The last-level cache this CPU shares, in bytes (kernels/isa.c): sysfs's cpu0 cache index3
   (the cache of its core complex), else sysconf, else 32 MiB. */
int64_t aclk_llc_bytes(void);
/* The last-level cache the store policy assumes: ACLNN_EMU_LLC (bytes, or a K / M / G suffix,
   64K to 64G; other values ignored) if set, else aclk_llc_bytes(). Outputs above half of it
   are written with non-temporal stores (kernels and benchmark floor alike). */
int64_t aclk_store_llc_bytes(void);
/* Plain reference kernels (reference.c): same signatures and dtypes as the entry points above,
   the last implementation each entry point falls back to, and the tests' oracle. The softmax
   family computes every dtype in float64 and rounds once to the output dtype. */
int aclk_ref_softmax_fwd(int dtype, const void *x, void *y,
                         int64_t outer, int64_t axis, int64_t inner, int log_softmax);
int aclk_ref_softmax_bwd(int dtype, const void *grad, const void *y, void *out,
                         int64_t outer, int64_t axis, int64_t inner, int log_softmax);
int aclk_ref_hardsigmoid_fwd(int dtype, const void *x, void *y, int64_t n, double alpha,
                             double beta);
int aclk_ref_hardsigmoid_bwd(int dtype, const void *grad, const void *x, void *out, int64_t n,
                             double alpha, double beta);
/* The name of the implementation the entry point runs for these arguments ("float32",
   "float64", "vector", "reference"), or NULL for a dtype it does not implement. */
const char *aclk_softmax_fwd_impl(int dtype, int64_t outer, int64_t axis, int64_t inner);
const char *aclk_softmax_bwd_impl(int dtype, int64_t outer, int64_t axis, int64_t inner);
const char *aclk_hardsigmoid_fwd_impl(int dtype, int64_t n);
const char *aclk_hardsigmoid_bwd_impl(int dtype, int64_t n);

/* Accumulation modes of the softmax family (oneDNN's accumulation-mode attribute;
   ACLNN_EMU_ACCUMULATION, functional's accumulation=). STRICT is the default and the only mode of
   aclk_softmax_fwd / aclk_softmax_bwd. RELAXED and ANY let float16 / bfloat16 data be computed
   with cheaper arithmetic, every output within 2 ulp of its dtype of the float64 result (the
   backward operators, whose results cancel toward zero: or within 2^-10 of the largest |term|
   of the output's slice), over an axis of at most EMU_RELAXED_MAX_AXIS elements: their float32
   sums lose up to axis * 2^-24 of themselves, so longer axes run the strict kernels (the plans
   ask for relaxed only up to that length: aclnn_py/ops/softmax.py RELAXED_MAX_AXIS, and the
   runtime checks it again). */
#define EMU_RELAXED_MAX_AXIS 8192
#define EMU_ACC_STRICT 0
#define EMU_ACC_RELAXED 1
#define EMU_ACC_ANY 2
/* The relaxed kernels (kernels/softmax_relaxed.c): the signatures of aclk_softmax_fwd /
   aclk_softmax_bwd, float16 and bfloat16 only (-1 for any other dtype). */
int aclk_softmax_fwd_relaxed(int dtype, const void *x, void *y,
                             int64_t outer, int64_t axis, int64_t inner, int log_softmax);
int aclk_softmax_bwd_relaxed(int dtype, const void *grad, const void *y, void *out,
                             int64_t outer, int64_t axis, int64_t inner, int log_softmax);

/* oneDNN's forward softmax with attributes (kernels/softmax_ex.c): src and dst each float32,
   float16, bfloat16, float64, int8 or uint8; per element of the slice's softmax (log-softmax)
   value d, in benchdnn's reference order: d *= src_scale; the post-ops in order;
   d *= 1/dst_scale; conversion to dst (int8 / uint8: round half to even, saturate, NaN -> 0).
   Computed in float32, or in float64 when src or dst is float64. inf_as_zero (softmax only): a
   slice whose inputs are all -inf gives d = 0 instead of NaN. */
#define EMU_MAX_POST_OPS 8
/* post-op algorithms: eltwise 1..63, binary 64.. */
#define EMU_PO_RELU 1
#define EMU_PO_LINEAR 2
#define EMU_PO_CLIP 3
#define EMU_PO_CLIP_V2 4
#define EMU_PO_TANH 5
#define EMU_PO_LOGISTIC 6
#define EMU_PO_EXP 7
#define EMU_PO_LOG 8
#define EMU_PO_ABS 9
#define EMU_PO_SQUARE 10
#define EMU_PO_SQRT 11
#define EMU_PO_SWISH 12
#define EMU_PO_GELU_ERF 13
#define EMU_PO_GELU_TANH 14
#define EMU_PO_ELU 15
#define EMU_PO_HARDSIGMOID 16
#define EMU_PO_HARDSWISH 17
#define EMU_PO_MISH 18
#define EMU_PO_POW 19
#define EMU_PO_ROUND 20
#define EMU_PO_SOFT_RELU 21
#define EMU_PO_ADD 64
#define EMU_PO_SUB 65
#define EMU_PO_MUL 66
#define EMU_PO_DIV 67
#define EMU_PO_MAX 68
#define EMU_PO_MIN 69
#define EMU_PO_GE 70
#define EMU_PO_GT 71
#define EMU_PO_LE 72
#define EMU_PO_LT 73
#define EMU_PO_EQ 74
#define EMU_PO_NE 75
#define EMU_PO_DROPOUT 76  /* d = t != 0 ? d * t : 0 (oneDNN's dropout, t = 1/(1-p) or 0) */
typedef struct emu_post_op {
    int32_t alg;        /* EMU_PO_* */
    float alpha;        /* eltwise parameters (oneDNN's alpha, beta) */
    float beta;
    int64_t src1;       /* binary: offset of src1 in the float32 src1 buffer, in elements */
    int64_t strides[8]; /* binary: src1's element strides over dst's dims (0 where it broadcasts) */
} emu_post_op;
typedef struct emu_softmax_ex_args {
    int64_t outer;      /* the tensor seen as outer x axis x inner, contiguous */
    int64_t axis;
    int64_t inner;
    int32_t ndim;       /* dst's shape (for the binary post-ops' broadcast), dim its softmax axis */
    int32_t dim;
    int64_t shape[8];
    int32_t log;        /* 1 = log-softmax */
    int32_t inf_as_zero;
    int32_t acc;        /* EMU_ACC_* (the kernel may ignore it: strict meets every bound) */
    int32_t n_post;
    float src_scale;
    float dst_scale;
    emu_post_op post[8];
} emu_softmax_ex_args;
int aclk_softmax_ex(const emu_softmax_ex_args *p, int src_dtype, const void *x,
                    const float *src1, int dst_dtype, void *y);

/* ------------------------------------------------------------- device memory (memory.c) ----
 * Each device is a range of reserved virtual addresses; allocations are carved out of it, so an
 * address is device memory exactly when it lies in a device's range. Every allocation has a
 * unique id; queued tasks carry the ids of the allocations they touch. Stream workers hold the
 * table's read lock while a task runs, so a free waits for the task that is using the memory. */
int emu_mem_alloc(int32_t device, uint64_t size, uint64_t limit, int poison, int poison_byte,
                  int pad, uintptr_t *out_ptr);
    /* 0, 100000 for a bad device or size 0, or 207001 past the limit / out of address space;
       207000 from a host kernel (it runs under the table's read lock). Charges
       round_up(size, 32), + 32 bytes if pad */
int emu_mem_free(uintptr_t ptr);
    /* 0, or 207002 if not a live base; 207000 from a host kernel */
int emu_mem_find(uintptr_t addr, uintptr_t *base, uint64_t *size, int32_t *device);  /* 1 found */
int emu_mem_find_freed(uintptr_t addr, uintptr_t *base, uint64_t *size);
    /* 1 if addr is not live but lies in one of the last 4096 freed allocations (messages only) */
int emu_mem_find_before(uintptr_t addr, uintptr_t *base, uint64_t *size);
    /* 1: the live allocation of addr's device with the highest base <= addr (messages) */
int emu_mem_check_range(uintptr_t addr, uint64_t nbytes, int32_t *device);
    /* EMU_MEM_*; *device is set for every result but EMU_MEM_HOST */
int64_t emu_mem_range_device(uintptr_t addr, uint64_t nbytes);
    /* the device of a range inside one live allocation, or -EMU_MEM_* (one call, no out-param) */
uint64_t emu_mem_free_epoch(void);
    /* moves at every free: while it has not, every range found live is still live */
int emu_mem_is_device(uintptr_t addr);                  /* 1 if addr lies in a device's range */
uint64_t emu_mem_used(int32_t device);                  /* bytes reserved (padded sizes) */
int64_t emu_mem_count(void);                            /* live allocations, all devices */
int emu_memcpy(uintptr_t dst, uintptr_t src, uint64_t n);
int emu_memset(uintptr_t dst, int value, uint64_t n);
    /* synchronous, under the read lock: 0, or EMU_MEM_NOT_LIVE / EMU_MEM_PAST_END (nothing
       written) when a side that lies in device memory is not inside one live allocation */
uintptr_t emu_host_alloc(uint64_t size);                /* 64-byte aligned, 0 on failure */
void emu_host_free(uintptr_t ptr);

/* ------------------------------------------------------------ streams and events --------- */
#define EMU_TASK_KERNEL 1
#define EMU_TASK_MEMCPY 2
#define EMU_TASK_MEMSET 3
#define EMU_TASK_EVENT_RECORD 4
#define EMU_TASK_EVENT_WAIT 5
#define EMU_TASK_EVENT_RESET 6
#define EMU_TASK_SLEEP 7

/* Kernel ids: the index into the kernel table (stream.c), which maps each id to an adapter that
   reads the task's per-family parameter struct and calls the kernel. */
#define EMU_K_SOFTMAX_FWD 1
#define EMU_K_SOFTMAX_BWD 2
#define EMU_K_HARDSIGMOID_FWD 3
#define EMU_K_HARDSIGMOID_BWD 4
#define EMU_K_CAST 5
#define EMU_K_STRIDED_COPY 6
#define EMU_K_SOFTMAX_EX 7
#define EMU_K_HOST 8        /* a host function: a custom operator's Python kernel (see below) */
#define EMU_K_COUNT 9

/* Status codes the C core returns (CANN's values; tests check them against aclnn_py.status). */
#define EMU_ACL_ERROR_INVALID_PARAM 100000
#define EMU_ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID 107006
#define EMU_ACL_ERROR_RT_INVALID_HANDLE 107017
#define EMU_ACL_ERROR_RT_FEATURE_NOT_SUPPORT 207000
#define EMU_ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define EMU_ACL_ERROR_RT_MEMORY_FREE 207002
#define EMU_ACL_ERROR_RT_NO_STREAM_RESOURCE 207008
#define EMU_ACL_ERROR_RT_EVENT_NOT_COMPLETE 507006
#define EMU_ACL_ERROR_RT_SYS_DMA 507013
#define EMU_ACL_ERROR_RT_AICORE_EXCEPTION 507015
#define EMU_LAUNCH_RANGE_NOT_LIVE 1
    /* emu_stream_launch: a bound range is not inside one live device allocation (nothing was
       enqueued; the caller finds which and says so) */

/* Per-family kernel parameters (emu_task.k) */
typedef struct emu_softmax_args {
    int64_t outer;      /* the tensor seen as outer x axis x inner, contiguous */
    int64_t axis;
    int64_t inner;
    int32_t log;        /* 1 = log-softmax */
    int32_t acc;        /* EMU_ACC_*: RELAXED / ANY run the relaxed kernels for 16-bit dtypes */
} emu_softmax_args;

typedef struct emu_eltwise_args {
    int64_t n;          /* elements */
    double alpha;
    double beta;
} emu_eltwise_args;

typedef struct emu_cast_args {
    int64_t n;          /* elements; dtype -> dtype2 */
} emu_cast_args;

typedef struct emu_copy_args {
    int64_t elem_size;  /* bytes */
    int32_t ndim;
    int64_t shape[8];
    int64_t src_strides[8];  /* elements */
    int64_t dst_strides[8];
} emu_copy_args;

typedef struct emu_host_args {
    uint64_t token;     /* what emu_set_host_kernel's function is called with */
} emu_host_args;

typedef struct emu_range {
    uintptr_t ptr;      /* device bytes the task touches, checked again when it runs */
    uint64_t nbytes;
    uint64_t alloc_id;  /* filled by emu_stream_submit: the allocation the range lies in */
    int32_t base;       /* emu_stream_launch: ptr is an offset from bases[base]; -1 = absolute */
    char name[32];      /* what the user calls it: "gradOutput", "out", "workspace", ... */
} emu_range;

typedef struct emu_task {
    int32_t type;       /* EMU_TASK_* */
    int32_t kernel;     /* EMU_K_* for EMU_TASK_KERNEL */
    int32_t dtype;      /* compute / source dtype */
    int32_t dtype2;     /* destination dtype */
    uintptr_t a;        /* first source */
    uintptr_t b;        /* second source (softmax_ex: the binary post-ops' float32 src1) */
    uintptr_t c;        /* destination */
    int32_t base[3];    /* emu_stream_launch: a, b, c are offsets from bases[base[i]]; -1 = absolute */
    union {
        emu_softmax_args softmax;
        emu_eltwise_args eltwise;
        emu_cast_args cast;
        emu_copy_args copy;
        emu_softmax_ex_args softmax_ex;
        emu_host_args host;
    } k;                /* EMU_TASK_KERNEL: the kernel family's parameters */
    int64_t n;          /* bytes (memcpy, memset), µs (sleep) */
    int32_t value;      /* memset byte */
    int32_t nranges;
    emu_range ranges[3];
    uintptr_t event;    /* EMU_TASK_EVENT_*: the event's handle */
    int64_t seq;        /* filled by emu_stream_submit */
    char op[64];        /* operator or runtime call that enqueued the task */
    char step[32];      /* plan step: "Contiguous", "Cast", "SoftmaxGrad", "ViewCopy", ... */
    int64_t trace_flow; /* filled by the enqueue while tracing is on: the task's id, */
    int64_t trace_ns;   /* when it was enqueued (CLOCK_MONOTONIC), */
    int32_t trace_tid;  /* and by which OS thread */
} emu_task;

/* Streams and events are handles (handle.c), not pointers: every call below returns 107017
   (ACL_ERROR_RT_INVALID_HANDLE) for a handle that is destroyed, never created, or the parent
   process's after fork(); status getters return -1 for one. */
uintptr_t emu_stream_create(int32_t device);            /* 0 if no thread or handle is left */
int emu_stream_destroy(uintptr_t stream);
    /* invalidates the handle at once, lets queued tasks finish, joins the worker; the memory
       goes after the last call still using the stream returns */
int emu_stream_submit(uintptr_t stream, const emu_task *tasks, int32_t n, int blocking,
                      char *msg, int msglen);
    /* enqueues; with blocking=1 waits until the stream drains and returns (and clears) its fault */
int emu_stream_launch(uintptr_t stream, const emu_task *templates, int32_t n,
                      const uintptr_t *bases, int32_t nbases, int blocking);
    /* an executor's phase 2: copies the templates, adds bases[] to the addresses and ranges
       that name one, and enqueues them (all or nothing). 0; EMU_LAUNCH_RANGE_NOT_LIVE;
       107017; 207008; with blocking=1 the stream's fault. Messages: emu_last_msg */
int emu_stream_synchronize(uintptr_t stream, char *msg, int msglen);
    /* waits for every task enqueued so far; returns the first fault since the last
       synchronize (0 if none) and its message, and clears it. When the stream's worker is
       idle, the calling thread runs the queued tasks itself (in FIFO order). msg may be NULL:
       the message is then kept for emu_last_msg */
int emu_last_msg(char *msg, int msglen);
    /* copies the message of this thread's last failing emu_stream_* call; its length */
int emu_stream_pending(uintptr_t stream);               /* tasks enqueued and not finished */
int32_t emu_stream_device(uintptr_t stream);
    /* the device a live stream was created on, or -1 */
uint64_t emu_ctx_epoch(void);
void emu_ctx_epoch_bump(void);
    /* a counter the Python runtime moves after every change of which contexts are live or
       current (set / reset device, create / destroy / set context, fork): while it has not
       moved, a thread's current context's default stream found earlier is still the one (the
       toolkit's C fast paths cache it per thread). fork() moves it too. */
int64_t emu_stream_tasks_run(uintptr_t stream);         /* tasks finished since creation */

uintptr_t emu_event_create(void);
int emu_event_destroy(uintptr_t event);     /* queued records and waits keep it alive */
int64_t emu_handle_count(int32_t kind);     /* live handles: 1 streams, 2 events */
int emu_event_status(uintptr_t event);  /* 0 never recorded, 1 recorded not done, 2 complete */
int emu_event_synchronize(uintptr_t event);
int emu_event_elapsed_ms(uintptr_t start, uintptr_t end, float *ms);
    /* 0; 107006 if either was never recorded; 507006 if either is not complete */

double emu_now_ms(void);

/* Host kernels (EMU_K_HOST tasks): the stream that reaches one calls fn(token, msg, msglen)
   under the allocation table's read lock (so no allocation is freed meanwhile; fn must not call
   the runtime's memory functions, which take that lock: emu_mem_range_device_locked is the one
   it may use). 0 = done; anything else = the kernel failed, msg holds why (the stream's fault
   is then ACL_ERROR_RT_AICORE_EXCEPTION). A task skipped because an earlier task of its stream
   faulted calls fn(token, NULL, 0), so that the caller can release what the token names. No
   function set: every host task faults. */
typedef int (*emu_host_fn)(uint64_t token, char *msg, int msglen);
void emu_set_host_kernel(emu_host_fn fn);
uintptr_t emu_host_task_stream(void);
    /* the stream whose host task the calling thread is running, or 0. From such a thread every
       call that waits for a stream (emu_stream_synchronize, emu_stream_destroy,
       emu_event_synchronize, a blocking submit or launch) returns 207000 at once, with a
       message (emu_last_msg when no buffer is passed), and does nothing. The child of a fork()
       made inside a host function ends (_exit: 0, or 1 when fn failed) when fn returns. */
int emu_host_forked(void);
    /* 1 in the forking thread of such a child (which ends when its host function returns) */
int64_t emu_mem_range_device_locked(uintptr_t addr, uint64_t nbytes);
    /* emu_mem_range_device for a caller that holds the read lock (a host kernel) */

/* Tracing (stream.c; ACLNN_EMU_TRACE). While emu_trace_enable(1) is in effect, every task a
   stream runs leaves one record: when it was enqueued (and by which thread), when it started and
   ended (and on which thread), and what it was. Off (the default), each enqueue and each task
   tests one flag. Records wait in a buffer of at most EMU_TRACE_MAX until drained; beyond that
   they are counted and dropped. Times are CLOCK_MONOTONIC nanoseconds (emu_now_ns). */
#define EMU_TRACE_MAX 262144
typedef struct emu_trace_rec {
    uintptr_t stream;   /* the stream's handle */
    int32_t device;
    int32_t type;       /* EMU_TASK_* */
    int32_t kernel;
    int32_t status;     /* 0 ran; -1 skipped (an earlier task of the stream faulted); a fault */
    int32_t enq_tid;    /* OS thread ids: the enqueuing thread, the thread that ran the task */
    int32_t run_tid;
    int64_t flow;       /* the task's id (emu_task.trace_flow), 0 if enqueued while off */
    int64_t enq_ns;
    int64_t start_ns;
    int64_t end_ns;
    int64_t n;          /* bytes (memcpy, memset) */
    uintptr_t event;    /* event tasks: the event object, and the record number (emu_task.seq) */
    int64_t seq;
    char op[64];
    char step[32];
} emu_trace_rec;
void emu_trace_enable(int on);
int64_t emu_trace_drain(emu_trace_rec *out, int64_t max);
    /* moves up to max records (oldest first) into out; returns how many */
int64_t emu_trace_dropped(void);            /* records dropped since the last enable(1) */
int64_t emu_now_ns(void);
int32_t emu_thread_id(void);                /* the calling thread's OS id (gettid) */

/* CDEF-END */

#endif /* ACLNN_EMU_H */
