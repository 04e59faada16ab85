// Records ONNX Runtime's outputs as the expected values of generated cases
// (tests/conformance/new_opsets, tests/conformance/contrib_ops, tests/models/ort_cases).
//
//   node tests/conformance/record_ort.js CASES_DIR NODE_MODULES_DIR [REFUSED_FILE]
//
// For every CASES_DIR/<case>/model.onnx: creates an onnxruntime-node session
// (CPU, one thread, graph optimizations off so that no fusion changes the
// arithmetic) of the model, or of <case>/reference.onnx when the case has one
// (an equivalent graph of operators ONNX Runtime's CPU provider runs, with the
// same inputs and outputs), feeds test_data_set_0/input_N.pb in graph-input
// order and writes every output as test_data_set_0/output_N.pb (a TensorProto
// named like the model output). A case whose meta.json says
// "ort_optimization": "all" is recorded with ONNX Runtime's graph optimizations
// on instead (its fusions' arithmetic is the reference, e.g. QDQ groups run as
// QLinearConv). With REFUSED_FILE, a case ONNX Runtime refuses to load or to
// run is deleted and listed there with ONNX Runtime's message (such a case is
// not part of the suite); without, refusals are printed, the cases are left as
// they are and the exit status is 1.
//
// Needs onnxruntime-node (1.30.0 was used) in NODE_MODULES_DIR:
//   npm install --prefix DIR onnxruntime-node@1.30.0 --onnxruntime-node-install=skip
// The TensorProto reading and writing below covers what gen_cases.py writes
// (raw_data for numbers and bools, string_data for strings), so no protobuf
// package is needed.
'use strict';

const fs = require('fs');
const path = require('path');

// TensorProto.DataType -> onnxruntime-node tensor type and typed-array class.
const TYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array], 4: ['uint16', Uint16Array],
  5: ['int16', Int16Array], 6: ['int32', Int32Array], 7: ['int64', BigInt64Array], 8: ['string', null],
  9: ['bool', Uint8Array], 10: ['float16', Uint16Array], 11: ['float64', Float64Array], 12: ['uint32', Uint32Array],
  13: ['uint64', BigUint64Array],
};
const TYPE_CODES = Object.fromEntries(Object.entries(TYPES).map(([code, [name]]) => [name, Number(code)]));

function readVarint(buf, pos) {
  let value = 0n;
  let shift = 0n;
  for (;;) {
    const byte = buf[pos++];
    value |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return [value, pos];
    shift += 7n;
  }
}

function parseTensorProto(buf) {
  const tensor = { dims: [], dataType: 0, name: '', raw: null, strings: [] };
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n);
    const wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) tensor.dims.push(Number(BigInt.asIntN(64, v)));
      else if (field === 2) tensor.dataType = Number(v);
    } else if (wire === 2) {
      let len;
      [len, pos] = readVarint(buf, pos);
      const bytes = buf.subarray(pos, pos + Number(len));
      pos += Number(len);
      if (field === 1) {  // packed dims
        for (let p = 0; p < bytes.length;) {
          let v;
          [v, p] = readVarint(bytes, p);
          tensor.dims.push(Number(BigInt.asIntN(64, v)));
        }
      } else if (field === 6) tensor.strings.push(bytes.toString('utf8'));
      else if (field === 8) tensor.name = bytes.toString('utf8');
      else if (field === 9) tensor.raw = bytes;
      else throw new Error(`TensorProto field ${field} is not supported (write raw_data)`);
    } else if (wire === 5) {
      pos += 4;
    } else if (wire === 1) {
      pos += 8;
    } else {
      throw new Error(`unexpected wire type ${wire}`);
    }
  }
  return tensor;
}

function toOrtTensor(ort, proto) {
  const entry = TYPES[proto.dataType];
  if (!entry) throw new Error(`tensor '${proto.name}': data type ${proto.dataType} is not supported`);
  const [type, ArrayType] = entry;
  if (type === 'string') return new ort.Tensor('string', proto.strings, proto.dims);
  const raw = proto.raw || Buffer.alloc(0);
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  return new ort.Tensor(type, new ArrayType(copy.buffer, 0, raw.length / ArrayType.BYTES_PER_ELEMENT), proto.dims);
}

function varint(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    out.push(byte);
  } while (v !== 0n);
  return Buffer.from(out);
}

function lengthDelimited(field, bytes) {
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
}

