#!/usr/bin/python3
"""QDQ placement generator: quantizes a float model the way the common quantizers lay it out,
calibrated with ONNX Runtime on the model's test inputs, and writes the expected outputs from
ONNX Runtime running the quantized model.

    styles.py SRC_DIR|vww|mobile|pools|tokens OUT_DIR STYLE...   (STYLE: see STYLES; `all` for every one)
    styles.py --corpus SHARED_MODELS_DIR OUT_DIR [--all-styles]
                                               the four models below into OUT_DIR/MODEL_STYLE
                                               (tests/models/quant/styles holds this output)

SRC_DIR is a float model folder (model.onnx, test_data_set_0/input_0.pb); `vww` builds a
MobileNetV1-0.25 (96 x 96 x 3, two classes, random weights from a fixed seed), `mobile` a small
MobileNetV3-like net with squeeze-and-excitation, HardSwish, Resize, Concat and attention, `pools`
four AveragePools, `tokens` a channel shuffle, exported GELU and attention (see mobile_float,
pools_float and tokens_float). OUT_DIR/STYLE gets
the quantized model and test_data_set_0 (SRC's input, ONNX Runtime's outputs).

Calibration: every float tensor of the (batch-norm folded) float model is made a graph output
and ONNX Runtime (node /work/ort/ort-run.mjs, or $ORT_RUN) runs it on the test input; each
activation's scale and zero point cover [min(v, 0), max(v, 0)] (per tensor). Weights are int8
symmetric (per tensor or per output channel), biases int32 with scale x_scale * w_scale except
in the FX style, which keeps them float as PyTorch's reference export does.

Styles (the names say activation type, weight granularity, and placement):
  qdq_u8_pt_fused   ONNX Runtime QDQ, uint8 asymmetric activations, per-tensor weights, a
                    Relu/Clip after Conv/Gemm/Add fused (only its output quantized)
  qdq_s8_pc_fused   the same with int8 symmetric activations (zero point 0) and per-channel weights
  qdq_u8_pc         ONNX Runtime QDQ without activation fusion: Q/DQ on every tensor
                    (Conv -> Q -> DQ -> Clip -> Q -> DQ -> Conv), per-channel weights
  qdq_s8_pt         the same with int8 asymmetric activations and per-tensor weights
  fx                PyTorch FX reference export: Conv+Relu fused, Q/DQ around every other op;
                    Clip (ReLU6), MaxPool, Flatten, Reshape and Pad share their input's
                    parameters; float bias; per-channel weights, uint8 activations
  qop               ONNX Runtime QOperator (uint8, per channel): QLinearConv, QLinearAdd,
                    QLinearGlobalAveragePool, QGemm, integer Flatten/Pad; Relu/Clip fused into the range
  tflite            a TFLite int8 model as tf2onnx converts it: the QOperator ops on int8 asymmetric
                    activations, per-channel weights with int8 zero points, the input NHWC,
                    quantized by a QuantizeLinear naming its axis, then transposed on the 8-bit tensor
  qdq_u8_pc_u8w     qdq_u8_pc with uint8 weights, symmetric (zero point 128, scale max|w| / 127.5), as
                    ONNX Runtime's quantizer writes weight_type=QUInt8 with symmetric weights
  pt2e              PyTorch 2's export quantization (XNNPACKQuantizer layout, written here without torch 2):
                    the FX placement on int8 asymmetric activations, per-channel weights, float bias,
                    each Linear as DQ(weight [out, in], axis 0) -> Transpose -> MatMul -> Add(bias)
  tflite_qdq        a TFLite int8 model as tf2onnx converts it to QDQ: int8 asymmetric activations, fused
                    activations, weights in TFLite's order (OHWI; depthwise 1HWO along axis 3) behind a
                    per-axis DequantizeLinear then a Transpose to ONNX's, FullyConnected as MatMul by the
                    transposed weight then Add of DQ(int32 bias), the input NHWC
  trt               TensorRT's explicit quantization as NVIDIA's pytorch-quantization exports it: int8
                    symmetric activations, Q/DQ only on the inputs of the operators run in int8 (Conv,
                    Gemm, MatMul, pooling; a residual Add's shortcut input), their outputs float (so a
                    Conv -> Relu -> MaxPool -> Q, a pooled Flatten -> Q); weights fake-quantized in the
                    graph (QuantizeLinear of the float weight per channel, then DequantizeLinear), float bias
FX also gives Sigmoid, HardSigmoid, Softmax (and Tanh) PyTorch's fixed output parameters.
Graph outputs are delivered dequantized (float), except after a final Softmax, which stays
float in every style (it reads the dequantized logits)."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from testdata import save  # noqa: E402
from quantize import attrs, fold_batchnorm  # noqa: E402
from qdq import quantize_weight, weight_qparams  # noqa: E402

ORT_RUN = os.environ.get("ORT_RUN", "/work/ort/ort-run.mjs")
STYLES = ["qdq_u8_pt_fused", "qdq_s8_pc_fused", "qdq_u8_pc", "qdq_s8_pt", "fx", "qop", "tflite", "qdq_u8_pc_u8w",
          "trt", "pt2e", "tflite_qdq"]
ACTIVATIONS = ("Relu", "Clip")
SHARED = ("Clip", "MaxPool", "Flatten", "Reshape", "Pad", "Transpose", "Squeeze", "Unsqueeze", "Slice", "Gather",
          "Resize")  # FX: output observer shared with the input
# FX: operators with fixed output parameters (PyTorch's fixed-qparams observers, uint8): their
# outputs lie in [0, 1] (Tanh in [-1, 1]) whatever the data.
# TensorRT's placement: Q/DQ on the inputs of the operators it runs in int8 (pytorch-quantization's
# quantized modules), the outputs float; a residual Add quantizes its identity input (the shortcut,
# a downsampling Conv's output included), not the main branch's Conv output.
TRT_QUANTIZED = ("Conv", "Gemm", "MatMul", "AveragePool", "GlobalAveragePool", "MaxPool", "Add")
FIXED = {"Sigmoid": (1.0 / 256, 0), "HardSigmoid": (1.0 / 256, 0), "Softmax": (1.0 / 256, 0), "Tanh": (2.0 / 256, 128)}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def ort_run(model, inputs):
    """ONNX Runtime's outputs of `model` for [(name, array)] inputs."""
    with tempfile.TemporaryDirectory() as d:
        save(d, model, inputs, [], check=False)
        subprocess.run(["node", ORT_RUN, d], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return [load_pb(os.path.join(d, "test_data_set_0", f"output_{k}.pb")) for k in range(len(model.graph.output))]


def constants_to_initializers(model):
    g = model.graph
    kept = []
    known = {t.name: t for t in g.initializer}
    for n in g.node:
        if n.op_type == "Identity" and n.input[0] in known:  # a shared weight under a second name
            t = onnx.TensorProto()
            t.CopyFrom(known[n.input[0]])
            t.name = n.output[0]
            g.initializer.append(t)
            known[t.name] = t
        elif n.op_type == "Constant":
            g.initializer.append(numpy_helper.from_array(numpy_helper.to_array(attrs(n)["value"]), n.output[0]))
        else:
            kept.append(n)
    del g.node[:]
    g.node.extend(kept)


def calibrate(model, inputs):
    """Every node output's float value on the inputs, from ONNX Runtime."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    names = [o for n in m.graph.node for o in n.output]
    del m.graph.output[:]
    m.graph.output.extend(helper.make_empty_tensor_value_info(o) for o in names)
    return dict(zip(names, ort_run(m, inputs)))


def act_qparams(v, dtype, symmetric):
    """Per-tensor scale and zero point covering [min(v, 0), max(v, 0)]."""
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    if symmetric:
        scale = np.float32(max(-lo, hi) / 127.0 or 1.0)
        return scale, np.int8(0)
    scale = np.float32((hi - lo) / 255.0 or 1.0)
    qmin = -128 if dtype == np.int8 else 0
    return scale, dtype(np.clip(qmin + np.rint(-lo / scale), qmin, qmin + 255))


class Quantizer:
    def __init__(self, model, values, style):
        self.model = model
        self.g = model.graph
        self.values = values
        self.style = style
        self.inits = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        self.readers = {}
        self.producer = {}
        for n in self.g.node:
            for i in n.input:
                self.readers.setdefault(i, []).append(n)
            for o in n.output:
                self.producer[o] = n
        s = style
        self.dtype = np.int8 if "_s8" in s else np.uint8
        self.trt = s == "trt"
        self.pt2e = s == "pt2e"
        self.fx_like = s in ("fx", "pt2e")  # Q/DQ around every op, Conv+Relu fused, shared and fixed parameters
        if self.trt or self.pt2e:
            self.dtype = np.int8
        self.symmetric = s in ("qdq_s8_pc_fused", "trt")  # qdq_s8a_pc_fused (the TFLite base): asymmetric
        self.per_channel = "_pc" in s or s in ("fx", "trt", "pt2e", "tflite_qdq")
        self.fused = s.endswith("_fused") or s in ("qop", "tflite_qdq")
        self.tflite_qdq = s == "tflite_qdq"
        if self.tflite_qdq:
            self.dtype = np.int8
        self.uint8_weights = s.endswith("_u8w")
        self.nodes, self.new_inits, self.params = [], [], {}

    def const(self, name, value):
        self.new_inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def fused_away(self, name):
        """A Conv/Gemm/Add output whose only reader is a Relu/Clip that the style fuses."""
        n = self.producer.get(name)
        r = self.readers.get(name, [])
        if n is None or len(r) != 1 or r[0].op_type not in ACTIVATIONS:
            return False
        if self.fx_like:
            return n.op_type == "Conv" and r[0].op_type == "Relu"
        return self.fused and n.op_type in ("Conv", "Gemm", "Add")

    def trt_reads_quantized(self, node, name):
        """TensorRT's placement: whether `node` reads activation `name` through Q -> DQ."""
        if node.op_type not in TRT_QUANTIZED:
            return False
        if node.op_type == "Add":  # the first input a Conv/Gemm wrote is the main branch, float
            main = [i for i in node.input if self.producer.get(i) is not None and self.producer[i].op_type in ("Conv", "Gemm")]
            return not main or name != main[0]
        if node.op_type == "MatMul":  # both operands of a product of two activations
            return name not in self.inits
        return name == node.input[0]

    def quantized(self, name):
        """Whether activation `name` gets Q -> DQ (is integer in the style)."""
        if name in self.inits or (name in self.values and self.values[name].dtype != np.float32):
            return False  # weights, and the integer shape computations
        if self.trt:
            return any(self.trt_reads_quantized(r, name) for r in self.readers.get(name, []))
        r = self.readers.get(name, [])
        if r and all(x.op_type == "Softmax" for x in r) and name not in [o.name for o in self.g.output]:
            return True  # Softmax reads dequantized logits
        if self.producer.get(name) is not None and self.producer[name].op_type == "Softmax" and \
                name in [o.name for o in self.g.output]:
            return False  # a final Softmax stays float
        return not self.fused_away(name)

    def qparams(self, name):
        if name not in self.params:
            n = self.producer.get(name)
            if (self.fx_like or self.style == "qop") and n is not None and n.op_type in SHARED and n.input[0] in self.params:
                self.params[name] = self.params[n.input[0]]
            elif self.fx_like and n is not None and n.op_type in FIXED:
                scale, zp = FIXED[n.op_type]
                self.params[name] = (np.float32(scale), self.dtype(zp - 128 if self.dtype == np.int8 else zp))
            else:
                self.params[name] = act_qparams(self.values[name], self.dtype, self.symmetric)
        return self.params[name]

    def qdq(self, name):
        scale, zp = self.qparams(name)
        s, z = self.const(f"{name}/scale", scale), self.const(f"{name}/zero_point", zp)
        self.nodes.append(helper.make_node("QuantizeLinear", [name, s, z], [f"{name}/q"]))
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{name}/q", s, z], [f"{name}/dq"]))

    def weight(self, name, axis):
        w = self.inits[name]
        scale = weight_qparams(w, axis if self.per_channel else None)
        q = quantize_weight(w, scale, axis if self.per_channel else None)
        if self.uint8_weights:  # ONNX Runtime's uint8 symmetric: zero point 128, scale max|w| / 127.5
            scale = (scale * np.float32(127.0 / 127.5)).astype(np.float32)
            shape = [1] * w.ndim
            if self.per_channel:
                shape[axis] = -1
            q = np.clip(np.rint(w / np.reshape(scale, shape)) + 128, 0, 255).astype(np.uint8)
        return q, scale

    def weight_zero_point(self, scale):
        if self.uint8_weights:
            return np.full_like(scale, 128, dtype=np.uint8)
        return np.zeros_like(scale, dtype=np.int8)

    def dq_const(self, name, q, scale, zp, axis):
        kw = {"axis": axis} if np.ndim(scale) else {}
        ins = [f"{name}/q", self.const(f"{name}/scale", scale)]
        if zp is not None:
            ins.append(self.const(f"{name}/zero_point", zp))
        if self.trt and zp is not None:  # fake quantization: Q(float weight) -> DQ, as TensorRT's exports
            shape = [1] * q.ndim
            if np.ndim(scale):
                shape[axis] = -1
            w = self.const(f"{name}/float", (q.astype(np.float32) * np.reshape(scale, shape)).astype(np.float32))
            self.nodes.append(helper.make_node("QuantizeLinear", [w] + ins[1:], [f"{name}/q"], **kw))
        else:
            self.const(f"{name}/q", q)
        self.nodes.append(helper.make_node("DequantizeLinear", ins, [f"{name}/dq"], **kw))
        return f"{name}/dq"

    def weighted(self, node, x_dq):
        """Conv/Gemm(transB=1) inputs: DQ(x), DQ(int8 weight), DQ(int32 bias) or the float bias."""
        if node.op_type == "Gemm" and attrs(node).get("transB", 0) != 1:
            sys.exit(f"{node.name}: only Gemm with transB=1 is supported")
        q, scale = self.weight(node.input[1], 0)
        ins = [x_dq, self.dq_const(node.input[1], q, scale, self.weight_zero_point(scale), 0)]
        if len(node.input) > 2:
            b = self.inits[node.input[2]]
            if self.style in ("fx", "trt", "pt2e"):
                ins.append(self.const(f"{node.input[2]}/float", b))
            else:
                b_scale = (np.float32(self.qparams(node.input[0])[0]) * scale).astype(np.float32)
                ins.append(self.dq_const(node.input[2], np.rint(b / b_scale).astype(np.int32), b_scale, None, 0))
        return ins

    def tflite_conv_inputs(self, node, x_dq):
        """tf2onnx's Conv of a TFLite model: the int8 weight in TFLite's order (OHWI, a depthwise
        one 1HWO quantized along its last axis) behind DequantizeLinear, then a Transpose to ONNX's."""
        ins = self.weighted(node, x_dq)
        self.nodes = [n for n in self.nodes if ins[1] not in n.output]  # the ONNX-order weight's DQ: not this style's
        w = self.inits[node.input[1]]
        q, scale = self.weight(node.input[1], 0)
        depthwise = attrs(node).get("group", 1) == w.shape[0] and w.shape[1] == 1 and w.shape[0] > 1
        order, back, axis = ((1, 2, 3, 0), [3, 0, 1, 2], 3) if depthwise else ((0, 2, 3, 1), [0, 3, 1, 2], 0)
        name = node.input[1] + "/tflite"
        dq = self.dq_const(name, np.ascontiguousarray(q.transpose(order)), scale, self.weight_zero_point(scale), axis)
        self.nodes.append(helper.make_node("Transpose", [dq], [f"{dq}/onnx"], perm=back))
        ins[1] = f"{dq}/onnx"
        return ins

    def constant_operand(self, node, k):
        """A constant input of another op, as the quantizers treat it: a MatMul's 2-D B an int8
        weight (per column in the per-channel styles, as nn.Linear's weight of a 3-D input exports);
        a tensor (not a scalar) added to or multiplied with an activation (a position embedding,
        a Linear's bias after its MatMul) quantized per tensor in the activation type over its own
        range; anything else (shapes, scalars, indices) as it is."""
        name = node.input[k]
        w = self.inits[name]
        if w.dtype != np.float32:
            return name
        if node.op_type == "MatMul" and k == 1 and w.ndim == 2:
            q, scale = self.weight(name, 1)
            return self.dq_const(name, q, scale, self.weight_zero_point(scale), 1)
        if node.op_type in ("Add", "Sub", "Mul", "Div") and w.size > 1:
            scale, zp = act_qparams(w, self.dtype, self.symmetric)
            info = np.iinfo(self.dtype)
            q = np.clip(np.rint(w / scale) + int(zp), info.min, info.max).astype(self.dtype)
            return self.dq_const(name, q, scale, zp, None)
        return name

    def run(self):
        g = self.g
        dq = {}
        for i in g.input:
            if self.quantized(i.name):
                self.qdq(i.name)
                dq[i.name] = f"{i.name}/dq"
        for node in g.node:
            new = onnx.NodeProto()
            new.CopyFrom(node)
            if node.op_type == "Conv" and self.tflite_qdq:
                new.input[:] = self.tflite_conv_inputs(node, dq[node.input[0]])
            elif node.op_type == "Gemm" and (self.pt2e or self.tflite_qdq):  # DQ(w) -> Transpose -> MatMul -> Add(bias)
                ins = self.weighted(node, dq[node.input[0]])
                self.nodes.append(helper.make_node("Transpose", [ins[1]], [f"{ins[1]}/t"], perm=[1, 0]))
                product = node.output[0] + "/product" if len(ins) > 2 else node.output[0]
                self.nodes.append(helper.make_node("MatMul", [ins[0], f"{ins[1]}/t"], [product]))
                if len(ins) > 2:
                    self.nodes.append(helper.make_node("Add", [product, ins[2]], [node.output[0]]))
                new = None
            elif node.op_type in ("Conv", "Gemm"):
                del new.input[:]
                new.input.extend(self.weighted(node, dq[node.input[0]]))
            else:
                for k, name in enumerate(node.input):
                    if self.trt and name not in self.inits and not self.trt_reads_quantized(node, name):
                        continue
                    new.input[k] = dq.get(name, name) if name not in self.inits else self.constant_operand(node, k)
            if new is not None:
                self.nodes.append(new)
            for o in node.output:
                if self.quantized(o):
                    self.qdq(o)
                    dq[o] = f"{o}/dq"
        outputs = [o.name for o in g.output]
        # A quantized graph output is delivered dequantized: DQ writes the output's name.
        for name in outputs:
            if name not in dq:
                continue
            for n in self.nodes:
                for k, o in enumerate(n.output):
                    if o == name:
                        n.output[k] = f"{name}/float"
                    elif o == f"{name}/dq":
                        n.output[k] = name
                for k, i in enumerate(n.input):
                    if i == name:
                        n.input[k] = f"{name}/float"
                    elif i == f"{name}/dq":
                        n.input[k] = name
        used = {i for n in self.nodes for i in n.input}
        kept = [t for t in g.initializer if t.name in used]
        out_infos = list(g.output)
        fresh = [t for t in self.new_inits if t.name in used]
        graph = helper.make_graph(self.nodes, f"{g.name}_{self.style}", list(g.input), out_infos, kept + fresh)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", max(13, opset(self.model)))])
        m.ir_version = 7 if opset(self.model) <= 13 else 9
        return m


def opset(model):
    return max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def to_qoperator(qdq_model):
    """ONNX Runtime's QOperator form of a fused QDQ model: each DQ* -> op -> Q group becomes the
    QLinear operator; data movement runs on the integer tensor."""
    g = qdq_model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    readers = {}
    for n in g.node:
        for i in n.input:
            readers.setdefault(i, []).append(n)

    def dq_of(name):
        n = producer.get(name)
        return n if n is not None and n.op_type == "DequantizeLinear" else None

    def q_after(name):
        r = readers.get(name, [])
        return r[0] if len(r) == 1 and r[0].op_type == "QuantizeLinear" else None

    nodes, dropped = [], set()
    ms = "com.microsoft"
    for n in g.node:
        if n.op_type in ("QuantizeLinear", "DequantizeLinear"):
            continue
        out = n.output[0]
        act = None
        if n.op_type in ("Conv", "Gemm", "Add") and readers.get(out) and readers[out][0].op_type in ACTIVATIONS:
            act = readers[out][0]
            out = act.output[0]
        q = q_after(out)
        ins = [dq_of(i) for i in n.input]
        if n.op_type in ACTIVATIONS and n.output[0] in dropped:
            continue
        if q is None or any(d is None for d in ins[:1]):
            nodes.append(n)  # stays float, reads the DQ outputs
            continue
        if act is not None:
            dropped.add(act.output[0])
        qo = list(q.input[1:])
        x = list(ins[0].input)
        if n.op_type == "Conv":
            w = list(ins[1].input)
            b = [dq_of(n.input[2]).input[0]] if len(n.input) > 2 else []
            nodes.append(helper.make_node("QLinearConv", x + w + qo + b, q.output, name=n.name,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        elif n.op_type == "Gemm":
            b = [dq_of(n.input[2]).input[0]] if len(n.input) > 2 else [""]
            nodes.append(helper.make_node("QGemm", x + list(ins[1].input) + b + qo, q.output, name=n.name, domain=ms,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute if a.name != "beta"}))
        elif n.op_type == "Add":
            nodes.append(helper.make_node("QLinearAdd", x + list(ins[1].input) + qo, q.output, domain=ms))
        elif n.op_type == "GlobalAveragePool" or (n.op_type == "AveragePool" and attrs(n)["kernel_shape"] == list(attrs(n).get("strides", []))):
            nodes.append(helper.make_node("QLinearGlobalAveragePool", x + qo, q.output, domain=ms, channels_last=0))
        elif n.op_type in ("Flatten", "Reshape", "MaxPool", "Pad"):
            extra = list(n.input[1:])
            if n.op_type == "Pad":
                extra = [n.input[1], x[2]]
            nodes.append(helper.make_node(n.op_type, [x[0]] + extra, q.output, name=n.name,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
        else:
            sys.exit(f"{n.name}: {n.op_type} has no QOperator form in this generator")
    # Q of the graph input, DQ of quantized graph outputs (and of a Softmax's input)
    final = []
    made = {o for n in nodes for o in n.output}
    for n in g.node:
        if n.op_type == "QuantizeLinear" and n.input[0] in [i.name for i in g.input]:
            final.append(n)
    final += nodes
    for n in g.node:
        if n.op_type == "DequantizeLinear" and n.input[0] in made and any(n.output[0] in m.input or n.output[0] in [o.name for o in g.output] for m in nodes):
            final.append(n)
    # topological order: DQs right after their producer
    order, ready = [], {i.name for i in g.input} | set(inits) | {t.name for t in g.initializer}
    pending = final
    while pending:
        rest = []
        for n in pending:
            if all(i in ready or not i for i in n.input):
                order.append(n)
                ready.update(n.output)
            else:
                rest.append(n)
        if len(rest) == len(pending):
            sys.exit("QOperator graph has a cycle or a missing input: " + str([r.op_type for r in rest]))
        pending = rest
    used = {i for n in order for i in n.input}
    graph = helper.make_graph(order, g.name.replace("qop", "") + "qop", list(g.input), list(g.output),
                              [t for t in g.initializer if t.name in used])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(ms, 1)])
    m.ir_version = 7
    return m


def to_nhwc_input(model, inputs):
    """tf2onnx's layout of a converted TFLite model: the graph input is NHWC, quantized per
    tensor by a QuantizeLinear that names its axis, then transposed to NCHW on the 8-bit tensor."""
    g = model.graph
    x = g.input[0]
    dims = [d.dim_value for d in x.type.tensor_type.shape.dim]
    if len(dims) != 4:
        return model, inputs
    nhwc = x.name + "_nhwc"
    for n in g.node:
        if n.op_type == "QuantizeLinear" and n.input[0] == x.name:
            n.input[0] = nhwc
            n.attribute.append(helper.make_attribute("axis", 1))
            q = n.output[0]
            n.output[0] = q + "_nhwc"
            g.node.insert(list(g.node).index(n) + 1, helper.make_node("Transpose", [q + "_nhwc"], [q], perm=[0, 3, 1, 2]))
            break
    del g.input[:]
    g.input.extend([helper.make_tensor_value_info(nhwc, TensorProto.FLOAT, [dims[0], dims[2], dims[3], dims[1]])])
    return model, [(nhwc, np.ascontiguousarray(inputs[0][1].transpose(0, 2, 3, 1)))]


def float_model(name, nodes, inits, x, outputs, opset):
    """The float model of `nodes` reading "input" (the array x, its test input) and writing
    `outputs` [(name, shape)], with its test input."""
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape) for o, shape in outputs],
                              inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7 if opset <= 13 else 9
    return m, [("input", x)]


