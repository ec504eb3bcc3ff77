// The validator's readings of a row beyond its job_* cells (LoRA dropout, nf4 double
// quantization, the counter and the context a row measured, vLLM's batched tokens) and its floor
// verdicts; and the estimator terms they switch on, on the tiny Llama of job_test.cpp (h = 64,
// 2 layers, 4 heads x 16, 2 kv heads, I = 128, V = 1,000). Derivations in the comments.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "catch.hpp"
#include "test_data.hpp"
#include "tiny_models.hpp"
#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/model/model_config.hpp"
#include "trace/render/render.hpp"
#include "trace/validate/validation.hpp"

namespace {

const char* const k_tiny = trace::test::k_tiny_llama;

constexpr double k_gib = 1024.0 * 1024.0 * 1024.0;

trace::JobEstimate estimate(const trace::Job& job) {
  const trace::ModelDescription model = trace::parse_model_config(k_tiny);
  return trace::estimate_job(model, trace::count_parameters(model), job);
}

trace::Job lora_job() {
  trace::Job job;
  job.mode = trace::JobMode::lora;
  job.precision = trace::Precision::bf16_pure;
  job.seq_len = 128;
  job.batch = 2;  // 256 tokens
  job.lora_rank = 8;
  job.lora_targets = trace::LoraTargets::attention_qv;
  job.attention = trace::AttentionImpl::flash;
  job.eager_rms_norm = false;  // fused norms: the eager RMSNorm's copies are tested in job_test.cpp
  return job;
}

const std::string k_header =
    "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
    "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,framework,"
    "notes,measure_method,quantization,seq_len,lora_targets\n";

// One row of the tiny model: a full fine-tune at 128 x 2 under mixed precision with AdamW
// unless the cells say otherwise.
std::string row_line(const std::string& id, const std::string& task, const std::string& seq_len,
                     const std::string& gpus, const std::string& sharding,
                     const std::string& weights, const std::string& usable,
                     const std::string& measured, const std::string& oom,
                     const std::string& text_cells) {
  return id + ",org/tiny,tiny.json," + task + "," + seq_len + ",2," + gpus + "," + sharding + "," +
         weights + ",mixed_fp32master,adamw," + usable + "," + measured + "," + oom + "," +
         text_cells + "\n";
}

// Engine rows (kv_capacity) at tensor parallelism, scored against one config.
const std::string k_engine_header =
    "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
    "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,"
    "gpu_mem_util,framework,measure_method,kv_cache_mem_gib\n";

trace::Scoreboard score_engine_rows(const std::string& config, const std::string& rows) {
  return trace::validate_rows(
      trace::parse_measured_csv(k_engine_header + rows),
      [&](const trace::MeasuredRow&) -> std::optional<std::string> { return config; });
}

// The job of one row_line, as the validator reads it.
trace::Job job_of(const std::string& line) {
  return trace::parse_measured_csv(k_header + line).at(0).job;
}

trace::MeasuredRow one_row(const std::string& task, const std::string& weights,
                           const std::string& text_cells) {
  return trace::parse_measured_csv(
             k_header + row_line("1", task, "128", "1", "single", weights, "1", "", "0", text_cells))
      .at(0);
}

// The job of one row of `task` at 128 x 2 on one GPU with AdamW; `weights_precision`: its
// job_weights and job_precision cells; `columns`: further columns and their `cells`.
trace::Job job_with_cells(const std::string& task, const std::string& weights_precision,
                          const std::string& columns, const std::string& cells) {
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom," +
      columns + "\n";
  return trace::parse_measured_csv(header + "1,org/tiny,tiny.json," + task + ",128,2,1,single," +
                                   weights_precision + ",adamw,80,,0," + cells + "\n")
      .at(0)
      .job;
}

trace::Scoreboard score(const std::string& lines) {
  return trace::validate_rows(trace::parse_measured_csv(k_header + lines),
                              [](const trace::MeasuredRow&) -> std::optional<std::string> {
                                return std::string(k_tiny);
                              });
}

}  // namespace

