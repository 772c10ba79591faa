"""The NumPy kernel of the AddCustom sample operator (add_custom.json): z = x + y.

A kernel gets the inputs (read-only arrays over device memory), then the outputs (writable), in
the order of the definition, and runs on the stream's worker when the stream reaches it. This
one computes in the tensors' own dtype, as the Ascend C kernel of CANN's AddCustom sample adds two
float16 vectors in float16.
"""

import numpy as np


def add_custom(x, y, z):
    np.add(x, y, out=z)
