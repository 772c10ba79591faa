"""Compares the program's output with the golden data (float16, CANN's 1e-3 tolerance); prints
"test pass" and exits 0, or names the first mismatches and exits 1."""

import sys

import numpy as np

TOLERANCE = 1e-3


def main(output, golden):
    out = np.fromfile(output, dtype=np.float16)
    ref = np.fromfile(golden, dtype=np.float16)
    if out.shape != ref.shape:
        print(f"[ERROR] {out.size} values, expected {ref.size}")
        return 1
    diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
    bad = np.nonzero(diff > TOLERANCE * np.maximum(1.0, np.abs(ref.astype(np.float64))))[0]
    for i in bad[:10]:
        print(f"[ERROR] index {i}: {out[i]} expected {ref[i]}")
    if bad.size:
        print(f"[ERROR] {bad.size} of {ref.size} values differ")
        return 1
    print("test pass")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
