#!/usr/bin/python3
"""Writes the malformed-model corpus: tests/bad_models/models/*.onnx and cases.txt.

Each case breaks one rule of the ONNX IR spec (or is damaged bytes) and is listed in cases.txt
as `file<TAB>fragment`: onnxc must refuse it with exit code 1, no signal, no sanitizer report,
and `fragment` in its messages (run_bad_models.sh checks). Run with Debian's interpreter:

    /usr/bin/python3 tests/bad_models/make_bad_models.py

The models are built with onnx.helper where it allows the damage and by editing the protobuf
messages (or raw bytes) where it does not. Output is deterministic.
"""

import os
import random
import shutil

import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "models")
CASES = []  # (file, fragment)

F = TensorProto.FLOAT


def vi(name, dims=(1, 4), elem=F):
    return helper.make_tensor_value_info(name, elem, list(dims))


def model(nodes, inputs=None, outputs=None, inits=(), opset=13, ir=8, name="bad", value_info=()):
    g = helper.make_graph(nodes, name, inputs if inputs is not None else [vi("x")],
                          outputs if outputs is not None else [vi("y")], list(inits), value_info=list(value_info))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def relu_model(**kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], **kw)


def floats_init(name, dims, values):
    """A float tensor in float_data; unlike helper.make_tensor it accepts a wrong count."""
    t = TensorProto(name=name, data_type=F, dims=list(dims))
    t.float_data.extend(values)
    return t


def save(file, m_or_bytes, fragment, flags=""):
    """flags: onnxc options the case is refused under (e.g. --strict); none: refused always."""
    path = os.path.join(OUT, file)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = m_or_bytes if isinstance(m_or_bytes, bytes) else m_or_bytes.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    CASES.append((file, fragment, flags))


def add_model(x_plus):
    """y = x + c with c an initializer built by x_plus (a TensorProto named 'c')."""
    return model([helper.make_node("Add", ["x", "c"], ["y"], name="add")], inits=[x_plus])


# ---- damaged bytes ----------------------------------------------------------------------

def damaged_files():
    good = relu_model().SerializeToString()
    save("empty.onnx", b"", "the file is empty")
    save("truncated.onnx", good[: len(good) // 2], "not a valid ONNX protobuf")
    rng = random.Random(1234)
    save("random_bytes.onnx", bytes(rng.randrange(256) for _ in range(4096)), "not a valid ONNX protobuf")
    save("bad_varint.onnx", b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "not a valid ONNX protobuf")
    save("wrong_wire_type.onnx", b"\x3a\x05\x0a\x03abc\x3d", "not a valid ONNX protobuf")
    # A graph whose length prefix runs past the end of the file.
    save("length_past_end.onnx", b"\x08\x08\x3a\xf0\x01\x0a\x02hi", "not a valid ONNX protobuf")


# ---- the model ----------------------------------------------------------------------------

def model_rules():
    m = relu_model()
    m.ClearField("ir_version")
    save("no_ir_version.onnx", m, "ir_version is missing")

    save("ir_version_99.onnx", relu_model(ir=99), "IR version 99 is newer than onnxc knows")

    m = relu_model()
    del m.opset_import[:]
    save("no_opset_import.onnx", m, "opset_import is empty")

    m = relu_model()
    m.opset_import.append(helper.make_opsetid("ai.onnx", 13))
    save("opset_domain_twice.onnx", m, "lists domain 'ai.onnx' twice")

    m = relu_model()
    m.opset_import[0].version = 0
    save("opset_version_zero.onnx", m, "has no valid version")

    save("opset_99.onnx", relu_model(opset=99), "opset 99")

    m = relu_model()
    m.ClearField("graph")
    save("no_graph.onnx", m, "the model has no graph")

    m = model([helper.make_node("Relu", ["x"], ["y"], name="custom", domain="com.example")])
    save("domain_not_imported.onnx", m, "uses domain 'com.example', which the model does not import")


# ---- graph inputs, outputs, value_info ------------------------------------------------------

def map_type(key, value):
    t = onnx.TypeProto()
    t.map_type.key_type = key
    t.map_type.value_type.CopyFrom(helper.make_tensor_type_proto(value, []))
    return t


def map_operator_rules():
    """ai.onnx.ml's map operators: refused by name (onnxc has no map values)."""
    seq = onnx.TypeProto()
    seq.sequence_type.elem_type.CopyFrom(map_type(TensorProto.INT64, F))
    out = onnx.ValueInfoProto(name="z", type=seq)
    m = model([helper.make_node("ZipMap", ["x"], ["z"], domain="ai.onnx.ml", classlabels_int64s=[0, 1, 2, 3])],
              outputs=[out])
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 1))
    save("ml_zipmap.onnx", m, "(ai.onnx.ml.ZipMap): makes a sequence of maps")
    x = onnx.ValueInfoProto(name="x", type=map_type(TensorProto.INT64, F))
    m = model([helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", int64_vocabulary=[0, 1, 2, 3])],
              inputs=[x])
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 1))
    save("ml_dict_vectorizer.onnx", m, "(ai.onnx.ml.DictVectorizer): reads a map")


