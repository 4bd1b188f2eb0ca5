"""QDQ building blocks shared by make.py and quantize.py: calibration of scales and zero points,
weight quantization, a float reference convolution, and a graph builder that wraps tensors in
QuantizeLinear/DequantizeLinear the way ONNX Runtime's quantizer does."""
import numpy as np
from onnx import helper, numpy_helper


def conv2d(x, w, b, pad, stride, group=1):
    """Float reference convolution (NCHW), for calibration only. pad: one number or ONNX's
    [top, left, bottom, right]."""
    top, left, bottom, right = (pad,) * 4 if np.isscalar(pad) else pad
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh, ow = (h + top + bottom - kh) // stride + 1, (wd + left + right - kw) // stride + 1
    y = np.zeros((n, m, oh, ow), np.float32)
    mg = m // group
    for g in range(group):
        xg, wg = xp[:, g * cg:(g + 1) * cg], w[g * mg:(g + 1) * mg]
        for i in range(oh):
            for j in range(ow):
                patch = xg[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
                y[:, g * mg:(g + 1) * mg, i, j] = np.tensordot(patch, wg, axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, -1, 1, 1)


def activation_qparams(v):
    """uint8 asymmetric scale and zero point covering [min(v, 0), max(v, 0)]."""
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    return scale, np.uint8(np.clip(np.rint(-lo / scale), 0, 255))


def weight_qparams(w, axis):
    """int8 symmetric scales, per slice along `axis` (None: per tensor)."""
    if axis is None:
        return np.float32(np.abs(w).max() / 127.0)
    other = tuple(i for i in range(w.ndim) if i != axis)
    return (np.abs(w).max(axis=other) / 127.0).astype(np.float32)


def quantize_weight(w, scale, axis):
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    return np.clip(np.rint(w / np.reshape(scale, shape)), -127, 127).astype(np.int8)


class QdqGraph:
    """Collects nodes and initializers; every float tensor between ops goes through Q -> DQ."""

    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, name, value):
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def qdq(self, name, value):
        """Q then DQ of activation `name` with parameters calibrated on its float value."""
        scale, zp = activation_qparams(value)
        s, z = self.const(f"{name}_scale", scale), self.const(f"{name}_zp", zp)
        self.nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [f"{name}_q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", s, z], [f"{name}_dq"]))
        return f"{name}_dq", scale

    def weight(self, name, w, axis):
        """DQ of an int8 weight; returns the DQ output, the dequantized weight and its scale."""
        scale = weight_qparams(w, axis)
        q = quantize_weight(w, scale, axis)
        zp = np.zeros_like(scale, dtype=np.int8) if axis is not None else np.int8(0)
        ins = [self.const(f"{name}_q", q), self.const(f"{name}_scale", scale), self.const(f"{name}_zp", zp)]
        self.nodes.append(helper.make_node("DequantizeLinear", ins, [f"{name}_dq"], **({"axis": axis} if axis is not None else {})))
        shape = [1] * w.ndim
        if axis is not None:
            shape[axis] = -1
        return f"{name}_dq", q.astype(np.float32) * np.reshape(scale, shape), scale

    def bias(self, name, b, x_scale, w_scale):
        """DQ of an int32 bias with scale x_scale * w_scale, zero point 0 (the QLinearConv convention)."""
        scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        q = np.rint(b / scale).astype(np.int32)
        self.nodes.append(helper.make_node("DequantizeLinear", [self.const(f"{name}_q", q), self.const(f"{name}_scale", scale)],
                                           [f"{name}_dq"], axis=0))
        return f"{name}_dq", q.astype(np.float32) * scale
