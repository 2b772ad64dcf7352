// Bounded load on loopback against `cairn serve` (default model):
//   phase 1: CLIENTS concurrent streaming clients × ROUNDS requests each;
//            zero errors; p50/p99 time to first token and inter-token latency.
//   phase 2: TOTAL requests (mixed streaming and not, CONCURRENCY at a time);
//            the server's resident memory after them stays within RSS_SLACK_MB
//            of what it was after the first WARMUP requests.
// Stops by itself: every phase is bounded in requests, the whole run by DEADLINE_S.
//   node tests/server/load/load.mjs [--clients 128] [--rounds 4] [--total 1000]
import assert from "node:assert/strict";
import fs from "node:fs";
import { parseArgs } from "node:util";
import { startServer } from "../lib/server.mjs";

const { values: a } = parseArgs({ options: {
  clients: { type: "string", default: "128" }, rounds: { type: "string", default: "4" },
  total: { type: "string", default: "1000" }, warmup: { type: "string", default: "200" },
  concurrency: { type: "string", default: "32" }, "max-tokens": { type: "string", default: "32" },
  "rss-slack-mb": { type: "string", default: "48" }, deadline: { type: "string", default: "900" },
} });
const CLIENTS = +a.clients, ROUNDS = +a.rounds, TOTAL = +a.total, WARMUP = +a.warmup;
const CONCURRENCY = +a.concurrency, MAX_TOKENS = +a["max-tokens"], RSS_SLACK_MB = +a["rss-slack-mb"];
setTimeout(() => {
  console.error(`load: past the ${a.deadline} s deadline`);
  process.exit(2);
}, +a.deadline * 1000).unref();

// The prefix cache is off: it grows by design up to its byte cap, which would
// hide (or fake) a leak in the resident-memory comparison.
const server = await startServer(["--max-connections", String(CLIENTS * 2), "--prefix-cache-bytes", "0"]);
const topics = ["a fox", "the sea", "a robot", "a tiny dragon", "the moon", "a lost key"];

// One streaming chat request; returns { ttft, gaps[] } in ms, or throws.
async function streamOnce(i) {
  const t0 = performance.now();
  const res = await fetch(`${server.url}/v1/chat/completions`, { method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ messages: [{ role: "user", content: `Tell me about ${topics[i % topics.length]}.` }],
      max_tokens: MAX_TOKENS, temperature: 0.8, seed: i, stream: true }) });
  if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "", ttft = null, last = null, done = false;
  const gaps = [];
  for (;;) {
    const { value, done: end } = await reader.read();
    if (end) break;
    buf += dec.decode(value, { stream: true });
    let k;
    while ((k = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, k);
      buf = buf.slice(k + 2);
      if (frame === "data: [DONE]") { done = true; continue; }
      if (!frame.startsWith("data: ")) continue;
      const c = JSON.parse(frame.slice(6));
      if (c.error) throw new Error(JSON.stringify(c.error));
      if (!c.choices[0]?.delta?.content) continue;
      const now = performance.now();
      if (ttft === null) ttft = now - t0;
      else gaps.push(now - last);
      last = now;
    }
  }
  if (!done) throw new Error("stream ended without [DONE]");
  return { ttft: ttft ?? performance.now() - t0, gaps };
}

async function plainOnce(i) {
  const res = await fetch(`${server.url}/v1/completions`, { method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: `Once upon a time ${topics[i % topics.length]}`, max_tokens: MAX_TOKENS,
      temperature: 0.8, seed: i }) });
  const body = await res.json();
  if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(body)}`);
}

const pct = (xs, p) => {
  const s = [...xs].sort((x, y) => x - y);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const rssMb = () => {
  const m = fs.readFileSync(`/proc/${server.proc.pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return Number(m[1]) / 1024;
};

// Phase 1.
const errors = [];
const ttfts = [], gaps = [];
const t1 = performance.now();
await Promise.all(Array.from({ length: CLIENTS }, async (_, c) => {
  for (let r = 0; r < ROUNDS; r++) {
    try {
      const x = await streamOnce(c * ROUNDS + r);
      ttfts.push(x.ttft);
      gaps.push(...x.gaps);
    } catch (e) {
      errors.push(String(e));
    }
  }
}));
const secs = (performance.now() - t1) / 1000;
console.log(`phase 1: ${CLIENTS} clients × ${ROUNDS} streaming requests in ${secs.toFixed(1)} s, ` +
  `${errors.length} errors`);
console.log(`  TTFT ms: p50 ${pct(ttfts, 50).toFixed(1)}  p99 ${pct(ttfts, 99).toFixed(1)}`);
console.log(`  inter-token ms: p50 ${pct(gaps, 50).toFixed(1)}  p99 ${pct(gaps, 99).toFixed(1)}  ` +
  `(${gaps.length + ttfts.length} tokens, ${((gaps.length + ttfts.length) / secs).toFixed(0)} tok/s)`);

// Phase 2.
let next = 0, rssWarm = null;
const rssTrace = [];
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < TOTAL) {
    const i = next++;
    try {
      await (i % 2 ? streamOnce(i) : plainOnce(i));
    } catch (e) {
      errors.push(String(e));
    }
    if (i === WARMUP) rssWarm = rssMb();
    if (i % 100 === 0) rssTrace.push(rssMb().toFixed(0));
  }
}));
const rssEnd = rssMb();
console.log(`phase 2: ${TOTAL} requests; resident memory ${rssWarm.toFixed(1)} MB after ${WARMUP}, ` +
  `${rssEnd.toFixed(1)} MB after ${TOTAL} (every 100: ${rssTrace.join(" ")})`);

const { code } = await server.stop();
if (errors.length) console.log(`errors (first 5):\n  ${errors.slice(0, 5).join("\n  ")}`);
assert.equal(errors.length, 0, "requests failed");
assert.ok(rssEnd - rssWarm <= RSS_SLACK_MB, `resident memory grew ${(rssEnd - rssWarm).toFixed(1)} MB`);
assert.equal(code, 0);
console.log("load: ok");