def io_rules():
    m = relu_model()
    m.graph.name = ""
    save("graph_without_name.onnx", m, "graph: has no name")

    m = relu_model()
    m.graph.input[0].ClearField("type")
    save("input_without_type.onnx", m, "input 'x': has no type")

    m = relu_model()
    m.graph.input[0].type.tensor_type.elem_type = 0
    save("input_without_elem_type.onnx", m, "input 'x': has no element type")

    m = relu_model()
    m.graph.input[0].type.tensor_type.ClearField("shape")
    save("input_without_shape.onnx", m, "input 'x': has no shape")

    m = relu_model()
    m.graph.input[0].type.tensor_type.elem_type = 99
    save("input_unknown_elem_type.onnx", m, "has unknown element type 99")

    save("input_negative_dim.onnx", relu_model(inputs=[vi("x", (1, -3))]), "has a negative dim -3")
    save("input_dims_overflow.onnx", relu_model(inputs=[vi("x", (1 << 40, 1 << 40))]), "whose product overflows")
    save("input_too_large.onnx", relu_model(inputs=[vi("x", (1 << 20, 1 << 20))]),
         "more than the 4294967296 bytes onnxc accepts")
    save("input_listed_twice.onnx", relu_model(inputs=[vi("x"), vi("x")]), "input 'x': is listed twice")

    m = relu_model()
    m.graph.input[0].name = ""
    save("input_without_name.onnx", m, "a graph input has no name")

    save("output_not_produced.onnx", relu_model(outputs=[vi("y"), vi("z")]),
         "output 'z': is not produced by any node")
    save("output_listed_twice.onnx", relu_model(outputs=[vi("y"), vi("y")]), "is listed twice as a graph output")

    m = relu_model()
    m.graph.output[0].ClearField("type")
    save("output_without_type.onnx", m, "output 'y': has no type")

    m = model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Relu", ["a"], ["y"])],
              value_info=[vi("a"), vi("a")])
    save("value_info_twice.onnx", m, "value_info 'a': is listed twice")

    m = add_model(floats_init("c", [4], [1, 2, 3, 4]))
    m.graph.value_info.append(vi("c", (4,), TensorProto.INT64))
    save("value_info_contradicts_initializer.onnx", m, "says int64, but the initializer holds float")

    m = add_model(floats_init("c", [4], [1, 2, 3, 4]))
    m.ir_version = 3
    m.opset_import[0].version = 8
    save("ir3_initializer_not_input.onnx", m, "is not a graph input, which IR version 3 requires")


# ---- names, scopes, order -----------------------------------------------------------------

def if_node(cond, then_nodes, then_out, name="if", outputs=("y",), then_inits=(), then_inputs=()):
    then_g = helper.make_graph(then_nodes, "then", list(then_inputs), [vi(then_out)], list(then_inits))
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e_out"])], "else", [], [vi("e_out")])
    return helper.make_node("If", [cond], list(outputs), name=name, then_branch=then_g, else_branch=else_g)


def bool_input(name="c"):
    return helper.make_tensor_value_info(name, TensorProto.BOOL, [])


