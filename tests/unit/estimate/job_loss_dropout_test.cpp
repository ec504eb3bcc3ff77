// The loss implementations, dropout masks and the validator's row readings (counter, loss,
// config names), on the tiny Llama of job_test.cpp (h = 64, 2 layers, 4 heads x 16, 2 kv heads,
// I = 128, V = 1,000) and on a BERT-shaped twin of it with dropout. Derivations in the comments.
#include <algorithm>
#include <string>

#include "catch.hpp"
#include "tiny_models.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/job.hpp"
#include "trace/model/model_config.hpp"
#include "trace/validate/validation.hpp"

namespace {

const char* const k_tiny = trace::test::k_tiny_llama;

// The same tiny Llama with the dropout keys BERT / GPT-2 configs carry.
const char* k_tiny_dropout = R"({
  "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "attention_dropout": 0.1, "hidden_dropout": 0.1
})";

trace::JobEstimate estimate(const char* config, const trace::Job& job) {
  const trace::ModelDescription model = trace::parse_model_config(config);
  return trace::estimate_job(model, trace::count_parameters(model), job);
}

trace::Job job_of(trace::LossImpl loss) {
  trace::Job job;
  job.mode = trace::JobMode::full;
  job.seq_len = 128;
  job.batch = 2;  // 256 tokens
  job.loss = loss;
  job.attention = trace::AttentionImpl::flash;  // K, V grouped: 2,048 values per token
  job.eager_rms_norm = false;  // fused norms: the eager RMSNorm's copies are tested in job_test.cpp
  return job;
}

trace::MeasuredRow row(const std::string& framework_notes_method) {
  const std::string csv =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_usable_gib,"
      "job_measured_gib,job_oom,framework,notes,measure_method\n"
      "1,org/x,,full,128,1,1,1,,0," + framework_notes_method + "\n";
  return trace::parse_measured_csv(csv).at(0);
}

}  // namespace

