// The validator: CSV rows -> jobs -> estimates -> scoreboard. Definitions: docs/validation.md.
#include "trace/validate/validation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "row_reading.hpp"
#include "trace/checked_math.hpp"
#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/estimate/engine_blocks.hpp"
#include "trace/estimate/fit.hpp"
#include "trace/estimate/memory.hpp"
#include "trace/estimate/parameters.hpp"
#include "trace/estimate/serve_quantization.hpp"
#include "trace/estimate/storage.hpp"
#include "trace/model/model_config.hpp"
#include "trace/render/render.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

// GiB as a double, for the estimates' GiB.
constexpr double k_gib_f = static_cast<double>(k_gib);

bool any_block(const ModelDescription& model, bool (*holds)(const Block&)) {
  for (const Stack& stack : model.stacks) {
    for (const Block& block : stack.blocks) {
      if (holds(block)) return true;
    }
  }
  return false;
}

bool has_mla(const ModelDescription& model) {
  return any_block(model,
                   [](const Block& block) { return block.attention.kind == AttentionKind::mla; });
}

bool has_moe(const ModelDescription& model) {
  return any_block(model, [](const Block& block) { return block.moe.has_value(); });
}

}  // namespace

std::string repo_id_of(std::string_view model_id) {
  std::string id(model_id.substr(0, model_id.find(' ')));
  while (!id.empty() && (id.back() == ',' || id.back() == ';')) id.pop_back();
  return id;
}

std::vector<std::string> config_file_candidates(const MeasuredRow& row) {
  std::vector<std::string> names;
  const auto add_spellings = [&](const std::string& stem) {
    for (const char* suffix : {".json", ".reconstructed.json"}) names.push_back(stem + suffix);
  };
  if (!row.config_file.empty()) {
    names.push_back(row.config_file);
    std::string stem = row.config_file;
    for (const char* suffix : {".reconstructed.json", ".json"}) {
      if (stem.ends_with(suffix)) {
        stem.resize(stem.size() - std::string_view(suffix).size());
        break;
      }
    }
    add_spellings(stem);
    if (const std::size_t at = stem.find("__"); at != std::string::npos) {
      add_spellings(stem.substr(0, at) + "--" + stem.substr(at + 2));
    }
  }
  const std::string repo = repo_id_of(row.model_id);
  if (const std::size_t slash = repo.find('/'); slash != std::string::npos) {
    for (const char* separator : {"--", "__"}) {
      add_spellings(repo.substr(0, slash) + separator + repo.substr(slash + 1));
    }
  }
  std::vector<std::string> unique;
  for (std::string& name : names) {
    if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(std::move(name));
  }
  return unique;
}

std::string mirrored_model_name(std::string_view repo_id) {
  const std::size_t slash = repo_id.find('/');
  if (slash == std::string_view::npos) return "";
  std::string name = to_lower(repo_id.substr(slash + 1));
  for (const char* suffix : {"-unsloth-bnb-4bit", "-bnb-4bit", "-unsloth"}) {
    if (name.ends_with(suffix)) {
      name.resize(name.size() - std::string_view(suffix).size());
      break;
    }
  }
  return name;
}

std::vector<MeasuredRow> parse_measured_csv(std::string_view text) {
  const std::vector<std::vector<std::string>> records = parse_csv(text);
  if (records.empty()) throw ConfigError("the CSV is empty");
  const std::vector<std::string>& header = records.front();
  for (const char* required : {"row_id", "model_id", "config_file", "job_task", "job_seq_len",
                               "job_batch", "job_gpus", "job_usable_gib", "job_measured_gib",
                               "job_oom"}) {
    if (std::find(header.begin(), header.end(), required) == header.end()) {
      throw ConfigError(fmt::format("the CSV has no '{}' column (see docs/validation.md)", required));
    }
  }
  std::vector<MeasuredRow> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    std::map<std::string, std::string> cell;
    for (std::size_t c = 0; c < header.size() && c < records[r].size(); ++c) {
      // job_* cells are values, read without the spaces a hand-edited CSV may leave around them
      cell[header[c]] =
          header[c].starts_with("job_") ? std::string(trimmed(records[r][c])) : records[r][c];
    }
    rows.push_back(read_measured_row(cell));
  }
  return rows;
}

