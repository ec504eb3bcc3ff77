// How `trace throughput` reads a throughput.csv row: the CSV itself, then one rule per column
// (card, weight format, KV dtype, concurrency, parallelism, model id and aliases). Every rule is
// listed in docs/cost.md, "Measured throughput".
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "trace/cost/throughput.hpp"
#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

bool contains(std::string_view text, std::string_view word) {
  return text.find(word) != std::string_view::npos;
}


// The digits right after `prefix` where the prefix starts a word ("TP8" in "TP8 PP4", not the
// "tp" of "AsyncTP").
std::optional<std::int64_t> number_after(std::string_view text, std::string_view prefix) {
  for (std::size_t at = text.find(prefix); at != std::string_view::npos;
       at = text.find(prefix, at + 1)) {
    const bool word_start = at == 0 || !std::isalpha(static_cast<unsigned char>(text[at - 1]));
    std::size_t end = at + prefix.size();
    std::int64_t value = 0;
    bool digits = false;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end])) && value < 1'000'000) {
      value = value * 10 + (text[end] - '0');
      digits = true;
      ++end;
    }
    if (word_start && digits) return value;
  }
  return std::nullopt;
}

constexpr ModelAlias k_aliases[] = {
    {"nvidia/Llama-3.1-8B-Instruct-FP8", "meta-llama/Llama-3.1-8B",
     "NVIDIA's FP8 (ModelOpt) re-export of Llama-3.1-8B-Instruct; the instruct tune keeps the base "
     "model's shapes"},
    {"nvidia/Llama-3.3-70B-Instruct-FP8", "meta-llama/Llama-3.3-70B-Instruct",
     "NVIDIA's FP8 (ModelOpt) re-export of the same model"},
    {"nvidia/Llama-3.3-70B-Instruct-FP4", "meta-llama/Llama-3.3-70B-Instruct",
     "NVIDIA's NVFP4 (ModelOpt) re-export of the same model"},
    {"nvidia/Llama-3.1-405B-Instruct-FP8", "meta-llama/Llama-3.1-405B",
     "NVIDIA's FP8 (ModelOpt) re-export of Llama-3.1-405B-Instruct; the instruct tune keeps the "
     "base model's shapes"},
    {"nvidia/Llama-3.1-405B-Instruct-FP4", "meta-llama/Llama-3.1-405B",
     "NVIDIA's NVFP4 (ModelOpt) re-export of Llama-3.1-405B-Instruct; the instruct tune keeps the "
     "base model's shapes"},
    {"meta-llama/Llama-2-7b-chat-hf", "meta-llama/Llama-2-7b-hf",
     "the chat tune keeps the base model's shapes"},
    {"meta-llama/Llama-2-70b-chat-hf", "meta-llama/Llama-2-70b-hf",
     "the chat tune keeps the base model's shapes"},
    {"meta-llama/Llama-2-13b", "meta-llama/Llama-2-13b-hf",
     "the -hf repo is the transformers conversion of the same checkpoint"},
    {"meta-llama/Llama-2-70b", "meta-llama/Llama-2-70b-hf",
     "the -hf repo is the transformers conversion of the same checkpoint"},
    {"codellama/CodeLlama-7b-hf", "codellama/CodeLlama-7b-Instruct-hf",
     "the instruct tune keeps the base model's shapes (vocab 32016 in both)"},
    {"meta-llama/Meta-Llama-3-70B", "meta-llama/Llama-3.1-70B",
     "Llama 3.1 70B has Llama 3 70B's shapes (hidden 8192, 80 layers, 64/8 heads, MLP 28672, "
     "vocab 128256); only the RoPE scaling and context length changed"},
};

}  // namespace

std::string_view throughput_kind_name(ThroughputKind kind) {
  switch (kind) {
    case ThroughputKind::batch1_decode: return "batch-1 decode";
    case ThroughputKind::saturated_serving: return "saturated serving";
    case ThroughputKind::prefill: return "prefill";
    case ThroughputKind::dense_training: return "dense training";
    case ThroughputKind::moe_training: return "MoE training";
  }
  return "?";
}

