#!/usr/bin/env node
// The reference values of `onnxc validate --layers`: ONNX Runtime (npm onnxruntime-node, CPU) runs
// the model with every value a node of its main graph computes added as a graph output, and each
// of them is written as a TensorProto named by its ONNX value to test_data_set_N/layers/.
//
//   node write-layers.mjs DIR                  DIR/model.onnx on each DIR/test_data_set_*
//   node write-layers.mjs MODEL.onnx SET...    the model on these test_data_set directories
//
// Set up once: `npm ci` in this folder. The model is not changed: the extra outputs go into a
// copy beside it (so that external data files are found), removed afterwards.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

// ---- protobuf wire format: only what ModelProto, GraphProto, NodeProto, ValueInfoProto and
// TensorProto need here (field numbers from onnx.proto) ----

function varint(buf, at) {
  let value = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = buf[at.pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return value;
  }
}

function encodeVarint(value) {
  const bytes = [];
  let v = BigInt.asUintN(64, BigInt(value));
  do {
    const low = Number(v & 0x7fn);
    v >>= 7n;
    bytes.push(v ? low | 0x80 : low);
  } while (v);
  return Buffer.from(bytes);
}

// Calls visit(field, wireType, value) for each field of a message; value is a BigInt for
// varints, a Buffer for length-delimited fields, null for fixed-size ones (skipped).
function fields(buf, visit) {
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const key = Number(varint(buf, at));
    const field = key >> 3, wire = key & 7;
    if (wire === 0) visit(field, wire, varint(buf, at));
    else if (wire === 2) {
      const n = Number(varint(buf, at));
      visit(field, wire, buf.subarray(at.pos, at.pos + n));
      at.pos += n;
    } else if (wire === 1) at.pos += 8;
    else if (wire === 5) at.pos += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}

const lengthDelimited = (field, bytes) => Buffer.concat([encodeVarint((field << 3) | 2), encodeVarint(bytes.length), bytes]);
const varintField = (field, value) => Buffer.concat([encodeVarint(field << 3), encodeVarint(value)]);
const text = (b) => Buffer.from(b).toString('utf8');

// The names of the values the main graph's nodes compute, in node order, and of its outputs.
function graphValues(model) {
  const computed = [], outputs = new Set();
  fields(model, (field, wire, graph) => {
    if (field !== 7 || wire !== 2) return;  // ModelProto.graph
    fields(graph, (gf, gw, value) => {
      if (gw !== 2) return;
      if (gf === 1) fields(value, (nf, nw, name) => { if (nf === 2 && nw === 2 && name.length) computed.push(text(name)); });
      if (gf === 12) fields(value, (vf, vw, name) => { if (vf === 1 && vw === 2) outputs.add(text(name)); });
    });
  });
  return { computed, outputs };
}

// The model with `names` as extra graph outputs: a second ModelProto.graph field holding only
// GraphProto.output entries, which protobuf merges into the first (repeated fields append).
function withOutputs(model, names) {
  const extra = names.map((name) => lengthDelimited(12, lengthDelimited(1, Buffer.from(name, 'utf8'))));
  return Buffer.concat([model, lengthDelimited(7, Buffer.concat(extra))]);
}

// ---- TensorProto ----
const TYPES = { 1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32', 7: 'int64', 9: 'bool',
  10: 'float16', 11: 'float64', 12: 'uint32', 13: 'uint64' };
const TYPE_IDS = Object.fromEntries(Object.entries(TYPES).map(([id, name]) => [name, Number(id)]));
const ARRAYS = { float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array, int16: Int16Array,
  int32: Int32Array, int64: BigInt64Array, bool: Uint8Array, float16: Uint16Array, float64: Float64Array,
  uint32: Uint32Array, uint64: BigUint64Array };

