// transformers' generate() over a sliding-window model builds the sliding mask over the whole
// prompt (docs/memory.md, "Serve jobs"): 3 bytes a query-key pair per sequence
// (MemoryAssumptions::generate_window_mask_bytes), on a tiny Mistral (hidden 64, 2 layers,
// intermediate 128, vocab 1,000) whose forward pass outweighs its sampling step at 512 tokens.
#include <string>

#include "catch.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/model/model_config.hpp"

namespace {

std::string tiny_mistral(const std::string& sliding_window) {
  return R"({"model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
    "vocab_size": 1000, "sliding_window": )" +
         sliding_window + "}";
}

std::int64_t serve_activations(const std::string& config, const trace::MemoryAssumptions& a) {
  const trace::ModelDescription model = trace::parse_model_config(config);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 512;
  job.concurrency = 1;
  return trace::estimate_job(model, trace::count_parameters(model), job, a).breakdown.activations;
}

}  // namespace

TEST_CASE("generate() holds a sliding-window model's prompt mask", "[job][serve]") {
  trace::MemoryAssumptions generate;  // transformers' generate(): the whole prompt at once
  generate.prefill_chunk_tokens = 0;
  generate.max_num_seqs = 0;
  // A 16-token window under a 512-token prompt: 512 x 512 x 3 bytes more.
  CHECK(serve_activations(tiny_mistral("16"), generate) -
            serve_activations(tiny_mistral("null"), generate) ==
        512 * 512 * 3);
  // A window no shorter than the prompt attends causally: no mask.
  CHECK(serve_activations(tiny_mistral("4096"), generate) ==
        serve_activations(tiny_mistral("null"), generate));
  // An engine (chunked prefill, its own attention kernels) builds none.
  const trace::MemoryAssumptions engine;
  CHECK(serve_activations(tiny_mistral("16"), engine) ==
        serve_activations(tiny_mistral("null"), engine));
}