std::vector<ThroughputRow> parse_throughput_csv(std::string_view text) {
  const std::vector<std::vector<std::string>> records = parse_csv(text);
  if (records.empty()) throw ConfigError("the CSV is empty");
  const std::vector<std::string>& header = records.front();
  for (const char* required : {"row_id", "kind", "model_id", "gpu", "n_gpus", "parallelism",
                               "weight_dtype", "tokens_per_s_total"}) {
    if (std::find(header.begin(), header.end(), required) == header.end()) {
      throw ConfigError(fmt::format("the CSV has no '{}' column (see docs/cost.md)", required));
    }
  }
  std::vector<ThroughputRow> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    std::map<std::string, std::string> cell;
    for (std::size_t c = 0; c < header.size() && c < records[r].size(); ++c) {
      cell[header[c]] = records[r][c];
    }
    ThroughputRow row;
    row.row_id = cell["row_id"];
    row.kind = to_lower(cell["kind"]);
    row.model_id = cell["model_id"];
    row.gpu = cell["gpu"];
    row.n_gpus = count_cell(cell["n_gpus"]);
    row.parallelism = cell["parallelism"];
    row.weight_dtype = cell["weight_dtype"];
    row.kv_dtype = cell["kv_dtype"];
    row.input_len = count_cell(cell["input_len"]);
    row.output_len = count_cell(cell["output_len"]);
    row.concurrency = cell["concurrency"];
    row.seq_len = count_cell(cell["seq_len"]);
    row.tokens_per_s_total = number_cell(cell["tokens_per_s_total"]);
    row.tokens_per_s_per_user = number_cell(cell["tokens_per_s_per_user"]);
    row.mfu = number_cell(cell["mfu"]);
    row.tflops_per_gpu = number_cell(cell["tflops_per_gpu"]);
    row.spec_decode = cell["spec_decode"];
    row.notes = cell["notes"];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::optional<CardReading> read_card(std::string_view gpu_cell) {
  const std::string text = to_lower(gpu_cell);
  const auto has = [&](std::string_view word) { return contains(text, word); };
  // Longer names first: "GB200" contains "B200", "RTX PRO 6000" is not an RTX 6000 Ada.
  if (has("gb300")) return CardReading{"gb300"};
  if (has("gb200")) return CardReading{"gb200"};
  if (has("b300")) return CardReading{"b300"};
  if (has("b200")) return CardReading{"b200"};
  if (has("gh200")) return CardReading{"gh200"};
  if (has("h200")) return CardReading{has("nvl") ? "h200-nvl" : "h200"};
  if (has("h100")) {
    if (has("pcie")) return CardReading{"h100-pcie"};
    if (has("nvl")) return CardReading{"h100-nvl"};
    return CardReading{"h100-80gb"};
  }
  if (has("a100")) {
    if (has("40gb")) return CardReading{has("pcie") ? "a100-40gb-pcie" : "a100-40gb"};
    return CardReading{has("pcie") ? "a100-80gb-pcie" : "a100-80gb"};
  }
  if (has("rtx pro 6000")) return CardReading{"rtx-pro-6000"};
  if (has("rtx 6000 ada")) return CardReading{"rtx-6000-ada"};
  if (has("rtx 5090")) return CardReading{"rtx-5090"};
  if (has("rtx 4090")) return CardReading{"rtx-4090"};
  if (has("rtx 3090")) return CardReading{"rtx-3090"};
  if (has("l40s")) return CardReading{"l40s"};
  if (has("mi250x")) return CardReading{"mi250x", has("gcd") ? 0.5 : 1.0};
  if (has("mi300x")) return CardReading{"mi300x"};
  if (has("mi325x")) return CardReading{"mi325x"};
  if (has("mi355x")) return CardReading{"mi355x"};
  return std::nullopt;
}

std::optional<WeightReading> read_weight_dtype(std::string_view cell) {
  const std::string text = to_lower(cell);
  const auto has = [&](std::string_view word) { return contains(text, word); };
  WeightReading w;
  if (has("nvfp4")) {
    w.bits_per_param = 4 + 8.0 / 16;  // E2M1 + one FP8 scale per 16 values
    w.nvfp4 = true;
  } else if (has("nf4")) {
    w.bits_per_param = 4 + 8.0 / 64;  // bitsandbytes: one absmax byte per 64 values
  } else if (has("int4")) {
    // Group-wise scale and zero point, both 16-bit, per `group N` values (gpt-fast); no group
    // named: 4 bits flat.
    const std::optional<std::int64_t> group = number_after(text, "group ");
    w.bits_per_param = 4 + (group && *group > 0 ? 32.0 / static_cast<double>(*group) : 0.0);
  } else if (has("q8_0")) {
    w.bits_per_param = 8 + 16.0 / 32;  // GGUF Q8_0: 32 int8 + one fp16 scale per block
    w.serve_dtype = Dtype::fp16;       // llama.cpp dequantizes to fp16 for its matmuls
  } else if (has("int8")) {
    w.bits_per_param = 8;  // per-channel scales: one per output row, negligible
  } else if (has("fp8")) {
    w.bits_per_param = has("mxfp8") ? 8 + 8.0 / 32 : 8;  // MXFP8: an E8M0 scale per 32
    w.serve_dtype = Dtype::fp8;
    w.fp8_compute = true;
  } else if (has("bf16")) {
    w.bits_per_param = 16;
  } else if (has("fp16") || has("f16")) {
    w.bits_per_param = 16;
    w.serve_dtype = Dtype::fp16;
  } else if (has("fp32")) {
    w.bits_per_param = 32;
    w.serve_dtype = Dtype::fp32;
  } else {
    return std::nullopt;
  }
  return w;
}

std::optional<Dtype> read_kv_dtype(std::string_view cell, const WeightReading& weights,
                                   bool card_has_fp8) {
  const std::string text = to_lower(cell);
  if (text.empty()) {
    if ((weights.serve_dtype == Dtype::fp8 || weights.nvfp4) && card_has_fp8) return Dtype::fp8;
    return weights.serve_dtype == Dtype::fp16 ? Dtype::fp16 : Dtype::bf16;
  }
  if (text == "f16") return Dtype::fp16;
  return parse_dtype(text.substr(0, text.find(' ')));
}

std::optional<std::optional<std::int64_t>> read_concurrency(std::string_view cell) {
  const std::string text = to_lower(cell);
  if (text.starts_with("max load")) return std::optional<std::int64_t>();
  if (const std::optional<std::int64_t> batch = number_after(text, "batch ")) {
    return std::optional<std::int64_t>(*batch);
  }
  if (const std::optional<std::int64_t> value = count_cell(text); value && *value > 0) {
    return std::optional<std::int64_t>(*value);
  }
  return std::nullopt;
}

std::optional<ParallelReading> read_parallelism(std::string_view cell) {
  const std::string text = to_lower(cell);
  ParallelReading p;
  const std::optional<std::int64_t> tp = number_after(text, "tp");
  const std::optional<std::int64_t> pp = number_after(text, "pp");
  if (!tp && !pp && !text.starts_with("single")) return std::nullopt;
  p.tp = std::max<std::int64_t>(tp.value_or(1), 1);
  p.pp = std::max<std::int64_t>(pp.value_or(1), 1);
  return p;
}

std::string normalize_model_id(std::string_view model_id) {
  std::string id(model_id.substr(0, model_id.find(' ')));
  while (!id.empty() && (id.back() == ',' || id.back() == ';')) id.pop_back();
  return id;
}

std::span<const ModelAlias> model_aliases() { return k_aliases; }

}  // namespace trace
