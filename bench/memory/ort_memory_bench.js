// The ONNX Runtime peer of onyx_memory_bench: same model, same input, same
// number of runs; prints one JSON line with peak RSS and mean time per run.
//   node ort_memory_bench.js MODEL.onnx INPUT.bin INPUT.json [--runs N] [--sessions N]
// INPUT.json: {"name": ..., "dtype": "float32"|"int64", "dims": [...]}
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, bin, meta] = process.argv.slice(2, 5);
  const args = process.argv.slice(5);
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 20;
  const count = args.includes('--sessions') ? Number(args[args.indexOf('--sessions') + 1]) : 1;
  const info = JSON.parse(fs.readFileSync(meta));
  const raw = fs.readFileSync(bin);
  const buffer = raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength);
  const data = info.dtype === 'int64' ? new BigInt64Array(buffer) : new Float32Array(buffer);
  const sessions = [];
  for (let i = 0; i < count; ++i) sessions.push(await ort.InferenceSession.create(model));
  let total = 0, timed = 0;
  for (const session of sessions) {
    for (let r = 0; r < runs; ++r) {
      const start = process.hrtime.bigint();
      await session.run({[info.name]: new ort.Tensor(info.dtype, data, info.dims)});
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (r > 0) { total += ms; ++timed; }
    }
  }
  console.log(JSON.stringify({engine: 'onnxruntime', sessions: count,
                              peak_rss_kib: process.resourceUsage().maxRSS, mean_ms: total / timed}));
}
main().catch((e) => { console.error(e.message); process.exit(1); });
