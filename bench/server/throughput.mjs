// Tokens/s through HTTP against the in-process engine on the same load:
// `cairn bench --load` (random-id prompts, greedy, fixed output length, prefix
// cache off), then the same requests as streamed /v1/completions from
// CONCURRENCY clients. Prints both rates and their ratio (target ≥ 0.95).
//   node bench/server/throughput.mjs [--requests 128] [--concurrency 16] [--prompt 64] [--output 64]
import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startServer, cairnBin } from "../../tests/server/lib/server.mjs";

const { values: a } = parseArgs({ options: {
  requests: { type: "string", default: "128" }, concurrency: { type: "string", default: "16" },
  prompt: { type: "string", default: "64" }, output: { type: "string", default: "64" },
  model: { type: "string", default: "" },
} });
const R = +a.requests, C = +a.concurrency, P = +a.prompt, O = +a.output;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const modelArgs = ["--model", a.model || path.join(root, "models/default")];
const common = ["--kv-budget", "1GiB", "--max-seqs", String(Math.max(C, 1))];

const bench = execFileSync(cairnBin, ["bench", "--load", ...modelArgs, ...common, "--requests", String(R),
  "--concurrency", String(C), "--request-tokens", String(P), "--output-tokens", String(O),
  "--prefix-cache", "off"], { encoding: "utf8" });
const m = bench.match(/generated\s+([\d.]+) tok\/s/);
if (!m) throw new Error(`no rate in:\n${bench}`);
const inProcess = Number(m[1]);

const server = await startServer([...modelArgs, ...common, "--prefix-cache-bytes", "0"]);
const VOCAB = 8000;  // random ids below this: inside the default model's 8,192 and larger vocabularies
const ids = (i) => Array.from({ length: P }, (_, k) => 3 + ((i * 1000003 + k * 7919) % (VOCAB - 3)));
let next = 0, generated = 0;
const t0 = performance.now();
await Promise.all(Array.from({ length: C }, async () => {
  while (next < R) {
    const i = next++;
    const res = await fetch(`${server.url}/v1/completions`, { method: "POST",
      body: JSON.stringify({ prompt: ids(i), max_tokens: O, min_tokens: O, temperature: 0, stream: true,
        stream_options: { include_usage: true } }) });
    const text = await res.text();
    const usage = text.split("\n\n").filter((f) => f.startsWith("data: {"))
      .map((f) => JSON.parse(f.slice(6))).find((c) => c.usage)?.usage;
    if (!usage) throw new Error(`no usage: ${text.slice(0, 300)}`);
    generated += usage.completion_tokens;
  }
}));
const http = generated / ((performance.now() - t0) / 1000);
await server.stop();
console.log(`${R} requests, ${C} at a time, prompt ${P}, output ${O} tokens`);
console.log(`in-process engine: ${inProcess.toFixed(1)} tok/s`);
console.log(`through HTTP:      ${http.toFixed(1)} tok/s = ${(100 * http / inProcess).toFixed(1)}% (target ≥ 95%)`);
