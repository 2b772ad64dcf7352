#include "cli/serve_setup.h"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "model/config.h"
#include "server/prompt_ids.h"

namespace cairn {

namespace fs = std::filesystem;

namespace {

void read_generation_config(const std::string& model_path, server::ParseContext& ctx) {
  fs::path file = fs::path(model_path) / "generation_config.json";
  if (!fs::is_directory(model_path) || !fs::exists(file)) return;
  std::ifstream in(file);
  nlohmann::json g = nlohmann::json::parse(in, nullptr, false);
  if (!g.is_object()) fail(ErrorCode::kBadFile, "{}: not a JSON object", file.string());
  auto num = [&](const char* key, auto& field) {
    auto it = g.find(key);
    if (it != g.end() && it->is_number())
      field = it->get<std::remove_reference_t<decltype(field)>>();
  };
  num("temperature", ctx.sampling.temperature);
  num("top_p", ctx.sampling.top_p);
  num("top_k", ctx.sampling.top_k);
  num("min_p", ctx.sampling.min_p);
  num("repetition_penalty", ctx.repetition_penalty);
  if (g.value("do_sample", true) == false) ctx.sampling.temperature = 0;
}

}  // namespace

server::ParseContext parse_context_for(const LoadedModel& m, const ChatPrompter& prompter) {
  server::ParseContext ctx;
  ctx.tokenizer = m.tokenizer.get();
  ctx.prompter = &prompter;
  ctx.stop_ids = stop_ids_for(*m.model, *m.tokenizer);
  ctx.context_length = m.model->config().max_position_embeddings;
  ctx.sampling.temperature = 1.0f;  // OpenAI's default when the model names none
  read_generation_config(m.path, ctx);
  return ctx;
}

}  // namespace cairn
