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

std::string fingerprint_files(const std::string& model_path) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  auto mix = [&h](std::string_view bytes) {
    for (unsigned char c : bytes) h = (h ^ c) * 1099511628211ull;
  };
  std::vector<fs::path> files;
  if (fs::is_directory(model_path)) {
    for (const auto& e : fs::directory_iterator(model_path))
      if (e.is_regular_file()) files.push_back(e.path());
  } else {
    files.push_back(model_path);
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    std::string name = f.filename().string();
    mix(name);
    mix(std::to_string(fs::file_size(f)));
    if (f.extension() == ".json") {
      std::ifstream in(f, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      mix(ss.str());
    }
  }
  return fmt::format("{:016x}", h);
}

int64_t parse_bytes(const std::string& text, const std::string& flag) {
  size_t end = 0;
  double v = 0;
  try {
    v = std::stod(text, &end);
  } catch (const std::exception&) {
    fail(ErrorCode::kInvalidArgument, "{}: \"{}\" is not a size (e.g. 512M, 2G)", flag, text);
  }
  std::string unit = text.substr(end);
  double scale = unit.empty() || unit == "B"    ? 1
                 : unit == "K" || unit == "KiB" ? 1024.0
                 : unit == "M" || unit == "MiB" ? 1024.0 * 1024
                 : unit == "G" || unit == "GiB" ? 1024.0 * 1024 * 1024
                                                : -1;
  if (scale < 0 || v < 0)
    fail(ErrorCode::kInvalidArgument, "{}: \"{}\" is not a size (e.g. 512M, 2G)", flag, text);
  return static_cast<int64_t>(v * scale);
}

}  // namespace cairn