// TensorProto bytes, fields in number order: dims (1), data_type (2), string_data (6), name (8), raw_data (9).
function serializeTensor(name, tensor) {
  const code = TYPE_CODES[tensor.type];
  if (code === undefined) throw new Error(`output '${name}': type ${tensor.type} is not supported`);
  const parts = [];
  for (const d of tensor.dims) parts.push(varint(1 << 3), varint(d));
  parts.push(varint(2 << 3), varint(code));
  if (tensor.type === 'string') {
    for (const s of tensor.data) parts.push(lengthDelimited(6, Buffer.from(s, 'utf8')));
  }
  parts.push(lengthDelimited(8, Buffer.from(name, 'utf8')));
  if (tensor.type !== 'string') {
    const data = tensor.data;
    parts.push(lengthDelimited(9, Buffer.from(data.buffer, data.byteOffset, data.byteLength)));
  }
  return Buffer.concat(parts);
}

function firstLine(error) {
  return String(error && error.message ? error.message : error).split('\n')[0].trim();
}

async function recordCase(ort, caseDir) {
  const dataDir = path.join(caseDir, 'test_data_set_0');
  let session;
  const metaPath = path.join(caseDir, 'meta.json');
  const meta = fs.existsSync(metaPath) ? JSON.parse(fs.readFileSync(metaPath, 'utf8')) : {};
  const level = meta.ort_optimization === 'all' ? 'all' : 'disabled';
  try {
    const reference = path.join(caseDir, 'reference.onnx');
    const model = fs.existsSync(reference) ? reference : path.join(caseDir, 'model.onnx');
    session = await ort.InferenceSession.create(model, {
      executionProviders: ['cpu'], graphOptimizationLevel: level, intraOpNumThreads: 1, interOpNumThreads: 1,
    });
  } catch (e) {
    return `load: ${firstLine(e)}`;
  }
  const feeds = {};
  try {
    session.inputNames.forEach((name, i) => {
      const proto = parseTensorProto(fs.readFileSync(path.join(dataDir, `input_${i}.pb`)));
      feeds[name] = toOrtTensor(ort, proto);
    });
  } catch (e) {
    throw new Error(`${caseDir}: reading inputs: ${firstLine(e)}`);
  }
  let results;
  try {
    results = await session.run(feeds);
  } catch (e) {
    return `run: ${firstLine(e)}`;
  }
  session.outputNames.forEach((name, i) => {
    fs.writeFileSync(path.join(dataDir, `output_${i}.pb`), serializeTensor(name, results[name]));
  });
  await session.release();
  return null;
}

async function main() {
  const [casesDir, nodeModules, refusedArg] = process.argv.slice(2);
  if (!casesDir || !nodeModules) {
    console.error('usage: node record_ort.js CASES_DIR NODE_MODULES_DIR [REFUSED_FILE]');
    process.exit(2);
  }
  const ort = require(path.join(path.resolve(nodeModules), 'onnxruntime-node'));
  ort.env.logLevel = 'fatal';  // a refusal is reported below, once
  const names = fs.readdirSync(casesDir).filter((n) => fs.existsSync(path.join(casesDir, n, 'model.onnx'))).sort();
  const refused = [];
  for (const name of names) {
    const reason = await recordCase(ort, path.join(casesDir, name));
    if (reason === null) continue;
    // ONNX Runtime's messages name the model's path, which is a temporary directory.
    refused.push(`${name}  # ${reason.split(path.join(casesDir, name, 'model.onnx')).join('model.onnx')}`);
    if (refusedArg) fs.rmSync(path.join(casesDir, name), { recursive: true, force: true });
  }
  const version = require(path.join(path.resolve(nodeModules), 'onnxruntime-node', 'package.json')).version;
  if (!refusedArg) {
    refused.forEach((line) => console.error(`refused: ${line}`));
    console.log(`recorded ${names.length - refused.length} cases with onnxruntime-node ${version}; ` +
                `${refused.length} refused`);
    if (refused.length > 0) process.exit(1);
    return;
  }
  fs.writeFileSync(refusedArg,
      `# Generated cases that onnxruntime-node ${version} (CPU) refuses to load or run; written by record_ort.js.\n` +
      `# They are not part of the suite.\n` + refused.map((line) => line + '\n').join(''));
  console.log(`recorded ${names.length - refused.length} cases with onnxruntime-node ${version}; ` +
              `${refused.length} refused (listed in ${refusedArg})`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
