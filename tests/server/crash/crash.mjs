// kill -9 against generation checkpoints and the SSD tier (stories260K).
// A server with --generation-checkpoint and --ssd-cache (a small RAM tier, so
// pages spill and are restored) serves concurrent completions, streamed or
// not, greedy, seeded or with a server-chosen seed; at random moments it is
// killed with SIGKILL, restarted on the same folder, and every request not yet
// answered is sent again. Checked:
//   - every completed answer equals, byte for byte, an uninterrupted control
//     server's answer to the same request (with the seed the answer reports);
//   - no finished answer is ever resumed: sending a completed request again
//     resumes nothing (the resume counter stays) and, with a server-chosen seed,
//     gets a new seed;
//   - no file that fails a check is ever found (a kill never leaves a partly
//     written file under a final name), so no corrupt page can be served;
//   - the run resumed checkpoints, and some kills hit writes in flight
//     (temporary files left behind, removed at the next start).
// Bounded: CRASH_KILLS kills (default 60), then what is pending finishes;
// CRASH_SEED picks the moments. Exits non-zero on any failure.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startServer, getJson } from "../lib/server.mjs";
import { complete, mulberry32, serverMetrics, strayTemps } from "./crash_lib.mjs";

const shared = process.env.CAIRN_SHARED_DIR || path.resolve(import.meta.dirname, "../../../../shared");
const model = path.join(shared, "models/stories260K");
const kills = Number(process.env.CRASH_KILLS || 60);
const seed = Number(process.env.CRASH_SEED || 20261203);
const deadline = Date.now() + Number(process.env.CRASH_SECONDS || 600) * 1000;
const rand = mulberry32(seed);
const work = fs.mkdtempSync(path.join(os.tmpdir(), "cairn_crash_"));
const common = ["--model", model, "--threads", "1", "--max-seqs", "8", "--read-timeout", "10"];
const durable = [...common, "--ssd-cache", path.join(work, "ssd"), "--generation-checkpoint", "3",
  "--prefix-cache-bytes", "256KiB"];

// A request: a shared story opening (three pages and more), its own ending.
const opening = "Once upon a time there was a little fox who lived by a big river. " +
  "Every day the fox ran to the water and looked at the fish. ".repeat(3);
let nextId = 0;
function newRequest() {
  const id = nextId++;
  const kind = id % 4;  // greedy, seeded, server-chosen seed, seeded with logprobs and stop
  const body = {
    prompt: `${opening}Story ${id}: the fox met a ${["cat", "bird", "frog", "bear"][id % 4]}.`,
    max_tokens: 120 + Math.floor(rand() * 180),
    temperature: kind === 0 ? 0 : 0.9,
    stream: rand() < 0.5,
  };
  if (kind === 1 || kind === 3) body.seed = 1000 + id;
  if (kind === 3) Object.assign(body, { logprobs: 2, stop: ["bear."] });
  return { id, body, answers: [] };
}

const pending = [];
const done = [];
let stats = { kills: 0, resumed: 0, strays: 0, completedWhileKilling: 0, neverResumedChecks: 0 };

function topUp() {
  while (pending.length < 8) pending.push(newRequest());
}

// Resends one completed request alone: nothing may be resumed.
async function checkFinishedNotResumed(url) {
  const r = done[Math.floor(rand() * done.length)];
  const before = await serverMetrics(url);
  const a = await complete(url, r.body);
  assert.ok(a.ok, `resend of finished request ${r.id}: ${a.error}`);
  const after = await serverMetrics(url);
  assert.equal(after.cairn_checkpoints_resumed_total, before.cairn_checkpoints_resumed_total,
    `finished request ${r.id} was resumed`);
  if (r.body.seed === undefined)
    assert.ok(r.answers.every((p) => p.seed !== a.seed), `finished request ${r.id} kept its seed`);
  r.answers.push(a);
  stats.neverResumedChecks++;
}

