#pragma once
/// The one value every renderer consumes: the model, its counts, graph, memory and card fits.
/// make_report is the pure pipeline config text -> Report.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/checkpoint/reconcile.hpp"
#include "trace/cost/serving.hpp"
#include "trace/cost/training.hpp"
#include "trace/estimate/engine_blocks.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/job.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/model/layer_graph.hpp"
#include "trace/model/model_description.hpp"

namespace trace {

struct ReportRequest {
  std::string model_id;  ///< what the user typed, normalized (repo id or path)
  std::string source;    ///< where the config came from: "bundled catalog", a path, ...
  std::string hf_quant_config_text;  ///< hf_quant_config.json found beside config.json, if any
  MemoryAssumptions assumptions;
  bool serve_dtype_from_config = true;  ///< derive the serving dtype from torch_dtype
  bool kv_dtype_from_config = true;     ///< fp8 KV when the checkpoint ships FP8 KV scales
  std::vector<std::string> gpu_ids;     ///< cards to report; empty: the default set
  bool include_graph = false;
  /// A concrete job (--mode full|lora|qlora|serve with its flags): its per-GPU peak is
  /// estimated and, with --gpu, checked against the first card.
  std::optional<Job> job;
  /// The training knobs (--precision, --optimizer, --grad-checkpointing, --attention, --loss,
  /// --lora-targets) the per-card full fine-tune and LoRA tables use; absent: the defaults of
  /// MemoryAssumptions' fixed recipe.
  std::optional<Job> training;
  /// Time and cost (docs/cost.md): efficiencies, the training run's size (unset: the default
  /// run) and the serving workload. include_cost false skips both (`trace check`, validate).
  CostAssumptions cost;
  std::optional<RunSize> run_size;
  ServingRequest serving;
  bool serving_gpus_given = false;  ///< serving.gpus is the user's (--gpus with --mode serve)
  /// --seq-len / --context as the user typed them: past a learned position table they are an
  /// error; trace's own defaults are cut to the table instead, with a note.
  bool seq_len_given = false;
  bool context_given = false;
  bool serving_lengths_given = false;  ///< --context-in / --context-out (serving.context_*)
  bool context_in_given = false;       ///< --context-in itself (an encoder's request is its input)
  bool include_cost = true;
};

/// The per-GPU verdict of one job on one card.
struct JobVerdict {
  Job job;
  MemoryBreakdown breakdown;  ///< per GPU, the CUDA context as overhead
  std::int64_t peak_bytes() const { return breakdown.total(); }  ///< what one GPU must hold
  std::int64_t trainable_params = 0;
  std::int64_t gradients_at_step = 0;  ///< JobEstimate::gradients_at_step
  std::string gpu;                  ///< the card checked against (empty: none)
  std::int64_t usable_bytes = 0;
  std::int64_t budget_bytes = 0;    ///< usable less headroom
  bool fits = false;
  /// A training job checked against a card: the largest micro-batch at its sequence length
  /// and the longest sequence at its micro-batch that fit the budget (0: none; largest_fitting).
  std::optional<std::int64_t> max_batch;
  std::optional<std::int64_t> max_seq_len;
  /// A serve job checked against a card: the most concurrent requests at its context and the
  /// longest context at its concurrency that fit, on its GPUs (0: none).
  std::optional<std::int64_t> max_concurrency;
  std::optional<std::int64_t> max_context;
  /// A hybrid serve job checked against a card: vLLM V1's blocks in the pool its GPU leaves for
  /// caches, and the refusal when --max-num-seqs exceeds them (then `fits` is false).
  std::optional<std::int64_t> hybrid_blocks;
  std::string refusal;
};

/// vLLM V1's block layout of a hybrid model's caches on the first card at the serving
/// assumptions (docs/memory.md, "vLLM's hybrid blocks").
struct HybridCapacity {
  HybridBlocks layout;
  std::string gpu;
  std::int64_t pool_bytes = 0;          ///< the budget left beside weights, overheads, transients
  std::int64_t blocks = 0;              ///< block ids the pool holds
  std::int64_t blocks_per_request = 0;  ///< one request at --context
  std::int64_t max_requests = 0;        ///< requests at --context the blocks hold
  std::int64_t max_num_seqs = 0;        ///< --max-num-seqs: vLLM refuses to start above `blocks`
};

/// What a plan's note bears on. A plan prints every note; `trace check` prints those of the job
/// it checks (job_notes), so a serving gate is not told how training loads the weights.
enum class NoteScope {
  model,          ///< the description and counts (a family's own notes): no job's verdict
  serving,        ///< the serving weights, KV cache, context and engine
  training,       ///< every training mode: full, LoRA, QLoRA
  full_finetune,  ///< a full fine-tune only
  every_job,      ///< every job's estimate (what it leaves out)
};

struct ReportNote {
  std::string text;
  NoteScope scope = NoteScope::model;
};

struct Report {
  std::string model_id;
  std::string source;
  ModelDescription model;
  ParameterCount parameters;
  StorageEstimate storage;  ///< what the checkpoint's files hold
  /// What the serving weights are stored as: the checkpoint's quantized format, the
  /// --quantize scheme, or the dtype they are cast to.
  std::string serve_weight_format;
  LayerGraph graph;
  MemoryAssumptions assumptions;
  MemoryEstimate memory;
  std::vector<CardFit> cards;
  bool cards_given = false;  ///< the cards are the user's --gpu list, not the default set
  /// The card (index into `cards`) the serving derivation is worked on: the first one listed
  /// that serves a request on its own, else the first. A model that fills a t4 is shown on the
  /// card that holds it, not as "0 requests".
  std::size_t serving_card_index = 0;
  /// Serving on that card: the longest context per request at --concurrency requests.
  std::int64_t longest_context = 0;
  /// A hybrid model (attention and state layers): vLLM V1's blocks on that card.
  std::optional<HybridCapacity> hybrid_blocks;
  bool include_graph = false;
  std::string only_mode;  ///< "serve", "lora" or "full": the text report shows just that mode
  std::optional<JobVerdict> job;
  /// The training knobs the full fine-tune and LoRA tables follow (ReportRequest::training).
  std::optional<Job> training;
  /// The model's safetensors headers set against trace's tensor inventory, when the caller read
  /// them (checkpoint::reconcile); rendered into `checkpoint` and a CHECKPOINT section.
  std::optional<checkpoint::Reconciliation> checkpoint;
  /// The training run priced on every reported card (the --mode job, else LoRA).
  std::optional<TrainingPlan> training_run;
  /// Serving throughput and cost per reported card, on the fewest cards that hold a request
  /// (the first card: --gpus when given).
  std::vector<ServingPlan> serving;
  ServingRequest serving_request;
  CostAssumptions cost;
  std::vector<ReportNote> notes;  ///< assumptions trace made that the reader should see

  /// The card the serving derivation is worked on (`serving_card_index`); `cards` is not empty.
  const CardFit& serving_card() const { return cards.at(serving_card_index); }
};

/// The notes that bear on the report's job (`trace check`); none without a job.
std::vector<std::string> job_notes(const Report& report);

/// True when LoRA trains over the checkpoint's quantized Linears as stored: formats PEFT adapts
/// in place (bitsandbytes, GPTQ, AWQ). Others are loaded dequantized for training
/// (transformers' Mxfp4Config(dequantize=True), compressed-tensors' run_compressed=False, FP8
/// and ModelOpt releases trained from their BF16 originals).
bool lora_keeps_stored_base(const Quantization& q);

/// Parses the config and runs every estimator. Throws ConfigError.
Report make_report(std::string_view config_text, const ReportRequest& request,
                   const GpuCatalog& gpus);

}  // namespace trace