def field(number, payload):
    """A length-delimited protobuf field: key, length, bytes."""
    def varint(v):
        out = bytearray()
        while True:
            out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
            v >>= 7
            if not v:
                return bytes(out)
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def deep_ifs(levels):
    """A model of `levels` Ifs, each in the previous one's then_branch, serialized by hand (onnx's
    Python protobuf refuses to build or write messages this deep). To keep the file small the
    nested Ifs have no else_branch and their graphs no outputs: the parser gives up before any
    check would see that. Graph field 1 is node, 2 name; node field 5 attribute; attribute
    field 6 g; model field 7 graph, graph field 11 input."""
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "g", [], [vi("t")]).SerializeToString()
    shell = helper.make_node("If", ["c"], ["t"]).SerializeToString()
    then_attr = onnx.AttributeProto(name="then_branch", type=onnx.AttributeProto.GRAPH).SerializeToString()
    for _ in range(levels):
        graph = field(1, shell + field(5, then_attr + field(6, graph))) + field(2, b"g")
    top = model([], inputs=[vi("x"), bool_input()], outputs=[vi("t")])
    top.ClearField("graph")
    return top.SerializeToString() + field(7, graph + field(11, vi("x").SerializeToString())
                                           + field(11, bool_input().SerializeToString()))


def name_rules():
    m = model([helper.make_node("Relu", ["x"], ["a"], name="r1"), helper.make_node("Relu", ["x"], ["a"], name="r2"),
               helper.make_node("Relu", ["a"], ["y"], name="r3")])
    save("ssa_output_twice.onnx", m, "output 'a' is already defined elsewhere")

    m = model([helper.make_node("Relu", ["x"], ["x"], name="r"), helper.make_node("Relu", ["x"], ["y"])])
    save("node_output_redefines_input.onnx", m, "output 'x' is already defined elsewhere")

    save("undefined_input.onnx", model([helper.make_node("Add", ["x", "nope"], ["y"], name="add")]),
         "input 'nope' is not defined")

    m = model([helper.make_node("Add", ["x", "b"], ["a"], name="first"),
               helper.make_node("Relu", ["a"], ["b"], name="second"),
               helper.make_node("Relu", ["a"], ["y"], name="third")])
    save("cycle.onnx", m, "the nodes form a cycle")

    m = model([helper.make_node("Add", ["x", "y"], ["y"], name="self")])
    save("self_loop.onnx", m, "the nodes form a cycle")

    m = model([helper.make_node("Relu", ["x"], ["a"], name="same"), helper.make_node("Relu", ["a"], ["y"], name="same")])
    # Node names are diagnostic only: onnxc renames duplicates with a warning, --strict refuses them.
    save("node_names_twice.onnx", m, "shares its name with an earlier node", flags="--strict")
    m = model([if_node("c", [helper.make_node("Relu", ["x"], ["a"], name="same"),
                             helper.make_node("Relu", ["a"], ["t_out"], name="same")], "t_out")],
              inputs=[vi("x"), bool_input()])
    save("node_names_twice_in_subgraph.onnx", m, "shares its name with an earlier node", flags="--strict")

    m = add_model(floats_init("c", [4], [1, 2, 3, 4]))
    m.graph.initializer.append(floats_init("c", [4], [1, 2, 3, 4]))
    save("initializer_twice.onnx", m, "initializer 'c': is defined twice")

    m = add_model(floats_init("c", [4], [1, 2, 3, 4]))
    m.graph.initializer.append(floats_init("", [4], [1, 2, 3, 4]))
    save("initializer_without_name.onnx", m, "an initializer has no name")

    # Inside If: a node output named like a value of the outer graph.
    m = model([if_node("c", [helper.make_node("Relu", ["x"], ["x"], name="inner")], "x")],
              inputs=[vi("x"), bool_input()])
    save("subgraph_output_shadows_outer.onnx", m, "output 'x' shadows a value of an enclosing graph")

    m = model([if_node("c", [helper.make_node("Add", ["x", "k"], ["t_out"])], "t_out",
                       then_inits=[floats_init("k", [4], [0, 0, 0, 0])], then_inputs=[vi("k", (4,))])],
              inputs=[vi("x"), bool_input()])
    save("subgraph_input_is_initializer.onnx", m, "is both an input and an initializer of a subgraph")

    m = model([if_node("c", [helper.make_node("Add", ["x", "ghost"], ["t_out"])], "t_out")],
              inputs=[vi("x"), bool_input()])
    save("subgraph_undefined_input.onnx", m, "input 'ghost' is not defined")

    # 70 Ifs, each inside the previous one's then_branch.
    inner = helper.make_node("Identity", ["x"], ["t0"])
    out = "t0"
    for level in range(1, 71):
        inner = if_node("c", [inner], out, name=f"if{level}", outputs=(f"t{level}",))
        out = f"t{level}"
    m = model([inner], inputs=[vi("x"), bool_input()], outputs=[vi(out)])
    save("deep_subgraph_nesting.onnx", m, "subgraphs are nested more than 64 levels deep")

    # 10,000 Ifs, each inside the previous one's then_branch: deeper than protobuf parses.
    save("protobuf_deep_nesting.onnx", deep_ifs(10000),
         "subgraphs are nested 10000 levels deep, beyond the parser's limit of 1000 nested protobuf messages")

    # An input whose type is a sequence of sequences ... 1200 deep (TypeProto field 4 sequence_type,
    # Sequence field 1 elem_type; ValueInfoProto field 2 type; graph field 11 input).
    elem = vi("x").type.SerializeToString()
    for _ in range(1200):
        elem = field(4, field(1, elem))
    m = relu_model()
    m.graph.ClearField("input")
    save("protobuf_deep_type.onnx", m.SerializeToString() + field(7, field(11, field(1, b"x") + field(2, elem))),
         "protobuf messages are nested 2407 deep, beyond the parser's limit of 1000")

    m = relu_model()
    m.graph.node[0].op_type = ""
    save("node_without_op_type.onnx", m, "has no op_type")

    save("not_an_operator.onnx", model([helper.make_node("Conv2D", ["x"], ["y"], name="tf")]),
         "'Conv2D' is not an operator of ONNX")


