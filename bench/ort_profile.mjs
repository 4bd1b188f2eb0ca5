#!/usr/bin/env node
// Time of each node in ONNX Runtime (CPU, one thread), from its own profiler: the counterpart
// of bench/layer_profile.py for the other runtime, to see which layers it runs faster.
//
//   node bench/ort_profile.mjs MODEL_DIR --ort DIR_WITH_node_modules [--runs 50] [--top 40]
//
// MODEL_DIR holds model.onnx and test_data_set_0/input_*.pb (the values both runtimes are
// timed on). Prints, per node, the median over the runs of its kernel time, its share of the
// sum, its op and the node name ORT gave it after its graph optimizations (fused and
// re-laid-out nodes keep a recognisable name: '..._nchwc', 'ReorderInput', ...).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const args = process.argv.slice(2);
const opt = (k, d) => { const i = args.indexOf(k); return i >= 0 ? args[i + 1] : d; };
const dir = args[0];
const ortDir = opt('--ort');
if (!dir || !ortDir) {
  console.error('usage: node bench/ort_profile.mjs MODEL_DIR --ort DIR [--runs N] [--top N]');
  process.exit(2);
}
const runs = Number(opt('--runs', '50'));
const top = Number(opt('--top', '40'));
const ort = createRequire(path.join(path.resolve(ortDir), 'ort-run.mjs'))('onnxruntime-node');

// The inputs: float tensors with raw_data only (the corpus's test data), read by a minimal
// TensorProto decoder (dims: field 1, data_type: 2, name: 8, raw_data: 9).
function readVarint(b, p) {
  let r = 0, s = 1;
  for (;;) { const x = b[p.i++]; r += (x & 0x7f) * s; s *= 128; if (!(x & 0x80)) return r; }
}
const TYPES = { 1: ['float32', Float32Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array] };
function readTensor(file) {
  const buf = fs.readFileSync(file);
  const p = { i: 0 }, dims = [];
  let type = 1, name = '', raw = null;
  while (p.i < buf.length) {
    const key = readVarint(buf, p), field = key >> 3, wire = key & 7;
    if (wire === 0) { const v = readVarint(buf, p); if (field === 1) dims.push(v); else if (field === 2) type = v; }
    else if (wire === 2) {
      const n = readVarint(buf, p), sub = buf.subarray(p.i, p.i + n); p.i += n;
      if (field === 8) name = sub.toString('utf8'); else if (field === 9) raw = Buffer.from(sub);
      else if (field === 1) { const q = { i: 0 }; while (q.i < sub.length) dims.push(readVarint(sub, q)); }
    } else if (wire === 5) p.i += 4; else if (wire === 1) p.i += 8;
    else throw new Error(`${file}: unsupported wire type ${wire}`);
  }
  if (!TYPES[type] || !raw) throw new Error(`${file}: only raw float32/int32/int64 inputs are read`);
  const [typeName, Array_] = TYPES[type];
  const data = new Array_(raw.buffer, raw.byteOffset, raw.length / Array_.BYTES_PER_ELEMENT);
  return { name, tensor: new ort.Tensor(typeName, data, dims) };
}

const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-')), 'profile');
const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
  intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential', enableProfiling: true,
  profileFilePrefix: prefix,
});
const setDir = path.join(dir, 'test_data_set_0');
const feeds = {};
fs.readdirSync(setDir).filter((f) => /^input_\d+\.pb$/.test(f)).sort().forEach((f, k) => {
  const { name, tensor } = readTensor(path.join(setDir, f));
  feeds[name || session.inputNames[k]] = tensor;
});
for (let k = 0; k < 5; k++) await session.run(feeds);  // warm-up runs are profiled too: dropped below
for (let k = 0; k < runs; k++) await session.run(feeds);
session.endProfiling();  // onnxruntime-node returns nothing: the file is the one under the prefix
const profileDir = path.dirname(prefix);
const file = path.join(profileDir, fs.readdirSync(profileDir).find((f) => f.endsWith('.json')));

// One event per node and run: '<node>_kernel_time' with its op in args.op_name.
const times = new Map();
for (const ev of JSON.parse(fs.readFileSync(file, 'utf8'))) {
  if (ev.cat !== 'Node' || !ev.name.endsWith('_kernel_time')) continue;
  const node = ev.name.slice(0, -'_kernel_time'.length);
  if (!times.has(node)) times.set(node, { op: ev.args.op_name, us: [] });
  times.get(node).us.push(ev.dur);
}
const median = (v) => { const s = v.slice(-runs).sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const rows = [...times].map(([node, t]) => ({ node, op: t.op, us: median(t.us) })).sort((a, b) => b.us - a.us);
const sum = rows.reduce((s, r) => s + r.us, 0);
console.log(`       us     %  node (median of ${runs} runs; sum ${sum.toFixed(1)} us)`);
for (const r of rows.slice(0, top))
  console.log(`${r.us.toFixed(1).padStart(9)} ${(100 * r.us / sum).toFixed(1).padStart(5)}  ${r.op} ${r.node}`);
