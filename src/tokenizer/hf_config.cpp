// BOS / EOS / pad and the chat template from tokenizer_config.json,
// special_tokens_map.json and generation_config.json (any may be absent).
#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "tokenizer/hf_json.h"
#include "tokenizer/parts.h"

namespace cairn::tok {
namespace {

namespace fs = std::filesystem;

// A token given as "text" or as {"content": "text", ...}; -1 when null or unknown.
int32_t token_ref(const JsonNode& config, const char* key, const Vocab& vocab) {
  if (!config.has(key)) return -1;
  const JsonNode node = config.at(key);
  if (node.is_null()) return -1;
  const std::string text = node.value().is_object() ? node.string("content") : node.as_string();
  const int32_t id = vocab.find(text);
  if (id < 0) node.fail_here("token '" + text + "' is not in the vocabulary");
  return id;
}

void add_eos(Pipeline& p, int32_t id) {
  if (id >= 0 && std::find(p.eos_ids.begin(), p.eos_ids.end(), id) == p.eos_ids.end())
    p.eos_ids.push_back(id);
}

void read_token_config(const JsonNode& config, Pipeline& p) {
  if (int32_t id = token_ref(config, "bos_token", p.vocab); id >= 0) p.bos_id = id;
  if (int32_t id = token_ref(config, "pad_token", p.vocab); id >= 0) p.pad_id = id;
  if (int32_t id = token_ref(config, "unk_token", p.vocab); id >= 0) p.unk_id = id;
  add_eos(p, token_ref(config, "eos_token", p.vocab));
}

void read_chat_template(const JsonNode& config, Pipeline& p) {
  if (!config.has("chat_template")) return;
  const JsonNode t = config.at("chat_template");
  if (t.value().is_string()) {
    p.chat_template = t.as_string();
    return;
  }
  // A list of {"name", "template"}: the one named "default".
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.at(i).string("name") == "default") p.chat_template = t.at(i).string("template");
  }
}

int32_t checked_id(const JsonNode& node, const Pipeline& p) {
  const int64_t id = node.as_int();
  if (id < 0 || id >= p.vocab.size()) node.fail_here("id outside the vocabulary");
  return static_cast<int32_t>(id);
}

void read_generation_config(const JsonNode& config, Pipeline& p) {
  if (config.has("bos_token_id") && !config.at("bos_token_id").is_null())
    p.bos_id = checked_id(config.at("bos_token_id"), p);
  if (config.has("pad_token_id") && !config.at("pad_token_id").is_null())
    p.pad_id = checked_id(config.at("pad_token_id"), p);
  if (!config.has("eos_token_id")) return;
  const JsonNode eos = config.at("eos_token_id");
  if (eos.value().is_array()) {
    for (size_t i = 0; i < eos.size(); ++i) add_eos(p, checked_id(eos.at(i), p));
  } else if (!eos.is_null()) {
    add_eos(p, checked_id(eos, p));
  }
}

template <typename Fn>
void with_file(const fs::path& path, Fn fn) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return;
  const nlohmann::json j = read_json_file(path.string());
  const std::string name = path.string();
  const JsonNode root(j, "$", name);
  if (!j.is_object()) root.fail_here("expected an object");
  fn(root);
}

}  // namespace

void read_hf_configs(const std::string& folder, Pipeline& p) {
  const fs::path dir(folder);
  with_file(dir / "special_tokens_map.json", [&](const JsonNode& c) { read_token_config(c, p); });
  with_file(dir / "tokenizer_config.json", [&](const JsonNode& c) {
    read_token_config(c, p);
    read_chat_template(c, p);
  });
  with_file(dir / "generation_config.json",
            [&](const JsonNode& c) { read_generation_config(c, p); });
}

}  // namespace cairn::tok
