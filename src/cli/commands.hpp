#pragma once
// The commands of the command line and what they share: the plan's options (every flag of
// `trace MODEL` and `trace check`), their parsing, and the report they build. Internal to
// src/cli: run.cpp dispatches to the commands, one file each group.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "trace/hardware/gpu_catalog.hpp"
#include "trace/io/model_source.hpp"
#include "trace/report/report.hpp"

namespace trace::cli {

// What `trace --plan` plans when no model is given: the model trace is named for.
inline constexpr std::string_view k_default_model =
    "nvidia/NVIDIA-Nemotron-Labs-3-Puzzle-75B-A9B-NVFP4";

struct PlanOptions {
  std::string model;
  bool plan = false;
  bool graph = false;
  bool json = false;
  std::string format = "table";
  std::string dtype;
  std::string quantize;  ///< --quantize: a serving layout for an unquantized checkpoint
  std::string kv_dtype;  ///< empty: the checkpoint's (fp8 when it ships FP8 KV scales), else bf16
  std::string ssm_dtype;
  std::string mla_cache = "latent";
  std::vector<std::string> gpus;
  std::string gpu_table;
  std::int64_t cuda_context_mib = 512;
  MemoryAssumptions assumptions;
  // trace check
  std::string check_gpu;
  std::string check_mode = "serve";
  std::string plan_mode = "all";
  std::int64_t check_cards = -1;  // --cards (the same as --gpus); -1: not given
  // the job (issue 5 contract)
  std::string optimizer = "adamw";
  std::string precision = "mixed";
  std::string grad_checkpointing = "none";
  std::string attention = "sdpa";
  std::string loss = "full";
  std::string qlora_kernel = "bnb";
  std::string preference = "none";
  bool reference_precomputed = false;
  std::string reference_dtype;
  // online RL (TRL's GRPOTrainer)
  std::string rl = "none";
  std::int64_t completion_len = OnlineRl{}.completion_len;
  std::string generator = "transformers";
  std::int64_t generation_batch = 0;
  double beta = 0.0;
  double vllm_memory_utilization = k_trl_vllm_memory_utilization;
  bool vllm_sleep = false;
  bool no_ds3_gather = false;
  double lora_dropout = 0.0;
  bool nf4_single_quant = false;
  bool nf4_one_pass = false;
  bool train_mtp = false;
  bool kbit_upcast = false;
  bool fused_optimizer = false;
  bool keep_grads = false;
  bool foreach_step = false;
  bool fused_norms = false;
  bool separate_head = false;
  bool quantized_head = false;
  std::string lora_targets = "all";
  std::string strategy;
  std::int64_t job_gpus = 1;
  std::int64_t tp = 1;
  const CLI::Option* tp_option = nullptr;  ///< --tp as parsed: did the user give it?
  const CLI::Option* seq_len_option = nullptr;
  const CLI::Option* context_option = nullptr;
  const CLI::Option* context_in_option = nullptr;
  const CLI::Option* context_out_option = nullptr;
  bool tp_given() const { return tp_option != nullptr && tp_option->count() > 0; }
  std::int64_t pp = 1;
  std::int64_t grad_accum = 1;
  /// --ep alone: serve expert-parallel (the value is then empty); --ep N: a job's expert-parallel
  /// size; "off" when not given.
  std::string ep = "off";
  bool cpu_offload = false;
  bool no_sync = false;
  /// DeepSpeed's reduce_bucket_size (values, or "auto")
  std::optional<std::string> reduce_bucket_size;
  std::optional<std::int64_t> sub_group_size;  ///< DeepSpeed ZeRO-3's sub_group_size (values)
  /// DeepSpeed ZeRO-3's stage3_max_reuse_distance (values)
  std::optional<std::int64_t> max_reuse_distance;
  bool overlap_comm = false;
  bool grad_as_bucket_view = false;
  bool frozen_in_flat_params = false;
  bool shard_embeddings = false;
  std::string pp_split = "count";
  bool freeze_vision = false;
  bool compiled = false;
  bool allocated_peak = false;
  bool autocast = false;
  bool job_flags_given = false;
  // time and cost (docs/cost.md)
  std::int64_t tokens = 0;
  std::int64_t samples = 0;
  std::int64_t epochs = 0;
  std::string compute_dtype;
  CostAssumptions cost;
  ServingRequest serving;
  std::vector<std::string> prices;  ///< "ID=USD" or "USD" (the first --gpu)
  std::string plot;
  bool include_cost = true;  ///< false for `trace check`: the verdict needs no prices
  // the Hub (docs/hub.md)
  bool offline = false;
  bool hub = false;
  bool quiet = false;
};

/// Parses `args` (args[0] is the program name). Returns true when --help or --version was
/// printed and the command is done. A usage error becomes a ConfigError, so run() reports it like
/// every other bad input: one "trace: error: ..." line and exit 2 (CLI11's own report is two lines
/// without the prefix).
bool parse_command_line(CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                        std::ostream& err);

/// Every flag of the plan (`trace MODEL`), which `trace check` shares.
void add_plan_options(CLI::App& app, PlanOptions& options, bool model_required);

/// The GPU table (--gpu-table, else data/gpus.json) with --price applied.
GpuCatalog load_catalog(const PlanOptions& options);

/// The model's config (path, cache, Hub or catalog) through the whole pipeline, as the options
/// ask.
Report build_report(PlanOptions& options, const HubEnvironment& env, const GpuCatalog& gpus,
                    std::ostream& err);

// The commands: `trace MODEL`, gpus and models (run.cpp), check (check_command.cpp), validate
// and throughput (measured_runs.cpp).
int plan_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                 const HubEnvironment& env);
int gpus_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int models_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int check_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                  const HubEnvironment& env);
int validate_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
int throughput_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace trace::cli