# ---- attributes and signatures ------------------------------------------------------------

def attribute_rules():
    save("missing_required_attribute.onnx", model([helper.make_node("Cast", ["x"], ["y"], name="cast")]),
         "lacks attribute 'to' (int), which Cast-13 requires")

    m = model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=1.0)], outputs=[vi("y", (1, 8))])
    save("attribute_wrong_type.onnx", m, "attribute 'axis' is of type float; Concat-13 declares it int")

    save("attribute_undeclared.onnx", model([helper.make_node("Relu", ["x"], ["y"], name="relu", alpha=0.1)]),
         "has attribute 'alpha', which Relu-")

    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)])
    m.graph.node[0].attribute[0].f = 2.0
    save("attribute_two_values.onnx", m, "attribute 'axis': sets 2 value fields")

    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)])
    a = m.graph.node[0].attribute[0]
    a.ClearField("i")
    a.floats.extend([1.0])
    save("attribute_type_disagrees.onnx", m, "is declared int but holds a floats value")

    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)])
    m.graph.node[0].attribute[0].type = onnx.AttributeProto.UNDEFINED
    save("attribute_without_type.onnx", m, "attribute 'axis': has no type")

    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)])
    m.graph.node[0].attribute.append(helper.make_attribute("axis", 0))
    save("attribute_twice.onnx", m, "has attribute 'axis' twice")

    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)])
    m.graph.node[0].attribute[0].name = ""
    save("attribute_without_name.onnx", m, "has an attribute without a name")

    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1)])
    m.graph.node[0].attribute[0].ref_attr_name = "outer_axis"
    save("attribute_ref_outside_function.onnx", m, "ref_attr_name")

    save("too_many_inputs.onnx", model([helper.make_node("Relu", ["x", "x"], ["y"], name="relu")]),
         "has 2 inputs; Relu-")
    save("too_few_inputs.onnx", model([helper.make_node("Add", ["x"], ["y"], name="add")]),
         "has 1 input; Add-")
    save("too_many_outputs.onnx", model([helper.make_node("Relu", ["x"], ["y", "z"], name="relu")]),
         "has 2 outputs; Relu-")
    m = model([helper.make_node("Conv", ["x", "", "b"], ["y"], name="conv")], inputs=[vi("x", (1, 1, 4, 4))],
              inits=[floats_init("b", [1], [0])])
    save("required_input_empty.onnx", m, "input 1 (W) of Conv-11 is required but its name is empty")

    sparse = helper.make_sparse_tensor(helper.make_tensor("v", F, [1], [1.0]),
                                       helper.make_tensor("i", TensorProto.INT64, [1], [0]), [4])
    m = model([helper.make_node("Constant", [], ["y"], name="const", sparse_value=sparse)], inputs=[])
    save("sparse_attribute.onnx", m, "is a sparse tensor attribute")

    m = model([helper.make_node("Cast", ["x"], ["y"], name="cast", to=1)])
    m.graph.node[0].attribute.append(helper.make_attribute("saturate", 1))
    save("attribute_from_newer_version.onnx", m, "has attribute 'saturate', which Cast-13 does not declare")