std::vector<std::string> missed_targets(const Scoreboard& board, const ScoreTargets& targets) {
  const auto share = [](std::int64_t part, std::int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  std::vector<std::string> missed;
  const double recall = share(board.oom_flagged, board.oom_rows);
  if (targets.min_recall && recall < *targets.min_recall) {
    missed.push_back(fmt::format("did-not-fit recall {:.1f}% < {:.1f}% ({}/{})", 100 * recall,
                                 100 * *targets.min_recall, board.oom_flagged, board.oom_rows));
  }
  const double rejected = share(board.fit_rejected, board.fit_rows);
  if (targets.max_false_reject && rejected > *targets.max_false_reject) {
    missed.push_back(fmt::format("false \"does not fit\" {:.1f}% > {:.1f}% ({}/{})", 100 * rejected,
                                 100 * *targets.max_false_reject, board.fit_rejected,
                                 board.fit_rows));
  }
  if (targets.max_median_error && board.median_abs_rel_error > *targets.max_median_error) {
    missed.push_back(fmt::format("median error {:.1f}% > {:.1f}%", 100 * board.median_abs_rel_error,
                                 100 * *targets.max_median_error));
  }
  if (targets.max_p90_error && board.p90_abs_rel_error > *targets.max_p90_error) {
    missed.push_back(fmt::format("p90 error {:.1f}% > {:.1f}%", 100 * board.p90_abs_rel_error,
                                 100 * *targets.max_p90_error));
  }
  return missed;
}

namespace {

// The bytes per logit the row's sampling step holds: sorted for top-k/top-p before vLLM 0.17.
std::int64_t sampler_bytes_per_logit(const MeasuredRow& row, const ValidationAssumptions& a) {
  return row.engine_sort_sampler ? a.sort_sampler_bytes_per_logit
                                 : a.memory.sampler_bytes_per_logit;
}

// A serving engine's row (kv_capacity, activation_only): its profile run, and the KV pool it
// leaves (kv_capacity) or its activation peak (activation_only), against what the engine logged.
void score_engine_row(const MeasuredRow& row, const ModelDescription& model,
                      const ParameterCount& params, const Job& job, std::int64_t usable,
                      const ValidationAssumptions& a, RowResult& result) {
    // vLLM: max_model_len defaults to the model's; the profile run feeds a batch of tokens.
    const std::int64_t max_len =
        job.context > 0 ? job.context
                        : (model.max_position_embeddings > 0 ? model.max_position_embeddings
                                                             : 4096);
    const std::int64_t profile_tokens =
        row.engine_chunked_prefill
            ? row.engine_batched_tokens.value_or(a.engine_profile_tokens)
            : std::max(max_len,
                       row.engine_batched_tokens.value_or(a.engine_unchunked_min_tokens));
    // The engine's profile run: the checkpoint as stored (a quantized one at its stored
    // size); max_num_seqs sequences sharing profile_tokens in one forward pass, then one
    // sampling step over each sequence's last token.
    const std::int64_t sequences = std::clamp<std::int64_t>(
        row.engine_max_num_seqs.value_or(a.memory.max_num_seqs), 1, profile_tokens);
    Job profile = job;
    profile.mode = JobMode::serve;
    profile.concurrency = sequences;
    profile.context = profile.seq_len = ceil_div(profile_tokens, sequences);
    // vLLM before 0.3.0 ran AWQ Linears through a split-K GEMM and Mixtral's experts whole on
    // every token (docs/memory.md, "Older engines").
    // (the checkpoint as stored: the validator never re-quantizes, so its bits are the served ones)
    const bool split_k_awq =
        row.engine_vllm_before_0_3 && serves_awq(model, a.memory) && model.quantization.has_value();
    const bool dense_experts = row.engine_vllm_before_0_3 && has_moe(model);
    result.read_as =
        fmt::format("profile over {} tokens ({}) in {} sequences, max_model_len {}{}{}{}{}{}",
                    profile_tokens, row.engine_chunked_prefill ? "chunked prefill" : "one pass",
                    sequences, max_len, job.tp > 1 ? fmt::format(", tp{}", job.tp) : "",
                    row.engine_mla_cache == MlaCache::per_head_padded && has_mla(model)
                        ? ", MLA cached per head"
                        : "",
                    row.engine_mtp && params.mtp > 0 ? ", MTP layers loaded" : "",
                    split_k_awq ? ", AWQ split-K GEMM" : "",
                    dense_experts ? ", experts run whole on every token" : "");
    // An unquantized checkpoint served at 8 or 4 bits (job_weights fp8, int8, int4: an FP8 or
    // W8A8 export of it, or the engine's --quantization) is quantized as trace's --dtype does:
    // the layers' Linear weights in that format, embeddings, head and norms at 16 bits.
    const std::optional<ServeQuantization> quantized_for_serving =
        !model.quantization && job.base_dtype ? serve_quantization_for(*job.base_dtype)
                                              : std::nullopt;
    if (model.quantization || quantized_for_serving) {
      // the checkpoint's stored size, its MTP layers only when the engine loads them
      const StorageEstimate storage =
          quantized_for_serving ? quantized_serving_storage(model, params, *quantized_for_serving)
                                : estimate_storage(model, params);
      if (quantized_for_serving) {
        result.read_as += fmt::format(", Linear weights as {}", quantized_for_serving->name);
      }
      profile.weight_bytes = storage.bytes - (row.engine_mtp ? 0 : storage.mtp_bytes);
    }
    MemoryAssumptions engine_memory = a.memory;
    // its awq_gemm was passed the pack factor, 32 / bits, as split_k
    if (split_k_awq) {
      engine_memory.awq_split_k = 32 / std::max<std::int64_t>(model.quantization->bits, 1);
    }
    engine_memory.moe_dense_experts = dense_experts;
    engine_memory.sampler_bytes_per_logit = sampler_bytes_per_logit(row, a);
    engine_memory.prefill_chunk_tokens = profile_tokens;
    engine_memory.max_num_seqs = sequences;
    engine_memory.mla_cache = row.engine_mla_cache;
    // The profile runs before the engine captures its CUDA graphs: the KV pool it logs was
    // sized without them.
    engine_memory.cuda_graph_bytes = 0;
    MemoryBreakdown run = estimate_job(model, params, profile, engine_memory).breakdown;
    const std::int64_t weights = run.weights;
    const std::int64_t activation = run.activations;
    if (row.task == "activation_only") {
      result.estimate_gib = static_cast<double>(activation) / k_gib_f;
      result.predicted_fit = weights + activation <= usable;
      // the profile runs before any cache exists: weights and its activation peak
      run.kv_cache = run.ssm_state = run.overhead = 0;
      result.breakdown = run;
    } else {
      const auto budget = static_cast<std::int64_t>(row.gpu_memory_utilization *
                                                    static_cast<double>(usable));
      // vLLM's own non-torch memory, beside the tensor-parallel buffers the estimate holds; from
      // 0.21 also its CUDA graphs, which it estimates before sizing the pool
      const bool graphs_first = row.engine_graphs_in_pool_budget && !row.engine_eager;
      const std::int64_t non_torch =
          a.engine_non_torch_bytes + run.overhead + (graphs_first ? a.memory.cuda_graph_bytes : 0);
      if (graphs_first) result.read_as += ", CUDA graphs in the budget";
      const std::int64_t kv_pool = budget - weights - non_torch - activation;
      const KvSplit kv_split = serving_split(engine_memory, job.tp, job.pp);
      const std::int64_t per_sequence =
          kv_cache_bytes(model, max_len, Dtype::bf16, kv_split) +
          ssm_state_bytes(model, effective_ssm_dtype(model, engine_memory),
                          engine_memory.conv_state_bytes, kv_split);
      result.estimate_gib = static_cast<double>(std::max<std::int64_t>(kv_pool, 0)) / k_gib_f;
      result.predicted_fit = kv_pool >= per_sequence;
      // vLLM V1 lays a hybrid model's caches out in blocks of one page size: one max_model_len
      // request must fit the pool's blocks, and with CUDA graphs max_num_seqs must not exceed
      // them (each running sequence holds a state block).
      const std::optional<HybridBlocks> hybrid =
          row.engine_v1 && job.pp == 1
              ? vllm_hybrid_blocks(model, Dtype::bf16, engine_memory, kv_split)
              : std::nullopt;
      if (hybrid) {
        const std::int64_t blocks = hybrid->blocks_in(kv_pool);
        const std::int64_t max_num_seqs = row.engine_max_num_seqs.value_or(a.memory.max_num_seqs);
        result.predicted_fit = blocks >= hybrid->blocks_per_request(max_len) &&
                               (row.engine_eager || blocks >= max_num_seqs);
        result.read_as += fmt::format(", {} hybrid blocks of {} tokens for {} sequences", blocks,
                                      hybrid->block_tokens, max_num_seqs);
      }
      // the pool the engine is left for its caches (KV and SSM state alike)
      run.kv_cache = std::max<std::int64_t>(kv_pool, 0);
      run.ssm_state = 0;
      run.overhead = non_torch;
      result.breakdown = run;
      // Compared with the KV pool the engine logged.
      result.measured_gib = row.kv_cache_gib;
      if (!result.measured_gib && row.kv_tokens) {
        const std::int64_t per_token = kv_cache_bytes(model, 1, Dtype::bf16, kv_split);
        result.measured_gib =
            static_cast<double>(checked_mul(*row.kv_tokens, per_token)) / k_gib_f;
      }
    }
}

// A training or generate() row: the job's per-GPU peak as the row's counter sees it, the
// verdict, a floor's verdict, and the longest sequence of a boundary row.
void score_job_row(const MeasuredRow& row, const ModelDescription& model,
                   const ParameterCount& params, const Job& job, std::int64_t usable,
                   const ValidationAssumptions& a, RowResult& result) {
    // generate() (no serving engine) prefills the whole prompt and samples only its batch;
    // neither it nor an engine in eager mode captures CUDA graphs.
    MemoryAssumptions memory = a.memory;
    memory.sampler_bytes_per_logit = sampler_bytes_per_logit(row, a);
    if (job.mode == JobMode::serve && !row.serving_engine) {
      memory.prefill_chunk_tokens = 0;
      memory.max_num_seqs = 0;
    }
    if (job.mode == JobMode::serve && (!row.serving_engine || row.engine_eager)) {
      memory.cuda_graph_bytes = 0;
    }
    const JobEstimator estimator(model, params, memory);
    // The verdict's peak is the held one (what the caching allocator holds); a measured
    // max_memory_allocated is compared with the allocated peak (Job::allocated_peak).
    const MemoryBreakdown held = estimator.estimate(job).breakdown;
    const std::int64_t peak = held.total();
    Job compared = job;
    compared.allocated_peak = row.counter == MemoryCounter::allocated && row.measured_gib;
    result.breakdown = compared.allocated_peak ? estimator.estimate(compared).breakdown : held;
    const std::int64_t compared_peak = result.breakdown->total();
    result.read_as = describe_job(compared);
    if (row.counter == MemoryCounter::reserved) result.read_as += "; vs reserved";
    if (row.counter == MemoryCounter::process) result.read_as += "; vs whole process";
    // What the row's counter sees: the allocated peak for max_memory_allocated; the held peak
    // with the caching allocator's reserve for max_memory_reserved (the headroom the verdict
    // keeps for it), and also the CUDA context for a whole-process counter (nvidia-smi, NVML).
    const double reserve = a.reserved_over_allocated;
    const std::int64_t counted =
        row.counter == MemoryCounter::allocated
            ? compared_peak
            : checked_add(static_cast<std::int64_t>(std::ceil(static_cast<double>(peak) * reserve)),
                          row.counter == MemoryCounter::process
                              ? row.measured_context_bytes.value_or(a.memory.cuda_context_bytes)
                              : 0);
    result.estimate_gib = static_cast<double>(counted) / k_gib_f;
    // trace's own verdict (as trace check): peak + CUDA context within the card's budget.
    result.verdict_bytes = checked_add(peak, a.memory.cuda_context_bytes);
    result.budget_bytes = budget_bytes(usable, a.memory.headroom_fraction);
    result.predicted_fit = result.verdict_bytes <= result.budget_bytes;
    if (row.seq_len_unknown || row.gpus_unknown || row.optimizer_unknown) {
      // The floor (one token; 1,024 GPUs; no optimizer state) is a lower bound: it proves
      // "does not fit" when it exceeds the card, and says nothing otherwise.
      if (result.predicted_fit) {
        std::vector<std::string> missing, floor;
        if (row.seq_len_unknown) {
          missing.push_back("job_seq_len is empty");
          floor.push_back("one token");
        }
        if (row.gpus_unknown) {
          missing.push_back("job_gpus is empty on a sharded job");
          floor.push_back("1,024 GPUs");
        }
        if (row.optimizer_unknown) {
          missing.push_back("job_optimizer is marked (assumed), not the source's word");
          floor.push_back("no optimizer state");
        }
        // Without a length, how long a sequence the card takes at that floor: the length past
        // which the row's out-of-memory (or its run) would have been trace's verdict.
        std::string longest;
        if (row.seq_len_unknown && job.mode != JobMode::serve) {
          const std::int64_t tokens = largest_fitting(estimator, job, JobKnob::seq_len,
                                                      k_max_training_seq_len, result.budget_bytes);
          longest = fmt::format(" (at that floor, up to {} tokens a sequence fit; more do not)",
                                group_digits(tokens));
        }
        throw ConfigError(fmt::format(
            "{}; its floor ({}) needs {:.2f} GiB per GPU, which fits, so no verdict{}",
            fmt::join(missing, "; "), fmt::join(floor, ", "),
            static_cast<double>(peak + a.memory.cuda_context_bytes) / k_gib_f, longest));
      }
      result.floor_only = true;
    }
    if (row.boundary && !row.oom && job.mode != JobMode::serve && !result.floor_only) {
      // The row's length is the longest that fit its tier: set trace's beside it.
      result.measured_seq_len = job.seq_len;
      result.longest_seq_len =
          largest_fitting(estimator, job, JobKnob::seq_len, k_max_training_seq_len,
                          budget_bytes(usable, a.memory.headroom_fraction));
    }
}

// The scoreboard's totals, per task and overall, from its rows' results.
void tally_scoreboard(Scoreboard& board) {
  const auto tally = [](const std::vector<const RowResult*>& results, Scoreboard::Task& task) {
    std::vector<double> errors;
    for (const RowResult* result : results) {
      ++task.rows;
      if (!result->label_known) {
        // a job_oom cell that says neither: the row counts among neither kind
      } else if (result->oom) {
        ++task.oom_rows;
        // An unplanned row counts against trace: it flagged nothing.
        if (result->planned && !result->predicted_fit) ++task.oom_flagged;
      } else {
        ++task.fit_rows;
        if (result->planned && !result->predicted_fit) ++task.fit_rejected;
      }
      if (result->planned) ++task.planned;
      if (result->relative_error) errors.push_back(std::abs(*result->relative_error));
    }
    task.error_rows = static_cast<std::int64_t>(errors.size());
    task.median_abs_rel_error = nearest_rank_percentile(errors, 0.5);
    task.p90_abs_rel_error = nearest_rank_percentile(errors, 0.9);
  };
  std::vector<const RowResult*> all;
  std::map<std::string, std::vector<const RowResult*>> by_task;
  for (const RowResult& result : board.results) {
    all.push_back(&result);
    by_task[result.task].push_back(&result);
  }
  Scoreboard::Task overall;
  tally(all, overall);
  board.rows = overall.rows;
  board.planned = overall.planned;
  board.oom_rows = overall.oom_rows;
  board.oom_flagged = overall.oom_flagged;
  board.fit_rows = overall.fit_rows;
  board.fit_rejected = overall.fit_rejected;
  board.error_rows = overall.error_rows;
  board.median_abs_rel_error = overall.median_abs_rel_error;
  board.p90_abs_rel_error = overall.p90_abs_rel_error;
  std::vector<double> boundary_errors;
  for (const RowResult& result : board.results) {
    if (const std::optional<double> error = result.seq_len_error()) {
      boundary_errors.push_back(std::abs(*error));
    }
  }
  board.boundary_rows = static_cast<std::int64_t>(boundary_errors.size());
  board.boundary_median_abs_error = nearest_rank_percentile(boundary_errors, 0.5);
  for (const auto& [name, results] : by_task) {
    Scoreboard::Task task;
    task.task = name;
    tally(results, task);
    board.tasks.push_back(task);
  }
}

}  // namespace

Scoreboard validate_rows(const std::vector<MeasuredRow>& rows, const ConfigLoader& load_config,
                         const ValidationAssumptions& a) {
  Scoreboard board;
  for (const MeasuredRow& row : rows) {
    RowResult result;
    result.row_id = row.row_id;
    result.task = row.task;
    result.model_id = row.model_id;
    result.oom = row.oom;
    result.label_known = row.oom_known;
    result.measured_gib = row.measured_gib;
    try {
      if (!row.job_error.empty()) throw ConfigError(row.job_error);
      const std::optional<std::string> text = load_config(row);
      if (!text) {
        throw ConfigError(row.config_file.empty()
                              ? fmt::format("no config for {}", repo_id_of(row.model_id))
                              : fmt::format("config {} not found", row.config_file));
      }
      const ModelDescription model = parse_model_config(*text);
      const ParameterCount params = count_parameters(model);
      // A row without a card (job_usable_gib and card_mem_gb empty) is still estimated and its
      // error scored; with nothing to fit against, trace's verdict is "fits".
      const std::int64_t usable = row.usable_gib > 0
                                      ? static_cast<std::int64_t>(row.usable_gib * k_gib_f)
                                      : std::numeric_limits<std::int64_t>::max() / 4;
      Job job = row.job;
      if (params.vision == 0) job.freeze_vision = false;  // the cells' default, not a tower
      if (params.mtp == 0 || model.mtp_depths == 0) job.train_mtp = false;  // nothing to train
      const bool engine = row.task == "kv_capacity" || row.task == "activation_only";
      if (engine) {
        score_engine_row(row, model, params, job, usable, a, result);
      } else {
        score_job_row(row, model, params, job, usable, a, result);
      }
      if (!row.measured_rederived.empty()) result.read_as += "; " + row.measured_rederived;
      result.planned = true;
    } catch (const Error& error) {
      result.planned = false;
      result.reason = error.what();
    }
    if (result.planned && !result.floor_only && result.measured_gib && *result.measured_gib > 0 &&
        !row.oom) {
      result.relative_error = (result.estimate_gib - *result.measured_gib) / *result.measured_gib;
    }
    board.results.push_back(std::move(result));
  }

  tally_scoreboard(board);
  return board;
}

}  // namespace trace
