// cairn chat [--model PATH]: a multi-turn conversation in the terminal through
// the model's chat template. Each turn re-renders the whole conversation.
// Commands: /reset clears the history, /exit (or end of input) quits.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <random>

#include "cli/device_flag.h"
#include "cli/loaded_model.h"
#include "cli/sampling_flags.h"
#include "cli/verbs.h"
#include "engine/generate.h"
#include "server/prompt_ids.h"

namespace cairn {
namespace {

struct ChatFlags {
  std::string model;
  std::string system;
  int32_t max_tokens = 512;
  SamplingParams sampling;
  int64_t seed = -1;
  int threads = 0;
  std::string device = "auto";
  GraphFlags graphs;
  int tensor_parallel = 1;
};

// Generates one assistant reply to `turns`, streaming it; returns its text.
std::string reply(LoadedModel& m, const ChatFlags& f,
                  const std::vector<std::pair<std::string, std::string>>& turns, uint64_t seed) {
  GenerateRequest req;
  req.prompt_ids = chat_prompt_ids(*m.tokenizer, turns);
  req.max_tokens = f.max_tokens;
  req.sampling = f.sampling;
  req.sampling.seed = seed;
  req.stop_ids = stop_ids_for(*m.model, *m.tokenizer);
  tok::StreamingDetokenizer detok(*m.tokenizer);
  std::string text;
  generate(*m.model, req, [&](int32_t id) {
    std::string piece = detok.feed(id);
    text += piece;
    std::fputs(piece.c_str(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::string tail = detok.flush();
  std::fputs((tail + "\n").c_str(), stdout);
  return text + tail;
}

void run_chat(ChatFlags& f) {
  set_threads(f.threads);
  LoadedModel m = load_for_cli(f.model);
  place_model(m.model, f.device, f.tensor_parallel, f.graphs);
  uint64_t seed = f.seed < 0 ? std::random_device{}() : static_cast<uint64_t>(f.seed);
  std::vector<std::pair<std::string, std::string>> turns;
  if (!f.system.empty()) turns.emplace_back("system", f.system);
  size_t n_fixed = turns.size();
  fmt::print(stderr, "cairn chat: {} — /reset clears the conversation, /exit quits\n", m.path);
  std::string line;
  for (;;) {
    fmt::print("> ");
    std::fflush(stdout);
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line == "/reset") {
      turns.resize(n_fixed);
      continue;
    }
    if (line.empty()) continue;
    turns.emplace_back("user", line);
    turns.emplace_back("assistant", reply(m, f, turns, seed + turns.size()));
  }
}

}  // namespace

void register_chat(CLI::App& app) {
  auto f = std::make_shared<ChatFlags>();
  f->sampling.temperature = 0.8f;
  CLI::App* cmd = app.add_subcommand("chat", "Chat with a model in the terminal");
  cmd->add_option("--model,-m", f->model, "model folder (default model if omitted)");
  cmd->add_option("--system", f->system, "a system message opening the conversation");
  cmd->add_option("--max-tokens,-n", f->max_tokens, "tokens per reply at most")
      ->capture_default_str();
  add_sampling_flags(*cmd, f->sampling);
  cmd->add_option("--seed", f->seed, "random seed (default: chosen)");
  cmd->add_option("--threads,-t", f->threads, "CPU threads (0 = all cores)")->capture_default_str();
  add_device_flag(*cmd, f->device);
  add_graph_flags(*cmd, f->graphs);
  add_tensor_parallel_flag(*cmd, f->tensor_parallel);
  cmd->callback([f] { run_chat(*f); });
}

}  // namespace cairn
