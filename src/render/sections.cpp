#include "sections.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <vector>

#include "trace/render/render.hpp"

namespace trace::sections {

namespace {

std::string position_text(const ModelDescription& model) {
  switch (model.position) {
    case PositionKind::rope: return "RoPE";
    case PositionKind::learned:
      return model.sinusoidal_position_table
                 ? fmt::format("fixed sinusoidal table ({} positions, frozen)",
                               model.learned_positions)
                 : fmt::format("learned ({} positions)", model.learned_positions);
    case PositionKind::alibi: return "ALiBi";
    case PositionKind::relative_bias: return "T5 relative bias";
    case PositionKind::relative_embedding:
      return "relative embeddings (disentangled attention)";
    case PositionKind::none: return "none";
  }
  return "none";
}

std::string fit_text(const ModeFit& fit) {
  if (fit.fits) {
    return fit.max_batch >= k_max_reported_batch ? "yes"
                                                 : fmt::format("yes, batch <= {}", fit.max_batch);
  }
  if (fit.min_cards) {
    return fmt::format("no - needs {} cards{}", *fit.min_cards,
                       fit.strategy == "expert parallel" ? " (EP)" : "");
  }
  return "no - not on any count";
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + fmt::format("{}", shape[i]);
  }
  return text + "]";
}

// "40 Mamba-2, 40 MoE (512 experts, top-4..18, width 1280..2688, 1 shared, latent 1024), 8
// attention" for stacks with state-space or one-mixer (Nemotron-H) layers; empty for others.
std::string hybrid_summary(const Stack& stack) {
  std::int64_t attention = 0;
  std::int64_t moe_layers = 0;
  std::int64_t dense = 0;
  std::map<std::string, std::int64_t> ssm;
  std::int64_t top_min = 0, top_max = 0, width_min = 0, width_max = 0;
  const Moe* moe = nullptr;
  bool single_mixer = false;
  for (const Block& block : stack.blocks) {
    single_mixer = single_mixer || block.single_mixer;
    if (block.ssm) {
      const char* kind = block.ssm->kind == SsmKind::mamba1       ? "Mamba"
                         : block.ssm->kind == SsmKind::mamba2     ? "Mamba-2"
                         : block.ssm->kind == SsmKind::kimi_delta ? "KDA"
                         : block.ssm->kind == SsmKind::short_conv ? "short conv"
                         : block.ssm->kind == SsmKind::lightning  ? "lightning attention"
                                                                  : "gated DeltaNet";
      ++ssm[kind];
    }
    if (block.attention.kind == AttentionKind::standard || block.attention.kind == AttentionKind::mla) {
      ++attention;
    }
    if (block.moe) {
      const Moe& m = *block.moe;
      if (!moe) {
        top_min = top_max = m.top_k;
        width_min = width_max = m.expert.intermediate;
      }
      moe = &m;
      ++moe_layers;
      top_min = std::min(top_min, m.top_k);
      top_max = std::max(top_max, m.top_k);
      width_min = std::min(width_min, m.expert.intermediate);
      width_max = std::max(width_max, m.expert.intermediate);
    } else if (block.mlp.kind == MlpKind::gated || block.mlp.kind == MlpKind::plain) {
      ++dense;
    }
  }
  if (ssm.empty() && !single_mixer) return "";
  const auto range = [](std::int64_t low, std::int64_t high) {
    return low == high ? fmt::format("{}", low) : fmt::format("{}..{}", low, high);
  };
  std::vector<std::string> parts;
  for (const auto& [kind, count] : ssm) parts.push_back(fmt::format("{} {}", count, kind));
  if (moe_layers > 0) {
    parts.push_back(fmt::format(
        "{} MoE ({} experts, top-{}, width {}{}{})", moe_layers, moe->num_experts,
        range(top_min, top_max), range(width_min, width_max),
        moe->shared ? fmt::format(", {} shared", std::max<std::int64_t>(moe->num_shared_experts, 1))
                    : std::string(),
        moe->latent_dim > 0 ? fmt::format(", latent {}", moe->latent_dim) : std::string()));
  }
  if (dense > 0) parts.push_back(fmt::format("{} MLP", dense));
  if (attention > 0) parts.push_back(fmt::format("{} attention", attention));
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

}  // namespace

Facts model_facts(const Report& report) {
  const ModelDescription& model = report.model;
  Facts facts;
  facts.emplace_back("model", report.model_id);
  facts.emplace_back("source", report.source);
  facts.emplace_back("model_type", fmt::format("{}: {}", model.model_type, model.family));
  for (const Stack& stack : model.stacks) {
    if (stack.blocks.empty()) continue;
    std::int64_t moe_layers = 0;
    std::int64_t attention_layers = 0;
    const Moe* moe = nullptr;
    const Attention* attention = nullptr;
    for (const Block& block : stack.blocks) {
      if (block.moe) {
        ++moe_layers;
        moe = &*block.moe;
      }
      if (block.attention.kind == AttentionKind::standard ||
          block.attention.kind == AttentionKind::mla) {
        ++attention_layers;
        if (!attention) attention = &block.attention;
      }
    }
    const auto layers = static_cast<std::int64_t>(stack.blocks.size());
    std::string text = fmt::format("{} layers", layers);
    const std::string hybrid = hybrid_summary(stack);
    if (!hybrid.empty()) {
      text += ": " + hybrid;
    } else if (moe_layers > 0) {
      text += fmt::format(" ({} dense + {} MoE: {} experts, top-{}{})", layers - moe_layers,
                          moe_layers, moe->num_experts, moe->top_k,
                          moe->shared ? fmt::format(", {} shared", std::max<std::int64_t>(
                                                                      moe->num_shared_experts, 1))
                                      : std::string());
    }
    if (attention_layers < layers && hybrid.empty()) {
      text += fmt::format(", attention in {}", attention_layers);
    }
    if (attention) {
      text += attention->kind == AttentionKind::mla
                  ? fmt::format(", hidden {}, MLA {} heads", attention->input_dim,
                                attention->num_heads)
                  : fmt::format(", hidden {}, {} heads / {} kv heads x {}", attention->input_dim,
                                attention->num_heads, attention->num_kv_heads,
                                attention->head_dim);
    }
    const Mlp& mlp = stack.blocks.front().mlp;
    if (moe_layers == 0 && (mlp.kind == MlpKind::gated || mlp.kind == MlpKind::plain)) {
      text += fmt::format(", MLP {}", mlp.intermediate);
    }
    facts.emplace_back(stack.mtp ? "mtp" : stack.name, text);
  }
  // An encoder's MLM decoder is a head of its own (not the lm_head); a pooled, token or QA head
  // reads no vocabulary, so the word table only feeds the input.
  const bool vocabulary_head =
      model.has_lm_head || model.training_logits_width() == model.vocab_size;
  facts.emplace_back("vocabulary",
                     !vocabulary_head
                         ? fmt::format("{}, input only (no LM head)", model.vocab_size)
                         : fmt::format("{}, embeddings {}", model.vocab_size,
                                       model.tie_word_embeddings ? "tied to the head" : "untied"));
  facts.emplace_back("positions", position_text(model) +
                                      (model.max_position_embeddings > 0
                                           ? fmt::format(", max {} tokens",
                                                         model.max_position_embeddings)
                                           : ""));
  if (!model.torch_dtype.empty()) {
    facts.emplace_back("checkpoint dtype", model.torch_dtype);
  } else if (!model.unspecified_dtype.empty()) {
    facts.emplace_back("checkpoint dtype",
                       model.unspecified_dtype + " (assumed: the config names none)");
  }
  return facts;
}

Facts parameter_facts(const Report& report) {
  const ParameterCount& params = report.parameters;
  Facts facts;
  facts.emplace_back("total", fmt::format("{} ({})", group_digits(params.total),
                                          short_count(params.total)));
  facts.emplace_back("active per token", fmt::format("{} ({})", group_digits(params.active),
                                                     short_count(params.active)));
  facts.emplace_back("active w/o embedding", group_digits(params.active_without_embedding));
  if (params.mtp > 0) facts.emplace_back("of total: MTP layers", group_digits(params.mtp));
  if (params.vision > 0) facts.emplace_back("of total: vision", group_digits(params.vision));
  for (const auto& [name, count] : params.by_component) {
    if (count != 0) facts.emplace_back(name, group_digits(count));
  }
  facts.emplace_back("LoRA adapters", fmt::format("{} at rank {}",
                                                  group_digits(report.memory.lora_trainable_params),
                                                  report.assumptions.lora_rank));
  return facts;
}

Facts storage_facts(const Report& report) {
  const StorageEstimate& storage = report.storage;
  Facts facts;
  facts.emplace_back("format", storage.format);
  facts.emplace_back("stored elements", group_digits(storage.stored_elements));
  facts.emplace_back("bytes", fmt::format("{} ({})", group_digits(storage.bytes),
                                          format_bytes(storage.bytes)));
  std::string dtypes;
  for (const auto& [dtype, bytes] : storage.by_dtype) {
    dtypes += (dtypes.empty() ? "" : ", ") + fmt::format("{} {}", dtype, format_bytes(bytes));
  }
  facts.emplace_back("by dtype", dtypes);
  if (storage.scale_elements > 0) {
    facts.emplace_back("scales/zeros (not params)", group_digits(storage.scale_elements));
  }
  if (storage.tensors > 0) facts.emplace_back("tensors", group_digits(storage.tensors));
  if (storage.nvfp4_modules + storage.fp8_modules > 0) {
    facts.emplace_back("quantized Linears", fmt::format("{} NVFP4, {} FP8; the rest {}",
                                                        group_digits(storage.nvfp4_modules),
                                                        group_digits(storage.fp8_modules),
                                                        report.model.torch_dtype.empty()
                                                            ? "bf16"
                                                            : report.model.torch_dtype));
  }
  if (storage.hub_parameters > 0) {
    facts.emplace_back("Hub parameter count", fmt::format("{} ({:.2f}B)", group_digits(storage.hub_parameters),
                                                          static_cast<double>(storage.hub_parameters) / 1e9));
    facts.emplace_back(
        "why it differs",
        fmt::format("the Hub counts each packed NVFP4 byte (two 4-bit weights) as one parameter "
                    "and leaves scales out; the model has {} parameters",
                    group_digits(report.parameters.total - report.parameters.router_bias_buffers)));
  }
  return facts;
}

Table memory_table(const Report& report) {
  Table table;
  table.header = {"mode",        "total",    "weights",   "gradients", "optimizer",
                  "activations", "KV cache", "SSM state", "overhead"};
  // GRPO's generation (--rl grpo) gets a column of its own where a training row holds some.
  const bool generation = report.memory.full_finetune.breakdown.generation > 0 ||
                          report.memory.lora.breakdown.generation > 0;
  if (generation) table.header.push_back("generation");
  const auto row = [&](std::string name, const ModeMemory& mode) {
    const MemoryBreakdown& b = mode.breakdown;
    table.rows.push_back({std::move(name), format_bytes(b.total()), format_bytes(b.weights),
                          format_bytes(b.gradients), format_bytes(b.optimizer),
                          format_bytes(b.activations), format_bytes(b.kv_cache),
                          format_bytes(b.ssm_state), format_bytes(b.overhead)});
    if (generation) table.rows.back().push_back(format_bytes(b.generation));
  };
  const MemoryAssumptions& a = report.assumptions;
  const auto shown = [&](std::string_view mode) {
    return report.only_mode.empty() || report.only_mode == mode;
  };
  // A preference job's pairs and reference as `mode` holds them, before the rest of the label.
  const auto preference = [&](JobMode mode) -> std::string {
    if (!report.training) return "";
    Job shown_as = *report.training;
    shown_as.mode = mode;
    if (shown_as.rl) return describe_rl(shown_as) + ", ";
    if (report.training->preference == Preference::none) return "";
    return describe_preference(shown_as) + ", ";
  };
  if (shown("full")) {
    row(fmt::format("full fine-tune ({}{}, batch {})", preference(JobMode::full),
                    report.training ? describe_training(*report.training) : "AdamW, bf16 mixed",
                    a.batch),
        report.memory.full_finetune);
  }
  if (shown("lora")) {
    // A quantized checkpoint's LoRA base is held as stored (make_report: base_from_checkpoint).
    const std::optional<Quantization>& stored = report.model.quantization;
    const bool held_as_stored = stored && lora_keeps_stored_base(*stored);
    row(fmt::format("LoRA r={} ({}base {}, batch {})", a.lora_rank, preference(JobMode::lora),
                    !stored || !held_as_stored                ? dtype_info(a.lora_base_dtype).name
                    : stored->format == QuantFormat::bnb_4bit ? std::string("nf4")
                                                                : report.storage.format,
                    a.batch),
        report.memory.lora);
  }
  if (shown("serve")) {
    // An encoder caches nothing: its row names the batch it encodes.
    row(report.model.encoder_only()
            ? fmt::format("serve ({} weights, encode {} x {} tokens)", report.serve_weight_format,
                          a.concurrency, a.context)
            : fmt::format("serve ({} weights, {} KV, {} x {} tokens)", report.serve_weight_format,
                          dtype_info(a.kv_dtype).name, a.concurrency, a.context),
        report.memory.serve);
  }
  return table;
}

Table cards_table(const Report& report) {
  Table table;
  table.header = {"card", "usable", "budget"};
  const std::string& only = report.only_mode;
  if (only.empty() || only == "full") table.header.push_back("full fine-tune");
  if (only.empty() || only == "lora") table.header.push_back("LoRA");
  if (only.empty() || only == "serve") table.header.push_back("serve");
  for (const CardFit& card : report.cards) {
    std::vector<std::string> row = {card.id, format_bytes(card.memory_bytes),
                                    format_bytes(card.budget_bytes)};
    if (only.empty() || only == "full") row.push_back(fit_text(card.full_finetune));
    if (only.empty() || only == "lora") row.push_back(fit_text(card.lora));
    if (only.empty() || only == "serve") row.push_back(fit_text(card.serve));
    table.rows.push_back(std::move(row));
  }
  return table;
}

Table structure_table(const Report& report) {
  Table table;
  table.header = {"stack", "layers", "block", "params / layer"};
  std::string current_stack;
  std::int64_t current_layer = -1;
  std::string signature;
  std::int64_t first = 0;
  std::int64_t last = -1;
  std::int64_t layer_params = 0;
  std::string block_text;
  const auto flush = [&] {
    if (last < first || signature.empty()) return;
    const std::int64_t count = last - first + 1;
    table.rows.push_back({current_stack,
                          count == 1 ? fmt::format("{}", first)
                                     : fmt::format("{}-{} (x{})", first, last, count),
                          block_text, group_digits(layer_params)});
  };
  // Group the graph's per-layer nodes into layers, then runs of identical layers.
  std::vector<std::pair<std::string, std::vector<const GraphNode*>>> layers;
  for (const GraphNode& node : report.graph.nodes) {
    if (node.layer < 0) continue;
    if (layers.empty() || node.layer != current_layer || node.stack != layers.back().first) {
      layers.push_back({node.stack, {}});
      current_layer = node.layer;
    }
    layers.back().second.push_back(&node);
  }
  current_stack.clear();
  std::int64_t index = 0;
  for (const auto& [stack, nodes] : layers) {
    std::string text;
    std::int64_t params = 0;
    for (const GraphNode* node : nodes) {
      text += (text.empty() ? "" : " > ") + node->op +
              (node->detail.empty() ? "" : " (" + node->detail + ")");
      params += node->params;
    }
    const std::string this_signature = stack + "|" + text + "|" + std::to_string(params);
    if (stack != current_stack) index = 0;
    if (this_signature != signature || stack != current_stack) {
      flush();
      current_stack = stack;
      signature = this_signature;
      first = index;
      block_text = text;
      layer_params = params;
    }
    last = index;
    ++index;
  }
  flush();
  return table;
}

Table graph_table(const Report& report) {
  Table table;
  table.header = {"node", "op", "output shape", "params", "detail"};
  for (const GraphNode& node : report.graph.nodes) {
    table.rows.push_back({node.name, node.op, shape_text(node.output_shape),
                          group_digits(node.params), node.detail});
  }
  return table;
}

std::string workload_line(const Report& report) {
  const MemoryAssumptions& a = report.assumptions;
  return fmt::format(
      "training: seq {} x batch {}; serving: {} sequence(s) x {} tokens; headroom {:.0f}%, CUDA "
      "context {}",
      a.seq_len, a.batch, a.concurrency, a.context, a.headroom_fraction * 100.0,
      format_bytes(a.cuda_context_bytes));
}

std::string kv_line(const Report& report) {
  const MemoryAssumptions& a = report.assumptions;
  if (report.model.encoder_only()) {
    return "KV cache: none (encoder-only: each batch is encoded whole in one forward pass, "
           "nothing is generated)";
  }
  std::string kinds;
  for (const Stack& stack : report.model.stacks) {
    if (stack.vision || stack.mtp || !stack.causal) continue;
    std::int64_t mla = 0;
    std::int64_t windowed = 0;
    std::int64_t cached = 0;
    std::int64_t pooled = 0;
    std::int64_t indexed = 0;
    std::int64_t index_keys = 0;  // sparse MLA layers, and one's index key bytes
    std::int64_t index_key_size = 0;
    std::int64_t pooled_state = 0;
    std::vector<std::int64_t> ratios;
    // cross-attention over a source of fixed length (Mllama's image tiles, Whisper's frames):
    // in place of the layer's own attention, or beside it
    std::int64_t fixed_instead = 0;
    std::int64_t fixed_beside = 0;
    std::int64_t source_tokens = 0;
    for (const Block& block : stack.blocks) {
      if (block.attention.is_cross && block.attention.cross_source_tokens > 0) {
        ++fixed_instead;
        source_tokens = std::max(source_tokens, block.attention.cross_source_tokens);
      }
      if (block.cross_attention && block.cross_attention->cross_source_tokens > 0) {
        ++fixed_beside;
        source_tokens = std::max(source_tokens, block.cross_attention->cross_source_tokens);
      }
      if (const auto& kv = block.attention.compressed_kv) {
        ++pooled;
        if (kv->index_key_dim > 0) ++indexed;
        pooled_state += 4 * kv->state_fp32_values(block.attention.head_dim);
        if (std::find(ratios.begin(), ratios.end(), kv->ratio) == ratios.end()) {
          ratios.push_back(kv->ratio);
        }
      }
      if (block.attention.kind == AttentionKind::mla) ++mla;
      if (block.attention.indexer) {
        ++index_keys;
        index_key_size = index_key_bytes(*block.attention.indexer);
      }
      if (block.attention.kind == AttentionKind::mla ||
          block.attention.kind == AttentionKind::standard) {
        ++cached;
        if (block.attention.sliding_window > 0) ++windowed;
      }
    }
    kinds += fmt::format(
        "{}{} of {} {} layers cache K/V{}{}", kinds.empty() ? "" : "; ", cached,
        stack.blocks.size(), stack.name,
        mla > 0 ? fmt::format(" ({} as an MLA latent{})", mla,
                              index_keys > 0 ? fmt::format(", {} with a {}-byte FP8 index key",
                                                           index_keys, index_key_size)
                                             : std::string())
                : std::string(),
        windowed > 0 ? fmt::format(", {} capped at their window", windowed) : std::string());
    if (fixed_instead + fixed_beside > 0) {
      kinds += fmt::format(
          ", {} a cross-attention over a fixed {}-token source{}, cached once per sequence, not "
          "per token",
          fixed_instead > 0 ? fmt::format("{} of them", fixed_instead)
                            : fmt::format("and {}", fixed_beside),
          group_digits(source_tokens), fixed_instead > 0 ? " instead" : " beside it");
    }
    if (pooled > 0) {
      std::sort(ratios.begin(), ratios.end());
      kinds += fmt::format(
          ", {} also cache one pooled row per {} tokens{}, plus their compressors' {} F32 state "
          "per sequence",
          pooled, fmt::join(ratios, " or "),
          indexed > 0 ? fmt::format(" ({} with an index key)", indexed) : std::string(),
          format_bytes(pooled_state));
    }
  }
  std::string line = fmt::format("KV cache: {} bytes per token ({}){}",
                                 group_digits(report.memory.kv_cache_bytes_per_token),
                                 dtype_info(a.kv_dtype).name, kinds.empty() ? "" : "; " + kinds);
  if (report.memory.ssm_state_bytes_per_sequence > 0) {
    line += fmt::format(". Mamba state: {} per sequence ({} SSM state), whatever the context",
                        format_bytes(report.memory.ssm_state_bytes_per_sequence),
                        dtype_info(effective_ssm_dtype(report.model, a)).name);
  }
  return line;
}

// What a breakdown's overhead holds: the CUDA context, and for serving the engine's CUDA graphs
// and a tensor-parallel serve job's communication buffers.
std::string overhead_label(const Report& report) {
  const Job* job = report.job ? &report.job->job : nullptr;
  std::string label = "CUDA context";
  if ((!job || job->mode == JobMode::serve) && report.assumptions.cuda_graph_bytes > 0) {
    label += " + graphs";
  }
  if (job && job->mode == JobMode::serve && serving_comm_bytes(job->tp, report.assumptions) > 0) {
    label += " + TP buffers";
  }
  // what quantizing the base in one pass holds at setup beyond the step's own terms
  if (job && job->mode == JobMode::qlora && job->nf4_quantized_in_one_pass) {
    label += " + nf4 setup";
  }
  return label;
}

std::string job_line(const Report& report) {
  if (!report.job) return "";
  const JobVerdict& v = *report.job;
  const MemoryBreakdown& b = v.breakdown;
  // The job as the estimator read it (every setting that moves it), so the number traces back.
  // Gradients freed between steps count by what they add above the forward; say what they are.
  const std::string gradients =
      v.gradients_at_step > b.gradients
          ? fmt::format("{} (of {}, freed between steps)", format_bytes(b.gradients),
                        format_bytes(v.gradients_at_step))
          : format_bytes(b.gradients);
  std::string line = fmt::format(
      "Job ({}): {} per GPU = weights {} + gradients {} + optimizer {} + activations {} "
      "+ logits {} + KV {} + state {} + {} {}",
      describe_job(v.job, OneGpu::named), format_bytes(v.peak_bytes()), format_bytes(b.weights),
      gradients, format_bytes(b.optimizer), format_bytes(b.activations), format_bytes(b.logits),
      format_bytes(b.kv_cache), format_bytes(b.ssm_state), overhead_label(report),
      format_bytes(b.overhead));
  if (b.generation > 0) line += fmt::format(" + generation {}", format_bytes(b.generation));
  if (!v.gpu.empty()) {
    line += fmt::format("; {} on {} (budget {})", v.fits ? "fits" : "does not fit", v.gpu,
                        format_bytes(v.budget_bytes));
    if (!v.refusal.empty()) line += ": " + v.refusal;
  }
  return line;
}

namespace {

// " (memory allows more than the model's N positions)" when a length found in memory passes
// the model's max_position_embeddings, else "".
std::string beyond_positions(const Report& report, std::int64_t tokens) {
  const std::int64_t positions = report.model.max_position_embeddings;
  if (positions <= 0 || tokens <= positions) return "";
  return fmt::format(" (memory allows more than the model's {} positions)",
                     group_digits(positions));
}

}  // namespace

std::string job_limits_line(const Report& report) {
  if (!report.job) return "";
  const JobVerdict& v = *report.job;
  const auto count = [](std::int64_t n, const char* unit) {
    return n == 0 ? std::string("none") : fmt::format("{}{}", group_digits(n), unit);
  };
  // "On 2 x l4: <most> at <tokens> tokens: <n>; <longest> at <count>: <m> tokens"
  const auto line = [&](const char* most, std::int64_t tokens, std::int64_t most_value,
                        const std::string& longest_at, std::int64_t longest_value) {
    return fmt::format("On {} x {}: {} at {} tokens: {}; {}: {}", v.job.gpus, v.gpu, most,
                       group_digits(tokens), count(most_value, ""), longest_at,
                       count(longest_value, " tokens")) +
           beyond_positions(report, longest_value);
  };
  if (v.max_batch && v.max_seq_len) {
    return line("largest batch", v.job.seq_len, *v.max_batch,
                fmt::format("longest sequence at batch {}", group_digits(v.job.batch)),
                *v.max_seq_len);
  }
  if (v.max_concurrency && v.max_context) {
    return line("most requests", v.job.context, *v.max_concurrency,
                fmt::format("longest context at {} request(s)", group_digits(v.job.concurrency)),
                *v.max_context);
  }
  return "";
}

std::string context_line(const Report& report) {
  if (report.cards.empty()) return "";
  const std::int64_t concurrency = report.assumptions.concurrency;
  std::string line = fmt::format("Longest context on one {} at {} concurrent request(s): ",
                                 report.serving_card().id, group_digits(concurrency));
  if (report.longest_context == 0) {
    return line + (report.model.encoder_only() ? "none (the weights leave no room for a sequence)"
                                               : "none (the weights leave no room for KV)");
  }
  line += fmt::format("{} tokens", group_digits(report.longest_context));
  return line + beyond_positions(report, report.longest_context);
}

std::string hybrid_blocks_line(const Report& report) {
  if (!report.hybrid_blocks) return "";
  const HybridCapacity& h = *report.hybrid_blocks;
  const HybridBlocks& l = h.layout;
  std::string groups = fmt::format("{} attention", l.attention_groups);
  if (l.window_groups > 0) groups += fmt::format(", {} sliding-window", l.window_groups);
  groups += fmt::format(", {} state", l.state_groups);
  const std::string layout = fmt::format(
      "vLLM V1 blocks (hybrid): {} tokens a block, {} a block id (a {} page in each of {} layers; "
      "groups: {})",
      group_digits(l.block_tokens), format_bytes(l.block_bytes()), format_bytes(l.page_bytes),
      l.group_layers, groups);
  if (h.max_requests == 0) {
    return fmt::format("{}; no request of {} tokens ({} blocks) fits on one {}", layout,
                       group_digits(report.assumptions.context),
                       group_digits(h.blocks_per_request), h.gpu);
  }
  const auto verdict = [&](std::int64_t max_num_seqs) {
    return max_num_seqs > h.blocks ? "is refused" : "starts";
  };
  std::string seqs;
  if (h.max_num_seqs > 0) {
    seqs = fmt::format("; max_num_seqs {} {}", group_digits(h.max_num_seqs),
                       verdict(h.max_num_seqs));
  }
  // vLLM V1 defaults max_num_seqs to 1,024 on a card of 70 GiB or more other than the A100
  // (EngineArgs.get_batch_defaults), where trace's --max-num-seqs default is 256.
  const CardFit& card = report.serving_card();
  if (card.memory_bytes >= 70 * k_gib && card.id.find("a100") == std::string::npos &&
      h.max_num_seqs != 1024) {
    seqs += fmt::format("; vLLM V1's default on this card, 1,024, {}", verdict(1024));
  }
  return fmt::format(
      "{}; the {} left on one {} hold {} blocks, {} request(s) of {} tokens at {} blocks each{}",
      layout, format_bytes(h.pool_bytes), h.gpu, group_digits(h.blocks),
      group_digits(h.max_requests), group_digits(report.assumptions.context),
      group_digits(h.blocks_per_request), seqs);
}

std::string concurrency_line(const Report& report) {
  if (report.cards.empty()) return "";
  const CardFit& card = report.serving_card();
  const ModeMemory& serve = report.memory.serve;
  const MemoryBreakdown& b = serve.breakdown;
  const std::int64_t concurrency = card.serve.fits ? card.serve.max_batch : 0;
  const std::string graphs =
      report.assumptions.cuda_graph_bytes > 0
          ? fmt::format(" - CUDA graphs {}", format_bytes(report.assumptions.cuda_graph_bytes))
          : std::string();
  if (report.model.encoder_only()) {
    // No cache: a sequence costs its share of the batch's forward pass.
    const double sequences = serve.per_sequence_bytes > 0
                                 ? static_cast<double>(card.budget_bytes - serve.fixed_bytes) /
                                       static_cast<double>(serve.per_sequence_bytes)
                                 : 0.0;
    return fmt::format(
        "Encoding on one {} at {} tokens per sequence: a batch of {} sequence(s) = (budget {} [{} "
        "usable less {:.0f}% headroom] - weights {} - CUDA context {}{}) / (the forward pass's "
        "activations {} a sequence) = {:.2f}, rounded down",
        card.id, group_digits(report.assumptions.context), group_digits(concurrency),
        format_bytes(card.budget_bytes), format_bytes(card.memory_bytes),
        report.assumptions.headroom_fraction * 100.0, format_bytes(b.weights),
        format_bytes(report.assumptions.cuda_context_bytes), graphs,
        format_bytes(serve.per_sequence_bytes), sequences < 0 ? 0.0 : sequences);
  }
  const std::int64_t kv = serve.per_sequence_bytes - report.memory.ssm_state_bytes_per_sequence;
  std::string per_request = fmt::format("KV {}", format_bytes(kv));
  if (report.memory.ssm_state_bytes_per_sequence > 0) {
    per_request += fmt::format(" + state {}", format_bytes(report.memory.ssm_state_bytes_per_sequence));
  }
  const double ratio =
      serve.per_sequence_bytes > 0
          ? static_cast<double>(card.budget_bytes - serve.fixed_bytes) /
                static_cast<double>(serve.per_sequence_bytes)
          : 0.0;
  return fmt::format(
      "Serving on one {} at {} tokens per request: {} concurrent request(s) = (budget {} [{} "
      "usable less {:.0f}% headroom] - weights {} - CUDA context {}{} - prefill/sampling {}) / "
      "({}) = {:.2f}, rounded down",
      card.id, group_digits(report.assumptions.context), concurrency,
      format_bytes(card.budget_bytes), format_bytes(card.memory_bytes),
      report.assumptions.headroom_fraction * 100.0, format_bytes(b.weights),
      format_bytes(report.assumptions.cuda_context_bytes), graphs, format_bytes(b.activations),
      per_request, ratio < 0 ? 0.0 : ratio);
}

std::vector<std::string> stored_extra_lines(const Report& report) {
  std::vector<std::string> lines;
  for (const StoredExtra& extra : report.model.stored_extras) {
    lines.push_back(fmt::format("{}: {} x {} {} ({}) - {}", extra.name, extra.count,
                                group_digits(extra.elements_each), extra.dtype,
                                extra.certain ? "stored" : "may be stored", extra.note));
  }
  return lines;
}

}  // namespace trace::sections
