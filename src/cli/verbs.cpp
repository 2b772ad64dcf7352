#include "cli/verbs.h"

#include "cli/inspect.h"
#include "cli/tokenize.h"

namespace cairn {

void register_bench(CLI::App& app);
void register_chat(CLI::App& app);
void register_fit(CLI::App& app);
void register_generate(CLI::App& app);
void register_serve(CLI::App& app);

void register_verbs(CLI::App& app) {
  register_generate(app);
  register_chat(app);
  register_inspect(app);
  cli::register_tokenize(app);
  register_bench(app);
  register_fit(app);
  register_serve(app);
}

}  // namespace cairn
