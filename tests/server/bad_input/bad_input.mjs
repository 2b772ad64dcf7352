// The bad-input suite: each case sends something broken to `cairn serve`
// (default model) and checks the status and the JSON error body; after every
// case the server must still answer /health and a small generation at the end.
import assert from "node:assert/strict";
import net from "node:net";
import { startServer, runCases, getJson, expectOpenAIError } from "../lib/server.mjs";

const KEY = "k";
const READ_TIMEOUT_S = 2;
// httplib waits up to the keep-alive timeout (5 s) for a request to start, then
// each read up to the read timeout: a stalled request is cut within their sum.
const CUT_MS = (READ_TIMEOUT_S + 5 + 2) * 1000;
const server = await startServer(["--api-key", KEY, "--max-body-bytes", "1MiB",
  "--read-timeout", String(READ_TIMEOUT_S)]);
const auth = { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" };
const hello = [{ role: "user", content: "hi" }];

const post = (path, body, headers = auth) =>
  getJson(`${server.url}${path}`, { method: "POST", headers,
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body) });
const chat = (extra) => post("/v1/chat/completions", { messages: hello, max_tokens: 4, ...extra });

// A chat field case: the body gets `extra`; 400 naming `param`.
const field = (name, extra, param) => [name, async () => expectOpenAIError(await chat(extra), 400, { param })];
const raw = (name, text, param, path = "/v1/chat/completions") =>
  [name, async () => expectOpenAIError(await post(path, text), 400, param === undefined ? {} : { param })];

// Sends raw bytes and returns { text, ms } once the server closes the connection.
function rawExchange(bytes, { keepOpenMs = 0 } = {}) {
  return new Promise((resolve, reject) => {
    const start = Date.now();
    const sock = net.connect(new URL(server.url).port, "127.0.0.1", () => sock.write(bytes));
    let text = "";
    sock.on("data", (d) => (text += d));
    sock.on("close", () => resolve({ text, ms: Date.now() - start }));
    sock.on("error", reject);
    setTimeout(() => sock.destroy(), Math.max(keepOpenMs, 15000));
  });
}

