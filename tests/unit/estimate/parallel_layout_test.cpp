// Tensor-parallel sizes: which rank counts split every layer into whole heads. Expected sizes
// are the divisors worked out by hand from each config's head counts (quoted per case).
#include "trace/estimate/parallel_layout.hpp"

#include <string>
#include <vector>

#include "catch.hpp"
#include "test_data.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/parameters.hpp"

namespace {

using Sizes = std::vector<std::int64_t>;

std::string problem_text(const trace::ModelDescription& model, std::int64_t tp) {
  return trace::tensor_parallel_problem(model, tp).value_or("");
}

}  // namespace

TEST_CASE("tensor parallelism splits GQA heads, replicating KV heads past their count",
          "[parallel_layout]") {
  // Llama-3.1-8B: 32 query heads, 8 KV heads. 16 and 32 ranks replicate each KV head 2x / 4x;
  // 3 divides neither; 64 leaves ranks without a query head.
  const trace::ModelDescription llama =
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"));
  CHECK(trace::tensor_parallel_sizes(llama, 64) == Sizes{1, 2, 4, 8, 16, 32});
  CHECK(problem_text(llama, 3) == "decoder layer 0: its 32 attention heads are not divisible by 3");
  CHECK_FALSE(trace::tensor_parallel_problem(llama, 1));

  // Qwen2.5-14B: 40 query heads, 8 KV heads. 5 and 10 divide the queries but not the 8 KV
  // heads, nor are they multiples of 8; 40 is (each KV head on 5 ranks).
  const trace::ModelDescription qwen = trace::test::fixture("Qwen--Qwen2.5-14B.reconstructed.json");
  CHECK(trace::tensor_parallel_sizes(qwen, 64) == Sizes{1, 2, 4, 8, 40});
  CHECK(problem_text(qwen, 5) == "decoder layer 0: its 8 KV heads are not divisible by 5");
  CHECK(problem_text(qwen, 20) ==
        "decoder layer 0: 20 is not a multiple of its 8 KV heads (each replicated on 20 / 8 "
        "ranks)");
}

TEST_CASE("tensor parallelism over MLA, Mamba-1, Mamba-2 and a vision tower", "[parallel_layout]") {
  // DeepSeek-V2: 128 MLA heads share one latent, kept whole on every rank: the divisors of 128.
  const trace::ModelDescription deepseek =
      trace::test::fixture("deepseek-ai--DeepSeek-V2.reconstructed.json");
  CHECK(trace::tensor_parallel_sizes(deepseek, 64) == Sizes{1, 2, 4, 8, 16, 32, 64});

  // mamba-130m: Mamba-1 channels d_inner = 2 x 768 = 1536 = 2^9 x 3, split along the channels.
  const trace::ModelDescription mamba = trace::test::fixture("state-spaces--mamba-130m-hf.json");
  CHECK(trace::tensor_parallel_sizes(mamba, 64) == Sizes{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64});

  // Nemotron-3 Nano (pattern "MEMEM*E..."): Mamba-2 layers of 64 heads in 8 B/C groups, attention
  // of 32 heads over 2 KV heads. 16 divides the heads but not the 8 groups (not one group), so
  // layer 0 (a Mamba layer) refuses it.
  const trace::ModelDescription nano =
      trace::test::fixture("nvidia--NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json");
  CHECK(trace::tensor_parallel_sizes(nano, 64) == Sizes{1, 2, 4, 8});
  CHECK(problem_text(nano, 16) ==
        "decoder layer 0: its 8 SSM groups are not divisible by 16 (nor one group)");

  // Llama-3.2-11B-Vision: the text model's self- and cross-attention layers have 32 heads over 8
  // KV heads; the vision tower's 16 heads are not checked, so 32 ranks split the model.
  const trace::ModelDescription mllama =
      trace::test::fixture("meta-llama--Llama-3.2-11B-Vision.reconstructed.json");
  CHECK(trace::tensor_parallel_sizes(mllama, 64) == Sizes{1, 2, 4, 8, 16, 32});
}

TEST_CASE("a job whose --tp cannot split the heads is refused with the sizes that can",
          "[parallel_layout]") {
  const trace::ModelDescription llama =
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"));
  const trace::ParameterCount params = trace::count_parameters(llama);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.gpus = job.tp = 6;
  try {
    (void)trace::estimate_job(llama, params, job);
    FAIL("--tp 6 was accepted");
  } catch (const trace::ConfigError& error) {
    CHECK(std::string(error.what()) ==
          "--tp 6 cannot split decoder layer 0: its 32 attention heads are not divisible by 6 "
          "(vLLM and Megatron give each rank whole heads); sizes that split every layer: 1, 2, "
          "4, 8, 16, 32");
  }
  job.gpus = job.tp = 8;
  CHECK(trace::estimate_job(llama, params, job).breakdown.weights > 0);
}

TEST_CASE("pipeline stages need a layer each / expert parallelism needs whole experts",
          "[parallel_layout]") {
  // Qwen3-30B-A3B: 48 layers, each an MoE of 128 routed experts.
  const trace::ModelDescription qwen = trace::parse_model_config(R"({
    "model_type": "qwen3_moe", "architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 2048,
    "num_hidden_layers": 48, "num_attention_heads": 32, "num_key_value_heads": 4,
    "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
    "num_experts": 128, "num_experts_per_tok": 8, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "vocab_size": 151936, "tie_word_embeddings": false,
    "max_position_embeddings": 40960, "rms_norm_eps": 1e-6, "torch_dtype": "bfloat16"})");
  const trace::ModelDescription llama =
      trace::parse_model_config(trace::test::catalog_text("meta-llama/Llama-3.1-8B"));
  const auto refusal = [](const trace::ModelDescription& model, std::int64_t gpus, std::int64_t pp,
                          std::int64_t ep) -> std::string {
    trace::Job job;
    job.mode = trace::JobMode::full;
    job.gpus = gpus;
    job.pp = pp;
    job.ep = ep;
    try {
      trace::require_parallel_layout(model, job);
    } catch (const trace::ConfigError& error) {
      return error.what();
    }
    return "";
  };
  // Llama-3.1-8B has 32 layers: 32 stages of one layer each, not 33.
  CHECK(refusal(llama, 32, 32, 1).empty());
  CHECK(refusal(llama, 33, 33, 1) ==
        "--pp 33 asks for more pipeline stages than the model's 32 layers; use at most 32");
  CHECK(refusal(llama, 2, 1, 2) ==
        "--ep 2: the model has no routed experts to split; leave --ep at 1");
  // 128 experts over 8 ranks (16 each), as ms-swift's Qwen3-30B-A3B EP8 examples run it.
  CHECK(refusal(qwen, 16, 2, 8).empty());
  CHECK(refusal(qwen, 3, 1, 3) ==
        "--ep 3 does not divide the 128 routed experts of an MoE layer (each rank holds whole "
        "experts)");
  // 6 GPUs over 2 stages leave 3 per stage: 4 expert ranks do not fit in them.
  CHECK(refusal(qwen, 6, 2, 4) ==
        "--ep 4 does not divide the 3 GPUs of a pipeline stage (--gpus 6 / --pp 2) that expert "
        "parallelism spreads over");
}