# ---- model-local functions (ModelProto.functions) --------------------------------------------

def function_model(nodes, functions, name="bad"):
    m = model(nodes, name=name)
    m.opset_import.append(helper.make_opsetid("local", 1))
    m.functions.extend(functions)
    return m


def local_function(name, nodes, inputs=("x",), outputs=("y",), attributes=()):
    return helper.make_function("local", name, list(inputs), list(outputs), nodes,
                                [helper.make_opsetid("", 13), helper.make_opsetid("local", 1)], list(attributes))


def function_rules():
    # F calls G, G calls F.
    f = local_function("F", [helper.make_node("G", ["x"], ["y"], domain="local")])
    g = local_function("G", [helper.make_node("F", ["x"], ["y"], domain="local")])
    save("function_recursive.onnx", function_model([helper.make_node("F", ["x"], ["y"], name="call", domain="local")],
                                                    [f, g]), "calls function local.F recursively (F -> G -> F)")

    # A body attribute refers to an attribute the function does not declare.
    lrelu = helper.make_node("LeakyRelu", ["x"], ["y"], name="act")
    ref = onnx.AttributeProto(name="alpha", ref_attr_name="slope", type=onnx.AttributeProto.FLOAT)
    lrelu.attribute.append(ref)
    f = local_function("Act", [lrelu], attributes=["alpha"])
    save("function_undeclared_reference.onnx",
         function_model([helper.make_node("Act", ["x"], ["y"], name="call", domain="local", alpha=0.5)], [f]),
         "attribute 'alpha' refers to 'slope', which the function does not declare")

    # The call sets an attribute the function does not declare.
    f = local_function("Neg2", [helper.make_node("Neg", ["x"], ["y"])])
    save("function_call_undeclared_attribute.onnx",
         function_model([helper.make_node("Neg2", ["x"], ["y"], name="call", domain="local", gain=2.0)], [f]),
         "sets attribute 'gain', which function local.Neg2 does not declare")

    # A required attribute of a body operator left unset by the call (declared, no default).
    cast = helper.make_node("Cast", ["x"], ["y"], name="cast")
    cast.attribute.append(onnx.AttributeProto(name="to", ref_attr_name="to", type=onnx.AttributeProto.INT))
    f = local_function("CastTo", [cast], attributes=["to"])
    save("function_attribute_without_value.onnx",
         function_model([helper.make_node("CastTo", ["x"], ["y"], name="call", domain="local")], [f]),
         "lacks attribute 'to' (int), which Cast-13 requires")

    # Two definitions of one function.
    f = local_function("Neg2", [helper.make_node("Neg", ["x"], ["y"])])
    save("function_defined_twice.onnx",
         function_model([helper.make_node("Neg2", ["x"], ["y"], name="call", domain="local")], [f, f]),
         "function local.Neg2: is defined twice")

    # A call to a function the model does not define, in a domain that has others.
    save("function_missing.onnx",
         function_model([helper.make_node("Neg3", ["x"], ["y"], name="call", domain="local")], [f]),
         "no function 'Neg3'")

    # An output the body never computes.
    f = local_function("Half", [helper.make_node("Neg", ["x"], ["z"])])
    save("function_output_not_computed.onnx",
         function_model([helper.make_node("Half", ["x"], ["y"], name="call", domain="local")], [f]),
         "function local.Half's output 'y' is computed by no node of its body")


# ---- attribute values and shapes (checked by each operator) ---------------------------------

