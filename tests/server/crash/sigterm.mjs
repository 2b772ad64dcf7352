// SIGTERM with generation checkpoints (stories260K): the server stops
// admitting, gives requests in flight what --shutdown-timeout allows, cancels
// the rest, flushes the SSD tier and the checkpoints within the same timeout,
// and exits 0. After a restart each cancelled generation resumes where it
// stood, and its answer equals an uninterrupted control run's.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, runCases } from "../lib/server.mjs";
import { complete, serverMetrics } from "./crash_lib.mjs";

const shared = process.env.CAIRN_SHARED_DIR || path.resolve(import.meta.dirname, "../../../../shared");
const common = ["--model", path.join(shared, "models/stories260K"), "--threads", "1"];
const work = fs.mkdtempSync(path.join(os.tmpdir(), "cairn_sigterm_"));
const durable = [...common, "--ssd-cache", path.join(work, "ssd"), "--generation-checkpoint", "5",
  "--shutdown-timeout", "1"];
const bodies = [...Array(16).keys()].map((i) => ({
  prompt: `Once upon a time a little fox found a box number ${i}.`, max_tokens: 450,
  min_tokens: 450, temperature: 0.8, seed: 70 + i, stream: i % 2 === 0 }));

const cases = [
  ["SIGTERM cancels, flushes within --shutdown-timeout, exits 0; a restart resumes", async () => {
    let s = await startServer(durable);
    let stderr = "";
    s.proc.stderr.on("data", (d) => (stderr += d));
    const first = bodies.map((b) => complete(s.url, b));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const { code } = await s.stop("SIGTERM");
    const took = Date.now() - t0;
    assert.equal(code, 0);
    assert.ok(took < 1000 + 5000 + 1000, `exit took ${took} ms`);
    assert.match(stderr, /flushed to disk/);
    const cut = await Promise.all(first);
    assert.ok(cut.every((a) => !a.ok), "a request finished 450 tokens before SIGTERM");
    assert.match(stderr, /cancelling 16 requests/);

    s = await startServer(durable);
    const resumed = await Promise.all(bodies.map((b) => complete(s.url, b)));
    const m = await serverMetrics(s.url);
    assert.equal(m.cairn_checkpoints_resumed_total, bodies.length);
    await s.stop("SIGTERM");

    const control = await startServer(common);
    for (let i = 0; i < bodies.length; i++) {
      assert.ok(resumed[i].ok, resumed[i].error);
      const want = await complete(control.url, bodies[i]);
      assert.equal(resumed[i].text, want.text, `request ${i} differs from the control run`);
    }
    await control.stop("SIGTERM");
  }],
];

const failed = await runCases(cases);
fs.rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