def vww_float(rng):
    """MobileNetV1 with width 0.25 at 96 x 96: Conv/Clip(0, 6) blocks (batch norm folded), global
    average pool, Flatten, Gemm to two classes."""
    nodes, inits = [], []
    cfg = [(8, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2)] + [(128, 128, 1)] * 5 + \
          [(128, 256, 2), (256, 256, 1)]
    x = "input"
    inits += [numpy_helper.from_array(np.float32(0), "zero"), numpy_helper.from_array(np.float32(6), "six")]

    def conv(x, cin, cout, k, s, group, i):
        fan = cin // group * k * k
        w = (rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1 + 0.1).astype(np.float32)
        inits.extend([numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")])
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [f"conv{i}"], kernel_shape=[k, k], strides=[s, s],
                                      pads=[k // 2] * 4, group=group))
        nodes.append(helper.make_node("Clip", [f"conv{i}", "zero", "six"], [f"relu6_{i}"]))
        return f"relu6_{i}"

    x = conv(x, 3, 8, 3, 2, 1, 0)
    i = 1
    for cin, cout, s in cfg:
        x = conv(x, cin, cin, 3, s, cin, i)
        x = conv(x, cin, cout, 1, 1, 1, i + 1)
        i += 2
    nodes.append(helper.make_node("GlobalAveragePool", [x], ["pool"]))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"]))
    inits.append(numpy_helper.from_array((rng.standard_normal((2, 256)) * 0.1).astype(np.float32), "fc_w"))
    inits.append(numpy_helper.from_array(np.array([0.1, -0.1], np.float32), "fc_b"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1))
    return float_model("vww_mobilenet_v1_025", nodes, inits, rng.random((1, 3, 96, 96), dtype=np.float32),
                       [("logits", [1, 2])], 13)


def mobile_float(rng):
    """A small MobileNetV3/EfficientNet-like net with attention at 32 x 32 (opset 20): HardSwish,
    depthwise Conv, a squeeze-and-excitation block (GlobalAveragePool, HardSigmoid, Mul by the
    gate), a residual Add, AveragePool, Sigmoid, Resize (nearest), Concat, Pad, then one
    self-attention over the 64 positions (Reshape, Transpose, MatMul of two activations, Softmax,
    MatMul, Add), LayerNormalization, Gelu, Gather, Flatten and a Gemm to four classes."""
    nodes, inits = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def conv(x, cin, cout, k, s, group, name, pad=None):
        fan = cin // group * k * k
        w = (rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan)).astype(np.float32)
        b = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        nodes.append(helper.make_node("Conv", [x, const(f"{name}_w", w), const(f"{name}_b", b)], [name],
                                      kernel_shape=[k, k], strides=[s, s], pads=[k // 2 if pad is None else pad] * 4,
                                      group=group))
        return name

    def op(op_type, ins, name, **kw):
        nodes.append(helper.make_node(op_type, ins, [name], **kw))
        return name

    h0 = op("HardSwish", [conv("input", 3, 16, 3, 2, 1, "stem")], "stem_hswish")
    r1 = op("Relu", [conv(h0, 16, 16, 3, 1, 16, "dw")], "dw_relu")
    se = op("GlobalAveragePool", [r1], "se_pool")
    se = op("Relu", [conv(se, 16, 8, 1, 1, 1, "se_reduce")], "se_relu")
    gate = op("HardSigmoid", [conv(se, 8, 16, 1, 1, 1, "se_expand")], "se_gate", alpha=1.0 / 6, beta=0.5)
    m = op("Mul", [r1, gate], "se_mul")
    a = op("Add", [conv(m, 16, 16, 1, 1, 1, "project"), h0], "residual")
    ap = op("AveragePool", [a], "branch_pool", kernel_shape=[2, 2], strides=[2, 2])
    bs = op("Sigmoid", [conv(ap, 16, 8, 1, 1, 1, "branch")], "branch_sigmoid")
    up = op("Resize", [bs, "", const("up_scales", np.array([1, 1, 2, 2], np.float32))], "upsample", mode="nearest")
    cat = op("Concat", [a, up], "concat", axis=1)
    pd = op("Pad", [cat, const("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], "pad")
    h2 = op("HardSwish", [conv(pd, 24, 16, 3, 2, 1, "down", pad=0)], "down_hswish")
    t = op("Reshape", [h2, const("tokens_shape", np.array([1, 16, 64], np.int64))], "tokens_t")
    tt = op("Transpose", [t], "tokens", perm=[0, 2, 1])
    sc = op("MatMul", [tt, t], "scores")
    sm = op("Softmax", [sc], "attention", axis=-1)
    at = op("MatMul", [sm, tt], "attended")
    res = op("Add", [at, tt], "attention_residual")
    ln = op("LayerNormalization", [res, const("ln_gamma", (1 + 0.1 * rng.standard_normal(16)).astype(np.float32)),
                                   const("ln_beta", (0.1 * rng.standard_normal(16)).astype(np.float32))], "norm", axis=-1)
    ge = op("Gelu", [ln], "gelu")
    sel = op("Gather", [ge, const("picked", np.array([0, 9, 18, 27, 36, 45, 54, 63], np.int64))], "picked_tokens", axis=1)
    fl = op("Flatten", [sel], "flat")
    op("Gemm", [fl, const("fc_w", (rng.standard_normal((4, 128)) * 0.1).astype(np.float32)),
                const("fc_b", np.array([0.1, -0.1, 0.05, 0], np.float32))], "logits", transB=1)
    return float_model("mobile_mini", nodes, inits, rng.random((1, 3, 32, 32), dtype=np.float32), [("logits", [1, 4])],
                       20)


def pools_float(rng):
    """AveragePool the ways lower-qdq takes as a depthwise QLinearConv (opset 19): a 3 x 3 window
    with padding counted, stride 2; a 3 x 3 after it; a 2 x 3 window, strides 3 x 2 on odd sizes; and
    one it must leave float (padding not counted: the border windows divide by fewer taps)."""
    nodes = [helper.make_node("AveragePool", ["input"], ["padded"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("AveragePool", ["padded"], ["second"], kernel_shape=[3, 3]),
             helper.make_node("AveragePool", ["input"], ["odd"], kernel_shape=[2, 3], strides=[3, 2]),
             helper.make_node("AveragePool", ["input"], ["excluded"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    return float_model("average_pools", nodes, [], (rng.standard_normal((1, 5, 15, 17)) * 2).astype(np.float32),
                       [("second", [1, 5, 6, 7]), ("odd", [1, 5, 5, 8]), ("excluded", [1, 5, 15, 17])], 19)


def tokens_float(rng):
    """What transformers and ShuffleNet export, small (opset 17, 8 x 6 x 6 input): a 1 x 1 Conv
    and Relu, a channel shuffle (Reshape -> Transpose -> Reshape), the plane as 36 tokens, a
    Linear on the 3-D tokens (MatMul by a constant, Add of a constant bias), GELU as exported
    (Div by sqrt 2, Erf, Add 1, Mul, Mul by 0.5), attention (MatMul of two activations, Div by a
    scalar, Softmax, MatMul), Flatten and Gemm to four logits; the shuffled planes' means
    (ReduceMean over axes 2, 3 without keepdims) and the attention's mean over the tokens
    (ReduceMean over axis 1) as two more outputs."""
    def init(name, a):
        return numpy_helper.from_array(np.asarray(a, dtype=np.int64 if name.startswith("shape") else np.float32), name)
    inits = [init("w_conv", rng.standard_normal((8, 8, 1, 1)) * 0.5), init("b_conv", rng.standard_normal(8) * 0.1),
             init("shape_groups", [1, 2, 4, 6, 6]), init("shape_planes", [1, 8, 6, 6]), init("shape_tokens", [1, 8, 36]),
             init("w_linear", rng.standard_normal((8, 16)) * 0.4), init("b_linear", rng.standard_normal(16) * 0.1),
             init("sqrt2", np.sqrt(2.0)), init("one", 1.0), init("half", 0.5), init("temperature", 4.0),
             init("w_fc", rng.standard_normal((4, 36 * 16)) * 0.05), init("b_fc", rng.standard_normal(4) * 0.1)]
    mk = helper.make_node
    nodes = [mk("Conv", ["input", "w_conv", "b_conv"], ["conv"], kernel_shape=[1, 1]),
             mk("Relu", ["conv"], ["relu"]),
             mk("Reshape", ["relu", "shape_groups"], ["groups"]),
             mk("Transpose", ["groups"], ["swapped"], perm=[0, 2, 1, 3, 4]),
             mk("Reshape", ["swapped", "shape_planes"], ["shuffled"]),
             mk("ReduceMean", ["shuffled"], ["pooled"], axes=[2, 3], keepdims=0),
             mk("Reshape", ["shuffled", "shape_tokens"], ["planes"]),
             mk("Transpose", ["planes"], ["tokens"], perm=[0, 2, 1]),
             mk("MatMul", ["tokens", "w_linear"], ["linear"]),
             mk("Add", ["linear", "b_linear"], ["biased"]),
             mk("Div", ["biased", "sqrt2"], ["scaled"]),
             mk("Erf", ["scaled"], ["erf"]),
             mk("Add", ["erf", "one"], ["erf_plus_one"]),
             mk("Mul", ["biased", "erf_plus_one"], ["gated"]),
             mk("Mul", ["gated", "half"], ["gelu"]),
             mk("Transpose", ["gelu"], ["keys"], perm=[0, 2, 1]),
             mk("MatMul", ["gelu", "keys"], ["scores"]),
             mk("Div", ["scores", "temperature"], ["tempered"]),
             mk("Softmax", ["tempered"], ["attention"], axis=-1),
             mk("MatMul", ["attention", "gelu"], ["attended"]),
             mk("ReduceMean", ["attended"], ["token_mean"], axes=[1], keepdims=0),
             mk("Flatten", ["attended"], ["flat"]),
             mk("Gemm", ["flat", "w_fc", "b_fc"], ["logits"], transB=1)]
    x = (rng.standard_normal((1, 8, 6, 6)) * 2).astype(np.float32)
    return float_model("tokens", nodes, inits, x, [("logits", [1, 4]), ("pooled", [1, 8]), ("token_mean", [1, 16])], 17)


def load_float(src):
    if src == "pools":
        return pools_float(np.random.default_rng(29))
    if src == "mobile":
        return mobile_float(np.random.default_rng(29))
    if src == "vww":
        return vww_float(np.random.default_rng(29))
    if src == "tokens":
        return tokens_float(np.random.default_rng(29))
    model = onnx.load(os.path.join(src, "model.onnx"))
    x = load_pb(os.path.join(src, "test_data_set_0", "input_0.pb"))
    return model, [(model.graph.input[0].name, x)]


def generate(src, d, style):
    """Writes folder d: `src` quantized in `style`, its input and ONNX Runtime's outputs."""
    model, inputs = load_float(src)
    constants_to_initializers(model)
    fold_batchnorm(model)
    values = calibrate(model, inputs)
    values.update({name: x for name, x in inputs})
    base = {"qop": "qdq_u8_pc_fused", "tflite": "qdq_s8a_pc_fused"}.get(style, style)
    q = Quantizer(model, values, base).run()
    if style in ("qop", "tflite"):
        q = to_qoperator(q)
    if style in ("tflite", "tflite_qdq"):
        q, inputs = to_nhwc_input(q, inputs)
    if opset(q) <= onnx.defs.onnx_opset_version() and q.ir_version <= onnx.IR_VERSION:  # what this checker knows
        onnx.checker.check_model(q)
    expected = ort_run(q, inputs)
    shutil.rmtree(d, ignore_errors=True)
    save(d, q, inputs, [(o.name, v) for o, v in zip(q.graph.output, expected)], check=False)
    print(f"{d}: {len(q.graph.node)} nodes, {os.path.getsize(os.path.join(d, 'model.onnx'))} bytes")


# The float models the corpus mode quantizes, and the styles whose files are committed for each
# (kept small: every style of the small models, the every-tensor and QOperator forms of the
# larger ones; `--all-styles` writes every style of each, as docs/quantization.md measures).
MODELS = {"kws_dscnn": "kws-dscnn", "resnet8": "resnet8-cifar", "ad_autoencoder": "ad-autoencoder", "vww": "vww",
          "mobile": "mobile", "pools": "pools", "tokens": "tokens"}
COMMITTED = {"kws_dscnn": [s for s in STYLES if s != "pt2e"], "resnet8": STYLES[:7], "ad_autoencoder": ["qdq_u8_pc"], "vww": ["qdq_u8_pc", "qop", "tflite"],
             "mobile": ["qdq_u8_pc", "qdq_s8_pc_fused", "fx"], "pools": ["qdq_u8_pc", "qdq_s8_pt"],
             "tokens": ["qdq_u8_pc", "qdq_s8_pt", "pt2e"]}
# Styles a model cannot take: the QOperator forms have no operator for HardSwish, Sigmoid, Resize...
NO_QOPERATOR = {"mobile", "pools", "tokens"}


def main():
    args = sys.argv[1:]
    if args and args[0] == "--corpus" and len(args) >= 3:
        # styles.py --corpus SHARED_MODELS_DIR OUT_DIR [--all-styles]
        shared, out = args[1], args[2]
        for name, folder in MODELS.items():
            src = folder if folder in ("vww", "mobile", "pools", "tokens") else os.path.join(shared, folder)
            for style in STYLES if "--all-styles" in args else COMMITTED[name]:
                if name in NO_QOPERATOR and style in ("qop", "tflite"):
                    continue
                generate(src, os.path.join(out, f"{name}_{style}"), style)
        return
    if len(args) < 3:
        sys.exit(__doc__)
    src, out, styles = args[0], args[1], args[2:]
    for style in STYLES if styles == ["all"] else styles:
        if style not in STYLES:
            sys.exit(f"unknown style {style}; one of {STYLES}")
        generate(src, os.path.join(out, style), style)


if __name__ == "__main__":
    main()