def conv(attrs, x=(1, 1, 5, 5), w=(1, 1, 3, 3)):
    n = 1
    for d in w:
        n *= d
    return model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv", **attrs)], inputs=[vi("x", x)],
                 outputs=[vi("y", ())], inits=[floats_init("w", list(w), [0.5] * n)])


def value_rules():
    save("conv_negative_strides.onnx", conv({"strides": [-1, -1]}), "stride -1 must be positive")
    save("conv_pads_wrong_length.onnx", conv({"pads": [1, 1]}), "'pads' has 2 values; expected 4")
    save("conv_negative_pads.onnx", conv({"pads": [-1, 0, 0, 0]}), "'pads' must not be negative")
    save("conv_zero_dilation.onnx", conv({"dilations": [0, 1]}), "dilation 0 must be positive")
    save("conv_kernel_larger_than_input.onnx", conv({}, x=(1, 1, 2, 2)), "is larger than the padded input")
    save("conv_channel_mismatch.onnx", conv({}, x=(1, 3, 5, 5)), "input channels")
    save("conv_bad_auto_pad.onnx", conv({"auto_pad": "SOMETIMES"}), "auto_pad 'SOMETIMES' is not one of")
    m = model([helper.make_node("Concat", ["x", "x"], ["y"], name="cat", axis=5)])
    save("concat_axis_out_of_range.onnx", m, "axis")
    # A Resize to a 100-million-long axis (found by the fuzzer from a resize_modes model): refused
    # before its coordinate tables take the compiler minutes and gigabytes.
    sizes = helper.make_tensor("sizes", TensorProto.INT64, [2], [1, 100728845])
    m = model([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="resize", mode="linear")],
              inits=[sizes])
    save("resize_huge_axis.onnx", m, "takes axes of at most 1048576")
    # A scale whose output length does not fit an integer (found by the fuzzer: converting it was
    # undefined behaviour), and a float Range of 10^60 elements.
    scales = helper.make_tensor("scales", F, [2], [1.0, 1e30])
    m = model([helper.make_node("Resize", ["x", "", "scales"], ["y"], name="resize", mode="nearest")], inits=[scales])
    save("resize_scale_overflow.onnx", m, "output dim 1 is 4.0000000")
    bounds = [helper.make_tensor(n, F, [], [v]) for n, v in (("start", 0.0), ("limit", 1e30), ("delta", 1e-30))]
    m = model([helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="range")], inputs=[],
              outputs=[vi("y", (4,))], inits=bounds, opset=11)
    save("range_count_overflow.onnx", m, "the element count is 1.0000000")
    m = model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=-3)])
    save("softmax_axis_out_of_range.onnx", m, "axis")
    m = model([helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[0, 0])])
    save("transpose_bad_perm.onnx", m, "is not a permutation")
    m = model([helper.make_node("Add", ["x", "c"], ["y"], name="add")], inits=[floats_init("c", [3], [1, 2, 3])])
    save("add_not_broadcastable.onnx", m, "broadcast")
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
              inits=[helper.make_tensor("s", TensorProto.INT64, [2], [3, 3])])
    save("reshape_wrong_count.onnx", m, "reshape")
    m = model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], inits=[floats_init("w", [3, 2], [0] * 6)])
    save("matmul_inner_dims_differ.onnx", m, "mm")
    m = model([helper.make_node("ConstantOfShape", ["s"], ["y"], name="huge")], inputs=[],
              inits=[helper.make_tensor("s", TensorProto.INT64, [2], [1 << 20, 1 << 20])])
    save("constant_of_shape_huge.onnx", m, "huge")


# ---- tensors --------------------------------------------------------------------------------

def raw_floats(name, dims, nbytes):
    t = TensorProto(name=name, data_type=F, dims=dims)
    t.raw_data = bytes(nbytes)
    return t


