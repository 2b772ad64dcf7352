#include "cli/verbs.h"

namespace cairn {

void register_bench(CLI::App& app);
void register_chat(CLI::App& app);
void register_fit(CLI::App& app);
void register_generate(CLI::App& app);

void register_verbs(CLI::App& app) {
  register_generate(app);
  register_chat(app);
  register_bench(app);
  register_fit(app);
}

}  // namespace cairn
