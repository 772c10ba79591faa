"""ReduceCustom (CANN's operator samples, 14_reduce_frameworklaunch): the sum of all of x,
written to z[0]; the Ascend C kernel reduces one vector with WholeReduceSum / BlockReduceSum and
copies out one block, whose first element is the sum (the sample's host program reads z[0]).
The rest of z is zeroed here."""

import numpy as np


def reduce_custom(x, z):
    total = np.sum(x, dtype=np.float32)
    z[...] = 0
    z.reshape(-1)[0] = total