def tensor_rules():
    # A lowering that builds a constant from a model's values checks its size first (found by the
    # fuzzer: AffineGrid's base grid for a size of 10^13 positions).
    size = helper.make_tensor("size", TensorProto.INT64, [5], [1, 2, 7696581394435, 4, 4])
    m = model([helper.make_node("AffineGrid", ["theta", "size"], ["y"], name="grid")],
              inputs=[vi("theta", (1, 3, 4))], outputs=[vi("y", (1, 2, 4, 4, 3))], inits=[size], opset=20, ir=9)
    save("affine_grid_huge.onnx", m, "would exceed the 2147483648 bytes onnxc allows for one tensor")
    w = TensorProto(name="w", data_type=22, dims=[5], raw_data=bytes([0x21, 0x43]))  # INT4: 5 values need 3 bytes
    m = model([helper.make_node("DequantizeLinear", ["w", "s"], ["y"], name="dq")], inputs=[], outputs=[vi("y", (5,))],
              inits=[w, floats_init("s", [], [0.5])], opset=21, ir=10)
    save("int4_too_few_bytes.onnx", m, "holds 2 bytes of int4 values; shape [5] needs 3")
    # Operators of opsets 18-26 with what onnxc refuses of them.
    m = model([helper.make_node("BitCast", ["x"], ["y"], name="bits", to=TensorProto.INT16)],
              outputs=[vi("y", (1, 4), TensorProto.INT16)], opset=26, ir=13)
    save("bitcast_width.onnx", m, "float (32 bits) and int16 (16 bits) differ in width")
    m = model([helper.make_node("BitCast", ["x"], ["y"], name="bits", to=TensorProto.BOOL)],
              inputs=[vi("x", (1, 4), TensorProto.UINT8)], outputs=[vi("y", (1, 4), TensorProto.BOOL)], opset=26, ir=13)
    save("bitcast_to_bool.onnx", m, "BitCast from uint8 to bool is not supported")
    m = model([helper.make_node("DeformConv", ["x", "w", "offset"], ["y"], name="dcn")],
              inputs=[vi("x", (1, 1, 4, 4, 4)), vi("offset", (1, 24, 3, 3, 3))], outputs=[vi("y", (1, 1, 3, 3, 3))],
              inits=[floats_init("w", [1, 1, 2, 2, 2], [0.5] * 8)], opset=19, ir=9)
    save("deform_conv_3d.onnx", m, "onnxc implements 2-D DeformConv (4-D X) only")
    m = model([helper.make_node("QuantizeLinear", ["x", "s"], ["y"], name="q", precision=TensorProto.FLOAT16)],
              outputs=[vi("y", (1, 4), TensorProto.UINT8)], inits=[floats_init("s", [], [0.5])], opset=23, ir=10)
    save("quantize_precision.onnx", m, "precision float16 differs from the scale's type float")
    save("opset_27.onnx", relu_model(opset=27, ir=13), "newer than onnxc knows (26)")
    save("raw_data_too_short.onnx", add_model(raw_floats("c", [4], 8)), "raw_data has 8 bytes; shape [4] of float needs 16")
    save("raw_data_too_long.onnx", add_model(raw_floats("c", [4], 20)), "raw_data has 20 bytes")
    save("float_data_count_mismatch.onnx", add_model(floats_init("c", [4], [1, 2, 3])),
         "float_data has 3 values; shape [4] needs 4")

    t = TensorProto(name="c", data_type=TensorProto.INT64, dims=[4])
    t.float_data.extend([1, 2, 3, 4])
    save("int64_in_float_data.onnx", add_model(t), "stores int64 values in float_data")

    t = floats_init("c", [4], [1, 2, 3, 4])
    t.raw_data = bytes(16)
    save("two_value_fields.onnx", add_model(t), "stores values in 2 fields at once")

    save("tensor_without_values.onnx", add_model(TensorProto(name="c", data_type=F, dims=[4])),
         "has no values; shape [4] needs 4")

    t = floats_init("c", [4], [1, 2, 3, 4])
    t.data_type = 99
    save("tensor_unknown_data_type.onnx", add_model(t), "has unknown data_type 99")
    t = floats_init("c", [4], [1, 2, 3, 4])
    t.data_type = 0
    save("tensor_undefined_data_type.onnx", add_model(t), "has unknown data_type 0")

    t = floats_init("c", [4], [1, 2, 3, 4])
    t.dims[0] = -4
    save("tensor_negative_dim.onnx", add_model(t), "has invalid dims [-4]")

    t = TensorProto(name="c", data_type=F, dims=[1 << 32, 1 << 32, 1 << 32])
    save("tensor_dims_overflow.onnx", add_model(t), "negative or overflowing")

    t = TensorProto(name="c", data_type=F, dims=[1 << 20, 1 << 20])
    t.raw_data = bytes(16)
    save("tensor_too_large.onnx", add_model(t), "is too large: 1099511627776 elements of float")

    t = TensorProto(name="c", data_type=TensorProto.STRING, dims=[1])
    t.raw_data = b"abcd"
    save("string_in_raw_data.onnx", add_model(t), "is a string tensor stored in raw_data")

    t = floats_init("c", [4], [1, 2, 3, 4])
    t.segment.begin = 0
    t.segment.end = 2
    save("tensor_segment.onnx", add_model(t), "is stored in segments")

    bad = raw_floats("value", [4], 3)
    m = model([helper.make_node("Constant", [], ["c"], name="const", value=bad),
               helper.make_node("Add", ["x", "c"], ["y"])])
    save("constant_attribute_bad_tensor.onnx", m, "attribute 'value': raw_data has 3 bytes")

    def sparse_model(values, indices, dims):
        m = add_model(floats_init("c", [4], [1, 2, 3, 4]))
        m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, dims))
        return m

    save("sparse_index_out_of_range.onnx",
         sparse_model(helper.make_tensor("sp", F, [2], [1, 2]), helper.make_tensor("i", TensorProto.INT64, [2], [1, 9]),
                      [4]), "index 9 of value 1 lies outside shape [4]")
    save("sparse_indices_int32.onnx",
         sparse_model(helper.make_tensor("sp", F, [2], [1, 2]), helper.make_tensor("i", TensorProto.INT32, [2], [1, 2]),
                      [4]), "indices must be int64")
    save("sparse_initializer_twice.onnx",
         sparse_model(helper.make_tensor("c", F, [1], [1]), helper.make_tensor("i", TensorProto.INT64, [1], [0]), [4]),
         "is defined twice")


