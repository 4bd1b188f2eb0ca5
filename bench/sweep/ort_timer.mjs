#!/usr/bin/env node
// ONNX Runtime timer of the operator sweep (bench/sweep/sweep.py), one process for the whole run:
// starting node and loading onnxruntime-node per measurement would cost more than most cases.
//
//   node ort_timer.mjs ORT_DIR
//
// ORT_DIR is the folder of ort-run.mjs with its node_modules (onnxruntime-node). Reads one JSON
// request per line on stdin, {"dir": CASE_DIR, "runs": N, "threads": T}, and answers one JSON line
// {"median_us": X} (or {"error": "..."}). It times CASE_DIR/model.onnx on the inputs of
// CASE_DIR/test_data_set_0 (input_N.pb, float32 / int64 raw_data as sweep.py writes them) the
// way ort-run.mjs --bench does: warm-up, then N timed session.run calls, the median. Sessions stay
// open between requests, so later rounds of a case skip the model load.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

const ortDir = process.argv[2];
if (!ortDir) { console.error('usage: node ort_timer.mjs ORT_DIR'); process.exit(2); }
const ort = createRequire(path.join(path.resolve(ortDir), 'ort-run.mjs'))('onnxruntime-node');

// The TensorProto fields sweep.py writes: dims (1), data_type (2), name (8), raw_data (9).
const TYPES = { 1: ['float32', Float32Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array] };
function readVarint(b, p) {
  let r = 0n, s = 0n;
  for (;;) { const x = b[p.i++]; r |= BigInt(x & 0x7f) << s; s += 7n; if (!(x & 0x80)) return r; }
}
function decodeTensor(buf) {
  const p = { i: 0 }; const dims = []; let type = 1, name = '', raw = null;
  while (p.i < buf.length) {
    const key = Number(readVarint(buf, p)); const field = key >> 3, wt = key & 7;
    if (wt === 0) {
      const v = readVarint(buf, p);
      if (field === 1) dims.push(Number(v)); else if (field === 2) type = Number(v);
    } else if (wt === 2) {
      const n = Number(readVarint(buf, p)); const sub = buf.subarray(p.i, p.i + n); p.i += n;
      if (field === 1) { const q = { i: 0 }; while (q.i < sub.length) dims.push(Number(readVarint(sub, q))); }
      else if (field === 8) name = Buffer.from(sub).toString('utf8');
      else if (field === 9) raw = Buffer.from(sub);
    } else throw new Error(`unexpected wire type ${wt} (sweep.py writes raw_data tensors only)`);
  }
  if (!TYPES[type] || !raw) throw new Error(`tensor ${name}: only raw float32/int32/int64 data is read`);
  const [tname, A] = TYPES[type];
  const copy = new Uint8Array(raw.length); copy.set(raw);
  return { name, tensor: new ort.Tensor(tname, new A(copy.buffer, 0, raw.length / A.BYTES_PER_ELEMENT), dims) };
}

const sessions = new Map();
async function open(dir, threads) {
  const key = `${dir}|${threads}`;
  if (!sessions.has(key)) {
    const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'),
      { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential' });
    const set = path.join(dir, 'test_data_set_0');
    const files = fs.readdirSync(set).filter((f) => /^input_\d+\.pb$/.test(f))
      .sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
    const feeds = {};
    files.forEach((f, k) => { const t = decodeTensor(fs.readFileSync(path.join(set, f))); feeds[t.name || session.inputNames[k]] = t.tensor; });
    sessions.set(key, { session, feeds });
  }
  return sessions.get(key);
}

async function time(dir, runs, threads) {
  const { session, feeds } = await open(dir, threads);
  for (let k = 0; k < Math.max(5, runs / 10); k++) await session.run(feeds);
  const times = [];
  for (let k = 0; k < runs; k++) {
    const t0 = process.hrtime.bigint(); await session.run(feeds); times.push(Number(process.hrtime.bigint() - t0) / 1e3);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)];
}

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let answer;
  try {
    const req = JSON.parse(line);
    answer = { median_us: await time(req.dir, req.runs || 20, req.threads || 1) };
  } catch (e) {
    answer = { error: String(e && e.message || e) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
