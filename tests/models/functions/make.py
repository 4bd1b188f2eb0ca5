#!/usr/bin/python3
"""Writes models that call model-local functions (ModelProto.functions, IR 8-10), in the
backend-test layout, with ONNX Runtime's outputs as the reference. Run from this directory:

    /usr/bin/python3 make.py /path/to/ort-run.mjs

The models use FunctionProto fields newer than Debian's python3-onnx (1.12, IR 8) knows
(attribute_proto defaults, IR 9; overloads, IR 10), so they are built with message classes that
protoc generates from the repository's proto/onnx.proto, not with onnx.helper.
"""
import importlib
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_DIR = os.path.join(HERE, "..", "..", "..", "proto")


def load_onnx_pb2():
    out = tempfile.mkdtemp()
    subprocess.run(["protoc", f"--proto_path={PROTO_DIR}", f"--python_out={out}", "onnx.proto"], check=True)
    sys.path.insert(0, out)
    return importlib.import_module("onnx_pb2")


pb = load_onnx_pb2()
AP = pb.AttributeProto
FLOAT = pb.TensorProto.FLOAT


def node(op, inputs, outputs, name="", domain="", overload="", **attrs):
    n = pb.NodeProto(op_type=op, input=inputs, output=outputs, name=name, domain=domain, overload=overload)
    for key, value in attrs.items():
        n.attribute.append(attr(key, value))
    return n


def attr(name, value):
    if isinstance(value, float):
        return AP(name=name, type=AP.FLOAT, f=value)
    if isinstance(value, int):
        return AP(name=name, type=AP.INT, i=value)
    if isinstance(value, list):
        return AP(name=name, type=AP.INTS, ints=value)
    if isinstance(value, pb.TensorProto):
        return AP(name=name, type=AP.TENSOR, t=value)
    if isinstance(value, pb.GraphProto):
        return AP(name=name, type=AP.GRAPH, g=value)
    raise TypeError(value)


def ref(name, refers_to, kind):
    return AP(name=name, ref_attr_name=refers_to, type=kind)


def with_refs(n, *refs):
    n.attribute.extend(refs)
    return n


def opset(domain, version):
    return pb.OperatorSetIdProto(domain=domain, version=version)


def tensor_vi(name, dims, elem=FLOAT):
    """dims None: the element type alone, no shape."""
    vi = pb.ValueInfoProto(name=name)
    vi.type.tensor_type.elem_type = elem
    if dims is None:
        return vi
    vi.type.tensor_type.shape.SetInParent()  # a scalar's shape is present and empty
    for d in dims:
        vi.type.tensor_type.shape.dim.add(dim_value=d)
    return vi


def tensor(name, array):
    kinds = {np.float32: FLOAT, np.int64: pb.TensorProto.INT64, np.bool_: pb.TensorProto.BOOL}
    return pb.TensorProto(name=name, dims=list(array.shape), data_type=kinds[array.dtype.type],
                          raw_data=array.tobytes())


def function(domain, name, inputs, outputs, nodes, opsets, attributes=(), defaults=(), overload=""):
    return pb.FunctionProto(domain=domain, name=name, input=inputs, output=outputs, node=nodes, opset_import=opsets,
                            attribute=list(attributes), attribute_proto=list(defaults), overload=overload)


def save(name, model, data_sets, ort_run):
    os.makedirs(name, exist_ok=True)
    with open(f"{name}/model.onnx", "wb") as f:
        f.write(model.SerializeToString())
    for k, inputs in enumerate(data_sets):
        os.makedirs(f"{name}/test_data_set_{k}", exist_ok=True)
        for i, (n, v) in enumerate(inputs):
            with open(f"{name}/test_data_set_{k}/input_{i}.pb", "wb") as f:
                f.write(tensor(n, v).SerializeToString())
    subprocess.run(["node", ort_run, name], check=True)


