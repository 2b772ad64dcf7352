// Starts `cairn serve` on a free loopback port and waits until it is ready.
//   const s = await startServer(["--api-key", "k"]);  s.url, s.proc, await s.stop()
// The binary: $CAIRN_BIN, else build/release/src/cli/cairn. Output goes to
// stderr prefixed "[serve]" so that a failing test shows the server's side.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";
import assert from "node:assert/strict";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const cairnBin = process.env.CAIRN_BIN || path.join(root, "build/release/src/cli/cairn");

export async function startServer(extraArgs = [], { waitReady = true } = {}) {
  const proc = spawn(cairnBin, ["serve", "--port", "0", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stderr.on("data", (d) => process.stderr.write(`[serve] ${d}`));
  let out = "";
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60000);
    proc.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/[^\s]+)/);
      if (m && (!waitReady || /ready/.test(out))) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    proc.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${out}`)));
  });
  return {
    url,
    proc,
    exited,
    async stop(signal = "SIGTERM") {
      proc.kill(signal);
      return exited;
    },
  };
}

// A test runner small enough to read: named cases, run in order, counted.
export async function runCases(cases) {
  let failed = 0;
  for (const [name, fn] of cases) {
    try {
      await fn();
      console.log(`ok   ${name}`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}\n     ${e.stack || e}`);
    }
  }
  console.log(`${cases.length - failed}/${cases.length} passed`);
  return failed;
}

export async function getJson(url, init) {
  const r = await fetch(url, init);
  const text = await r.text();
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, headers: r.headers, body };
}

export function expectOpenAIError(res, status, { param, code } = {}) {
  assert.equal(res.status, status, JSON.stringify(res.body));
  const e = res.body.error;
  assert.ok(e && typeof e.message === "string" && e.message.length > 0, JSON.stringify(res.body));
  assert.ok("type" in e && "param" in e && "code" in e, JSON.stringify(res.body));
  if (param !== undefined) assert.equal(e.param, param, JSON.stringify(res.body));
  if (code !== undefined) assert.equal(e.code, code, JSON.stringify(res.body));
}

// Reads the SSE `data:` payloads of a fetch response and calls onData(payload) for each;
// onData returning false stops reading and cancels the body.
export async function readSse(res, onData) {
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += dec.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (frame.startsWith("data: ") && onData(frame.slice(6)) === false) {
        await reader.cancel().catch(() => {});
        return;
      }
    }
  }
}
