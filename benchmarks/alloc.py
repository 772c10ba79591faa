"""Device-allocation benchmark: what aclrtMalloc's poison costs against NumPy filling as much.

    python benchmarks/alloc.py [--sizes 1G,256M] [--rounds R] [--loop-size 300M]
                               [--loop-rounds L]

A fresh device allocation is filled with the ACLNN_EMU_POISON byte (0xff by default: NaN in
every float type; docs/runtime.md "Device memory"), so aclrtMalloc of n bytes writes n bytes of
memory the process has never touched. Its baseline is ``np.full(n // 4, np.nan, np.float32)``,
which does the same: fresh pages from the system, every byte written. Each round times, in this
order and in one process: ``acl.rt.malloc`` (through the public API), ``acl.rt.free``, and
``np.full`` of the same bytes (then dropped). Figures are medians over R rounds; the ratio is
aclrtMalloc's median over np.full's.

The loop rows time what a program that frees and allocates a buffer again pays per round
(``free`` then ``malloc`` of the loop size, against dropping and refilling an np.full array),
and give the time of 1100 such rounds from the median (the issue's program).

Timings on a shared virtual machine vary a lot from round to round (a page the guest has not
touched for a while can cost the host a fault of its own): compare the ratio, and rerun.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from aclnn_py import acl, config


def parse_sizes(text: str) -> list[int]:
    return [config.parse_size(s, "--sizes") for s in text.split(",") if s]


def fmt_size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def one_round(size: int) -> tuple[float, float, float]:
    clock = time.perf_counter
    t0 = clock()
    p, ret = acl.rt.malloc(size, 0)
    t1 = clock()
    assert ret == 0, acl.get_recent_err_msg()
    assert acl.rt.free(p) == 0
    t2 = clock()
    x = np.full(size // 4, np.nan, dtype=np.float32)
    t3 = clock()
    del x
    return t1 - t0, t2 - t1, t3 - t2


def loop_rounds(size: int, rounds: int) -> tuple[list[float], list[float]]:
    """Per-round times of free + malloc again, and of dropping + refilling an np.full array,
    interleaved round by round."""
    clock = time.perf_counter
    p, ret = acl.rt.malloc(size, 0)
    assert ret == 0, acl.get_recent_err_msg()
    held = [np.full(size // 4, np.nan, dtype=np.float32)]
    dev, host = [], []
    for _ in range(rounds):
        t0 = clock()
        assert acl.rt.free(p) == 0
        p, ret = acl.rt.malloc(size, 0)
        t1 = clock()
        assert ret == 0, acl.get_recent_err_msg()
        held.clear()
        held.append(np.full(size // 4, np.nan, dtype=np.float32))
        t2 = clock()
        dev.append(t1 - t0)
        host.append(t2 - t1)
    assert acl.rt.free(p) == 0
    return dev, host


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1G,256M,16M", help="allocation sizes (K/M/G)")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--loop-size", default="300M")
    parser.add_argument("--loop-rounds", type=int, default=15)
    args = parser.parse_args()

    assert acl.init(None) == 0 and acl.rt.set_device(0) == 0
    enabled, byte = config.poison()
    print(f"poison: {f'0x{byte:02x}' if enabled else 'off'}; medians of {args.rounds} rounds "
          "(malloc, free, np.full interleaved)")
    print(f"{'size':>9s} {'aclrtMalloc':>12s} {'aclrtFree':>10s} {'np.full':>9s} "
          f"{'malloc/np.full':>15s} {'GB/s':>6s}")
    for size in parse_sizes(args.sizes):
        one_round(size)  # warm up: the device's address space, NumPy's first pages
        times = [one_round(size) for _ in range(args.rounds)]
        m, f, n = (statistics.median(col) for col in zip(*times))
        print(f"{fmt_size(size):>9s} {m * 1e3:9.1f} ms {f * 1e3:7.1f} ms {n * 1e3:6.1f} ms "
              f"{m / n:15.2f} {size / m / 1e9:6.2f}")
    if args.loop_rounds:
        size = config.parse_size(args.loop_size, "--loop-size")
        dev, host = loop_rounds(size, args.loop_rounds)
        d, h = statistics.median(dev), statistics.median(host)
        print(f"\nfree + malloc again of {fmt_size(size)}, medians of {args.loop_rounds} rounds")
        print(f"{'':24s} {'per round':>10s} {'1100 rounds':>12s}")
        print(f"{'aclrtFree + aclrtMalloc':24s} {d * 1e3:7.1f} ms {d * 1100:10.1f} s")
        print(f"{'del + np.full':24s} {h * 1e3:7.1f} ms {h * 1100:10.1f} s")
        print(f"{'ratio':24s} {d / h:10.2f}")
    acl.rt.reset_device(0)
    acl.finalize()


if __name__ == "__main__":
    main()