TEST_CASE("LoRA dropout keeps each adapted Linear's dropped-out input and mask", "[job][lora]") {
  trace::Job job = lora_job();
  const std::int64_t without = estimate(job).breakdown.activations;
  job.lora_dropout = 0.05;
  // q and v each read the 64-wide hidden state: 128 values per layer, 256 for both layers, per
  // token; a bf16 copy (2 bytes) + a 1-byte mask, over 256 tokens. Under dropout the count
  // keeps the frozen MLP's inputs as well (its input 64 and down input 128 a layer, which
  // without dropout no adapter reads and the count leaves out: docs/memory.md, "Frozen Linears
  // keep no input"): 192 x 2 layers x 256 tokens x 2 bytes.
  CHECK(estimate(job).breakdown.activations - without == 256 * 256 * 3 + 192 * 2 * 256 * 2);
  // Full checkpointing: only the recomputed layer's copies (128 values per token) and inputs.
  job.checkpointing = trace::Checkpointing::full;
  job.lora_dropout = 0;
  const std::int64_t checkpointed = estimate(job).breakdown.activations;
  job.lora_dropout = 0.05;
  CHECK(estimate(job).breakdown.activations - checkpointed == 128 * 256 * 3 + 192 * 256 * 2);
  // Every Linear: q, k, v, o, gate, up read 64 values each, down 128: 512 per layer.
  job.checkpointing = trace::Checkpointing::none;
  job.lora_targets = trace::LoraTargets::all_linear;
  job.lora_dropout = 0;
  const std::int64_t all_without = estimate(job).breakdown.activations;
  job.lora_dropout = 0.1;
  CHECK(estimate(job).breakdown.activations - all_without == 1'024 * 256 * 3);
  job.lora_dropout = 1.0;
  CHECK_THROWS_AS(estimate(job), trace::ConfigError);
}

TEST_CASE("nf4 without double quantization keeps an F32 absmax per 64 values", "[job][qlora]") {
  trace::Job job = lora_job();
  job.mode = trace::JobMode::qlora;
  const std::int64_t double_quant = estimate(job).breakdown.weights;
  job.nf4_double_quant = false;
  // 73,728 nf4 values in 1,152 blocks: an F32 absmax each (4,608 bytes) instead of a U8 each
  // (1,152) + per Linear (14, each under 256 blocks) an F32 nested absmax and the 256-entry F32
  // nested code book (14 x 257 x 4 = 14,392).
  CHECK(estimate(job).breakdown.weights - double_quant == 4'608 - 1'152 - 14'392);
}

TEST_CASE("PEFT's kbit preparation keeps the unquantized parameters in fp32", "[job][qlora]") {
  trace::Job job = lora_job();
  job.mode = trace::JobMode::qlora;
  const std::int64_t bf16_rest = estimate(job).breakdown.weights;
  job.kbit_upcast = true;
  // Outside the 73,728 nf4 values: 202,048 - 73,728 = 128,320 parameters (embedding, norms,
  // head), 2 bytes more each in fp32; and the fp32 head's bf16 cast under autocast, which
  // backward keeps: V x h x 2 = 1,000 x 64 x 2 = 128,000.
  CHECK(estimate(job).breakdown.weights - bf16_rest == 128'320 * 2 + 128'000);
  // An LLM.int8 base: the 73,728 Linear values at 1 byte + an F32 scale per output row
  // (per layer q 64 + k 32 + v 32 + o 64 + gate 128 + up 128 + down 64 = 512; 1,024 in all),
  // the rest at 4 bytes after the upcast; adapters (3,584) in bf16; the head's cast; and the
  // fp16 copy LLM.int8's backward makes of the largest Linear (128 x 64 x 2 = 16,384).
  job.mode = trace::JobMode::lora;
  job.base_dtype = trace::Dtype::int8;
  CHECK(estimate(job).breakdown.weights ==
        73'728 + 1'024 * 4 + 128'320 * 4 + 3'584 * 2 + 128'000 + 16'384);
}

TEST_CASE("PEFT's kbit preparation makes the residual stream fp32", "[job][qlora]") {
  // The upcast embedding makes the hidden states fp32; the norms' inputs and what the MLP's
  // bitsandbytes up/gate Linears return (cast back to their input's dtype) and its activation
  // stay fp32 under autocast: per layer 2 norms x 64 + gate, act(gate), up 3 x 128 = 512
  // values, 2 bytes more each than bf16; + the final norm's input 64. 256 tokens.
  trace::Job job = lora_job();
  job.mode = trace::JobMode::qlora;
  const std::int64_t bf16_stream = estimate(job).breakdown.activations;
  job.kbit_upcast = true;
  CHECK(estimate(job).breakdown.activations - bf16_stream == (2 * 512 + 64) * 2 * 256);
  // Full checkpointing keeps each layer's input (2 x 64) and the final norm's input (64) in fp32,
  // and recomputes one layer (512 values at 2 bytes more).
  job.checkpointing = trace::Checkpointing::full;
  job.kbit_upcast = false;
  const std::int64_t bf16_checkpointed = estimate(job).breakdown.activations;
  job.kbit_upcast = true;
  CHECK(estimate(job).breakdown.activations - bf16_checkpointed == (2 * 64 + 64 + 512) * 2 * 256);
  // A run in fp32 throughout has nothing to upcast and casts nothing for the head.
  job.precision = trace::Precision::fp32;
  job.kbit_upcast = false;
  const trace::JobEstimate fp32_run = estimate(job);
  job.kbit_upcast = true;
  CHECK(estimate(job).breakdown.activations == fp32_run.breakdown.activations);
  CHECK(estimate(job).breakdown.weights - fp32_run.breakdown.weights == 128'320 * 2);
}

TEST_CASE("a compiled chunked loss keeps only the bf16 logits", "[job][loss]") {
  trace::Job job = lora_job();
  job.loss = trace::LossImpl::chunked;
  CHECK(estimate(job).breakdown.logits == 256'000 * 6);  // V x tokens = 1,000 x 256
  job.compiled = true;
  CHECK(estimate(job).breakdown.logits == 256'000 * 2);
  job.loss = trace::LossImpl::full;  // the model's own fp32 logits: compile does not fuse them
  CHECK(estimate(job).breakdown.logits == 256'000 * 12);
}

TEST_CASE("the validator reads LoRA dropout and nf4 double quantization from the row",
          "[validate]") {
  // framework, notes, measure_method, quantization, seq_len
  CHECK(one_row("lora", "bf16", "HF,LoRA r=8 alpha=16 dropout 0.05,x,,").job.lora_dropout ==
        Approx(0.05));
  CHECK(one_row("lora", "bf16", "HF,x; lora_dropout 0.1; y,x,,").job.lora_dropout == Approx(0.1));
  CHECK(one_row("lora", "bf16", "HF,default (alpha 16; dropout 0),x,,").job.lora_dropout == 0);
  CHECK(one_row("lora", "bf16", "swift,--lora_dropout_p 0.05,x,,").job.lora_dropout == Approx(0.05));
  CHECK(one_row("lora", "bf16", "HF,lora_dropout=0.1.,x,,").job.lora_dropout == Approx(0.1));
  // LitGPT's default (finetune/lora.py and its config_hub yamls), PEFT's otherwise
  CHECK(one_row("lora", "bf16", "litgpt finetune,,x,,").job.lora_dropout == Approx(0.05));
  // ms-swift's own default (TunerArguments, Megatron-SWIFT's MegatronTunerMixin): 0.05
  CHECK(one_row("lora", "bf16", "ms-swift swift sft,,x,,").job.lora_dropout == Approx(0.05));
  CHECK(one_row("lora", "bf16", "ms-swift megatron sft,,x,,").job.lora_dropout == Approx(0.05));
  CHECK(one_row("lora", "bf16", "ms-swift swift sft,lora_dropout 0,x,,").job.lora_dropout == 0);
  // torchtune's LoRA builders defaulted to 0.05 until v0.3 (PR #1492, Sept 2024), then 0.0
  CHECK(one_row("lora", "bf16", "torchtune (commit fef3ed10d; Apr 2024),,x,,").job.lora_dropout ==
        Approx(0.05));
  CHECK(one_row("qlora", "nf4", "torchtune 0.2.1,,x,,").job.lora_dropout == Approx(0.05));
  CHECK(one_row("lora", "bf16", "torchtune 0.3.0,,x,,").job.lora_dropout == 0);
  CHECK(one_row("lora", "bf16", "torchtune (Oct 2024),,x,,").job.lora_dropout == 0);
  CHECK(one_row("lora", "bf16", "torchtune,,x,,").job.lora_dropout == 0);  // not known to be old
  CHECK(one_row("lora", "bf16", "HF Trainer + PEFT,,x,,").job.lora_dropout == 0);
  CHECK(one_row("full", "n/a", "litgpt finetune,,x,,").job.lora_dropout == 0);  // no adapters
  CHECK_FALSE(one_row("qlora", "nf4", "litgpt,,x,bnb.nf4,").job.nf4_double_quant);
  CHECK(one_row("qlora", "nf4", "litgpt,,x,bnb.nf4-dq,").job.nf4_double_quant);
  CHECK(one_row("qlora", "nf4", "PEFT,,x,bnb nf4 (4-bit),").job.nf4_double_quant);
  // PEFT's prepare_model_for_kbit_training: TRL, PEFT, axolotl, FastChat; not Unsloth or
  // LLaMA-Factory, which load the base their own way, and not without a quantized base
  CHECK(one_row("qlora", "nf4", "HF transformers + PEFT + FA2,,x,,").job.kbit_upcast);
  CHECK(one_row("lora", "int8", "axolotl (Nov 2023),,x,,").job.kbit_upcast);
  CHECK_FALSE(one_row("qlora", "nf4", "LLaMA-Factory (HF transformers+PEFT+bnb),,x,,").job.kbit_upcast);
  CHECK_FALSE(one_row("qlora", "nf4", "Unsloth + TRL SFTTrainer,,x,,").job.kbit_upcast);
  CHECK_FALSE(one_row("lora", "bf16", "HF transformers + PEFT,,x,,").job.kbit_upcast);
}

TEST_CASE("the validator reads the counter, a measured context and vLLM's batch", "[validate]") {
  CHECK(one_row("full", "n/a", "torchtune,,README does not say active vs reserved,,").counter ==
        trace::MemoryCounter::allocated);
  CHECK(one_row("full", "n/a", "HF,,pynvml used incl. CUDA context (~1343 MiB),,")
            .measured_context_bytes == 1343LL << 20);
  CHECK(one_row("full", "n/a", "HF,load = 2631 MiB total (1343 MiB context),pynvml,,")
            .measured_context_bytes == 1343LL << 20);
  CHECK_FALSE(one_row("full", "n/a", "HF,,pynvml,,").measured_context_bytes.has_value());
  // vLLM's profile run: chunked over the stated max_num_batched_tokens, or on the V1 engine
  // (0.8 and later) over its default; else over max_model_len
  const trace::MeasuredRow stated = one_row(
      "kv_capacity", "bf16", "vLLM,,x,,max_model_len 200000; max_num_batched_tokens 8192");
  CHECK(stated.engine_batched_tokens == 8192);
  CHECK(stated.engine_chunked_prefill);
  CHECK(one_row("kv_capacity", "bf16", "vLLM,,x,,\"max_num_batched_tokens=64,000\"")
            .engine_batched_tokens == 64'000);
  const trace::MeasuredRow bound =
      one_row("kv_capacity", "bf16", "vLLM V1 (Nov 2025),,x,,max_num_batched_tokens > 64000");
  CHECK_FALSE(bound.engine_batched_tokens.has_value());
  CHECK_FALSE(bound.engine_chunked_prefill);
  CHECK_FALSE(one_row("kv_capacity", "bf16",
                      "vLLM,--no-enable-chunked-prefill,x,,max_num_batched_tokens 8192")
                  .engine_chunked_prefill);
  CHECK(one_row("kv_capacity", "bf16", "vLLM 0.8.3 profile_run,,x,,default max_num_batched_tokens")
            .engine_chunked_prefill);
  CHECK(one_row("kv_capacity", "bf16", "vLLM v0.24.0 docker,,x,,").engine_chunked_prefill);
  CHECK(one_row("kv_capacity", "bf16", "vLLM V1 (Nov 2025),,x,,").engine_chunked_prefill);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM v0.6.5-dev,,x,,").engine_chunked_prefill);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM (Apr 2025; V0),,x,,").engine_chunked_prefill);
}

TEST_CASE("the validator reads Megatron's trained MTP layers from the row", "[validate]") {
  CHECK(one_row("lora", "bf16", "ms-swift megatron sft (LoRA; mtp_num_layers 1),,x,,")
            .job.train_mtp);
  CHECK(one_row("full", "n/a", "Megatron-LM,--mtp-num-layers 2,x,,").job.train_mtp);
  CHECK_FALSE(one_row("full", "n/a", "Megatron-LM,mtp_num_layers 0,x,,").job.train_mtp);
  CHECK_FALSE(one_row("full", "n/a", "ms-swift megatron sft,,x,,").job.train_mtp);
}

TEST_CASE("an engine loads a quantized checkpoint's MTP layers only to decode speculatively",
          "[validate][kv]") {
  const auto mtp = [](const std::string& text_cells) {
    return one_row("kv_capacity", "fp8", text_cells).engine_mtp;
  };
  CHECK(mtp("vLLM v0.24.0 (slug vllm/nemotron-75b-multi-mtp); MTP n=3,,x,,"));
  CHECK(mtp("vLLM,speculative decoding (num_speculative_tokens 2),x,,"));
  CHECK_FALSE(mtp("vLLM v0.24.0 (PIECEWISE CUDA graphs); no MTP,,x,,"));
  CHECK_FALSE(mtp("vLLM 0.8.3,,x,,"));
  // Scored on the NVIDIA Nemotron-3 Puzzle 75B NVFP4 checkpoint (two MTP layers) at TP 4: the
  // KV pool left is smaller by the MTP layers' stored bytes over 4 GPUs when they are loaded.
  const std::string config =
      trace::test::catalog_text("nvidia/NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-NVFP4");
  REQUIRE_FALSE(config.empty());
  const auto row = [](const std::string& id, const std::string& framework) {
    return id + ",nvidia/x,x.json,kv_capacity,200000,,4,tp,4,fp8,bf16_pure,none,23.58,,0,0.85," +
           framework + ",x,4.18\n";
  };
  const trace::Scoreboard board =
      score_engine_rows(config, row("1", "vLLM v0.24.0 MTP n=3") + row("2", "vLLM v0.24.0"));
  REQUIRE(board.results.size() == 2);
  REQUIRE(board.results[0].breakdown.has_value());
  REQUIRE(board.results[1].breakdown.has_value());
  const trace::ModelDescription model = trace::parse_model_config(config);
  const std::int64_t mtp_bytes =
      trace::estimate_storage(model, trace::count_parameters(model)).mtp_bytes;
  REQUIRE(mtp_bytes > 0);
  CHECK(board.results[0].breakdown->weights - board.results[1].breakdown->weights ==
        (mtp_bytes + 3) / 4);
  CHECK(board.results[0].read_as.find(", MTP layers loaded") != std::string::npos);
  CHECK(board.results[1].read_as.find("MTP") == std::string::npos);
}

TEST_CASE("an engine row without job_seq_len takes the max_model_len its text states", "[validate][kv]") {
  const auto context = [](const std::string& text_cells) {
    return job_of(row_line("1", "kv_capacity", "", "1", "single", "bf16", "79", "", "0", text_cells))
        .context;
  };
  CHECK(context("vLLM,,x,,\"max_model_len 65,536, max_num_seqs 128\"") == 65'536);
  CHECK(context("vLLM,,x,,") == 0);  // unstated: the model's own, in validate_rows
  // the profile run samples max_num_seqs sequences: as stated, else vLLM's default (256)
  CHECK(one_row("kv_capacity", "bf16", "vLLM,,x,,\"max_model_len 65,536, max_num_seqs 128\"")
            .engine_max_num_seqs == 128);
  CHECK(one_row("kv_capacity", "bf16", "vLLM,--max-num-seqs 8,x,,").engine_max_num_seqs == 8);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM,,x,,").engine_max_num_seqs.has_value());
  // serve rows: an engine samples up to max_num_seqs; generate() only its batch
  CHECK(one_row("serve", "bf16", "vLLM 0.6.3 OpenAI server,,x,,").serving_engine);
  CHECK(one_row("serve", "bf16", "SGLang (Aug 2025),,x,,").serving_engine);
  CHECK_FALSE(one_row("serve", "bf16", "lit-gpt generate/base.py,,x,,").serving_engine);
  CHECK_FALSE(one_row("serve", "bf16", "HF transformers pipeline/generate,,x,,").serving_engine);
}

TEST_CASE("the validator reads vLLM's MLA cache layout from its version", "[validate][kv]") {
  using trace::MlaCache;
  // MLA caching arrived in vLLM 0.7.1; before it (or with VLLM_MLA_DISABLE=1) K and V per head.
  CHECK(one_row("kv_capacity", "bf16", "vLLM v0.5.4 docker,,x,,").engine_mla_cache ==
        MlaCache::per_head_padded);
  CHECK(one_row("kv_capacity", "bf16", "vLLM 0.7.0,,x,,").engine_mla_cache ==
        MlaCache::per_head_padded);
  CHECK(one_row("kv_capacity", "bf16", "vLLM 0.7.1,,x,,").engine_mla_cache == MlaCache::latent);
  CHECK(one_row("kv_capacity", "bf16", "vLLM v0.24.0,,x,,").engine_mla_cache == MlaCache::latent);
  CHECK(one_row("kv_capacity", "bf16", "vLLM v0.9.2,VLLM_MLA_DISABLE=1,x,,").engine_mla_cache ==
        MlaCache::per_head_padded);
  CHECK(one_row("kv_capacity", "bf16", "SGLang (Aug 2025),,x,,").engine_mla_cache ==
        MlaCache::latent);
}

TEST_CASE("vLLM before 0.3 profiles AWQ Mixtral with split-K GEMMs and whole experts",
          "[validate][kv][moe]") {
  CHECK(one_row("kv_capacity", "bf16", "vLLM v0.2.7,,x,,").engine_vllm_before_0_3);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM v0.3.0,,x,,").engine_vllm_before_0_3);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM (Sep 2025),,x,,").engine_vllm_before_0_3);
  // TheBloke's Mixtral-8x7B AWQ at TP 2 with max_model_len 32,768 (vLLM issue #2382): 0.2.7's
  // profile run passes 32,768 tokens at once, whose widest layer holds 155,656 fp16 values per
  // token: its input and residual 8,192, the router logits 8, the running sum of the experts'
  // outputs 4,096, and an expert's act(w1) 14,336 beside w3's output 14,336 and awq_gemm's 8
  // partial sums of it (8 x 14,336). The sampling step (256 x 32,000 x 38 + 32,768 x 4,096 x 2)
  // is smaller.
  const std::string config =
      trace::test::config_text("TheBloke--Mixtral-8x7B-Instruct-v0.1-AWQ.reconstructed.json");
  REQUIRE_FALSE(config.empty());
  const auto row = [](const std::string& id, const std::string& framework) {
    return id + ",TheBloke/x,x.json,kv_capacity,,,2,tp,2,bf16,bf16_pure,none,79.3,,0,0.5," +
           framework + ",x,6.33\n";
  };
  const trace::Scoreboard board =
      score_engine_rows(config, row("1", "vLLM v0.2.7") + row("2", "vLLM v0.3.0"));
  REQUIRE(board.results.size() == 2);
  REQUIRE(board.results[0].breakdown.has_value());
  CHECK(board.results[0].breakdown->activations == 155'656LL * 32'768 * 2);
  CHECK(board.results[0].read_as.find(", AWQ split-K GEMM, experts run whole on every token") !=
        std::string::npos);
  // From 0.3.0 AWQ dequantizes for passes of 256 tokens and more: no partial sums.
  CHECK(board.results[1].read_as.find("split-K") == std::string::npos);
}

TEST_CASE("the validator reads a layer split across GPUs as balanced by memory", "[validate][pp]") {
  // job_sharding pp: Accelerate's device_map="auto", which fills each GPU in turn; Megatron's
  // pipeline splits the layers by count.
  const trace::Job device_map =
      job_of(row_line("1", "serve", "64", "2", "pp", "bf16", "23", "", "0", "Accelerate,,x,,"));
  CHECK(device_map.pp == 2);
  CHECK(device_map.pipeline_by_memory);
  trace::MeasuredRow megatron = trace::parse_measured_csv(
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,job_pp\n"
      "1,org/tiny,tiny.json,full,128,1,4,megatron,n/a,mixed_fp32master,adamw,80,,0,2\n").at(0);
  CHECK(megatron.job.pp == 2);
  CHECK_FALSE(megatron.job.pipeline_by_memory);
}

TEST_CASE("the validator reads gradient accumulation and FSDP's no_sync", "[validate][fsdp]") {
  const auto fsdp_row = [](const std::string& gpus, const std::string& text_cells) {
    return job_of(row_line("1", "lora", "128", gpus, "fsdp", "bf16", "40", "", "0", text_cells));
  };
  // LitGPT (Lightning Fabric): no_backward_sync is FSDP's no_sync, Blocks wrap the frozen base
  // with the adapters; unstated, its default global batch of 64 over 2 GPUs x 2 sequences.
  const trace::Job litgpt = fsdp_row("2", "lit-gpt (Lightning Fabric) finetune/lora.py,,x,,");
  CHECK(litgpt.accumulate_unsharded);
  CHECK(litgpt.frozen_in_flat_params);
  CHECK(litgpt.grad_accum == 16);
  // A stated accumulation wins.
  CHECK(fsdp_row("2", "litgpt,global batch; grad accum 3,x,,").grad_accum == 3);
  CHECK(fsdp_row("4", "HF Trainer + accelerate,gradient_accumulation_steps=8,x,,").grad_accum == 8);
  // torchtune reduce-scatters every micro-batch; its blocks keep LoRA apart.
  const trace::Job torchtune = fsdp_row("2", "torchtune lora_finetune_distributed,grad accum 4,x,,");
  CHECK(torchtune.grad_accum == 4);
  CHECK_FALSE(torchtune.accumulate_unsharded);
  CHECK_FALSE(torchtune.frozen_in_flat_params);
  // DeepSpeed's ZeRO-3 has no no_sync.
  const trace::Job deepspeed = job_of(row_line("1", "lora", "128", "2", "zero3", "bf16", "40", "",
                                               "0", "HF Trainer + DeepSpeed,grad accum 8,x,,"));
  CHECK(deepspeed.grad_accum == 8);
  CHECK_FALSE(deepspeed.accumulate_unsharded);
  // PyTorch's FSDP keeps its root unit (embeddings, head) gathered through backward; DeepSpeed
  // does not, nor FSDP with the embedding and head wrapped apart (custom_sharded_layers, which
  // torchtune's Llama-3 / 3.1 full-finetune configs set).
  CHECK(litgpt.root_unit_gathered);
  CHECK(torchtune.root_unit_gathered);
  CHECK_FALSE(deepspeed.root_unit_gathered);
  const auto root_gathered = [&](const std::string& text_cells) {
    return fsdp_row("8", text_cells).root_unit_gathered;
  };
  CHECK_FALSE(root_gathered("torchtune (commit 30b8519e8),config llama3_1/70B_full,x,,"));
  CHECK_FALSE(root_gathered("torchtune,custom_sharded_layers tok_embeddings output,x,,"));
  CHECK(root_gathered("torchtune (commit 30b8519e8),config llama3_1/70B_lora,x,,"));
}

TEST_CASE("the validator reads torchtune's chunked loss from its version or date", "[validate][loss]") {
  using trace::LossImpl;
  const auto loss = [](const std::string& text_cells) { return one_row("lora", "bf16", text_cells).job.loss; };
  // CEWithChunkedOutputLoss in every recipe config from v0.3 (Sept 2024)
  CHECK(loss("torchtune lora_finetune_distributed (v0.3; Oct 2024),,x,,") == LossImpl::chunked);
  CHECK(loss("torchtune 0.4.0 lora_finetune_distributed,,x,,") == LossImpl::chunked);
  CHECK(loss("torchtune (commit 30b8519e8),README 2024-09 table,x,,") == LossImpl::chunked);
  // before it, or where the row says standard CE, the full loss
  CHECK(loss("torchtune (commit fef3ed10d; Apr 2024),,x,,") == LossImpl::full);
  CHECK(loss("torchtune 0.2.1,,x,,") == LossImpl::full);
  CHECK(loss("torchtune (Nov 2024),no compile; standard CE,x,,") == LossImpl::full);
  CHECK(loss("torchtune,,x,,") == LossImpl::full);  // no version, no date: not known to chunk
  // a date says nothing about other frameworks' losses
  CHECK(loss("HF Trainer (Dec 2024),,x,,") == LossImpl::full);
}

TEST_CASE("the validator reads torchao's one-pass nf4 quantization from torchtune's version",
          "[validate][qlora]") {
  const auto one_pass = [](const std::string& task, const std::string& weights,
                           const std::string& text_cells) {
    return one_row(task, weights, text_cells).job.nf4_quantized_in_one_pass;
  };
  // torchtune pinned torchao 0.1 until v0.2 (June 2024); torchao chunked the quantization in 0.2
  CHECK(one_pass("qlora", "nf4", "torchtune (commit fef3ed10d; Apr 2024),,x,NF4 (torchao),"));
  CHECK(one_pass("qlora", "nf4", "torchtune 0.1.1 lora_finetune_single_device,,x,,"));
  CHECK_FALSE(one_pass("qlora", "nf4", "torchtune 0.2.0,,x,,"));
  CHECK_FALSE(one_pass("qlora", "nf4", "torchtune (commit 30b8519e8),README 2024-09 table,x,,"));
  CHECK_FALSE(one_pass("qlora", "nf4", "torchtune,,x,,"));  // no version, no date: not known
  // a torchao version the row gives decides, whatever torchtune's date
  CHECK(one_pass("qlora", "nf4", "custom script,,x,NF4 (torchao 0.1),"));
  CHECK_FALSE(one_pass("qlora", "nf4", "torchtune (Apr 2024),torchao 0.3.1,x,,"));
  // only an nf4 base is quantized, and only torchtune's goes through torchao 0.1
  CHECK_FALSE(one_pass("lora", "bf16", "torchtune (Apr 2024),,x,,"));
  CHECK_FALSE(one_pass("qlora", "nf4", "HF transformers + PEFT (Apr 2024),,x,,"));
}

TEST_CASE("the validator reads LoRA targets module by module", "[validate][lora]") {
  using trace::LoraTargets;
  const auto targets = [](const std::string& cell) {
    return one_row("lora", "bf16", ",,x,,,\"" + cell + "\"").job.lora_targets;
  };
  CHECK(targets("q,v") == LoraTargets::attention_qv);
  // words around the module names are not modules: "lora_query", "attention", "default"
  CHECK(targets("q,v (lora_query+lora_value)") == LoraTargets::attention_qv);
  CHECK(targets("q,v (T5 attention)") == LoraTargets::attention_qv);
  CHECK(targets("q_proj,v_proj (the same job with lora_target all trains)") ==
        LoraTargets::attention_qv);
  // the parenthesised names when the text outside names none
  CHECK(targets("FastChat default (q_proj,v_proj)") == LoraTargets::attention_qv);
  CHECK(targets("q_proj,k_proj,v_proj") == LoraTargets::attention);
  CHECK(targets("query_key_value") == LoraTargets::attention);
  CHECK(targets("linear_qkv, linear_proj (alpha 64)") == LoraTargets::attention);
  CHECK(targets("q,k,v,output_proj + MLP") == LoraTargets::all_linear);
  CHECK(targets("all-linear (alpha 32)") == LoraTargets::all_linear);
  CHECK(targets("recipe default (c_attn, c_proj, w1, w2)") == LoraTargets::all_linear);
  // nothing named: the job's default (every Linear)
  CHECK(targets("script default") == LoraTargets::all_linear);
}

TEST_CASE("the validator reads a LoRA rank from its free text when job_lora_rank is empty",
          "[validate][lora]") {
  const auto rank = [](const std::string& job_cell, const std::string& text_cell) {
    const std::string csv =
        "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
        "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,"
        "job_lora_rank,lora_rank\n1,org/tiny,tiny.json,lora,128,2,1,single,bf16,bf16_pure,adamw,"
        "24,,0," +
        job_cell + ",\"" + text_cell + "\"\n";
    return trace::parse_measured_csv(csv).at(0).job.lora_rank;
  };
  CHECK(rank("32", "8 (default)") == 32);  // the job cell first
  CHECK(rank("", "8 (default)") == 8);     // LLaMA-Factory's default, as the row writes it
  CHECK(rank("", "16 (41,943,040 trainable = r16 on q,k,v,o,gate,up,down)") == 16);
  CHECK(rank("", "recipe default (64)") == 64);
  // no rank named, or a share of the parameters: the default, 16
  CHECK(rank("", "notebook default") == 16);
  CHECK(rank("", "~0.5% trainable") == 16);
  CHECK(rank("", "2.5") == 16);
}

TEST_CASE("the validator reads GRPO from the row's text", "[validate][rl]") {
  const auto job = [](const std::string& framework, const std::string& sharding) {
    const std::string csv =
        "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
        "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,"
        "framework\n1,org/tiny,tiny.json,full,1024,2,4," + sharding +
        ",n/a,mixed_fp32master,adamw,80,,0,\"" + framework + "\"\n";
    return trace::parse_measured_csv(csv).at(0).job;
  };
  CHECK_FALSE(job("TRL SFTTrainer", "zero3").rl.has_value());
  CHECK_FALSE(job("TRL DPOTrainer (not GRPO)", "zero3").rl.has_value());  // DPO first
  // TRL's defaults: 256-token completions, transformers' generate(), no reference
  trace::Job grpo = job("TRL GRPOTrainer", "zero3");
  REQUIRE(grpo.rl.has_value());
  CHECK(grpo.rl->completion_len == 256);
  CHECK(grpo.rl->generator == trace::Generator::transformers);
  CHECK_FALSE(grpo.rl->reference);
  CHECK(grpo.rl->zero3_gathers);
  CHECK(job("TRL GRPOTrainer", "fsdp").rl->zero3_gathers == false);
  // a colocated engine at 0.25 of the 80 GiB the row gives: 20 GiB; asleep; a reference
  grpo = job("TRL GRPO, use_vllm vllm_mode colocate vllm_gpu_memory_utilization 0.25, "
             "vllm_enable_sleep_mode, max_completion_length 512, beta 0.04",
             "zero3");
  CHECK(grpo.rl->completion_len == 512);
  CHECK(grpo.rl->generator == trace::Generator::vllm_colocate);
  CHECK(grpo.rl->engine_bytes == 20LL * 1024 * 1024 * 1024);
  CHECK(grpo.rl->engine_sleeps);
  CHECK(grpo.rl->reference);
  // a vLLM server; a completion longer than the sequence is the sequence
  grpo = job("TRL GRPO + trl vllm-serve, max_completion_length 4096", "zero3");
  CHECK(grpo.rl->generator == trace::Generator::vllm_server);
  CHECK(grpo.rl->completion_len == 1024);
}

TEST_CASE("the validator compares each counter with what it sees", "[validate]") {
  // The tiny full fine-tune peaks at 7,702,912 allocated bytes with eager RMSNorms under
  // autocast and its gradients freed between steps (job_test.cpp, "the validator scores a small
  // CSV"). Reserved memory is read through the allocator's measured 8% over allocated:
  // ceil(7,702,912 x 1.08) = 8,319,145; a whole-process counter adds the context the row
  // measured (100 MiB), else trace's 512 MiB.
  const trace::Scoreboard board = score(
      row_line("1", "full", "128", "1", "single", "n/a", "1", "0.0075", "0",
               "x,,torch.cuda.max_memory_allocated(),,") +
      row_line("2", "full", "128", "1", "single", "n/a", "1", "0.0075", "0",
               "x,,torch.cuda.max_memory_reserved(),,") +
      row_line("3", "full", "128", "1", "single", "n/a", "1", "0.2", "0",
               "x,,pynvml incl. CUDA context (~100 MiB),,") +
      row_line("4", "full", "128", "1", "single", "n/a", "1", "0.6", "0", "x,,nvidia-smi,,"));
  REQUIRE(board.results.size() == 4);
  CHECK(board.results[0].estimate_gib == Approx(7'702'912 / k_gib));
  CHECK(board.results[1].estimate_gib == Approx(8'319'145 / k_gib));
  CHECK(board.results[2].estimate_gib == Approx((8'319'145 + (100LL << 20)) / k_gib));
  CHECK(board.results[3].estimate_gib == Approx((8'319'145 + (512LL << 20)) / k_gib));
}

TEST_CASE("a derivation that read vLLM's weights log as decimal GB is redone in GiB",
          "[validate]") {
  // vLLM prints bytes / 2^30 as "GB" (vLLM #14979). The row subtracted 14.9888 "GB" as 13.96
  // GiB from a 17.06 GiB peak (3.10 GiB); in GiB it is 17.06 - 14.9888 = 2.0712 GiB.
  const auto row = [](const std::string& framework, const std::string& method) {
    return trace::parse_measured_csv(
               k_header + row_line("1", "full", "128", "1", "single", "n/a", "1", "3.1", "0",
                                   framework + ",," + method + ",,"))
        .at(0);
  };
  const std::string derived =
      "DERIVED: peak_torch_memory 17.06 GiB minus weights 14.9888 GB (13.96 GiB)";
  const trace::MeasuredRow vllm = row("vLLM 0.6.x profile_run", derived);
  REQUIRE(vllm.measured_gib.has_value());
  CHECK(*vllm.measured_gib == Approx(2.0712));
  CHECK(vllm.measured_rederived ==
        "measured re-derived as 17.06 - 14.9888 GiB = 2.07 GiB (vLLM logs its weights in GiB as "
        "\"GB\")");
  CHECK(*row("vLLM 0.6.4", "DERIVED: 17.06 GiB minus model weights of 14.9888 GB").measured_gib ==
        Approx(2.0712));
  // Another framework's GB, weights the row already took in GiB, or no derivation: as written.
  for (const trace::MeasuredRow& kept :
       {row("SGLang", derived), row("vLLM", "DERIVED: 17.06 GiB minus weights 14.99 GiB"),
        row("vLLM", "peak_torch_memory 17.06 GiB; weights 14.9888 GB")}) {
    REQUIRE(kept.measured_gib.has_value());
    CHECK(*kept.measured_gib == Approx(3.1));
    CHECK(kept.measured_rederived.empty());
  }
  // The scored row says so in its reading.
  const trace::Scoreboard board = score(row_line("1", "full", "128", "1", "single", "n/a", "1",
                                                 "3.1", "0", "vLLM,," + derived + ",,"));
  REQUIRE(board.results.size() == 1);
  CHECK(board.results[0].measured_gib == Approx(2.0712));
  CHECK(board.results[0].read_as.find("; measured re-derived as 17.06 - 14.9888 GiB") !=
        std::string::npos);
}

TEST_CASE("a row without a length or a card count is judged by its floor", "[validate]") {
  const trace::Scoreboard board = score(
      // no length, 1 GiB card: the one-token floor fits, so no verdict
      row_line("1", "full", "", "1", "single", "n/a", "1", "", "1", "x,,x,,") +
      // no length, 0.5 GiB card: the CUDA context alone (512 MiB) is over the budget
      row_line("2", "full", "", "1", "single", "n/a", "0.5", "0.4", "1", "x,,x,,") +
      // a ZeRO-3 job without its card count: spread over 1,024 GPUs its floor fits
      row_line("3", "full", "128", "", "zero3", "n/a", "1", "", "1", "x,,x,,"));
  REQUIRE(board.results.size() == 3);
  CHECK_FALSE(board.results[0].planned);
  CHECK(board.results[0].reason.find("job_seq_len is empty; its floor (one token)") != std::string::npos);
  CHECK(board.results[0].reason.find("which fits, so no verdict") != std::string::npos);
  // ... and how long a sequence the 1 GiB card takes at that floor: the length whose peak with
  // the 512 MiB context stays within floor(2^30 x 0.95) bytes while one token more does not.
  {
    trace::Job job =
        job_of(row_line("1", "full", "128", "1", "single", "n/a", "1", "", "1", "x,,x,,"));
    const auto needs = [&](std::int64_t seq_len) {
      job.seq_len = seq_len;
      return estimate(job).breakdown.total() + (512LL << 20);
    };
    std::int64_t longest = 1, over = 2;  // needs(longest) fits, needs(over) does not
    while (needs(over) <= 1'020'054'732) longest = over, over *= 2;
    while (over - longest > 1) {
      const std::int64_t mid = longest + (over - longest) / 2;
      (needs(mid) <= 1'020'054'732 ? longest : over) = mid;
    }
    REQUIRE(longest > 1);
    CHECK(board.results[0].reason.find(
              fmt::format("(at that floor, up to {} tokens a sequence fit; more do not)",
                          trace::group_digits(longest))) != std::string::npos);
  }
  CHECK(board.results[1].planned);
  CHECK(board.results[1].floor_only);
  CHECK_FALSE(board.results[1].predicted_fit);
  CHECK_FALSE(board.results[1].relative_error.has_value());  // a floor is not an estimate
  CHECK_FALSE(board.results[2].planned);
  CHECK(board.results[2].reason.find("job_gpus is empty on a sharded job; its floor (1,024 GPUs)") !=
        std::string::npos);
  CHECK(board.oom_rows == 3);
  CHECK(board.oom_flagged == 1);
}

TEST_CASE("a job cell that is not its column's value leaves the row unplanned, named",
          "[validate]") {
  // Each row's job is otherwise the tiny model's planned full fine-tune; one cell holds what its
  // column cannot (measured.md's definitions), so the row is not read with that column's
  // default as if the cell were empty.
  const trace::Scoreboard board =
      score(row_line("1", "full", "2k", "1", "single", "n/a", "80", "", "1", "x,,x,,") +
            row_line("2", "full", "128", "0", "single", "n/a", "80", "", "1", "x,,x,,") +
            row_line("3", "full", "128", "1", "single", "n/a", "-1", "", "0", "x,,x,,") +
            row_line("4", "full", "128", "1", "single", "n/a", "80", "0", "0", "x,,x,,") +
            row_line("5", "full", "128", "1", "single", "n/a", "80", "", "maybe", "x,,x,,") +
            // spaces around a value are not part of it
            row_line("6", "full", " 128 ", " 1", "single", "n/a", "80 ", "", " 0", "x,,x,,"));
  REQUIRE(board.results.size() == 6);
  CHECK(board.results[0].reason == "job_seq_len '2k' is not a whole number of at least 1");
  CHECK(board.results[1].reason == "job_gpus '0' is not a whole number of at least 1");
  CHECK(board.results[2].reason == "job_usable_gib '-1' is not a positive number of GiB");
  CHECK(board.results[3].reason == "job_measured_gib '0' is not a positive number of GiB");
  CHECK(board.results[4].reason == "job_oom 'maybe' is not 0 or 1");
  for (std::size_t i = 0; i < 5; ++i) CHECK_FALSE(board.results[i].planned);
  CHECK(board.results[5].planned);
  // rows 1 and 2 ran out of memory and count against trace; row 5's label is unknown, so it
  // counts as neither kind; rows 3, 4 and 6 ran
  CHECK(board.rows == 6);
  CHECK(board.oom_rows == 2);
  CHECK(board.oom_flagged == 0);
  CHECK(board.fit_rows == 3);
  CHECK(board.planned == 1);
  // --json says the unknown label as null, the Markdown table as "?"
  const nlohmann::json json = nlohmann::json::parse(trace::render_scoreboard_json(board));
  CHECK(json["results"][4]["oom"].is_null());
  CHECK(json["results"][0]["oom"] == true);
  CHECK(trace::render_scoreboard_markdown(board).find("| 5 | full | org/tiny | - | - | - | ? |") !=
        std::string::npos);
}

TEST_CASE("an empty job_usable_gib reads the card job_gpu names, then card_mem_gb", "[validate]") {
  // measured.md: job_usable_gib is what a process can allocate on the card; where it is empty, the
  // GPU table's usable memory for job_gpu (docs/gpus.md: l4 22.16 GiB, the l40 44.0 GiB as the
  // L40S), and only a card the table does not know falls back to the nominal card_mem_gb (in GB).
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,job_gpu,"
      "card_mem_gb\n";
  const auto row = [](const std::string& id, const std::string& usable, const std::string& gpu) {
    return id + ",org/tiny,tiny.json,full,128,2,1,single,n/a,mixed_fp32master,adamw," + usable +
           ",,0," + gpu + ",24\n";
  };
  const std::vector<trace::MeasuredRow> rows = trace::parse_measured_csv(
      header + row("1", "", "l4") + row("2", "", "L40") + row("3", "", "rtx-3080-ti") +
      row("4", "20.5", "l4") + row("5", "", ""));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].usable_gib == Approx(22.16).epsilon(1e-9));
  CHECK(rows[1].usable_gib == Approx(44.0).epsilon(1e-9));
  CHECK(rows[2].usable_gib == Approx(24e9 / k_gib).epsilon(1e-12));  // not in the table
  CHECK(rows[3].usable_gib == 20.5);                                 // the row's own figure
  CHECK(rows[4].usable_gib == Approx(24e9 / k_gib).epsilon(1e-12));
}

TEST_CASE("a row whose sharding the source does not say is not judged", "[validate]") {
  // measured.md's `unknown`: tensor or pipeline parallelism could split the activations, so no
  // strategy's peak is a floor; the row is listed as unplanned, with that reason.
  const trace::Scoreboard board =
      score(row_line("1", "full", "128", "16", "unknown", "n/a", "40", "", "1", "x,,x,,"));
  REQUIRE(board.results.size() == 1);
  CHECK_FALSE(board.results[0].planned);
  CHECK(board.results[0].reason ==
        "job_sharding is 'unknown' (the source does not say how its GPUs split the job), so no "
        "verdict");
  CHECK(board.oom_rows == 1);
  CHECK(board.oom_flagged == 0);
}

TEST_CASE("an assumed optimizer is judged by the floor without optimizer state", "[validate]") {
  const auto with_optimizer = [](std::string line, const std::string& optimizer) {
    return line.replace(line.find(",adamw,"), 7, "," + optimizer + ",");
  };
  const trace::Scoreboard board = score(
      // 0.4 GiB: even the floor (the CUDA context alone is 0.5 GiB) does not fit
      with_optimizer(row_line("1", "full", "128", "1", "single", "n/a", "0.4", "", "1", "x,,x,,"),
                     "adamw(assumed)") +
      // the same job stated without optimizer state: the same bytes, a full estimate
      with_optimizer(row_line("2", "full", "128", "1", "single", "n/a", "0.4", "", "1", "x,,x,,"),
                     "sgd") +
      // 1 GiB: the floor fits, and the assumed AdamW is not the source's word: no verdict
      with_optimizer(row_line("3", "full", "128", "1", "single", "n/a", "1", "0.6", "0", "x,,x,,"),
                     "adamw(assumed)"));
  REQUIRE(board.results.size() == 3);
  CHECK(board.results[0].planned);
  CHECK(board.results[0].floor_only);
  CHECK_FALSE(board.results[0].predicted_fit);
  CHECK_FALSE(board.results[1].floor_only);
  CHECK(board.results[0].estimate_gib == board.results[1].estimate_gib);
  CHECK_FALSE(board.results[2].planned);
  CHECK(board.results[2].reason.find("job_optimizer is marked (assumed), not the source's word; "
                                     "its floor (no optimizer state)") != std::string::npos);
  CHECK(board.error_rows == 0);
}

TEST_CASE("the validator sizes vLLM's profile run: sequences, sampling, TP buffers", "[validate][kv]") {
  // The tiny model on two 4 GiB cards at TP 2, vLLM V0 (no chunked prefill), max_model_len 128,
  // max_num_seqs 256: the profile feeds max(128, 2,048) tokens (V0's default batch) in 256
  // sequences.
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,framework\n";
  const trace::Scoreboard board = trace::validate_rows(
      trace::parse_measured_csv(header +
                                "1,org/tiny,tiny.json,kv_capacity,128,1,2,tp,2,bf16,bf16_pure,none,4,"
                                ",0,vLLM 0.6.3\n"),
      [](const trace::MeasuredRow&) -> std::optional<std::string> { return std::string(k_tiny); });
  REQUIRE(board.results.size() == 1);
  REQUIRE(board.results[0].planned);
  // Per GPU: weights 202,048 x 2 / 2 = 202,048. The forward pass over 2,048 tokens holds
  // 2 x 64 + max(attention 32 + 2 x 16 + 32 + 64, MLP 384 / 2 + 64) = 384 values per token,
  // 1,572,864 bytes; sampling 256 x 1,000 logits x 38 + 2,048 x 64 x 2 = 9,990,144, the larger.
  // Budget 0.9 x 4 GiB = 3,865,470,566; less vLLM's 384 MiB non-torch memory and the 1,843 MiB
  // of TP buffers: 3,865,470,566 - 202,048 - 2,335,178,752 - 9,990,144 = 1,520,099,622.
  CHECK(board.results[0].estimate_gib == Approx(1'520'099'622.0 / (1LL << 30)));
  CHECK(board.results[0].predicted_fit == true);
  CHECK(board.results[0].read_as.find("profile over 2048 tokens (one pass)") == 0);
  // A max_model_len above 2,048 is the batch itself; V1 (0.8 on) prefills 8,192 in chunks.
  const auto read_as = [&](const std::string& seq_len, const std::string& framework) {
    return trace::validate_rows(
               trace::parse_measured_csv(header + "1,org/tiny,tiny.json,kv_capacity," + seq_len +
                                         ",1,2,tp,2,bf16,bf16_pure,none,4,,0," + framework + "\n"),
               [](const trace::MeasuredRow&) -> std::optional<std::string> {
                 return std::string(k_tiny);
               })
        .results.at(0)
        .read_as;
  };
  CHECK(read_as("4096", "vLLM (Dec 2023)").find("profile over 4096 tokens (one pass)") == 0);
  CHECK(read_as("128", "vLLM 0.8.3").find("profile over 8192 tokens (chunked prefill)") == 0);
}

TEST_CASE("vLLM 0.17 on samples in place, and an 8-bit export is served with 8-bit Linears",
          "[validate][kv]") {
  // The tiny model on one 4 GiB card, V1 (chunked prefill) over max_num_batched_tokens 1,024,
  // max_num_seqs 256 (V1's default under 70 GiB), max_model_len 128, job_weights fp8 on its
  // bf16 config: an FP8 export, its layers' 14 Linears at one byte a weight and an F32 scale
  // each, 2 x (12,288 + 24,576) + 14 x 4 = 73,784; embeddings, head and norms at bf16,
  // (202,048 - 73,728) x 2 = 256,640: 330,424 bytes of weights.
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,job_tp,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,framework\n";
  const auto kv_pool = [&](const std::string& weights, const std::string& framework) {
    const trace::Scoreboard board = trace::validate_rows(
        trace::parse_measured_csv(header + "1,org/tiny,tiny.json,kv_capacity,128,1,1,single,1," +
                                  weights + ",bf16_pure,none,4,,0," + framework + "\n"),
        [](const trace::MeasuredRow&) -> std::optional<std::string> {
          return std::string(k_tiny);
        });
    REQUIRE(board.results.at(0).planned);
    return board.results.at(0);
  };
  // The forward pass over 1,024 tokens holds 2 x 64 + max(attention 64 + 2 x 32 + 64 + 64, MLP
  // 384 + 64) = 576 values a token, 1,179,648 bytes; sampling 256 x 1,000 logits at 14 bytes +
  // 1,024 x 64 x 2 = 3,715,072, the larger. Budget 0.9 x 4 GiB = 3,865,470,566, less vLLM's 384
  // MiB of non-torch memory: 3,865,470,566 - 330,424 - 402,653,184 - 3,715,072 = 3,458,771,886.
  const trace::RowResult v0_19 = kv_pool("fp8", "vLLM 0.19.0 max_num_batched_tokens 1024");
  CHECK(v0_19.estimate_gib == Approx(3'458'771'886.0 / (1LL << 30)));
  CHECK(v0_19.read_as.find(", Linear weights as fp8") != std::string::npos);
  // vLLM 0.16 sorted the logits: 256 x 1,000 x 38 + 131,072 = 9,859,072, 6,144,000 more.
  CHECK(kv_pool("fp8", "vLLM 0.16.0 max_num_batched_tokens 1024").estimate_gib ==
        Approx(3'452'627'886.0 / (1LL << 30)));
  // A date from April 2026 on reads as 0.17 or later; bf16 weights are 202,048 x 2 = 404,096.
  CHECK(kv_pool("bf16", "vLLM (May 2026) max_num_batched_tokens 1024").estimate_gib ==
        Approx((3'458'771'886.0 + 330'424 - 404'096) / (1LL << 30)));
  CHECK(kv_pool("bf16", "vLLM (May 2026) max_num_batched_tokens 1024").read_as.find("Linear") ==
        std::string::npos);
  // vLLM 0.21 on estimates its CUDA graphs (512 MiB) before it sizes the pool, and takes them out
  // of it: 3,458,771,886 - 536,870,912 = 2,921,900,974; in eager mode there are none.
  CHECK(kv_pool("fp8", "vLLM 0.21.0 max_num_batched_tokens 1024").estimate_gib ==
        Approx(2'921'900'974.0 / (1LL << 30)));
  CHECK(kv_pool("fp8", "vLLM (July 2026) max_num_batched_tokens 1024").estimate_gib ==
        Approx(2'921'900'974.0 / (1LL << 30)));
  CHECK(kv_pool("fp8", "vLLM 0.21.0 enforce_eager max_num_batched_tokens 1024").estimate_gib ==
        Approx(3'458'771'886.0 / (1LL << 30)));
}

TEST_CASE("the validator reads autocast serving from the precision cell", "[validate][serve]") {
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,framework,"
      "precision\n";
  const auto job = [&header](const std::string& task, const std::string& precision) {
    return trace::parse_measured_csv(header + "1,org/tiny,tiny.json," + task +
                                     ",60,1,1,single,fp32,fp32,none,79,,0,lit-gpt generate,\"" +
                                     precision + "\"\n")
        .at(0)
        .job;
  };
  // Lightning's precision names ("bf16-mixed", "16-mixed") and autocast; "bf16-true" is not
  CHECK(job("serve", "fp32 weights (bf16-mixed setting)").serve_autocast);
  CHECK(job("serve", "fp16 under torch.autocast").serve_autocast);
  CHECK_FALSE(job("serve", "bf16-true").serve_autocast);
  CHECK_FALSE(job("full", "bf16-mixed").serve_autocast);  // training rows: job_precision says it
}

TEST_CASE("Megatron and DeepSpeed train bf16 weights with fp32 main copies and gradients",
          "[validate]") {
  // job_precision bf16_pure on a LoRA row: read as mixed under Megatron (its optimizer keeps an
  // fp32 main copy and fp32 main gradients of every trainable half-precision parameter), a full
  // fine-tune too; as pure bf16 elsewhere and for serving.
  const auto precision_of = [](const std::string& task, const std::string& framework) {
    return job_with_cells(task, "bf16,bf16_pure", "framework", framework).precision;
  };
  CHECK(precision_of("lora", "ms-swift megatron sft (LoRA)") == trace::Precision::mixed);
  CHECK(precision_of("lora", "NeMo / Megatron-LM core") == trace::Precision::mixed);
  CHECK(precision_of("lora", "HF Trainer + PEFT") == trace::Precision::bf16_pure);
  CHECK(precision_of("full", "ms-swift megatron sft") == trace::Precision::mixed);
  CHECK(precision_of("serve", "Megatron-LM inference") == trace::Precision::bf16_pure);
  // DeepSpeed with bf16 enabled: its optimizer holds the fp32 partitions, named in the framework
  // or the sharding cell.
  CHECK(precision_of("full", "QwenLM/Qwen-VL finetune_ds.sh (DeepSpeed)") ==
        trace::Precision::mixed);
  CHECK(job_with_cells("lora", "bf16,bf16_pure", "framework,sharding",
                       "LLaMA-Factory,DeepSpeed ZeRO-3 (ds_z3_config.json)")
            .precision == trace::Precision::mixed);
  CHECK(precision_of("serve", "DeepSpeed-MII") == trace::Precision::bf16_pure);
}

TEST_CASE("the validator reads which AdamW steps take PyTorch's foreach path", "[validate]") {
  const auto foreach_step = [](const std::string& framework, const std::string& optimizer) {
    return job_with_cells("full", "n/a,mixed_fp32master", "framework,optimizer",
                          framework + "," + optimizer)
        .foreach_step;
  };
  CHECK(foreach_step("HF Trainer", "adamw_torch"));
  CHECK(foreach_step("torchtune (commit fef3ed10d, Apr 2024)", "torch AdamW"));
  CHECK_FALSE(foreach_step("torchtune 0.4.0", "torch AdamW"));      // fused=True in its configs
  CHECK_FALSE(foreach_step("HF Trainer", "adamw_hf"));              // per-parameter loop
  CHECK_FALSE(foreach_step("HF Trainer", "adamw_torch_fused"));
  CHECK_FALSE(foreach_step("ms-swift megatron sft", "Megatron distributed Adam"));
  CHECK_FALSE(foreach_step("NVIDIA NeMo 1.x scripts", "Adam"));
  CHECK(foreach_step("HF Trainer (nemotron-mini recipe)", "adamw_torch"));  // a model, not NeMo
}

TEST_CASE("LitGPT's head: a tied head held apart, and quantized with a 4-bit base", "[job][lora]") {
  // The tiny head: V x h = 1,000 x 64 = 64,000 values. A tied variant of the tiny model.
  std::string tied_config = k_tiny;
  const std::string untied = "\"tie_word_embeddings\": false";
  tied_config.replace(tied_config.find(untied), untied.size(), "\"tie_word_embeddings\": true");
  const trace::ModelDescription tied = trace::parse_model_config(tied_config);
  const auto weights = [](const trace::ModelDescription& model, const trace::Job& job) {
    return trace::estimate_job(model, trace::count_parameters(model), job).breakdown.weights;
  };
  // LoRA on a bf16 base: LitGPT's converted checkpoint holds the tied head as its own bf16
  // tensor (64,000 x 2); an untied head is already counted.
  trace::Job job = lora_job();
  const std::int64_t shared = weights(tied, job);
  job.separate_head = true;
  CHECK(weights(tied, job) - shared == 128'000);
  job.separate_head = false;
  const std::int64_t untied_base = estimate(job).breakdown.weights;
  job.separate_head = true;
  CHECK(estimate(job).breakdown.weights == untied_base);
  // QLoRA: Fabric quantizes the head too, sized as the base's Linears (a bitsandbytes
  // checkpoint's tensors): nf4 packed 32,000 bytes + a U8 absmax per 64 values (1,000) + F32 a
  // nested absmax per 256 blocks (4), the 256-entry nested code book and the 16-entry nf4 code
  // book ((4 + 256 + 16) x 4 = 1,104) = 34,104; and its dequantized bf16 copy (128,000) while
  // the loss runs. Untied, the head's 128,000 bf16 bytes in the base become those:
  // 34,104 - 128,000 + 128,000.
  job = lora_job();
  job.mode = trace::JobMode::qlora;
  const std::int64_t bf16_head = estimate(job).breakdown.weights;
  job.quantized_head = true;
  CHECK(estimate(job).breakdown.weights - bf16_head == 34'104);
  // Tied and held apart: the quantized copy and its dequantized copy, besides the embedding.
  job.quantized_head = false;
  const std::int64_t tied_qlora = weights(tied, job);
  job.quantized_head = true;
  job.separate_head = true;
  CHECK(weights(tied, job) - tied_qlora == 34'104 + 128'000);
  // Without double quantization the absmax is an F32 per 64 values: 32,000 + 4,000 + the
  // code book's 64.
  job.nf4_double_quant = false;
  job.quantized_head = false;
  job.separate_head = false;
  const std::int64_t single_quant = weights(tied, job);
  job.quantized_head = true;
  job.separate_head = true;
  CHECK(weights(tied, job) - single_quant == 36'064 + 128'000);
  // The validator reads both from a LitGPT framework.
  const trace::Job litgpt = one_row("qlora", "nf4", "litgpt finetune,,x,bnb.nf4,").job;
  CHECK(litgpt.separate_head);
  CHECK(litgpt.quantized_head);
  CHECK_FALSE(one_row("qlora", "nf4", "HF Trainer + PEFT,,x,,").job.quantized_head);
}

TEST_CASE("the Markdown scoreboard lists what stands between it and the targets", "[validate]") {
  // Row 1 ran out of memory without a length (its floor fits: not planned); row 2 ran out of
  // memory on 1 GiB but the tiny job (7,702,912 allocated bytes) fits: let through; row 3 ran
  // with 0.005 GiB allocated: trace is (7,702,912 / 2^30 - 0.005) / 0.005 = +43.5% off; row 4
  // ran with 0.0075 GiB: -4.3%.
  const std::string allocated = "x,,torch.cuda.max_memory_allocated(),,";
  const trace::Scoreboard board =
      score(row_line("1", "full", "", "1", "single", "n/a", "1", "", "1", allocated) +
            row_line("2", "full", "128", "1", "single", "n/a", "1", "", "1", allocated) +
            row_line("3", "full", "128", "1", "single", "n/a", "1", "0.005", "0", allocated) +
            row_line("4", "full", "128", "1", "single", "n/a", "1", "0.0075", "0", allocated));
  REQUIRE(board.results.size() == 4);
  REQUIRE(board.results[2].relative_error);
  CHECK(*board.results[2].relative_error == Approx(7'702'912 / k_gib / 0.005 - 1));
  const std::string markdown = trace::render_scoreboard_markdown(board);
  CHECK_THAT(markdown, Catch::Contains("1 of the 2 did-not-fit rows are not planned (listed "
                                       "above), so the recall cannot pass 50.0%"));
  // ... and how far from "does not fit": 7,702,912 + the 512 MiB context = 544,573,824 bytes
  // (519.3 MiB) of floor(2^30 x 0.95) = 1,020,054,732 (972.8 MiB), 475,480,908 (453.5 MiB) short.
  CHECK_THAT(markdown, Catch::Contains("- row 2 (full, org/tiny): 0.01 GiB (519.3 MiB of a 972.8 "
                                       "MiB budget: 453.5 MiB short of \"does not fit\"); read as "
                                       "full"));
  CHECK(board.results[1].verdict_bytes == 544'573'824);
  CHECK(board.results[1].budget_bytes == 1'020'054'732);
  // Two errors: the 90th percentile is the 2nd smallest, so at most 0 rows may be above 25%.
  CHECK_THAT(markdown, Catch::Contains("is error 2 of the 2 in ascending order, so it is within "
                                       "25% when no more than 0 rows are further off. Rows further "
                                       "off now: 1."));
  CHECK_THAT(markdown, Catch::Contains("- row 3 (full, org/tiny): +43.5%"));
  CHECK_THAT(markdown, !Catch::Contains("- row 4 (full"));
}

TEST_CASE("CUDA graphs count for an engine's serve row, not for generate() or eager mode",
          "[validate][serve]") {
  const std::string cells = ",,torch.cuda.max_memory_allocated(),,";
  const trace::Scoreboard board = score(
      row_line("1", "serve", "128", "1", "single", "bf16", "1", "", "0", "vLLM 0.6.3" + cells) +
      row_line("2", "serve", "128", "1", "single", "bf16", "1", "", "0",
               "vLLM 0.6.3 (enforce_eager)" + cells) +
      row_line("3", "serve", "128", "1", "single", "bf16", "1", "", "0",
               "lit-gpt generate" + cells));
  REQUIRE(board.results.size() == 3);
  REQUIRE(board.results[0].planned);
  REQUIRE(board.results[1].planned);
  // The same engine job, with and without its 512 MiB of CUDA graphs.
  CHECK((board.results[0].estimate_gib - board.results[1].estimate_gib) * k_gib ==
        Approx(512.0 * 1024 * 1024));
  // generate() holds no graphs either: it is below the engine row by the graphs at least (its
  // sampler covers only its batch, not vLLM's 256 sequences).
  CHECK((board.results[0].estimate_gib - board.results[2].estimate_gib) * k_gib >
        512.0 * 1024 * 1024);
}

TEST_CASE("the nearest-rank percentile: rank ceil(q n), at least 1", "[validate]") {
  // 129 errors: the 90th percentile is the 117th smallest (0.9 x 129 = 116.1), the median the
  // 65th (64.5); one value is every percentile; none has no rank.
  CHECK(trace::nearest_rank(129, 0.9) == 117);
  CHECK(trace::nearest_rank(129, 0.5) == 65);
  CHECK(trace::nearest_rank(1, 0.9) == 1);
  CHECK(trace::nearest_rank(0, 0.9) == 0);
  CHECK(trace::nearest_rank_percentile({0.4, 0.1, 0.3, 0.2}, 0.5) == 0.2);  // rank 2 of 4
  CHECK(trace::nearest_rank_percentile({0.4, 0.1, 0.3, 0.2}, 0.9) == 0.4);  // rank 4
  CHECK(trace::nearest_rank_percentile({}, 0.9) == 0);
}

TEST_CASE("the validator reads a frozen vision tower from the row or the framework's default",
          "[validate][vlm]") {
  const auto frozen = [](const std::string& task, const std::string& framework,
                         const std::string& sharding) {
    return job_with_cells(task, "bf16,mixed_fp32master", "framework,sharding",
                          framework + "," + sharding)
        .freeze_vision;
  };
  // The frameworks' defaults: LLaMA-Factory's freeze_vision_tower, ms-swift's freeze_vit,
  // Qwen-VL's fix_vit and qwen-vl-finetune's tune_mm_vision.
  CHECK(frozen("full", "LLaMA-Factory 0.9.2", "DeepSpeed ZeRO-3"));
  CHECK(frozen("full", "ms-swift 3.0 swift sft", "DeepSpeed ZeRO-2"));
  CHECK(frozen("full", "QwenLM/Qwen-VL finetune/finetune_ds.sh (DeepSpeed)", "DeepSpeed"));
  CHECK(frozen("full", "QwenLM/Qwen3-VL qwen-vl-finetune train_qwen.py", "DeepSpeed"));
  // As the row says it, either way.
  CHECK(frozen("full", "HF Trainer", "DeepSpeed ZeRO-2 and ViT frozen"));
  CHECK_FALSE(frozen("full", "LLaMA-Factory (freeze_vision_tower false)", "DeepSpeed ZeRO-3"));
  CHECK_FALSE(frozen("full", "QwenLM/Qwen3-VL qwen-vl-finetune tune_mm_vision True", "ddp"));
  // Plain transformers trains every parameter; LoRA rows leave the flag off (the adapters never
  // reach the tower).
  CHECK_FALSE(frozen("full", "HF Trainer", "DeepSpeed ZeRO-3"));
  CHECK_FALSE(frozen("lora", "LLaMA-Factory 0.9.2", "DeepSpeed ZeRO-3"));
  // A text-only model's row (the tiny Llama) is scored as if no flag were read.
  const trace::Scoreboard board =
      score(row_line("1", "full", "128", "1", "single", "bf16", "80", "", "1",
                     "LLaMA-Factory 0.9.2,,,,,"));
  REQUIRE(board.results.size() == 1);
  CHECK(board.results[0].planned);
  CHECK(board.results[0].read_as.find("vision") == std::string::npos);
}

TEST_CASE("the validator reads preference training from the model id, framework and notes",
          "[validate][preference]") {
  const trace::Job dpo = one_row("full", "n/a", "TRL DPOTrainer,,x,,").job;
  CHECK(dpo.preference == trace::Preference::dpo);
  CHECK_FALSE(dpo.reference_dtype.has_value());  // held as the policy (fp32 under mixed)
  // DeepSpeed's engine casts the reference it prepares to bf16
  CHECK(one_row("full", "n/a", "TRL DPOTrainer + DeepSpeed ZeRO-3,,x,,").job.reference_dtype ==
        trace::Dtype::bf16);
  CHECK(one_row("lora", "bf16", "Unsloth,DPO / ORPO,x,,").job.preference ==
        trace::Preference::dpo);  // DPO read before the ORPO beside it
  CHECK(one_row("full", "n/a", "axolotl,ORPO recipe,x,,").job.preference ==
        trace::Preference::paired);
  CHECK(one_row("full", "n/a", "TRL CPOTrainer (SimPO loss),,x,,").job.preference ==
        trace::Preference::paired);
  CHECK(one_row("lora", "bf16", "TRL KTOTrainer,,x,,").job.preference == trace::Preference::kto);
  // no preference word, or one only inside another word ("tipo"), or a serving row
  CHECK(one_row("full", "n/a", "TRL SFTTrainer,tipo de datos,x,,").job.preference ==
        trace::Preference::none);
  CHECK(one_row("serve", "bf16", "vLLM,a DPO checkpoint,x,,").job.preference ==
        trace::Preference::none);
}

TEST_CASE("the validator reads vLLM's V1 engine from a version or a date", "[validate][kv]") {
  CHECK(one_row("kv_capacity", "bf16", "vLLM 0.8.0,,x,,").engine_v1);
  CHECK(one_row("kv_capacity", "bf16", "vLLM V1 (Nov 2025),,x,,").engine_v1);
  // a version among the framework's words, or a date from April 2025 on
  CHECK(one_row("kv_capacity", "bf16", "vLLM OpenAI server (2026 versions >= v0.17 tried),,x,,")
            .engine_v1);
  CHECK(one_row("kv_capacity", "bf16", "NVIDIA NIM (vLLM engine) May 2026,,x,,").engine_v1);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM 0.6.3,,x,,").engine_v1);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM (Dec 2023),,x,,").engine_v1);
  CHECK_FALSE(one_row("kv_capacity", "bf16", "vLLM,,x,,").engine_v1);  // neither: V0
}

TEST_CASE("vLLM V1 refuses a hybrid model whose blocks are fewer than max_num_seqs",
          "[validate][kv]") {
  // The tiny Nemotron-H of engine_blocks_test.cpp: blocks of 48 tokens, 2 x 3,072 = 6,144 bytes
  // each. On 1 GiB at utilisation 0.9 the pool left beside its weights and vLLM's 384 MiB holds
  // tens of thousands of blocks: max_num_seqs 8 fits, 1,000,000 does not, unless in eager mode
  // (no CUDA graphs, no check).
  const char* const tiny = trace::test::k_tiny_nemotron_h;
  const std::string header =
      "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
      "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,framework,"
      "micro_batch,gpu_mem_util\n";
  const auto fits = [&](const std::string& framework, const std::string& max_num_seqs) {
    const trace::Scoreboard board = trace::validate_rows(
        trace::parse_measured_csv(header + "1,org/tiny,tiny.json,kv_capacity,1000,1,1,single,"
                                           "bf16,bf16_pure,none,1,,0," +
                                  framework + ",max_num_seqs " + max_num_seqs + ",0.9\n"),
        [&](const trace::MeasuredRow&) -> std::optional<std::string> { return std::string(tiny); });
    const trace::RowResult& row = board.results.at(0);
    INFO(row.reason << " " << row.read_as);
    REQUIRE(row.planned);
    CHECK(row.read_as.find("hybrid blocks of 48 tokens") != std::string::npos);
    return row.predicted_fit;
  };
  CHECK(fits("vLLM 0.20.1", "8"));
  CHECK_FALSE(fits("vLLM 0.20.1", "1000000"));
  CHECK(fits("vLLM 0.20.1 --enforce-eager", "1000000"));
}

TEST_CASE("vLLM V1's default max_num_seqs depends on the card", "[validate][kv]") {
  // EngineArgs.get_batch_defaults: 1,024 on a card of 70 GiB or more that is not an A100, else
  // 256; a stated value stands, and V0 rows keep trace's --max-num-seqs.
  const auto max_num_seqs = [](const std::string& framework, const std::string& gpu,
                               const std::string& usable, const std::string& micro_batch) {
    const std::string csv =
        "row_id,model_id,config_file,job_task,job_seq_len,job_batch,job_gpus,job_sharding,"
        "job_weights,job_precision,job_optimizer,job_usable_gib,job_measured_gib,job_oom,"
        "framework,job_gpu,micro_batch\n1,org/tiny,tiny.json,kv_capacity,4096,1,1,single,bf16,"
        "bf16_pure,none," +
        usable + ",,0," + framework + "," + gpu + "," + micro_batch + "\n";
    return trace::parse_measured_csv(csv).at(0).engine_max_num_seqs;
  };
  CHECK(max_num_seqs("vLLM 0.10.0", "h100-80gb", "79.22", "") == 1024);
  CHECK(max_num_seqs("vLLM 0.10.0", "a100-80gb", "79.3", "") == 256);
  CHECK(max_num_seqs("vLLM 0.10.0", "l4", "22.16", "") == 256);
  CHECK(max_num_seqs("vLLM 0.10.0", "h100-80gb", "79.22", "max_num_seqs 64") == 64);
  CHECK_FALSE(max_num_seqs("vLLM 0.6.3", "h100-80gb", "79.22", "").has_value());
}

TEST_CASE("rows say whether gradients are freed, autocast runs and activations are composed",
          "[validate]") {
  const auto full = [](const std::string& framework, const std::string& source) {
    return job_with_cells("full", "n/a,mixed_fp32master", "framework,source",
                          framework + "," + source);
  };
  // zero_grad(set_to_none=True) since PyTorch 2.0 (March 2023): a later or undated row on one
  // GPU frees the gradients; a row dated before keeps them, by its year-month or its year.
  CHECK(full("HF Trainer", "a blog post").gradients_freed);
  CHECK(full("HF Trainer", "README (Nov 2024)").gradients_freed);
  CHECK_FALSE(full("PEFT 0.1 + Accelerate", "README (Dec 2022)").gradients_freed);
  CHECK_FALSE(full("HF Trainer", "perf_train_gpu_one.md (2022-23 version)").gradients_freed);
  // DeepSpeed and Megatron keep their gradient buffers.
  CHECK_FALSE(full("LLaMA-Factory + DeepSpeed", "issue").gradients_freed);
  CHECK_FALSE(full("ms-swift megatron sft", "example").gradients_freed);
  // Autocast over the fp32 weights, unless the framework casts the model or patches the
  // forward with kernels of its own.
  CHECK(full("HF Trainer", "x").autocast_fp32_weights);
  CHECK_FALSE(full("Unsloth (FastLanguageModel)", "x").autocast_fp32_weights);
  CHECK_FALSE(full("LLaMA-Factory + DeepSpeed", "x").autocast_fp32_weights);
  // transformers' Python activations, not LitGPT's or torchtune's own models.
  CHECK(full("HF Trainer", "x").composed_activations);
  CHECK_FALSE(full("litgpt finetune", "x").composed_activations);
  CHECK_FALSE(full("torchtune full_finetune_single_device", "x").composed_activations);
  CHECK_FALSE(full("Unsloth", "x").composed_activations);
}

TEST_CASE("a cumulative ablation keeps the baseline's standard loss until it names chunking",
          "[validate]") {
  // torchtune from v0.3 chunks its loss by default, but its README's optimisation table adds
  // one flag a row: a row that does not name the chunked loss keeps the baseline's.
  const auto loss = [](const std::string& notes) {
    return job_with_cells("full", "n/a,bf16_pure", "framework,notes",
                          "torchtune (README Nov 2024)," + notes)
        .loss;
  };
  CHECK(loss("packed alpaca") == trace::LossImpl::chunked);
  CHECK(loss("cumulative ablation; torch.compile") == trace::LossImpl::full);
  CHECK(loss("cumulative ablation; compile + CEWithChunkedOutputLoss") == trace::LossImpl::chunked);
}

TEST_CASE("the validator reads SDPA's grouped K/V from the transformers version", "[validate]") {
  // transformers 4.54 on (PR #39412) passes enable_gqa to torch >= 2.5's SDPA instead of
  // repeating K and V to every head.
  const auto grouped = [](const std::string& text_cells) {
    return one_row("full", "bf16", text_cells).job.sdpa_grouped_kv;
  };
  CHECK(grouped("training loop (transformers 5.17.0 / PyTorch 2.11.0),,x,,"));
  CHECK(grouped("LLaMA-Factory 0.9.4 / transformers 4.54.1,,x,,"));
  CHECK_FALSE(grouped("LLaMA-Factory 0.9.1 / transformers 4.46.1,,x,,"));
  CHECK_FALSE(grouped("transformers 4.55 / PyTorch 2.4.1,,x,,"));
  CHECK_FALSE(grouped("HF Trainer,,x,,"));
  // A job_attention cell of sdpa-gqa says it whatever the framework; plain sdpa does not.
  const auto cell = [](const std::string& attention) {
    return job_with_cells("full", "n/a,mixed_fp32master", "job_attention,framework",
                          attention + ",HF Trainer");
  };
  CHECK(cell("sdpa-gqa").sdpa_grouped_kv);
  CHECK(cell("sdpa-gqa").attention == trace::AttentionImpl::sdpa);
  CHECK_FALSE(cell("sdpa").sdpa_grouped_kv);
  // flash-attn named: grouped already, as flash
  CHECK(one_row("full", "bf16", "transformers 4.56 with flash-attn,,x,,").job.attention ==
        trace::AttentionImpl::flash);
}

TEST_CASE("SDPA with grouped K/V keeps K and V at their own width", "[job][attention]") {
  // The tiny Llama's 4 query heads share 2 KV heads of 16: repeated for SDPA, K and V take
  // 2 x (4 - 2) x 16 = 64 values a layer and token more; 64 x 2 bytes x 2 layers x 256 tokens
  // = 65,536 bytes, which SDPA's enable_gqa and flash-attn both leave out.
  trace::Job job = lora_job();
  job.attention = trace::AttentionImpl::flash;
  const std::int64_t flash = estimate(job).breakdown.activations;
  job.attention = trace::AttentionImpl::sdpa;
  const std::int64_t repeated = estimate(job).breakdown.activations;
  CHECK(repeated - flash == 65'536);
  job.sdpa_grouped_kv = true;
  CHECK(estimate(job).breakdown.activations == flash);
  CHECK(trace::describe_job(job).find("SDPA grouped K/V") != std::string::npos);
}

TEST_CASE("QK-norm keeps what a norm keeps over Q and K", "[job][activation]") {
  // The tiny Llama as Qwen3: an RMSNorm over each head of Q (4 x 16 = 64 values) and of K
  // (2 x 16 = 32): 96 values a layer and token, 2 layers, 256 tokens, beside what the Llama keeps.
  const std::string qwen3 = R"({"model_type": "qwen3", "hidden_size": 64,
    "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
    "intermediate_size": 128, "vocab_size": 1000, "tie_word_embeddings": false,
    "torch_dtype": "bfloat16"})";
  const auto extra = [&](const trace::Job& job) {
    const trace::ModelDescription model = trace::parse_model_config(qwen3);
    return trace::estimate_job(model, trace::count_parameters(model), job).breakdown.activations -
           estimate(job).breakdown.activations;
  };
  // A fused norm keeps its bf16 input: 96 x 2 x 2 x 256.
  trace::Job job = lora_job();
  CHECK(extra(job) == 98'304);
  // An eager one (transformers) its fp32 copy: 4 bytes a value.
  job.eager_rms_norm = true;
  CHECK(extra(job) == 2 * 98'304);
  // Its weight training (a full fine-tune), the normalised input too: 6 bytes.
  job.mode = trace::JobMode::full;
  CHECK(extra(job) == 3 * 98'304);
}
