#include "cli/loaded_model.h"

#include "cli/model_path.h"
#include "cli/progress.h"
#include "core/thread_pool.h"
#include "model/registry.h"

namespace cairn {

LoadedModel load_for_cli(const std::string& path) {
  LoadedModel m;
  m.path = resolve_model_path(path);
  ProgressBar bar("loading");
  LoadOptions opts;
  opts.progress = [&bar](size_t done, size_t total) { bar.update(done, total); };
  m.model = load_model(m.path, opts);
  bar.finish();
  m.tokenizer = tok::load_tokenizer(m.path);
  return m;
}

void set_threads(int n_threads) {
  if (n_threads > 0) ThreadPool::set_global_threads(n_threads);
}

}  // namespace cairn
