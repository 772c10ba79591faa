"""NonFiniteCheck (cann-ops math/non_finite_check; op_host definition): found_flag[0] = 1.0 if
any element of any tensor of the dynamic input tensor_list is inf or nan, else 0.0."""

import numpy as np


def non_finite_check(tensor_list, found_flag):
    found = any(not np.all(np.isfinite(t)) for t in tensor_list)
    found_flag[...] = 1.0 if found else 0.0
