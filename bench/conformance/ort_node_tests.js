// Runs the exported ONNX node-test cases through ONNX Runtime (onnxruntime-node)
// with the ONNX backend tolerances; prints "PASS case" / "FAIL case: reason" and
// a summary line. Usage: node ort_node_tests.js EXPORTED_DIR
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const ARRAYS = {float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
                int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
                int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array, float16: Uint16Array};
const ORT_TYPES = {float32: 'float32', float64: 'float64', int8: 'int8', uint8: 'uint8', int16: 'int16',
                   uint16: 'uint16', int32: 'int32', uint32: 'uint32', int64: 'int64', uint64: 'uint64',
                   bool: 'bool', float16: 'float16'};

function load(t) {
  const raw = fs.readFileSync(t.file);
  const buf = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  return new ARRAYS[t.dtype](buf);
}

function close(a, b, dtype) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; ++i) {
    if (dtype.startsWith('float') && dtype !== 'float16') {
      const x = Number(a[i]), y = Number(b[i]);
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      if (x === y) continue;
      if (!(Math.abs(x - y) <= 1e-7 + 1e-3 * Math.abs(y))) return false;
    } else if (a[i] !== b[i]) {
      return false;
    }
  }
  return true;
}

async function main() {
  const dir = process.argv[2];
  let passed = 0, failed = 0;
  for (const name of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, name, 'case.json');
    if (!fs.existsSync(file)) continue;
    const c = JSON.parse(fs.readFileSync(file));
    try {
      const session = await ort.InferenceSession.create(c.model);
      const feeds = {};
      for (const t of c.inputs) {
        if (!ORT_TYPES[t.dtype]) throw new Error('unsupported dtype ' + t.dtype);
        let data = load(t);
        if (t.dtype === 'bool') data = Array.from(data, (v) => v !== 0);
        feeds[t.name] = new ort.Tensor(ORT_TYPES[t.dtype], data, t.dims);
      }
      const out = await session.run(feeds);
      for (const t of c.outputs) {
        const got = out[t.name];
        if (!got) throw new Error('missing output ' + t.name);
        let want = load(t);
        let data = got.data;
        if (t.dtype === 'bool') { want = Array.from(want, (v) => v !== 0); data = Array.from(data, (v) => Boolean(v)); }
        if (JSON.stringify(got.dims) !== JSON.stringify(t.dims)) throw new Error('shape ' + got.dims + ' vs ' + t.dims);
        if (!close(data, want, t.dtype)) throw new Error('values differ in ' + t.name);
      }
      ++passed;
      console.log('PASS ' + name);
    } catch (e) {
      ++failed;
      console.log('FAIL ' + name + ': ' + String(e.message).split('\n')[0].slice(0, 150));
    }
  }
  console.log(`onnxruntime: ${passed}/${passed + failed} exported cases passed`);
}
main();
