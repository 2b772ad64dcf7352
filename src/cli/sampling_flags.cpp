#include "cli/sampling_flags.h"

namespace cairn {

void add_sampling_flags(CLI::App& cmd, SamplingParams& p) {
  cmd.add_option("--temperature,--temp", p.temperature, "0 = greedy")->capture_default_str();
  cmd.add_option("--top-p", p.top_p, "nucleus sampling mass, (0, 1]")->capture_default_str();
  cmd.add_option("--top-k", p.top_k, "keep the k most likely tokens (0 = off)")
      ->capture_default_str();
  cmd.add_option("--min-p", p.min_p, "drop tokens below min_p × the top probability")
      ->capture_default_str();
}

}  // namespace cairn