// An input file: dims, data type and raw_data or the typed repeated fields.
function readTensor(file) {
  const t = { dims: [], type: 1, raw: null, floats: [], int32s: [], int64s: [], doubles: [] };
  fields(fs.readFileSync(file), (field, wire, v) => {
    if (field === 1 && wire === 0) t.dims.push(Number(BigInt.asIntN(64, v)));
    else if (field === 1 && wire === 2) { const at = { pos: 0 }; while (at.pos < v.length) t.dims.push(Number(BigInt.asIntN(64, varint(v, at)))); }
    else if (field === 2) t.type = Number(v);
    else if (field === 9) t.raw = Buffer.from(v);
    else if (field === 4 && wire === 2) for (let k = 0; k < v.length; k += 4) t.floats.push(v.readFloatLE(k));
    else if (field === 5 && wire === 2) { const at = { pos: 0 }; while (at.pos < v.length) t.int32s.push(Number(BigInt.asIntN(32, varint(v, at)))); }
    else if (field === 7 && wire === 2) { const at = { pos: 0 }; while (at.pos < v.length) t.int64s.push(BigInt.asIntN(64, varint(v, at))); }
    else if (field === 10 && wire === 2) for (let k = 0; k < v.length; k += 8) t.doubles.push(v.readDoubleLE(k));
  });
  const type = TYPES[t.type];
  if (!type) throw new Error(`${file}: tensor type ${t.type} is not supported here`);
  const Array = ARRAYS[type];
  let data;
  if (t.raw) data = new Array(t.raw.buffer.slice(t.raw.byteOffset, t.raw.byteOffset + t.raw.length));
  else if (type === 'float32') data = Float32Array.from(t.floats);
  else if (type === 'float64') data = Float64Array.from(t.doubles);
  else if (type === 'int64') data = BigInt64Array.from(t.int64s);
  else data = Array.from(t.int32s);
  return new ort.Tensor(type, data, t.dims);
}

function tensorProto(name, tensor) {
  const id = TYPE_IDS[tensor.type];
  if (!id) return null;  // strings: not compared by validate --layers
  const data = tensor.data;
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parts = tensor.dims.map((d) => varintField(1, d));
  parts.push(varintField(2, id), lengthDelimited(8, Buffer.from(name, 'utf8')), lengthDelimited(9, raw));
  return Buffer.concat(parts);
}

// ---- main ----
const args = process.argv.slice(2);
if (!args.length || args[0] === '--help') {
  console.log('usage: node write-layers.mjs DIR | MODEL.onnx TEST_DATA_SET_DIR...');
  process.exit(args.length ? 0 : 2);
}
const modelFile = fs.statSync(args[0]).isDirectory() ? path.join(args[0], 'model.onnx') : args[0];
const setDirs = args.length > 1 ? args.slice(1)
  : fs.readdirSync(path.dirname(modelFile)).filter((d) => d.startsWith('test_data_set_')).sort()
    .map((d) => path.join(path.dirname(modelFile), d));

const model = fs.readFileSync(modelFile);
const { computed, outputs } = graphValues(model);
const extra = [...new Set(computed)].filter((name) => !outputs.has(name));
const copy = path.join(path.dirname(modelFile), `.${path.basename(modelFile)}.layers-${process.pid}.onnx`);
fs.writeFileSync(copy, withOutputs(model, extra));
let session;
try {
  session = await ort.InferenceSession.create(copy, { executionProviders: ['cpu'], intraOpNumThreads: 1 });
} finally {
  fs.rmSync(copy, { force: true });
}
for (const dir of setDirs) {
  const inputs = fs.readdirSync(dir).filter((f) => /^input_\d+\.pb$/.test(f))
    .sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
  const feeds = {};
  inputs.forEach((f, i) => { feeds[session.inputNames[i]] = readTensor(path.join(dir, f)); });
  const results = await session.run(feeds);
  const layers = path.join(dir, 'layers');
  fs.rmSync(layers, { recursive: true, force: true });
  fs.mkdirSync(layers, { recursive: true });
  let written = 0;
  computed.forEach((name, i) => {
    const bytes = results[name] && tensorProto(name, results[name]);
    if (!bytes) return;
    fs.writeFileSync(path.join(layers, `${String(i).padStart(4, '0')}.pb`), bytes);
    ++written;
  });
  console.log(`${dir}: ${written} values in ${layers}`);
}
