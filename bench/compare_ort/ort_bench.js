// The ONNX Runtime peer of `onyx bench` (onnxruntime-node, CPU).
//
//   node ort_bench.js MODEL --inputs JSON [--threads N] [--iterations K] [--warmup K]
//                           [--free-dim NAME=VALUE ...] [--seed S]
//     JSON is the "inputs" object of an `onyx bench` line:
//     {"name": {"type": "float", "shape": [1, 3, 224, 224], "low": -1, "high": 1}, ...}.
//     Draws inputs from the same ranges (its own seeded generator: the same
//     distribution, not the same numbers), runs K untimed and K timed runs and
//     prints one JSON line with the fields `onyx bench` prints.
//   node ort_bench.js MODEL --run DIR [--threads N] [--free-dim NAME=VALUE ...]
//     Runs once on DIR/inputs.json ([{"name", "dtype", "dims", "file"}], raw
//     little-endian files beside it) and writes DIR/ort_outputs.json and one
//     raw file per output, for the agreement check.
//
// Session: intraOpNumThreads N, interOpNumThreads 1, sequential execution,
// graphOptimizationLevel 'all', free dimensions fixed by --free-dim (as onyx
// bench fixes every input shape).
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kTypedArrays = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array,
  bool: Uint8Array, float16: Uint16Array,
};
// ONNX type names (onyx bench) -> onnxruntime-node tensor types.
const kOrtTypes = {
  float: 'float32', double: 'float64', int8: 'int8', uint8: 'uint8', int16: 'int16', uint16: 'uint16',
  int32: 'int32', uint32: 'uint32', int64: 'int64', uint64: 'uint64', bool: 'bool',
};

function fail(message) {
  console.error(`ort_bench: ${message}`);
  process.exit(2);
}

function parseArgs(argv) {
  const args = {model: null, threads: 1, iterations: 20, warmup: 3, seed: 0, inputs: null, run: null, freeDims: {}};
  const positiveInt = (flag, text, min) => {
    if (!/^[0-9]+$/.test(text) || Number(text) < min) fail(`${flag} expects an integer >= ${min}, received '${text}'`);
    return Number(text);
  };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (!a.startsWith('--')) {
      if (args.model) fail(`more than one model given ('${args.model}', '${a}')`);
      args.model = a;
      continue;
    }
    if (i + 1 >= argv.length) fail(`missing value for flag ${a}`);
    const v = argv[++i];
    if (a === '--threads') args.threads = positiveInt(a, v, 1);
    else if (a === '--iterations') args.iterations = positiveInt(a, v, 1);
    else if (a === '--warmup') args.warmup = positiveInt(a, v, 0);
    else if (a === '--seed') args.seed = positiveInt(a, v, 0);
    else if (a === '--inputs') args.inputs = v;
    else if (a === '--run') args.run = v;
    else if (a === '--free-dim') {
      const m = /^([^=]+)=([0-9]+)$/.exec(v);
      if (!m) fail(`--free-dim expects NAME=VALUE, received '${v}'`);
      args.freeDims[m[1]] = Number(m[2]);
    } else fail(`unknown flag '${a}'`);
  }
  if (!args.model) fail('no model given');
  if (!args.inputs === !args.run) fail('give exactly one of --inputs and --run');
  return args;
}

// VmHWM / VmRSS in MiB, as onyx bench reads them.
function residentMiB() {
  const status = fs.readFileSync('/proc/self/status', 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s*(\\d+) kB`, 'm').exec(status)[1]) / 1024;
  return {peak: field('VmHWM'), current: field('VmRSS')};
}

// mulberry32: a small seeded generator of uniform floats in [0, 1).
function uniform(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomTensor(spec, next) {
  const type = kOrtTypes[spec.type];
  if (!type) fail(`input type ${spec.type} is not supported`);
  const count = spec.shape.reduce((x, y) => x * y, 1);
  const data = new kTypedArrays[type](count);
  const span = spec.high - spec.low;
  for (let i = 0; i < count; ++i) {
    const r = next();
    if (type === 'float32' || type === 'float64') data[i] = spec.low + r * span;
    else if (type === 'int64' || type === 'uint64') data[i] = BigInt(spec.low + Math.floor(r * span));
    else data[i] = spec.low + Math.floor(r * span);
  }
  return new ort.Tensor(type, data, spec.shape);
}

function median(sorted) {
  const n = sorted.length;
  return n % 2 ? sorted[(n - 1) / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

async function createSession(args) {
  const options = {intraOpNumThreads: args.threads, interOpNumThreads: 1, executionMode: 'sequential',
                   graphOptimizationLevel: 'all', freeDimensionOverrides: args.freeDims};
  const start = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, options);
  return {session, ms: Number(process.hrtime.bigint() - start) / 1e6};
}

async function bench(args) {
  const specs = JSON.parse(args.inputs);
  const startRss = residentMiB().current;
  const {session, ms: sessionMs} = await createSession(args);
  const next = uniform(args.seed + 1);
  const feeds = {};
  for (const [name, spec] of Object.entries(specs)) feeds[name] = randomTensor(spec, next);
  for (let i = 0; i < args.warmup; ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < args.iterations; ++i) {
    const start = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const peak = residentMiB().peak;
  const sorted = [...times].sort((x, y) => x - y);
  const round = (x, digits) => Number(x.toFixed(digits));
  console.log(JSON.stringify({
    engine: 'onnxruntime', version: ort.env.versions.node, model: args.model, threads: args.threads,
    inputs: specs, seed: args.seed, warmup: args.warmup, iterations: args.iterations,
    session_ms: round(sessionMs, 3), median_ms: round(median(sorted), 3),
    p90_ms: round(sorted[Math.ceil(0.9 * sorted.length) - 1], 3), min_ms: round(sorted[0], 3),
    mean_ms: round(times.reduce((x, y) => x + y, 0) / times.length, 3),
    peak_rss_mb: round(peak, 1), start_rss_mb: round(startRss, 1),
  }));
}

async function runOnce(args) {
  const specs = JSON.parse(fs.readFileSync(path.join(args.run, 'inputs.json'), 'utf8'));
  const {session} = await createSession(args);
  const feeds = {};
  for (const spec of specs) {
    const raw = fs.readFileSync(path.join(args.run, spec.file));
    const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
    feeds[spec.name] = new ort.Tensor(spec.dtype, new kTypedArrays[spec.dtype](buffer), spec.dims);
  }
  const results = await session.run(feeds);
  const written = [];
  for (const name of session.outputNames) {
    const t = results[name];
    const file = `ort_output_${written.length}.bin`;
    fs.writeFileSync(path.join(args.run, file), Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    written.push({name, dtype: t.type, dims: t.dims, file});
  }
  fs.writeFileSync(path.join(args.run, 'ort_outputs.json'), JSON.stringify(written));
}

const args = parseArgs(process.argv.slice(2));
(args.run ? runOnce(args) : bench(args)).catch((e) => {
  console.error(`ort_bench: ${e.message}`);
  process.exit(1);
});
