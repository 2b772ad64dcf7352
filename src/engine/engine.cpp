#include "engine/engine.h"

#include "engine/engine_loop.h"

namespace cairn {

Engine::Engine(Model& model, const tok::Tokenizer* tokenizer, EngineOptions options)
    : options_(std::move(options)), loop_(std::make_unique<Loop>(model, tokenizer, options_)) {}

Engine::~Engine() = default;

std::shared_ptr<RequestStream> Engine::submit(Request request) {
  return loop_->submit(std::move(request));
}
void Engine::cancel(uint64_t request_id) {
  loop_->cancel(request_id);
}
void Engine::cancel_all() {
  loop_->cancel_all();
}
void Engine::stop_admitting() {
  loop_->stop_admitting();
}
int64_t Engine::n_in_flight() const {
  return loop_->n_in_flight();
}
EngineStats Engine::stats() const {
  return loop_->stats();
}
CacheFlush Engine::flush_cache(std::chrono::milliseconds timeout) {
  return loop_->flush_cache(timeout);
}
CacheFlush Engine::close(std::chrono::milliseconds timeout) {
  return loop_->close(timeout);
}
const ModelConfig& Engine::model_config() const {
  return loop_->config();
}

}  // namespace cairn
