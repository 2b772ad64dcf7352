// SIGTERM with generation checkpoints (the default model): the server stops
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

const common = ["--threads", "1"];  // the default model: slow enough to be cut
const work = fs.mkdtempSync(path.join(os.tmpdir(), "cairn_sigterm_"));
const timeout = 4;  // --shutdown-timeout: 3 s for the requests, 1 s kept for the flush
const durable = [...common, "--ssd-cache", path.join(work, "ssd"), "--generation-checkpoint", "5",
  "--shutdown-timeout", String(timeout)];
// 8 × 300 tokens: more than the default model generates in 3 s on one thread.
const bodies = [...Array(8).keys()].map((i) => ({
  prompt: `Once upon a time a little fox found a box number ${i}.`, max_tokens: 300,
  min_tokens: 300, temperature: 0.8, seed: 70 + i, stream: true }));

const cases = [
  ["SIGTERM cancels, flushes within --shutdown-timeout, exits 0; a restart resumes", async () => {
    let s = await startServer(durable);
    let stderr = "";
    s.proc.stderr.on("data", (d) => (stderr += d));
    const chunks = bodies.map(() => 0);
    const first = bodies.map((b, i) => complete(s.url, b, { onChunk: () => chunks[i]++ }));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const { code } = await s.stop("SIGTERM");
    const took = Date.now() - t0;
    assert.equal(code, 0);
    assert.ok(took < (timeout + 5 + 1) * 1000, `exit took ${took} ms`);
    assert.match(stderr, /flushed to disk/);
    const cut = await Promise.all(first);
    // A generation cut after its first token was checkpointed when cancelled.
    const started = cut.filter((a, i) => !a.ok && chunks[i] > 0).length;
    assert.ok(started >= 4, `only ${started} generations were cut after their first token`);
    assert.match(stderr, /cancelling \d+ requests/);

    s = await startServer(durable);
    const resumed = await Promise.all(bodies.map((b) => complete(s.url, b)));
    // (A token may have been emitted and checkpointed without reaching the client.)
    const m = await serverMetrics(s.url);
    const notAnswered = cut.filter((a) => !a.ok).length;
    assert.ok(m.cairn_checkpoints_resumed_total >= started &&
      m.cairn_checkpoints_resumed_total <= notAnswered,
      `${m.cairn_checkpoints_resumed_total} resumed, ${started} cut after a token, ${notAnswered} cut`);
    await s.stop("SIGTERM");

    const control = await startServer([]);
    const wants = await Promise.all(bodies.map((b) => complete(control.url, b)));
    await control.stop("SIGTERM");
    for (let i = 0; i < bodies.length; i++) {
      assert.ok(resumed[i].ok, resumed[i].error);
      assert.equal(resumed[i].text, wants[i].text, `request ${i} differs from the control run`);
    }
  }],
];

const failed = await runCases(cases);
fs.rmSync(work, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