def calls(ort_run):
    """One model for every feature of a call, so one compile tests them all:
    - local.ScaledAct(x, [shift]) -> (y, dbg): attribute `alpha` (no default) from the call,
      `scale` from its default (IR 9 attribute_proto) or from the call; an optional input left
      out; its second output unused by some callers (dead code, dropped).
    - other.Centre(x) -> y (ReduceMean-18, axes as an input) calls local.NoShift: a call inside a
      body, across domains. The model imports ai.onnx 18, the functions 17 or 18 (the spec asks
      the operators they use to have one schema in both; ORT rejects a body that differs).
    - local.Step overloads "up" and "down" (IR 10): the node's overload picks the body.
    - an If whose then-branch calls other.Centre: a call inside a subgraph; and ScaledAct's body
      has an If of its own, whose branch reads the function's inputs (outer scope in a body).
    """
    scaled_act = function(
        "local", "ScaledAct", ["x", "shift"], ["y", "dbg"],
        [with_refs(node("Constant", [], ["s"]), ref("value_float", "scale", AP.FLOAT)),
         node("Mul", ["x", "s"], ["xs"]),
         with_refs(node("LeakyRelu", ["xs"], ["act"], name="act"), ref("alpha", "alpha", AP.FLOAT)),
         node("Neg", ["x"], ["dbg"]),
         node("Constant", [], ["has_shift"], value=tensor("v", np.array(True))),
         node("If", ["has_shift"], ["y"], name="maybe_shift",
              then_branch=pb.GraphProto(name="then", node=[node("Add", ["act", "shift"], ["ya"])],
                                        output=[tensor_vi("ya", None)]),
              else_branch=pb.GraphProto(name="else", node=[node("Identity", ["act"], ["yb"])],
                                        output=[tensor_vi("yb", None)]))],
        [opset("", 17)], attributes=["alpha"], defaults=[attr("scale", 2.0)])
    # The optional input: ScaledAct's If reads `shift` only in a branch that runs; callers
    # without a shift call NoShift, a second function sharing the LeakyRelu body.
    no_shift = function(
        "local", "NoShift", ["x"], ["y"],
        [with_refs(node("Constant", [], ["s"]), ref("value_float", "scale", AP.FLOAT)),
         node("Mul", ["x", "s"], ["xs"]),
         with_refs(node("LeakyRelu", ["xs"], ["y"]), ref("alpha", "alpha", AP.FLOAT))],
        [opset("", 17)], attributes=["alpha"], defaults=[attr("scale", 2.0)])
    centre = function(
        "other", "Centre", ["x"], ["y"],
        [node("Constant", [], ["axes"], value=tensor("a", np.array([-1], dtype=np.int64))),
         node("ReduceMean", ["x", "axes"], ["mean"], keepdims=1),
         node("Sub", ["x", "mean"], ["centred"]),
         node("NoShift", ["centred"], ["y"], domain="local", alpha=0.25)],
        [opset("", 18), opset("local", 1)])
    step_up = function("local", "Step", ["x"], ["y"],
                       [node("Constant", [], ["one"], value=tensor("o", np.array(1.0, dtype=np.float32))),
                        node("Add", ["x", "one"], ["y"])], [opset("", 17)], overload="up")
    step_down = function("local", "Step", ["x"], ["y"],
                         [node("Constant", [], ["one"], value=tensor("o", np.array(1.0, dtype=np.float32))),
                          node("Sub", ["x", "one"], ["y"])], [opset("", 17)], overload="down")

    then_g = pb.GraphProto(name="then", node=[node("Centre", ["x"], ["t"], name="centre_in_if", domain="other")],
                           output=[tensor_vi("t", [2, 5])])
    else_g = pb.GraphProto(name="else", node=[node("Identity", ["x"], ["e"])], output=[tensor_vi("e", [2, 5])])
    nodes = [
        node("ScaledAct", ["x", "b"], ["a1", "a1_dbg"], name="act_call", domain="local", alpha=0.1),
        node("ScaledAct", ["x", "b"], ["a2", ""], name="act_call_scale", domain="local", alpha=0.5, scale=-1.0),
        node("Centre", ["x"], ["c"], name="centre_call", domain="other"),
        node("Step", ["x"], ["up"], name="step_up", domain="local", overload="up"),
        node("Step", ["x"], ["down"], name="step_down", domain="local", overload="down"),
        node("If", ["cond"], ["branch"], name="if", then_branch=then_g, else_branch=else_g),
    ]
    graph = pb.GraphProto(
        name="function_calls", node=nodes,
        input=[tensor_vi("x", [2, 5]), tensor_vi("b", [5]), tensor_vi("cond", [], pb.TensorProto.BOOL)],
        output=[tensor_vi(n, [2, 5]) for n in ("a1", "a1_dbg", "a2", "c", "up", "down", "branch")])
    model = pb.ModelProto(ir_version=10, producer_name="onnxc tests/models/functions/make.py", graph=graph,
                          opset_import=[opset("", 18), opset("local", 1), opset("other", 1)],
                          functions=[scaled_act, no_shift, centre, step_up, step_down])
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    save("calls", model, [[("x", x), ("b", b), ("cond", np.array(True))],
                          [("x", -x), ("b", b), ("cond", np.array(False))]], ort_run)


if __name__ == "__main__":
    calls(sys.argv[1])