async function cycle(kill) {
  const s = await startServer(durable);
  try {
    const h = (await getJson(`${s.url}/health`)).body.prefix_cache;
    assert.equal(h.checkpoints_corrupt, 0, "a checkpoint failed a check");
    assert.equal((await serverMetrics(s.url)).cairn_ssd_corrupt_total, 0,
      "a page file failed a check");
    if (kill && done.length > 0 && stats.kills % 3 === 0) await checkFinishedNotResumed(s.url);
    const before = (await serverMetrics(s.url)).cairn_checkpoints_resumed_total;
    const batch = pending.slice();
    const runs = batch.map((r) =>
      complete(s.url, r.body, { abortAfter: kill && r.body.stream && rand() < 0.1 ? 8 : 0 }));
    if (kill) {
      await new Promise((res) => setTimeout(res, 30 + rand() * 700));
      stats.resumed += (await serverMetrics(s.url)).cairn_checkpoints_resumed_total - before;
      s.proc.kill("SIGKILL");
      await s.exited;
      stats.kills++;
    }
    const answers = await Promise.all(runs);
    for (let i = 0; i < batch.length; i++) {
      if (!answers[i].ok) continue;  // cut by the kill, or the client left: send it again
      batch[i].answers.push(answers[i]);
      done.push(batch[i]);
      pending.splice(pending.indexOf(batch[i]), 1);
      if (kill) stats.completedWhileKilling++;
    }
    if (!kill) {
      stats.resumed += (await serverMetrics(s.url)).cairn_checkpoints_resumed_total - before;
      const { code } = await s.stop("SIGTERM");
      assert.equal(code, 0, "serve exited non-zero after SIGTERM");
    }
  } finally {
    if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill("SIGKILL");
  }
  stats.strays += strayTemps(path.join(work, "ssd"));
}

// Every answer against a control server (no checkpoints, no SSD tier, never
// killed) given the same request with the seed the answer reported.
async function control() {
  const s = await startServer(common);
  let compared = 0;
  try {
    const all = done.flatMap((r) => r.answers.map((a) => ({ r, a })));
    for (let i = 0; i < all.length; i += 8) {
      await Promise.all(all.slice(i, i + 8).map(async ({ r, a }) => {
        const want = await complete(s.url, { ...r.body, seed: a.seed });
        assert.ok(want.ok, `control of request ${r.id}: ${want.error}`);
        assert.equal(a.text, want.text, `request ${r.id}: text differs from the control run`);
        assert.equal(a.finish, want.finish, `request ${r.id}: finish_reason differs`);
        assert.deepEqual(a.logprobs, want.logprobs, `request ${r.id}: logprobs differ`);
        compared++;
      }));
    }
  } finally {
    await s.stop("SIGTERM");
  }
  return compared;
}

let failed = false;
try {
  topUp();
  while (stats.kills < kills) {
    assert.ok(Date.now() < deadline, `out of time after ${stats.kills} kills`);
    await cycle(true);
    topUp();
  }
  for (let round = 0; pending.length > 0 && round < 5; round++) await cycle(false);
  assert.equal(pending.length, 0, "requests left unanswered");
  const left = fs.readdirSync(path.join(work, "ssd"), { recursive: true })
    .filter((f) => f.endsWith(".ckpt"));
  assert.deepEqual(left, [], "checkpoints left after every request finished");
  const compared = await control();
  console.log(`crash: seed ${seed}, ${stats.kills} kills, ${done.length} requests answered ` +
    `(${stats.completedWhileKilling} between kills), ${compared} answers equal the control run, ` +
    `${stats.resumed} resumes, ${stats.neverResumedChecks} finished requests sent again and not ` +
    `resumed, ${stats.strays} temporary files left by kills mid-write`);
  assert.ok(stats.resumed > 0, "no checkpoint was ever resumed");
  assert.ok(stats.strays > 0, "no kill hit a write in flight");
} catch (e) {
  failed = true;
  console.log(`FAIL crash (seed ${seed}, after ${stats.kills} kills): ${e.stack || e}`);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(failed ? "crash: FAILED" : "crash: passed");
process.exit(failed ? 1 : 0);
