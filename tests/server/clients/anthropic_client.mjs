// The official @anthropic-ai/sdk against `cairn serve` /v1/messages: a whole
// message, the event stream (its text equals the whole message for the same
// seed), stop sequences, errors in Anthropic's shape.
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { startServer, runCases } from "../lib/server.mjs";

const KEY = "test-key";
const server = await startServer(["--api-key", KEY]);
const client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0 });
const base = { model: "default", max_tokens: 40,
  messages: [{ role: "user", content: "Tell me a story about a fox." }] };

const cases = [
  ["messages: a whole message", async () => {
    const m = await client.messages.create({ ...base, temperature: 0, system: "You are kind." });
    assert.equal(m.type, "message");
    assert.equal(m.role, "assistant");
    assert.equal(m.content[0].type, "text");
    assert.ok(m.content[0].text.length > 0);
    assert.ok(["end_turn", "max_tokens"].includes(m.stop_reason));
    assert.ok(m.usage.input_tokens > 5 && m.usage.output_tokens > 0);
  }],
  ["messages: streamed events carry the same text", async () => {
    const params = { ...base, temperature: 0.9, top_k: 40, seed: 99 };
    const whole = await client.messages.create(params);
    const stream = client.messages.stream(params);
    const kinds = [];
    stream.on("streamEvent", (e) => kinds.push(e.type));
    const final = await stream.finalMessage();
    assert.equal(final.content[0].text, whole.content[0].text);
    assert.equal(final.stop_reason, whole.stop_reason);
    assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
    assert.equal(kinds[0], "message_start");
    assert.equal(kinds.at(-1), "message_stop");
    assert.ok(kinds.includes("content_block_delta") && kinds.includes("message_delta"));
  }],
  ["messages: stop_sequences and max_tokens", async () => {
    const full = (await client.messages.create({ ...base, temperature: 0 })).content[0].text;
    const word = full.trim().split(/\s+/)[3];
    const m = await client.messages.create({ ...base, temperature: 0, stop_sequences: [word] });
    assert.equal(m.stop_reason, "stop_sequence");
    assert.equal(m.stop_sequence, word);
    assert.equal(m.content[0].text, full.slice(0, full.indexOf(word)));
    const streamed = await client.messages.stream({ ...base, temperature: 0, stop_sequences: [word] })
      .finalMessage();
    assert.equal(streamed.stop_reason, "stop_sequence");
    assert.equal(streamed.stop_sequence, word);
    assert.equal(streamed.content[0].text, m.content[0].text);
    const short = await client.messages.create({ ...base, max_tokens: 3, temperature: 0 });
    assert.equal(short.stop_reason, "max_tokens");
    assert.equal(short.usage.output_tokens, 3);
  }],
  ["messages: errors in Anthropic's shape", async () => {
    await assert.rejects(client.messages.create({ ...base, max_tokens: undefined }), (e) =>
      e.status === 400 && e.error?.type === "error" && e.error.error.type === "invalid_request_error" &&
      /max_tokens/.test(e.error.error.message));
    await assert.rejects(client.messages.create({ ...base,
      messages: [{ role: "system", content: "x" }] }), (e) => e.status === 400);
    const wrong = new Anthropic({ baseURL: server.url, apiKey: "nope", maxRetries: 0 });
    await assert.rejects(wrong.messages.create(base),
      (e) => e.status === 401 && e.error.error.type === "authentication_error");
  }],
];

const failed = await runCases(cases);
const { code } = await server.stop();
assert.equal(code, 0);
process.exit(failed ? 1 : 0);
