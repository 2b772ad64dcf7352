// The server's life: 503 while loading, a client that leaves cancels its
// request (the engine frees it), a full queue answers 429, SIGTERM drains (503 for new requests, the
// stream in flight finishes) and exits 0, and --shutdown-timeout cancels what
// is still running.
import assert from "node:assert/strict";
import { startServer, runCases, getJson, readSse } from "../lib/server.mjs";

const longChat = (max_tokens) => JSON.stringify({
  messages: [{ role: "user", content: "Tell me a long story about a fox." }], max_tokens,
  temperature: 1.0, seed: 5, stream: true, min_tokens: max_tokens });

async function metric(url, name) {
  const text = (await getJson(`${url}/metrics`)).body;
  const m = text.match(new RegExp(`^${name} (\\S+)$`, "m"));
  return m ? Number(m[1]) : NaN;
}

async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cases = [
  // The default model loads in a blink, so the loading state itself is checked
  // without a model in tests/unit/server/http_server_test.cpp.
  ["answers from the moment it prints its URL: 503 loading, then 200", async () => {
    const s = await startServer([], { waitReady: false });
    const seen = [];
    for (;;) {
      const h = await getJson(`${s.url}/health`);
      seen.push(`${h.status} ${h.body.status}`);
      if (h.status === 200) break;
      assert.equal(`${h.status} ${h.body.status}`, "503 loading");
    }
    assert.equal(seen.at(-1), "200 ok");
    assert.equal((await s.stop()).code, 0);
  }],
  ["a client that leaves cancels its request", async () => {
    const s = await startServer();
    const ac = new AbortController();
    const res = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", body: longChat(900),
      signal: ac.signal });
    let n = 0;
    await readSse(res, () => ++n < 4);
    ac.abort();
    await waitFor(async () => (await metric(s.url, "cairn_client_disconnects_total")) === 1, 5000,
      "the disconnect to be counted");
    await waitFor(async () => (await metric(s.url, "cairn_running_sequences")) === 0 &&
      (await metric(s.url, "cairn_kv_pages_used")) === 0, 2000, "the engine to free the request");
    const generated = await metric(s.url, "cairn_generation_tokens_total");
    assert.ok(generated < 900, `generated ${generated} tokens after the client left`);
    assert.equal((await s.stop()).code, 0);
  }],
  ["a full queue answers 429 queue_full; the others finish", async () => {
    const s = await startServer(["--max-seqs", "1", "--max-queue", "1"]);
    const body = JSON.stringify({ messages: [{ role: "user", content: "Tell me a story." }],
      max_tokens: 100, min_tokens: 100, temperature: 0 });
    const answers = await Promise.all([0, 1, 2, 3, 4, 5].map(() =>
      getJson(`${s.url}/v1/chat/completions`, { method: "POST", body })));
    const statuses = answers.map((r) => r.status).sort();
    assert.ok(statuses.includes(429) && statuses.includes(200), statuses.join(","));
    for (const r of answers) {
      if (r.status === 429) assert.equal(r.body.error.code, "queue_full");
      else assert.equal(r.body.usage.completion_tokens, 100);
    }
    assert.equal((await s.stop()).code, 0);
  }],
  ["SIGTERM drains: 503 for new requests, the stream in flight finishes, exit 0", async () => {
    const s = await startServer(["--shutdown-timeout", "60"]);
    const res = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", body: longChat(300) });
    let finish = null, done = false, refused = null, n = 0;
    await readSse(res, (data) => {
      if (data === "[DONE]") return (done = true);
      const c = JSON.parse(data);
      if (c.choices?.[0]?.finish_reason) finish = c.choices[0].finish_reason;
      if (++n === 3) {
        s.proc.kill("SIGTERM");
        // Asked while the stream runs: the server is draining.
        setTimeout(async () => (refused = await getJson(`${s.url}/health`)), 100);
      }
      return true;
    });
    assert.equal(finish, "length");
    assert.ok(done, "no [DONE]");
    const { code } = await s.exited;
    assert.equal(code, 0);
    assert.ok(refused, "no answer while draining");
    assert.equal(refused.status, 503);
    assert.equal(refused.body.status, "draining");
  }],
  ["--shutdown-timeout cancels what is still running and exits 0", async () => {
    const s = await startServer(["--shutdown-timeout", "1", "--max-seqs", "2"]);
    const streams = [0, 1, 2, 3].map(async () => {
      const res = await fetch(`${s.url}/v1/chat/completions`, { method: "POST", body: longChat(1000) });
      let error = null;
      await readSse(res, (data) => {
        if (data !== "[DONE]" && JSON.parse(data).error) error = JSON.parse(data).error;
        return true;
      });
      return error;
    });
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    s.proc.kill("SIGTERM");
    const errors = await Promise.all(streams);
    const { code } = await s.exited;
    assert.equal(code, 0);
    assert.ok(Date.now() - t0 < 8000, `exit took ${Date.now() - t0} ms`);
    assert.ok(errors.some((e) => e && e.code === "cancelled"), JSON.stringify(errors));
  }],
];

process.exit((await runCases(cases)) ? 1 : 0);
