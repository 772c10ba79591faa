"""ForeachAddList (cann-ops foreach/foreach_add_list; op_host definition through cann-ops'
FOREACH_OPDEF macro): for the tensor lists x1 and x2 (dynamic inputs) and a one-element tensor
alpha, each y[i] = x1[i] + x2[i] * alpha, written into the dynamic output list y."""

import numpy as np


def foreach_add_list(x1, x2, alpha, y):
    a = np.asarray(alpha).reshape(-1)[0]
    for out, a1, a2 in zip(y, x1, x2):
        np.add(a1, np.multiply(a2, a, dtype=out.dtype), out=out, casting="unsafe")