TEST_CASE("the loss implementation sets the logits' bytes per value", "[job][loss]") {
  // V x tokens = 1,000 x 256 = 256,000 values
  CHECK(estimate(k_tiny, job_of(trace::LossImpl::full)).breakdown.logits == 256'000 * 12);
  CHECK(estimate(k_tiny, job_of(trace::LossImpl::chunked)).breakdown.logits == 256'000 * 6);
  CHECK(estimate(k_tiny, job_of(trace::LossImpl::fused)).breakdown.logits == 256'000 * 2);
  CHECK(estimate(k_tiny, job_of(trace::LossImpl::cut)).breakdown.logits == 0);
  // Megatron's vocab-parallel CE: the bf16 logits while upcast (2) + the fp32 copy it keeps (4)
  CHECK(estimate(k_tiny, job_of(trace::LossImpl::vocab_parallel)).breakdown.logits == 256'000 * 6);
  CHECK(trace::parse_loss("vocab-parallel") == trace::LossImpl::vocab_parallel);
  CHECK(trace::parse_loss("chunked") == trace::LossImpl::chunked);
  CHECK(trace::parse_loss("liger") == trace::LossImpl::cut);
  CHECK_FALSE(trace::parse_loss("approximate").has_value());
}

TEST_CASE("dropout: masks on the residual branches and in eager attention", "[job][dropout]") {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny_dropout);
  CHECK(model.attention_dropout == Approx(0.1));
  CHECK(model.hidden_dropout == Approx(0.1));
  trace::Job job = job_of(trace::LossImpl::full);
  // mixed precision, SDPA: 2,048 saved values per token x 2 bytes (job_test.cpp), plus masks of
  // 1 byte on 2 branches x 64 per layer (x 2 layers) and on the embedding output (64):
  // 320 bytes per token.
  CHECK(estimate(k_tiny_dropout, job).breakdown.activations == 2'048 * 256 * 2 + 320 * 256);
  // Eager attention under bf16 autocast: K and V repeated to 4 heads (2,176 values per token,
  // job_test.cpp), and the fp32 softmax 4 + the mask 1 + the dropped-out probabilities in bf16 2
  // = 7 bytes per score; 4 heads x 128 x 128 x 2 sequences = 131,072 scores per layer.
  job.attention = trace::AttentionImpl::eager;
  CHECK(estimate(k_tiny_dropout, job).breakdown.activations ==
        2'176 * 256 * 2 + 320 * 256 + 2 * 131'072 * 7);
  // fp32 training: activations 4 bytes; scores 4 + 1 + 4 = 9 bytes.
  job.precision = trace::Precision::fp32;
  CHECK(estimate(k_tiny_dropout, job).breakdown.activations ==
        2'176 * 256 * 4 + 320 * 256 + 2 * 131'072 * 9);
  // Without dropout in fp32 the softmax output is the P.V input itself: 4 bytes, no masks.
  CHECK(estimate(k_tiny, job).breakdown.activations == 2'176 * 256 * 4 + 2 * 131'072 * 4);
  // Full checkpointing keeps one layer's masks (128 + the embedding's 64) and scores; the
  // recomputed layer is 1,024 values wide with the repeat (1,280 per token in all).
  job.checkpointing = trace::Checkpointing::full;
  CHECK(estimate(k_tiny_dropout, job).breakdown.activations ==
        1'280 * 256 * 4 + 192 * 256 + 131'072 * 9);
}

TEST_CASE("the validator reads the counter and the loss from the row", "[validate]") {
  CHECK(row("HF Trainer,,pynvml nvmlDeviceGetMemoryInfo.used").counter ==
        trace::MemoryCounter::process);
  CHECK(row("torchtune,,torch.cuda.max_memory_reserved()/1e9").counter ==
        trace::MemoryCounter::reserved);
  CHECK(row("litgpt,,torch.cuda.max_memory_allocated()/1e9").counter ==
        trace::MemoryCounter::allocated);
  CHECK(row("litgpt finetune,,x").job.loss == trace::LossImpl::chunked);
  CHECK(row("torchtune,compile + CEWithChunkedOutputLoss,x").job.loss == trace::LossImpl::chunked);
  CHECK(row("Unsloth (FastLanguageModel),,x").job.loss == trace::LossImpl::fused);
  CHECK(row("Unsloth (offloaded + Apple Cut Cross Entropy),,x").job.loss == trace::LossImpl::cut);
  CHECK(row("HF Trainer,,x").job.loss == trace::LossImpl::full);
  CHECK(row("ms-swift megatron sft (LoRA),,x").job.loss == trace::LossImpl::vocab_parallel);
  // a framework the notes only mention is not the row's
  CHECK(row("ms-swift swift sft + DeepSpeed ZeRO-2,same job under Megatron 64 GB,x").job.loss ==
        trace::LossImpl::full);
  // job_attention "sdpa" (the default when absent) becomes flash where the row names it
  CHECK(row("HF Trainer,,x").job.attention == trace::AttentionImpl::sdpa);
  CHECK(row("HF transformers + PEFT + FA2,,x").job.attention == trace::AttentionImpl::flash);
  CHECK(row("Unsloth (FastLanguageModel),,x").job.attention == trace::AttentionImpl::flash);
  CHECK(row("ms-swift megatron sft,,x").job.attention == trace::AttentionImpl::flash);
  // torch.compile where the notes say so, not where they say it was off
  CHECK(row("torchtune,compile + CEWithChunkedOutputLoss,x").job.compiled);
  CHECK(row("torchtune,packed 2048 compile=True,x").job.compiled);
  CHECK_FALSE(row("torchtune,cumulative ablation; no compile,x").job.compiled);
  CHECK_FALSE(row("torchtune,compile=False,x").job.compiled);
  CHECK_FALSE(row("HF Trainer,,x").job.compiled);
}

TEST_CASE("the validator's config names and re-uploads", "[validate]") {
  trace::MeasuredRow r;
  r.model_id = "unsloth/Qwen2.5-Coder-14B-Instruct";
  r.config_file = "Qwen__Qwen2.5-14B.json";
  const std::vector<std::string> names = trace::config_file_candidates(r);
  REQUIRE(names.size() >= 4);
  CHECK(names[0] == "Qwen__Qwen2.5-14B.json");
  CHECK(std::find(names.begin(), names.end(), "Qwen--Qwen2.5-14B.reconstructed.json") != names.end());
  CHECK(std::find(names.begin(), names.end(), "unsloth--Qwen2.5-Coder-14B-Instruct.json") !=
        names.end());
  CHECK(trace::mirrored_model_name("unsloth/Phi-4") == "phi-4");
  CHECK(trace::mirrored_model_name("unsloth/codegemma-7b-bnb-4bit") == "codegemma-7b");
  CHECK(trace::mirrored_model_name("unsloth/granite-4.0-350m-unsloth-bnb-4bit") == "granite-4.0-350m");
  CHECK(trace::mirrored_model_name("no-slash").empty());
}

TEST_CASE("expert parallelism: experts split over EP, their states over expert-DP", "[job][sharding]") {
  // A tiny Mixtral: h 64, 2 layers, 4 heads x 16, 2 kv heads, 4 experts of width 128, V 1,000.
  // Per layer: attention 4,096 + 2,048 + 2,048 + 4,096 = 12,288; router 64 x 4 = 256; experts
  // 4 x 3 x 64 x 128 = 98,304; norms 128 -> 110,976. Total 64,000 + 2 x 110,976 + 64 + 64,000
  // = 350,016, of which routed experts 196,608 and dense 153,408.
  const char* config = R"({
    "model_type": "mixtral", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
    "num_local_experts": 4, "num_experts_per_tok": 2, "vocab_size": 1000,
    "tie_word_embeddings": false, "torch_dtype": "bfloat16"
  })";
  const trace::ModelDescription model = trace::parse_model_config(config);
  const trace::ParameterCount params = trace::count_parameters(model);
  REQUIRE(params.total == 350'016);
  trace::Job job = job_of(trace::LossImpl::full);
  job.gpus = 8;
  job.ep = 4;
  job.sharding = trace::Sharding::megatron;  // Megatron's distributed optimizer
  // DP 8, ETP min(1, 8 / 4) = 1: experts split 4 ways, their states over 1 x 8 / 4 = 2 ranks.
  const trace::MemoryBreakdown b = trace::estimate_job(model, params, job).breakdown;
  // bf16 copy: 153,408 x 2 + 196,608 x 2 / 4; fp32 master: 153,408 x 4 / 8 + 196,608 x 4 / 8
  CHECK(b.weights == 306'816 + 98'304 + 76'704 + 98'304);
  // fp32 main gradients, not sharded: 153,408 x 4 + 196,608 x 4 / 4
  CHECK(b.gradients == 613'632 + 196'608);
  // two fp32 moments: 153,408 x 8 / 8 + 196,608 x 8 / 8
  CHECK(b.optimizer == 153'408 + 196'608);
}

TEST_CASE("the per-card tables follow the job estimator", "[job][tables]") {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::MemoryAssumptions a;
  a.seq_len = 128;
  a.batch = 3;
  trace::Job job = job_of(trace::LossImpl::chunked);
  job.checkpointing = trace::Checkpointing::full;
  const trace::ModeMemory mode = trace::mode_memory_from_job(model, params, job, a);
  job.batch = 3;
  const trace::MemoryBreakdown direct = trace::estimate_job(model, params, job, a).breakdown;
  // same terms, the logits folded into the activations, the CUDA context as overhead
  CHECK(mode.breakdown.weights == direct.weights);
  CHECK(mode.breakdown.activations == direct.activations + direct.logits);
  CHECK(mode.breakdown.total() == direct.total() + a.cuda_context_bytes);
  // per sequence of 128 tokens: checkpointed 1,216 values x 2 bytes + 1,000 x 6 logits bytes
  CHECK(mode.per_sequence_bytes == 128 * (1'216 * 2 + 1'000 * 6));
  CHECK(mode.fixed_bytes + 3 * mode.per_sequence_bytes == mode.breakdown.total());
  CHECK(trace::describe_training(job) == "AdamW, bf16 mixed, checkpointing full, chunked loss");
}

TEST_CASE("QLoRA through bitsandbytes keeps each 4-bit Linear's input", "[job][qlora]") {
  trace::Job job = job_of(trace::LossImpl::full);
  job.mode = trace::JobMode::qlora;
  job.precision = trace::Precision::bf16_pure;
  job.lora_rank = 8;
  // Distinct Linear inputs per layer: q/k/v input 64 + o_proj input 4 x 16 = 64 + gate/up input
  // 64 + down input 128 = 320; two layers: 640 values per token on top of 2,048.
  CHECK(estimate(k_tiny, job).breakdown.activations == (2'048 + 640) * 256 * 2);
  // Unsloth's fused kernels keep what LoRA keeps.
  job.bnb_matmul_keeps_inputs = false;
  CHECK(estimate(k_tiny, job).breakdown.activations == 2'048 * 256 * 2);
  job.mode = trace::JobMode::lora;
  job.bnb_matmul_keeps_inputs = true;  // no 4-bit matmul in plain LoRA
  CHECK(estimate(k_tiny, job).breakdown.activations == 2'048 * 256 * 2);
}

TEST_CASE("LoRA on an fp32 base under autocast keeps a bf16 copy of each weight", "[job][lora]") {
  trace::Job job = job_of(trace::LossImpl::full);
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::mixed;
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  job.base_dtype = trace::Dtype::fp32;
  const trace::JobEstimate e = estimate(k_tiny, job);
  // fp32 base 202,048 x 4 + the bf16 casts of the 15 matrices (137,728 values: job_test.cpp) x 2
  // + fp32 adapters: r 8 x (64 + 64) on q and (64 + 32) on v, two layers = 3,584 params x 4
  CHECK(e.trainable_params == 3'584);
  CHECK(e.breakdown.weights == 202'048 * 4 + 137'728 * 2 + 3'584 * 4);
  job.base_dtype = trace::Dtype::bf16;  // already bf16: no copies
  CHECK(estimate(k_tiny, job).breakdown.weights == 202'048 * 2 + 3'584 * 4);
}

TEST_CASE("validate targets: each missed one is named", "[validate]") {
  trace::Scoreboard board;
  board.oom_rows = 61;
  board.oom_flagged = 35;  // 57.4%
  board.fit_rows = 179;
  board.fit_rejected = 14;  // 7.8%
  board.median_abs_rel_error = 0.153;
  board.p90_abs_rel_error = 0.537;
  trace::ScoreTargets targets;
  CHECK(trace::missed_targets(board, targets).empty());  // nothing asked, nothing missed
  targets.min_recall = 0.95;
  targets.max_false_reject = 0.05;
  targets.max_median_error = 0.10;
  targets.max_p90_error = 0.25;
  const std::vector<std::string> missed = trace::missed_targets(board, targets);
  REQUIRE(missed.size() == 4);
  CHECK(missed[0] == "did-not-fit recall 57.4% < 95.0% (35/61)");
  CHECK(missed[1] == "false \"does not fit\" 7.8% > 5.0% (14/179)");
  targets = {0.57, 0.08, 0.16, 0.54};  // met
  CHECK(trace::missed_targets(board, targets).empty());
}

TEST_CASE("longest context that fits beside the weights", "[fit][serve]") {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  trace::MemoryAssumptions a;
  // KV per token: 2 layers x (K, V) x 2 kv heads x 16 x 2 bytes = 256. Two requests in
  // (1,000,000 - 100,000) bytes: 450,000 each -> 1,757 tokens (1,758 x 256 = 450,048).
  CHECK(trace::longest_context(model, a, 1'000'000, 100'000, 2) == 1'757);
  CHECK(trace::longest_context(model, a, 100'000, 100'000, 1) == 0);  // no room at all
  CHECK(trace::longest_context(model, a, 1'000'000, 2'000'000, 1) == 0);
  // A sliding window of 64 on every layer caps the KV at 64 tokens: any context fits.
  const trace::ModelDescription windowed = trace::parse_model_config(R"({
    "model_type": "mistral", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 1000,
    "sliding_window": 64, "tie_word_embeddings": false, "torch_dtype": "bfloat16"
  })");
  CHECK(trace::longest_context(windowed, a, 1'000'000, 100'000, 2) == (1LL << 27));
}

TEST_CASE("serving prefill runs in chunks of prefill_chunk_tokens", "[job][serve]") {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  const trace::ParameterCount params = trace::count_parameters(model);
  trace::Job job;
  job.mode = trace::JobMode::serve;
  job.context = 100'000;
  job.concurrency = 2;
  trace::MemoryAssumptions a;
  a.max_num_seqs = 0;  // sampling only the 2 sequences: the forward pass is the larger
  // the forward pass holds 576 values per token (serving_working_set_test.cpp); 8,192 tokens
  // per pass, bf16
  CHECK(trace::estimate_job(model, params, job, a).breakdown.activations == 576LL * 8'192 * 2);
  a.prefill_chunk_tokens = 0;  // the whole 200,000-token batch at once
  CHECK(trace::estimate_job(model, params, job, a).breakdown.activations == 576LL * 200'000 * 2);
}