const cases = [
  raw("empty body", "", undefined),
  raw("truncated JSON", "{\"messages\":[", undefined),
  raw("JSON array body", "[1,2,3]", undefined),
  raw("JSON null body", "null", undefined),
  raw("JSON string body", "\"hello\"", undefined),
  raw("trailing garbage", "{\"messages\":[]} xyz", undefined),
  raw("invalid UTF-8 inside a string", new Uint8Array([...Buffer.from("{\"messages\":[{\"role\":\"user\",\"content\":\""),
    0xff, 0xfe, 0xc3, ...Buffer.from("\"}]}")]), undefined),
  raw("lone surrogate escape", "{\"messages\":[{\"role\":\"user\",\"content\":\"\\ud800\"}]}", undefined),
  raw("number overflow 1e400", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"temperature\":1e400}", undefined),
  field("messages missing", { messages: undefined }, "messages"),
  field("messages not a list", { messages: "hi" }, "messages"),
  field("messages empty", { messages: [] }, "messages"),
  field("message not an object", { messages: ["hi"] }, "messages[0]"),
  field("unknown role", { messages: [{ role: "oracle", content: "x" }] }, "messages[0].role"),
  field("role a number", { messages: [{ role: 7, content: "x" }] }, "messages[0].role"),
  field("content a number", { messages: [{ role: "user", content: 42 }] }, "messages[0].content"),
  field("image content part", { messages: [{ role: "user", content: [{ type: "image_url" }] }] },
    "messages[0].content[0].type"),
  field("temperature a string", { temperature: "hot" }, "temperature"),
  field("temperature negative", { temperature: -1 }, "temperature"),
  field("top_p zero", { top_p: 0 }, "top_p"),
  field("top_p above one", { top_p: 2 }, "top_p"),
  field("top_k fractional", { top_k: 1.5 }, "top_k"),
  field("negative max_tokens", { max_tokens: -5 }, "max_tokens"),
  field("zero max_tokens", { max_tokens: 0 }, "max_tokens"),
  field("huge max_tokens 1e30", { max_tokens: 1e30 }, "max_tokens"),
  field("max_tokens a string", { max_tokens: "10" }, "max_tokens"),
  raw("max_tokens beyond 64 bits", "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":99999999999999999999999999}", "max_tokens"),
  field("max_completion_tokens a boolean", { max_completion_tokens: true }, "max_completion_tokens"),
  field("n = 2", { n: 2 }, "n"),
  field("seed a string", { seed: "abc" }, "seed"),
  field("seed 1e300", { seed: 1e300 }, "seed"),
  field("stop a number", { stop: 5 }, "stop"),
  field("stop with an empty string", { stop: [""] }, "stop[0]"),
  field("seventeen stop strings", { stop: Array.from({ length: 17 }, (_, i) => `s${i}`) }, "stop"),
  field("logit_bias a list", { logit_bias: [1, 2] }, "logit_bias"),
  field("logit_bias key not an id", { logit_bias: { abc: 1 } }, "logit_bias.abc"),
  field("logit_bias out of range", { logit_bias: { 5: 1000 } }, "logit_bias.5"),
  field("top_logprobs 50", { logprobs: true, top_logprobs: 50 }, "top_logprobs"),
  field("logprobs a string", { logprobs: "yes" }, "logprobs"),
  field("presence_penalty 5", { presence_penalty: 5 }, "presence_penalty"),
  field("frequency_penalty a string", { frequency_penalty: "x" }, "frequency_penalty"),
  field("repetition_penalty zero", { repetition_penalty: 0 }, "repetition_penalty"),
  field("stream a string", { stream: "true" }, "stream"),
  field("stream_options a number", { stream: true, stream_options: 5 }, "stream_options"),
  field("response_format json_object", { response_format: { type: "json_object" } }, "response_format"),
  field("chat_template_kwargs a list", { chat_template_kwargs: [1] }, "chat_template_kwargs"),
  ["prompt longer than the context", async () => expectOpenAIError(
    await chat({ messages: [{ role: "user", content: "word ".repeat(3000) }] }), 400,
    { code: "context_length_exceeded" })],
  ["max_tokens past the context", async () => expectOpenAIError(await chat({ max_tokens: 5000 }), 400,
    { code: "context_length_exceeded" })],
  ["completions: prompt missing", async () => expectOpenAIError(await post("/v1/completions", {}), 400, { param: "prompt" })],
  ["completions: prompt an object", async () => expectOpenAIError(await post("/v1/completions", { prompt: { a: 1 } }), 400, { param: "prompt" })],
  ["completions: token id out of range", async () => expectOpenAIError(
    await post("/v1/completions", { prompt: [5, 10000000] }), 400, { param: "prompt[1]" })],
  ["completions: negative token id", async () => expectOpenAIError(
    await post("/v1/completions", { prompt: [-1] }), 400, { param: "prompt[0]" })],
  ["completions: echo", async () => expectOpenAIError(await post("/v1/completions", { prompt: "a", echo: true }), 400, { param: "echo" })],
  ["messages: max_tokens missing (Anthropic shape)", async () => {
    const r = await post("/v1/messages", { messages: hello });
    assert.equal(r.status, 400);
    assert.equal(r.body.type, "error");
    assert.equal(r.body.error.type, "invalid_request_error");
    assert.match(r.body.error.message, /max_tokens/);
  }],
  ["messages: system role inside messages", async () => {
    const r = await post("/v1/messages", { max_tokens: 5, messages: [{ role: "system", content: "x" }] });
    assert.equal(r.status, 400);
    assert.match(r.body.error.message, /messages\[0\]\.role/);
  }],
  ["tokenize: prompt missing", async () => expectOpenAIError(await post("/tokenize", {}), 400, { param: "prompt" })],
  ["detokenize: id out of range", async () => expectOpenAIError(await post("/detokenize", { tokens: [99999999] }), 400, { param: "tokens[0]" })],
  ["detokenize: tokens a string", async () => expectOpenAIError(await post("/detokenize", { tokens: "1 2" }), 400, { param: "tokens" })],
  ["unknown route 404", async () => expectOpenAIError(await getJson(`${server.url}/v2/everything`, { headers: auth }), 404)],
  ["GET on a POST route is 405 with Allow", async () => {
    const r = await getJson(`${server.url}/v1/chat/completions`, { headers: auth });
    expectOpenAIError(r, 405);
    assert.equal(r.headers.get("allow"), "POST");
  }],
  ["POST on a GET route is 405", async () => expectOpenAIError(await post("/v1/models", {}), 405)],
  ["DELETE /v1/messages is 405", async () => {
    const r = await getJson(`${server.url}/v1/messages`, { method: "DELETE", headers: auth });
    assert.equal(r.status, 405);
    assert.equal(r.body.type, "error");
  }],
  ["missing API key is 401", async () => expectOpenAIError(
    await post("/v1/chat/completions", { messages: hello }, { "Content-Type": "application/json" }), 401,
    { code: "invalid_api_key" })],
  ["wrong API key is 401", async () => expectOpenAIError(
    await post("/v1/chat/completions", { messages: hello }, { Authorization: "Bearer nope" }), 401)],
  ["10 MB body is 413", async () => {
    const big = JSON.stringify({ messages: [{ role: "user", content: "a".repeat(10 << 20) }] });
    let r;
    try {
      r = await post("/v1/chat/completions", big);
    } catch (e) {
      throw new Error(`no answer to a 10 MB body: ${e.cause ?? e}`);
    }
    expectOpenAIError(r, 413, { code: "body_too_large" });
  }],
  ["slow partial request line is cut by the read timeout", async () => {
    const { text, ms } = await rawExchange("POST /v1/chat/compl");
    assert.ok(ms < CUT_MS, `closed after ${ms} ms`);
    assert.ok(!text.includes("200 OK"), text);
  }],
  ["slow partial body is cut by the read timeout", async () => {
    const { text, ms } = await rawExchange("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n" +
      `Authorization: Bearer ${KEY}\r\nContent-Length: 1000\r\n\r\n{"messages":`);
    assert.ok(ms < CUT_MS, `closed after ${ms} ms`);
    assert.ok(!text.includes("200 OK"), text);
  }],
  ["garbage request line gets 400", async () => {
    const { text } = await rawExchange("GARBAGE\r\n\r\n");
    assert.match(text, /^HTTP\/1\.1 400/);
  }],
  ["headers without the blank line are cut by the read timeout", async () => {
    const { ms } = await rawExchange("GET /health HTTP/1.1\r\nHost: x\r\n");
    assert.ok(ms < CUT_MS, `closed after ${ms} ms`);
  }],
];

// Every case is followed by a health check: the server keeps serving.
const checked = cases.map(([name, fn]) => [name, async () => {
  await fn();
  const h = await getJson(`${server.url}/health`);
  assert.equal(h.status, 200, "server stopped answering /health");
}]);
checked.push(["still generates after all of it", async () => {
  const r = await chat({ max_tokens: 3, temperature: 0 });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.body.usage.completion_tokens, 3);
}]);
console.log(`${cases.length} bad-input cases`);
const failed = await runCases(checked);
const { code } = await server.stop();
assert.equal(code, 0);
process.exit(failed ? 1 : 0);
