// ONNX Runtime's runner (ort-run.mjs, same arguments) with its graph optimisations disabled: every
// operator as ONNX defines it (QuantizeLinear, DequantizeLinear, the float operator between them),
// not the fused integer kernels ONNX Runtime substitutes for QDQ groups, which round otherwise
// (docs/quantization.md, "ONNX Runtime's optimised run and the definition").
//   ORT_DIR=/work/ort node ort_run_definition.mjs DIR [--check]
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ortDir = process.env.ORT_DIR || '/work/ort';
const ort = createRequire(path.join(ortDir, 'ort-run.mjs'))('onnxruntime-node');
const create = ort.InferenceSession.create.bind(ort.InferenceSession);
ort.InferenceSession.create = (model, options = {}) => create(model, { ...options, graphOptimizationLevel: 'disabled' });
await import(pathToFileURL(path.join(ortDir, 'ort-run.mjs')).href);