# ---- external data --------------------------------------------------------------------------

def external(location, offset=None, length=None, dims=(4,), data=None):
    t = TensorProto(name="c", data_type=F, dims=list(dims), data_location=TensorProto.EXTERNAL)
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
    if data is not None:
        t.raw_data = data
    return add_model(t)


def external_rules():
    with open(os.path.join(OUT, "weights.bin"), "wb") as f:
        f.write(bytes(32))  # 8 floats
    save("external_missing_file.onnx", external("no_such_file.bin"), "'no_such_file.bin' does not exist")
    save("external_outside_folder.onnx", external("../cases.txt"), "location '../cases.txt' leaves the model's folder")
    save("external_absolute_path.onnx", external("/etc/passwd"), "location '/etc/passwd' leaves the model's folder")
    save("external_offset_beyond_file.onnx", external("weights.bin", offset=64), "lies outside 'weights.bin' (32 bytes)")
    save("external_range_past_end.onnx", external("weights.bin", offset=24), "[24, +16) lies outside")
    save("external_length_mismatch.onnx", external("weights.bin", length=12), "length 12 does not match shape [4]")
    save("external_offset_not_a_number.onnx", external("weights.bin", offset="12abc"), "'offset' is not a number")
    save("external_negative_offset.onnx", external("weights.bin", offset=-8), "'offset' is not a number")
    save("external_without_location.onnx", external(None), "external data has no 'location'")
    save("external_and_raw_data.onnx", external("weights.bin", data=bytes(16)), "has external data and also values")
    save("external_is_a_directory.onnx", external("."), "does not exist or is not a file")


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for rules in (damaged_files, model_rules, io_rules, map_operator_rules, name_rules, attribute_rules, function_rules, value_rules, tensor_rules,
                  external_rules):
        rules()
    files = [f for f, _, _ in CASES]
    assert len(files) == len(set(files)), "duplicate case file names"
    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("# file<TAB>fragment onnxc's messages must contain[<TAB>options it is refused under].\n"
                "# Generated by make_bad_models.py.\n")
        for file, fragment, flags in CASES:
            f.write(f"{file}\t{fragment}\t{flags}\n" if flags else f"{file}\t{fragment}\n")
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
