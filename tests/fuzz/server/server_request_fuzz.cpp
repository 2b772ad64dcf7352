// Request-body parsing and validation: any input is either a ParsedRequest that
// the answer builders accept, or an ApiError with a 4xx status (never a crash,
// a hang or another exception). The first byte picks the route.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "../../unit/server/tiny_model_files.h"
#include "server/api_error.h"
#include "server/parsed_request.h"
#include "server/responses.h"

namespace {

struct Model {
  std::unique_ptr<cairn::tok::Tokenizer> tokenizer;
  std::unique_ptr<cairn::ChatPrompter> prompter;
  cairn::server::ParseContext ctx;
  Model() {
    auto dir = std::filesystem::temp_directory_path() /
               ("cairn_server_fuzz_" + std::to_string(::getpid()));
    tokenizer = cairn::tok::load_tokenizer(cairn::test::write_tiny_tokenizer(dir));
    prompter = std::make_unique<cairn::ChatPrompter>(*tokenizer);
    ctx.tokenizer = tokenizer.get();
    ctx.prompter = prompter.get();
    ctx.stop_ids = {2};
    ctx.context_length = 256;
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Model m;
  if (size == 0) return 0;
  using namespace cairn::server;
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    ParsedRequest p = data[0] % 3 == 0   ? parse_chat(body, m.ctx)
                      : data[0] % 3 == 1 ? parse_completion(body, m.ctx)
                                         : parse_messages(body, m.ctx);
    for (const cairn::Request& r : p.requests)
      if (r.prompt_ids.empty() || r.max_tokens < 1 ||
          static_cast<int64_t>(r.prompt_ids.size()) + r.max_tokens > m.ctx.context_length)
        std::abort();  // validation let through what the engine would refuse
    std::vector<cairn::Event> results(p.requests.size());
    ResponseMeta meta{"id", "m", 0, "fp", 0};
    (void)dump_json(chat_response(meta, p, results, *m.tokenizer));
  } catch (const ApiError& e) {
    if (e.status < 400 || e.status >= 500) std::abort();
  } catch (const cairn::Error&) {
    // Template rendering errors (a template's raise_exception) surface as 400 at the route.
  }
  return 0;
}
