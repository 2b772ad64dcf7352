// The official openai client against `cairn serve` (default model): chat and
// completions, streamed and not, logprobs, stop, seed, usage, errors.
// Streamed text concatenated equals the non-streamed text for the same seed.
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer, runCases } from "../lib/server.mjs";

const KEY = "test-key";
const server = await startServer(["--api-key", KEY, "--served-model-name", "cairn-default"]);
const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
const hello = [{ role: "user", content: "Tell me a story about a fox." }];

async function streamedChat(params) {
  const stream = await client.chat.completions.create({ ...params, stream: true,
    stream_options: { include_usage: true } });
  let text = "", finish = null, usage = null, chunks = 0, seed = null;
  for await (const chunk of stream) {
    chunks++;
    seed = chunk.seed;
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text += c.delta?.content ?? "";
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  return { text, finish, usage, chunks, seed };
}

async function streamedCompletion(params) {
  const stream = await client.completions.create({ ...params, stream: true });
  let text = "", finish = null;
  for await (const chunk of stream)
    for (const c of chunk.choices) {
      text += c.text;
      if (c.finish_reason) finish = c.finish_reason;
    }
  return { text, finish };
}

const cases = [
  ["chat: answer, usage, fingerprint, seed", async () => {
    const r = await client.chat.completions.create({ model: "cairn-default", messages: hello,
      max_tokens: 40, temperature: 0 });
    assert.equal(r.object, "chat.completion");
    assert.equal(r.model, "cairn-default");
    assert.equal(r.choices.length, 1);
    assert.equal(r.choices[0].message.role, "assistant");
    assert.ok(r.choices[0].message.content.length > 0);
    assert.ok(["stop", "length"].includes(r.choices[0].finish_reason));
    assert.ok(r.usage.prompt_tokens > 5 && r.usage.completion_tokens > 0);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
    assert.equal(typeof r.usage.prompt_tokens_details.cached_tokens, "number");
    assert.match(r.system_fingerprint, /^fp_[0-9a-f]+$/);
    assert.equal(typeof r.seed, "number");
  }],
  ["chat: streamed text equals non-streamed for the same seed", async () => {
    const params = { model: "m", messages: hello, max_tokens: 60, temperature: 0.9, seed: 1234 };
    const whole = await client.chat.completions.create(params);
    const s = await streamedChat(params);
    assert.ok(s.chunks > 3, `only ${s.chunks} chunks`);
    assert.equal(s.text, whole.choices[0].message.content);
    assert.equal(s.finish, whole.choices[0].finish_reason);
    assert.equal(s.usage.completion_tokens, whole.usage.completion_tokens);
    assert.equal(s.seed, 1234);
  }],
  ["chat: the same seed gives the same text; the server's seed reproduces it", async () => {
    const params = { model: "m", messages: hello, max_tokens: 30, temperature: 1.0 };
    const a = await client.chat.completions.create(params);
    assert.ok(Number.isSafeInteger(a.seed), `seed ${a.seed}`);
    const b = await client.chat.completions.create({ ...params, seed: a.seed });
    assert.equal(b.choices[0].message.content, a.choices[0].message.content);
    const texts = new Set();
    for (const seed of [1, 2, 3, 4]) {
      const r = await client.chat.completions.create({ ...params, seed });
      texts.add(r.choices[0].message.content);
    }
    assert.ok(texts.size > 1, "four seeds gave one text");
  }],
  ["completions: streamed equals non-streamed; several prompts", async () => {
    const params = { model: "m", prompt: "Once upon a time", max_tokens: 40, temperature: 0.8, seed: 7 };
    const whole = await client.completions.create(params);
    assert.equal(whole.object, "text_completion");
    const s = await streamedCompletion(params);
    assert.equal(s.text, whole.choices[0].text);
    assert.equal(s.finish, whole.choices[0].finish_reason);
    const two = await client.completions.create({ ...params, prompt: ["The cat", "The dog"] });
    assert.deepEqual(two.choices.map((c) => c.index), [0, 1]);
    assert.ok(two.choices.every((c) => c.text.length > 0));
  }],
  ["completions: max_tokens ends with length; default is 16 tokens", async () => {
    const r = await client.completions.create({ model: "m", prompt: "Once upon a time", max_tokens: 5,
      temperature: 0 });
    assert.equal(r.choices[0].finish_reason, "length");
    assert.equal(r.usage.completion_tokens, 5);
    const d = await client.completions.create({ model: "m", prompt: "Once upon a time", temperature: 0 });
    assert.equal(d.usage.completion_tokens, 16);
  }],
  ["chat: logprobs with top_logprobs", async () => {
    const r = await client.chat.completions.create({ model: "m", messages: hello, max_tokens: 12,
      temperature: 0, logprobs: true, top_logprobs: 3 });
    const content = r.choices[0].logprobs.content;
    assert.ok(content.length >= 1 && content.length <= r.usage.completion_tokens);
    for (const t of content) {
      assert.ok(t.logprob <= 0 && Array.isArray(t.bytes));
      assert.equal(t.top_logprobs.length, 3);
      // Greedy: the chosen token is the most likely one.
      assert.equal(t.top_logprobs[0].token, t.token);
    }
    assert.ok(r.choices[0].message.content.startsWith(content.slice(0, 3).map((t) => t.token).join("")));
  }],
  ["completions: logprobs", async () => {
    const r = await client.completions.create({ model: "m", prompt: "Once upon a time", max_tokens: 6,
      temperature: 0, logprobs: 2 });
    const lp = r.choices[0].logprobs;
    assert.equal(lp.tokens.length, 6);
    assert.equal(lp.tokens.join(""), r.choices[0].text);
    assert.equal(lp.text_offset[1], lp.tokens[0].length);
    assert.ok(lp.top_logprobs.every((t) => Object.keys(t).length >= 1));
  }],
  ["stop strings end the text before them", async () => {
    const params = { model: "m", prompt: "Once upon a time", max_tokens: 40, temperature: 0 };
    const full = (await client.completions.create(params)).choices[0].text;
    const words = full.trim().split(/\s+/);
    const stop = ` ${words[4]}`;
    const cut = full.indexOf(stop);
    assert.ok(cut > 0, `no "${stop}" in "${full}"`);
    const r = await client.completions.create({ ...params, stop: [stop, "zzzz"] });
    assert.equal(r.choices[0].text, full.slice(0, cut));
    assert.equal(r.choices[0].finish_reason, "stop");
    const s = await streamedCompletion({ ...params, stop });
    assert.equal(s.text, full.slice(0, cut));
  }],
  ["cached_tokens counts a repeated long prompt", async () => {
    const prompt = "The quick brown fox jumps over the lazy dog. ".repeat(30);
    await client.completions.create({ model: "m", prompt, max_tokens: 2, temperature: 0 });
    const r = await client.completions.create({ model: "m", prompt, max_tokens: 2, temperature: 0 });
    assert.ok(r.usage.prompt_tokens > 100);
    assert.ok(r.usage.prompt_tokens_details.cached_tokens > 0, JSON.stringify(r.usage));
  }],
  ["models: list and retrieve", async () => {
    const list = await client.models.list();
    assert.deepEqual(list.data.map((m) => m.id), ["cairn-default"]);
    const m = await client.models.retrieve("cairn-default");
    assert.equal(m.id, "cairn-default");
    await assert.rejects(client.models.retrieve("nope"), (e) => e.status === 404);
  }],
  ["errors: 400 naming the field, 401, context length", async () => {
    const bad = (p) => client.chat.completions.create({ model: "m", messages: hello, ...p });
    await assert.rejects(bad({ temperature: 5 }), (e) => e.status === 400 && e.param === "temperature");
    await assert.rejects(bad({ n: 3 }), (e) => e.status === 400 && e.param === "n");
    await assert.rejects(bad({ max_tokens: -1 }), (e) => e.status === 400 && e.param === "max_tokens");
    await assert.rejects(bad({ max_tokens: 100000 }),
      (e) => e.status === 400 && e.code === "context_length_exceeded");
    await assert.rejects(client.chat.completions.create({ model: "m",
      messages: [{ role: "oracle", content: "x" }] }), (e) => e.status === 400 && e.param === "messages[0].role");
    const wrong = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "wrong", maxRetries: 0 });
    await assert.rejects(wrong.models.list(), (e) => e.status === 401 && e.code === "invalid_api_key");
  }],
];

const failed = await runCases(cases);
const { code } = await server.stop();
assert.equal(code, 0, "serve exits 0 after SIGTERM");
process.exit(failed ? 1 : 0);
