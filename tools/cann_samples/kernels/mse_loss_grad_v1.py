"""MseLossGradV1 (cann-ops math/mse_loss_grad_v1; op_host definition): the gradient of the mean
squared error, y = 2 * (predict - label) * dout, divided by the element count when the string
attribute reduction is "mean" (not for "sum" or "none"); in the inputs' dtype."""

import numpy as np


def mse_loss_grad_v1(predict, label, dout, y, reduction="mean"):
    cof = 2.0
    if reduction == "mean":
        cof = 2.0 / max(int(np.prod(predict.shape)), 1)
    diff = np.subtract(predict, label)
    np.multiply(diff * np.asarray(cof, dtype=diff.dtype), dout, out=y, casting="unsafe")
