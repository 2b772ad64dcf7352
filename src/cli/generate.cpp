// cairn generate [--model PATH] [--max-tokens N] [--temperature T] [--top-p P]
//                [--top-k K] [--min-p P] [--seed S] [--chat]
//                [--kv-bits 4|8 --kv-group-size G --kv-quant-start N | --kv-config]
//                [--tensor-parallel N] PROMPT
// Streams the completion to stdout; prompt and generation speed go to stderr.
#include <fmt/format.h>

#include <cstdio>
#include <random>

#include "cli/device_flag.h"
#include "cli/engine_flags.h"
#include "cli/loaded_model.h"
#include "cli/sampling_flags.h"
#include "cli/verbs.h"
#include "core/error.h"
#include "engine/generate.h"
#include "model/config.h"
#include "server/prompt_ids.h"

namespace cairn {
namespace {

struct GenerateFlags {
  std::string model;
  std::string prompt;
  int32_t max_tokens = 256;
  SamplingParams sampling;
  int64_t seed = -1;
  bool chat = false;
  int threads = 0;
  KvFlags kv;
  std::string device = "auto";
  GraphFlags graphs;
  int tensor_parallel = 1;
};

void print_stats(const GenerateRequest& req, const GenerateResult& res) {
  double n_prompt = static_cast<double>(req.prompt_ids.size());
  double n_gen = static_cast<double>(res.ids.size());
  fmt::print(stderr,
             "\nprompt: {} tokens, {:.1f} tok/s | generation: {} tokens, {:.1f} tok/s | {}\n",
             req.prompt_ids.size(), n_prompt / std::max(res.prefill_seconds, 1e-9), res.ids.size(),
             n_gen > 1 ? (n_gen - 1) / std::max(res.decode_seconds, 1e-9) : 0.0,
             finish_reason_name(res.finish));
}

void run_generate(GenerateFlags& f) {
  set_threads(f.threads);
  LoadedModel m = load_for_cli(f.model);
  place_model(m.model, f.device, f.tensor_parallel, f.graphs);
  GenerateRequest req;
  req.prompt_ids = f.chat ? chat_prompt_ids(*m.tokenizer, {{"user", f.prompt}})
                          : text_prompt_ids(*m.tokenizer, f.prompt);
  req.max_tokens = f.max_tokens;
  req.kv = kv_settings(f.kv, m.model->config().path);
  req.sampling = f.sampling;
  if (f.seed < 0) {
    req.sampling.seed = std::random_device{}();
    if (f.sampling.temperature > 0) fmt::print(stderr, "seed: {}\n", req.sampling.seed);
  } else {
    req.sampling.seed = static_cast<uint64_t>(f.seed);
  }
  req.stop_ids = stop_ids_for(*m.model, *m.tokenizer);
  tok::StreamingDetokenizer detok(*m.tokenizer);
  GenerateResult res = generate(*m.model, req, [&](int32_t id) {
    std::fputs(detok.feed(id).c_str(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::fputs(detok.flush().c_str(), stdout);
  std::fputs("\n", stdout);
  print_stats(req, res);
}

}  // namespace

void register_generate(CLI::App& app) {
  auto f = std::make_shared<GenerateFlags>();
  f->sampling.temperature = 0.8f;
  CLI::App* cmd = app.add_subcommand("generate", "Complete a prompt, streaming the text");
  cmd->add_option("--model,-m", f->model,
                  "model folder or llama2.c checkpoint (default model if omitted)");
  cmd->add_option("--max-tokens,-n", f->max_tokens, "tokens to generate at most")
      ->capture_default_str();
  add_sampling_flags(*cmd, f->sampling);
  cmd->add_option("--seed", f->seed, "random seed (default: chosen and printed)");
  cmd->add_flag("--chat", f->chat, "wrap the prompt as one user turn of the model's chat template");
  cmd->add_option("--threads,-t", f->threads, "CPU threads (0 = all cores)")->capture_default_str();
  add_kv_flags(*cmd, f->kv);
  add_device_flag(*cmd, f->device);
  add_graph_flags(*cmd, f->graphs);
  add_tensor_parallel_flag(*cmd, f->tensor_parallel);
  cmd->add_option("prompt", f->prompt, "the prompt text")->required();
  cmd->callback([f] { run_generate(*f); });
}

}  // namespace cairn
