"""Inputs and golden data of the AddCustom test: two float16 [8, 2048] tensors and their sum."""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def main():
    rng = np.random.default_rng(2026)
    x = rng.uniform(-4, 4, (8, 2048)).astype(np.float16)
    y = rng.uniform(-4, 4, (8, 2048)).astype(np.float16)
    golden = (x.astype(np.float64) + y.astype(np.float64)).astype(np.float16)
    for sub in ("input", "output"):
        os.makedirs(os.path.join(ROOT, sub), exist_ok=True)
    x.tofile(os.path.join(ROOT, "input", "input_x.bin"))
    y.tofile(os.path.join(ROOT, "input", "input_y.bin"))
    golden.tofile(os.path.join(ROOT, "output", "golden.bin"))


if __name__ == "__main__":
    main()
