"""The kernel of the test project's AddCustom operator: z = x + y in the tensors' dtype."""

import numpy as np


def add_custom(x, y, z):
    np.add(x, y, out=z)
