// Helpers of the kill -9 test: one completion (whole or streamed) reduced to
// what must match a control run, a seeded random source, metrics, and the
// temporary files a kill leaves in the SSD folder.
import fs from "node:fs";
import path from "node:path";
import { readSse } from "../lib/server.mjs";

// Sends a /v1/completions body; resolves (never rejects) to
// { ok, text, finish, seed, logprobs, error }. ok: the answer ended normally.
// abortAfter > 0 (streams): the client leaves after that many chunks;
// onChunk() is called for each chunk that carries text.
export async function complete(url, body, { abortAfter = 0, onChunk = () => {} } = {}) {
  const out = { ok: false, text: "", finish: null, seed: null, logprobs: null, error: null };
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), 120000);
  try {
    const res = await fetch(`${url}/v1/completions`, {
      method: "POST", body: JSON.stringify(body), signal: ctl.signal });
    if (!body.stream) {
      const j = JSON.parse(await res.text());
      if (res.status !== 200) throw new Error(`status ${res.status}: ${JSON.stringify(j)}`);
      Object.assign(out, { text: j.choices[0].text, finish: j.choices[0].finish_reason,
        seed: j.seed, logprobs: j.choices[0].logprobs, ok: true });
      return out;
    }
    if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
    let chunks = 0, sawDone = false;
    await readSse(res, (data) => {
      if (data === "[DONE]") return (sawDone = true), false;
      const j = JSON.parse(data);
      if (j.error) throw new Error(`error frame: ${data}`);
      out.seed = j.seed;
      const c = j.choices[0];
      out.text += c.text;
      if (c.text) onChunk();
      if (c.logprobs) out.logprobs = mergeLogprobs(out.logprobs, c.logprobs);
      if (c.finish_reason) out.finish = c.finish_reason;
      if (abortAfter > 0 && ++chunks >= abortAfter) return ctl.abort(), false;
      return true;
    });
    out.ok = sawDone && out.finish !== null;
    // A streamed token's text_offset depends on how tokens were grouped into
    // events (text held back for a stop string): timing, not the answer.
    if (out.logprobs) delete out.logprobs.text_offset;
  } catch (e) {
    out.error = String(e);
  } finally {
    clearTimeout(timer);
  }
  return out;
}

function mergeLogprobs(a, b) {
  if (!a) return structuredClone(b);
  for (const k of ["tokens", "token_logprobs", "top_logprobs", "text_offset"]) a[k].push(...b[k]);
  return a;
}

// Deterministic uniform numbers in [0, 1).
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The server's Prometheus samples without labels, as numbers by name.
export async function serverMetrics(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out = {};
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-z_]+) (\S+)$/);
    if (m) out[m[1]] = Number(m[2]);
  }
  return out;
}

// Files in the tmp/ folders of every namespace under the SSD folder: writes a
// kill cut short (the next start removes them).
export function strayTemps(root) {
  if (!fs.existsSync(root)) return 0;
  let n = 0;
  for (const ns of fs.readdirSync(root)) {
    const tmp = path.join(root, ns, "tmp");
    if (fs.existsSync(tmp)) n += fs.readdirSync(tmp).length;
  }
  return n;
}
