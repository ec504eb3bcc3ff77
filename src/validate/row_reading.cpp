// One row of a measured-runs CSV read into a job: the job_* cells, and what the free-text cells
// say beyond them, read the same way for every row (docs/validation.md, "How to read it").
#include "row_reading.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <compare>
#include <cstdint>
#include <optional>
#include <regex>
#include <string_view>
#include <utility>

#include "trace/csv.hpp"
#include "trace/error.hpp"
#include "trace/estimate/job.hpp"
#include "trace/hardware/gpu_catalog.hpp"
#include "trace/text_match.hpp"

namespace trace {

namespace {

// GiB as a double, for the CSV's GiB columns.
constexpr double k_gib_f = static_cast<double>(k_gib);

// Whether the text says torch.compile ("compile", "compile=True"), not "no compile".
bool compiled_in(const std::string& text) {  // text: lower case
  for (std::size_t at = text.find("compile"); at != std::string::npos;
       at = text.find("compile", at + 1)) {
    const std::string_view before = std::string_view(text).substr(0, at);
    const bool negated = before.ends_with("no ") || before.ends_with("without ") ||
                         before.ends_with("no torch.") || text.compare(at, 13, "compile=false") == 0;
    if (!negated) return true;
  }
  return false;
}

// The first year and month a text gives ("2024-09", "Sept 2024", "(v0.3, Oct 2024)").
std::optional<std::pair<int, int>> year_month_in(const std::string& text) {  // text: lower case
  static const std::regex numeric(R"((20\d\d)-(0[1-9]|1[0-2])\b)");
  static const std::regex named(
      R"(\b(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+(20\d\d)\b)");
  std::smatch match;
  std::optional<std::pair<int, int>> found;
  std::size_t at = std::string::npos;
  if (std::regex_search(text, match, numeric)) {
    found = std::pair{std::stoi(match[1].str()), std::stoi(match[2].str())};
    at = static_cast<std::size_t>(match.position(0));
  }
  if (std::regex_search(text, match, named) && static_cast<std::size_t>(match.position(0)) < at) {
    static constexpr std::string_view months = "janfebmaraprmayjunjulaugsepoctnovdec";
    found = std::pair{std::stoi(match[2].str()),
                      static_cast<int>(months.find(match[1].str()) / 3) + 1};
  }
  return found;
}

// Whether a text dates its run before PyTorch 2.0 (March 2023), whose zero_grad() began to free
// the gradients (set_to_none=True): by its first year-month, else its first year ("2022-23
// version"). Lower case.
bool dated_before_torch_2(const std::string& text) {
  if (const std::optional<std::pair<int, int>> date = year_month_in(text)) {
    return *date < std::pair{2023, 3};
  }
  static const std::regex year(R"(\b(20\d\d)\b)");
  std::smatch match;
  return std::regex_search(text, match, year) && std::stoi(match[1].str()) < 2023;
}

// The version a text gives for a framework (version_pattern(name)): the first "X.Y[.Z]" after
// its name with no digit between ("torchtune 0.4.0", "torchtune lora_finetune_distributed (v0.3, Oct 2024)",
// "vllm v0.5.4", "vllm 0.6.x"); a missing patch reads as 0.
struct Version {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const Version&) const = default;
};
std::regex version_pattern(std::string_view name) {
  return std::regex(std::string(name) + R"([^0-9]{0,40}?v?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,4}))?)");
}
std::optional<Version> version_after(const std::string& text, const std::regex& version) {  // lower case
  std::smatch match;
  if (!std::regex_search(text, match, version)) return std::nullopt;
  return Version{std::stoi(match[1].str()), std::stoi(match[2].str()),
                 match[3].matched ? std::stoi(match[3].str()) : 0};
}

bool names_litgpt(const std::string& text) {  // text: lower case
  return text.find("litgpt") != std::string::npos || text.find("lit-gpt") != std::string::npos;
}

// ModelScope's ms-swift ("swift sft", Megatron-SWIFT). Lower case.
bool names_ms_swift(const std::string& text) {
  return text.find("ms-swift") != std::string::npos ||
         text.find("swift sft") != std::string::npos ||
         text.find("megatron-swift") != std::string::npos;
}

// Whether a full fine-tune of a VLM left its vision tower frozen: as the row says it
// ("ViT frozen", "freeze_vit false", "tune_mm_vision true"), else the framework's default,
// frozen in LLaMA-Factory (freeze_vision_tower), ms-swift (freeze_vit) and Qwen's own
// fine-tuning scripts (Qwen-VL's fix_vit, qwen-vl-finetune's tune_mm_vision). Lower case.
bool vision_frozen_in(const std::string& text) {
  const auto has = [&](std::string_view word) { return text.find(word) != std::string::npos; };
  for (const std::string_view trained :
       {"freeze_vision_tower false", "freeze_vision_tower=false", "freeze_vit false",
        "freeze_vit=false", "fix_vit false", "fix_vit=false", "tune_mm_vision true",
        "tune_mm_vision=true", "vit trained", "vision tower trained"}) {
    if (has(trained)) return false;
  }
  for (const std::string_view frozen :
       {"vit frozen", "frozen vit", "vision tower frozen", "frozen vision tower", "freeze_vit",
        "freeze_vision_tower", "fix_vit", "tune_mm_vision false", "tune_mm_vision=false"}) {
    if (has(frozen)) return true;
  }
  return has("llama-factory") || has("llamafactory") || names_ms_swift(text) ||
         has("qwen-vl-finetune") || (has("qwenlm/qwen") && has("finetune"));
}

// Whether a torchtune row predates a release, by the version the row gives for torchtune, else
// by its date against the release's month; nullopt when the row names no torchtune, or neither.
// Lower case.
std::optional<bool> torchtune_before(const Version& release, std::pair<int, int> release_month,
                                     const std::string& text, const std::string& framework,
                                     const std::string& source) {
  if (text.find("torchtune") == std::string::npos) return std::nullopt;
  static const std::regex torchtune_version = version_pattern("torchtune");
  if (const std::optional<Version> version = version_after(framework, torchtune_version)) {
    return *version < release;
  }
  const std::optional<std::pair<int, int>> date = year_month_in(text + " " + source);
  if (!date) return std::nullopt;
  return *date < release_month;
}

// torchtune v0.3 or later (Sept 2024 on), and before it, each known by the row's version or
// date; a row that gives neither is neither. Lower case.
bool torchtune_from_v0_3(const std::string& text, const std::string& framework,
                         const std::string& source) {
  return torchtune_before({0, 3}, {2024, 9}, text, framework, source) == false;
}
bool torchtune_before_v0_3(const std::string& text, const std::string& framework,
                           const std::string& source) {
  return torchtune_before({0, 3}, {2024, 9}, text, framework, source) == true;
}

// Whether torchao quantized the nf4 base in one pass per weight: torchao before 0.2 (it chunked
// the quantization in PR #196, in 0.2), by the version the row gives for torchao, else torchtune
// before v0.2, by its version or date (before July 2024), which pinned torchao 0.1 (torchao 0.3
// from PR #1125, June 2024). Lower case.
bool torchao_quantizes_in_one_pass(const std::string& text, const std::string& framework,
                                   const std::string& source) {
  static const std::regex torchao_version = version_pattern("torchao");
  if (const std::optional<Version> torchao = version_after(text, torchao_version)) {
    return *torchao < Version{0, 2};
  }
  return torchtune_before({0, 2}, {2024, 7}, text, framework, source) == true;
}

// Megatron-LM or NeMo (built on Megatron core): its fused optimizer, fused norms, vocab-parallel
// loss and fp32 main copies. `text`: lower case; "nemo" as a word (not Nemotron, a model).
bool names_megatron(const std::string& text) {
  if (text.find("megatron") != std::string::npos) return true;
  for (std::size_t at = text.find("nemo"); at != std::string::npos; at = text.find("nemo", at + 1)) {
    const std::size_t end = at + 4;
    if (end == text.size() || !std::isalpha(static_cast<unsigned char>(text[end]))) return true;
  }
  return false;
}

// The loss implementation a row's text names: cut for Cut Cross-Entropy and Liger; fused for
// Unsloth's kernel; vocab-parallel where the framework is Megatron (ms-swift's megatron sft,
// NeMo); chunked for LitGPT (chunked_cross_entropy in every finetune script), wherever the text
// says chunked CE, and torchtune from v0.3 (Sept 2024), whose recipe configs all use
// CEWithChunkedOutputLoss (torchtune PR #1390) unless the text says standard CE or is a
// cumulative ablation that does not name the chunked loss; transformers' full fp32 loss
// otherwise. `text`: the framework and notes; `framework`: that
// cell alone (its version); `source`: where the row comes from (its date).
LossImpl loss_named_in(const std::string& text, const std::string& framework,
                       const std::string& source) {  // lower case
  const auto has = [&](const char* word) { return text.find(word) != std::string::npos; };
  if (has("cut cross") || has("(cce)") || has("liger")) return LossImpl::cut;
  if (has("unsloth")) return LossImpl::fused;
  if (names_megatron(framework)) return LossImpl::vocab_parallel;
  if (names_litgpt(text) || has("chunked ce") || has("chunkedoutputloss") ||
      has("chunked cross")) {
    return LossImpl::chunked;
  }
  // A cumulative ablation adds what each row names to the baseline's: it names the chunked
  // loss where it is on (matched above), so the rest keep the baseline's standard CE.
  if (torchtune_from_v0_3(text, framework, source) && !has("standard ce") &&
      !has("standard cross") && !has("cumulative ablation")) {
    return LossImpl::chunked;
  }
  return LossImpl::full;
}

// AdamW's step on PyTorch's foreach path (its default on CUDA) unless the optimizer cell says
// fused or transformers' own per-parameter AdamW ("adamw_hf"), the framework is Megatron or NeMo
// (fused kernels), or torchtune from v0.3 (every recipe config's AdamW fused=True since PR
// #1575, Sept 2024). Lower case.
bool foreach_step_in(const std::string& optimizer, const std::string& text,
                     const std::string& framework, const std::string& source) {
  if (optimizer.find("fused") != std::string::npos ||
      optimizer.find("adamw_hf") != std::string::npos) {
    return false;
  }
  if (names_megatron(framework)) return false;
  return !torchtune_from_v0_3(text, framework, source);
}

// The number a row's text gives right after `key`, separated by spaces, '=' or ':'
// ("max_num_batched_tokens 8192", "dropout=0.1", "max_num_batched_tokens 64,000"), as written
// without its thousands commas; nothing when the key is absent or followed by anything else
// ("> 64000" is a bound, not a setting).
std::optional<std::string> number_after(const std::string& text, std::string_view key) {
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    std::size_t digit = at + key.size();
    while (digit < text.size() && (text[digit] == ' ' || text[digit] == '=' || text[digit] == ':')) {
      ++digit;
    }
    std::string number;
    for (; digit < text.size() &&
           ((text[digit] >= '0' && text[digit] <= '9') || text[digit] == ',' || text[digit] == '.');
         ++digit) {
      if (text[digit] != ',') number += text[digit];
    }
    while (!number.empty() && number.back() == '.') number.pop_back();  // a sentence's full stop
    if (!number.empty()) return number;
  }
  return std::nullopt;
}

// The rank a row's free-text lora_rank cell states: its first whole number ("8 (default)",
// "16 (41,943,040 trainable ...)", "recipe default (64)"); nothing where it names none
// ("notebook default") or gives a share instead ("~0.5% trainable").
std::optional<std::int64_t> rank_in(const std::string& cell) {
  const std::size_t at = cell.find_first_of("0123456789");
  if (at == std::string::npos || (at > 0 && cell[at - 1] == '.')) return std::nullopt;
  const std::size_t end = cell.find_first_not_of("0123456789", at);
  if (end != std::string::npos && (cell[end] == '.' || cell[end] == '%')) return std::nullopt;
  return count_cell(cell.substr(at, end == std::string::npos ? end : end - at));
}

// The LoRA dropout a row's text states ("lora_dropout 0.1", "dropout 0.05", "dropout_p 0.05",
// "dropout 0"), else the framework's default where the text names one whose default is not 0
// (LitGPT: 0.05 in finetune/lora.py and every config_hub yaml); PEFT's default, 0, otherwise.
double lora_dropout_in(const std::string& text, bool old_torchtune) {  // text: lower case
  for (const std::string_view key : {"dropout", "dropout_p"}) {
    if (const std::optional<std::string> written = number_after(text, key)) {
      if (const std::optional<double> value = number_cell(*written); value && *value >= 0 && *value < 1) {
        return *value;
      }
    }
  }
  // The frameworks' own defaults: LitGPT's 0.05, ms-swift's (TunerArguments and
  // Megatron-SWIFT's MegatronTunerMixin both set lora_dropout = 0.05) and torchtune's before
  // v0.3 (its LoRA model builders' lora_dropout = 0.05 until PR #1492, Sept 2024, set 0.0);
  // PEFT's LoraConfig 0.
  if (names_litgpt(text) || names_ms_swift(text) || old_torchtune) return 0.05;
  return 0.0;
}

// The LoRA targets a lora_targets cell names, module by module ("q,v", "q_proj,k_proj,v_proj",
// "query_key_value", "all-linear", "q,k,v,output_proj + MLP"): any MLP module or "all" -> every
// Linear; K, O or a fused QKV -> the attention; Q and V alone -> q, v. The text outside
// parentheses first ("q,v (T5 attention)", "q_proj,v_proj (... lora_target all ...)"), the
// parenthesised text when it names nothing ("FastChat default (q_proj,v_proj)"); nullopt when
// neither names a module ("script default").
std::optional<LoraTargets> lora_targets_in(const std::string& cell) {  // lower case
  const auto named = [](const std::string& text) -> std::optional<LoraTargets> {
    static const std::regex token(R"([a-z0-9_]+)");
    bool q_or_v = false, attention = false, mlp = false;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), token);
         it != std::sregex_iterator(); ++it) {
      const std::string word = it->str();
      const auto is = [&](std::initializer_list<const char*> names) {
        return std::any_of(names.begin(), names.end(), [&](const char* name) { return word == name; });
      };
      if (is({"all", "mlp", "gate", "gate_proj", "up", "up_proj", "down", "down_proj", "w1", "w2",
              "w3", "fc1", "fc2", "c_fc", "dense_h_to_4h", "dense_4h_to_h", "in_proj"})) {
        mlp = true;
      } else if (is({"k", "k_proj", "key", "lora_key", "o", "o_proj", "out_proj", "output_proj",
                     "dense", "c_attn", "c_proj", "query_key_value", "qkv", "qkv_proj",
                     "linear_qkv", "linear_proj", "w_pack"})) {
        attention = true;
      } else if (is({"q", "q_proj", "query", "lora_query", "v", "v_proj", "value", "lora_value"})) {
        q_or_v = true;
      }
    }
    if (mlp) return LoraTargets::all_linear;
    if (attention) return LoraTargets::attention;
    if (q_or_v) return LoraTargets::attention_qv;
    return std::nullopt;
  };
  std::string outside, inside;
  int depth = 0;
  for (const char c : cell) {
    if (c == '(') ++depth;
    (depth > 0 ? inside : outside) += c;
    if (c == ')' && depth > 0) --depth;
  }
  if (const std::optional<LoraTargets> targets = named(outside)) return targets;
  return named(inside);
}

bool names_lightning(const std::string& text) {  // text: lower case
  return names_litgpt(text) || text.find("lightning") != std::string::npos;
}

// The gradient accumulation a row states ("grad accum 8", "gradient_accumulation_steps=4"),
// else LitGPT's default: its TrainArgs.global_batch_size of 64 samples per optimizer step
// (litgpt/args.py; lit-gpt's 2023 finetune scripts used 128) over GPUs x micro-batch, as
// LitGPT divides it.
std::int64_t grad_accum_in(const std::string& text, std::int64_t gpus, std::int64_t batch) {
  for (const std::string_view key : {"grad accum", "gradient accumulation", "grad_accum",
                                     "gradient_accumulation_steps", "accumulation steps"}) {
    if (const std::optional<std::string> written = number_after(text, key)) {
      if (const std::optional<std::int64_t> steps = count_cell(*written); steps && *steps >= 1) {
        return std::min<std::int64_t>(*steps, 1LL << 20);
      }
    }
  }
  if (names_lightning(text)) return std::max<std::int64_t>(1, 64 / gpus / std::max<std::int64_t>(batch, 1));
  return 1;
}

// Whether a row's framework accumulates gradients under PyTorch FSDP's no_sync (Lightning
// Fabric's no_backward_sync, Accelerate's accumulate() unless sync_each_batch); torchtune
// reduce-scatters every micro-batch.
bool accumulates_without_sync(const std::string& text) {  // text: lower case
  if (text.find("torchtune") != std::string::npos) return false;
  static const std::regex hf_trainers(R"(\b(accelerate|trainer|trl)\b)");
  return names_lightning(text) || std::regex_search(text, hf_trainers);
}

// Whether a PyTorch FSDP row wraps the embedding and head as units of their own, so FSDP's root
// unit does not hold them gathered: the row says custom_sharded_layers, or names one of
// torchtune's Llama-3 / 3.1 full-finetune configs, which set custom_sharded_layers:
// ['tok_embeddings', 'output'] (recipes/configs/llama3{,_1}/{8B,70B}_full.yaml, Aug 2024 on).
bool shards_embeddings_apart(const std::string& text) {  // text: lower case
  if (text.find("custom_sharded_layers") != std::string::npos) return true;
  static const std::regex torchtune_full(R"(\bllama3(_1)?/(8|70)b_full\b)");
  return text.find("torchtune") != std::string::npos && std::regex_search(text, torchtune_full);
}

// Whether a row's framework runs PEFT's prepare_model_for_kbit_training on its 4-bit or 8-bit
// base (the fp32 upcast of everything not quantized): PEFT's own QLoRA recipe, TRL's
// SFTTrainer, axolotl, FastChat; not Unsloth, LLaMA-Factory, Answer.AI's fsdp_qlora, LitGPT or
// torchtune, which load the base their own way.
bool prepares_kbit_model(const std::string& text) {  // text: lower case
  const auto has = [&](const char* word) { return text.find(word) != std::string::npos; };
  if (has("unsloth") || has("llama-factory") || has("llamafactory") || has("fsdp_qlora") ||
      names_litgpt(text) || has("torchtune")) {
    return false;
  }
  return has("peft") || has("trl") || has("axolotl") || has("fastchat");
}

// Whether a row's framework and notes name flash-attn (FlashAttention 2/3, Unsloth's kernels,
// Megatron / Transformer Engine) rather than torch SDPA.
bool uses_flash_attention(const std::string& text) {  // text: lower case
  for (const char* word : {"fa2", "fa3", "flash_attention_2", "flashattention", "flash-attn",
                           "flash attention", "unsloth", "megatron"}) {
    if (text.find(word) != std::string::npos) return true;
  }
  return false;
}

// Preference training, as a row's model id, framework and notes name it: DPO (TRL's
// DPOTrainer: pairs and a reference) before ORPO, SimPO or CPO (pairs, no reference), then KTO.
Preference preference_in(const std::string& text) {  // text: lower case
  static const std::regex dpo(R"(\b(dpo|ipo)(\b|trainer))");
  static const std::regex paired(R"(\b(orpo|simpo|cpo)(\b|trainer))");
  static const std::regex kto(R"(\bkto(\b|trainer))");
  if (std::regex_search(text, dpo)) return Preference::dpo;
  if (std::regex_search(text, paired)) return Preference::paired;
  if (std::regex_search(text, kto)) return Preference::kto;
  return Preference::none;
}

// Online RL (TRL's GRPOTrainer), as a row's text names it: the completion length
// ("max_completion_length 1024", else TRL's 256; at most the row's sequence), where it
// generates ("colocate": a vLLM engine in each process; "vllm" otherwise: a server; else
// transformers' generate()), a colocated engine's share of the card
// ("vllm_gpu_memory_utilization 0.3", else TRL's 0.3) and its sleep ("sleep"), a reference
// ("beta 0.04"; TRL's default 0 loads none), and the gather for generation ("ds3_gather").
std::optional<OnlineRl> online_rl_in(const std::string& text, double usable_gib,
                                     std::int64_t seq_len) {  // text: lower case
  static const std::regex grpo(R"(\bgrpo(\b|trainer))");
  if (!std::regex_search(text, grpo)) return std::nullopt;
  const auto number = [&](std::string_view key) {
    return number_cell(number_after(text, key).value_or(""));
  };
  OnlineRl rl;
  rl.completion_len = std::min<std::int64_t>(
      seq_len, count_cell(number_after(text, "max_completion_length").value_or("")).value_or(256));
  if (text.find("colocate") != std::string::npos) {
    rl.generator = Generator::vllm_colocate;
    const double share =
        number("vllm_gpu_memory_utilization").value_or(k_trl_vllm_memory_utilization);
    rl.engine_bytes = static_cast<std::int64_t>(share * usable_gib * k_gib_f);
    rl.engine_sleeps = text.find("sleep") != std::string::npos;
  } else if (text.find("vllm") != std::string::npos) {
    rl.generator = Generator::vllm_server;
  }
  rl.reference = number("beta").value_or(0) > 0;
  rl.zero3_gathers = number("ds3_gather_for_generation").value_or(1) != 0 &&
                     text.find("ds3_gather_for_generation false") == std::string::npos;
  return rl;
}

// A row's cells by column name ("" for a column the CSV lacks).
struct Cells {
  const std::map<std::string, std::string>& cell;
  std::string operator()(const char* name) const {
    const auto it = cell.find(name);
    return it == cell.end() ? std::string() : it->second;
  }
};

// The job_* cells (and the optimizer cell's offload and paging words) into row.job; returns a
// message naming the cell it could not read. A count cell holds a whole number >= 1 or nothing
// (malformed_job_cell has refused the rest). `sharding`: job_sharding as read, "_offload" off.
std::string read_job_cells(const Cells& get, MeasuredRow& row, std::string& sharding) {
  Job& job = row.job;
  const std::string task = row.task;
  if (task == "full" || task == "lora" || task == "qlora" || task == "serve") {
    job.mode = *parse_job_mode(task);
  } else if (task == "kv_capacity" || task == "activation_only") {
    job.mode = JobMode::serve;
  } else {
    return fmt::format("job_task '{}' is not one of full, lora, qlora, serve, kv_capacity, "
                       "activation_only",
                       task);
  }
  if (const auto seq = count_cell(get("job_seq_len"))) {
    job.seq_len = *seq;
    job.context = *seq;
  } else if (task != "kv_capacity" && task != "activation_only") {
    // Only the floor is known: the job at one token (validate_rows).
    row.seq_len_unknown = true;
    job.seq_len = job.context = 1;
  } else {
    // The engine's max_model_len as the row's text states it ("max_model_len 65536"), else its
    // default, the model's (validate_rows).
    const std::optional<std::int64_t> stated = count_cell(
        number_after(to_lower(get("seq_len") + " " + get("notes")), "max_model_len").value_or(""));
    job.seq_len = job.context = stated && *stated > 0 ? *stated : 0;
  }
  job.batch = count_cell(get("job_batch")).value_or(1);
  job.concurrency = job.batch;
  // An empty job_gpus means one GPU only where the job is not sharded: a sharded job's card
  // count decides its per-GPU peak, so it is not guessed.
  const std::optional<std::int64_t> gpus = count_cell(get("job_gpus"));
  const std::string sharding_cell = to_lower(get("job_sharding"));
  job.gpus = gpus.value_or(1);
  row.gpus_unknown = !gpus && !sharding_cell.empty() && sharding_cell != "single";
  job.tp = count_cell(get("job_tp")).value_or(1);
  job.pp = count_cell(get("job_pp")).value_or(1);
  sharding = to_lower(get("job_sharding"));
  if (sharding.ends_with("_offload")) {
    job.cpu_offload = true;
    sharding = sharding.substr(0, sharding.size() - 8);
  }
  if (sharding == "tp" && job.tp == 1) job.tp = job.gpus;
  if (sharding == "pp" && job.pp == 1) job.pp = job.gpus;
  // A layer split across GPUs (job_sharding pp) is Accelerate's device_map, balanced by memory.
  job.pipeline_by_memory = sharding == "pp";
  const std::optional<Sharding> parsed_sharding = parse_sharding(sharding.empty() ? "single" : sharding);
  if (sharding == "unknown") {
    // measured.md's value for a source that does not say: tensor or pipeline parallelism could
    // split the activations too, so no sharding gives a lower bound either.
    return "job_sharding is 'unknown' (the source does not say how its GPUs split the job), so "
           "no verdict";
  }
  if (!parsed_sharding) return fmt::format("job_sharding '{}' is not known", get("job_sharding"));
  job.sharding = *parsed_sharding;
  if (job.gpus % (job.tp * job.pp) != 0) job.gpus = job.tp * job.pp;
  if (row.gpus_unknown) {
    // The floor over card counts: the job spread over about 1,024 GPUs.
    job.gpus = job.tp * job.pp * std::max<std::int64_t>(1, 1024 / (job.tp * job.pp));
  }
  const std::string checkpointing = get("job_grad_ckpt");
  if (const auto value = parse_checkpointing(checkpointing.empty() ? "none" : checkpointing)) {
    job.checkpointing = *value;
  } else {
    return fmt::format("job_grad_ckpt '{}' is not known", checkpointing);
  }
  const std::string attention = get("job_attention");
  if (const auto value = parse_attention(attention.empty() ? "sdpa" : attention)) {
    job.attention = *value;
    job.sdpa_grouped_kv = names_grouped_sdpa(attention);
  } else {
    return fmt::format("job_attention '{}' is not known", attention);
  }
  // job_lora_rank, else the rank the free-text cell states ("8 (default)"), else PEFT-style 16
  job.lora_rank = count_cell(get("job_lora_rank")).value_or(rank_in(get("lora_rank")).value_or(16));
  if (job.lora_rank < 1) job.lora_rank = 16;
  if (const std::optional<LoraTargets> targets = lora_targets_in(to_lower(get("lora_targets")))) {
    job.lora_targets = *targets;
  }
  const std::string weights = to_lower(get("job_weights"));
  if (weights == "nf4") {
    job.base_nf4 = true;
    // LitGPT names the two: bnb.nf4 (an F32 absmax per 64 values) and bnb.nf4-dq.
    const std::string quantization = to_lower(get("quantization"));
    job.nf4_double_quant = !(quantization.find("bnb.nf4") != std::string::npos &&
                             quantization.find("nf4-dq") == std::string::npos);
  } else if (!weights.empty() && weights != "n/a") {
    const std::optional<Dtype> dtype = parse_dtype(weights);
    if (!dtype) return fmt::format("job_weights '{}' is not known", weights);
    job.base_dtype = *dtype;
  }
  const std::string precision = get("job_precision");
  if (const auto value = parse_precision(precision.empty() ? "mixed" : precision)) {
    job.precision = *value;
  } else {
    return fmt::format("job_precision '{}' is not known", precision);
  }
  const std::string optimizer = to_lower(get("job_optimizer"));
  if (optimizer.empty() || optimizer == "none") {
    job.optimizer = Optimizer::sgd;  // no optimizer state (serving rows)
  } else if (optimizer.ends_with("(assumed)")) {
    // The CSV's guess, not the source's word: only the floor (no optimizer state) is known.
    row.optimizer_unknown = true;
    job.optimizer = Optimizer::sgd;
  } else if (const auto value = parse_optimizer(optimizer)) {
    job.optimizer = *value;
  } else {
    return fmt::format("job_optimizer '{}' is not known", optimizer);
  }
  job.optimizer_in_backward = get("job_optimizer_in_backward") == "1";
  // The optimizer cell as the source wrote it also says when its states live on the CPU
  // (Megatron's optimizer_cpu_offload, DeepSpeed's offload_optimizer).
  const std::string optimizer_text = to_lower(get("optimizer"));
  if (optimizer_text.find("optimizer_cpu_offload true") != std::string::npos ||
      optimizer_text.find("offload_optimizer=cpu") != std::string::npos) {
    job.cpu_offload = true;
  }
  // The optimizer cell as the source wrote it says whether it is bitsandbytes' paged variant.
  if (to_lower(get("optimizer")).find("paged") != std::string::npos) {
    job.optimizer = job.optimizer == Optimizer::adamw_8bit ? Optimizer::paged_adamw_8bit
                                                           : Optimizer::paged_adamw;
  }
  job.ep = count_cell(get("job_ep")).value_or(1);
  if (job.ep < 1) job.ep = 1;
  return "";
}

// What the row's free text says beyond its job_* cells (framework, notes, source, the cells as
// the source wrote them): the readings docs/validation.md lists, each the same for every row.
std::string read_text_cells(const Cells& get, MeasuredRow& row, const std::string& sharding) {
  Job& job = row.job;
  const std::string optimizer_text = to_lower(get("optimizer"));
  // job_attention "sdpa" covers SDPA and flash-attn alike; the framework and notes say which
  // (flash-attn keeps K and V grouped, SDPA after a repeat to every head does not).
  const std::string framework_and_notes = to_lower(get("framework") + " " + get("notes"));
  if (job.attention == AttentionImpl::sdpa && uses_flash_attention(framework_and_notes)) {
    job.attention = AttentionImpl::flash;
  }
  // transformers 4.54 on hands SDPA grouped K and V (enable_gqa, torch >= 2.5; transformers PR
  // #39412) when no attention mask reaches the kernel, as in fixed-length runs; a job_attention
  // of sdpa-gqa says so itself.
  static const std::regex transformers_version = version_pattern("transformers");
  static const std::regex torch_version = version_pattern("pytorch");
  if (job.attention == AttentionImpl::sdpa) {
    const std::optional<Version> transformers =
        version_after(framework_and_notes, transformers_version);
    const std::optional<Version> torch = version_after(framework_and_notes, torch_version);
    job.sdpa_grouped_kv =
        job.sdpa_grouped_kv || (transformers && *transformers >= Version{4, 54, 0} &&
                                (!torch || *torch >= Version{2, 5, 0}));
  }
  // Unsloth's fused LoRA kernels and torchtune's NF4 (torchao's linear_nf4 keeps only the
  // weight) replace bitsandbytes' 4-bit matmul autograd.
  if (const std::string framework = to_lower(get("framework"));
      framework.find("unsloth") != std::string::npos ||
      framework.find("torchtune") != std::string::npos) {
    job.bnb_matmul_keeps_inputs = false;
  }
  // Megatron's optimizer keeps an fp32 main copy and fp32 main gradients of every trainable bf16
  // or fp16 parameter (its "mixed precision" is the only half-precision mode), adapters too; so
  // does DeepSpeed's with bf16 or fp16 enabled (its ZeRO optimizer's fp32 partitions, or
  // BF16_Optimizer without ZeRO): the engine casts the model, the optimizer holds fp32.
  const std::string framework_and_sharding = to_lower(get("framework") + " " + get("sharding"));
  if (job.mode != JobMode::serve && job.precision == Precision::bf16_pure &&
      (names_megatron(to_lower(get("framework"))) ||
       framework_and_sharding.find("deepspeed") != std::string::npos)) {
    job.precision = Precision::mixed;
  }
  if (job.mode == JobMode::lora || job.mode == JobMode::qlora) {
    job.lora_dropout = lora_dropout_in(
        to_lower(get("lora_targets")) + " " + framework_and_notes,
        torchtune_before_v0_3(framework_and_notes, to_lower(get("framework")),
                              to_lower(get("source"))));
    job.kbit_upcast = (job.mode == JobMode::qlora || job.base_nf4 || job.base_dtype == Dtype::int8) &&
                      prepares_kbit_model(framework_and_notes);
  }
  if (job.mode != JobMode::serve) {
    job.preference = preference_in(to_lower(get("model_id")) + " " + framework_and_notes);
    if (job.preference == Preference::none) {
      job.rl = online_rl_in(to_lower(get("model_id") + " " + get("seq_len") + " " +
                                     get("micro_batch")) + " " + framework_and_notes,
                            row.usable_gib, job.seq_len);
      if (job.rl && sharding.rfind("fsdp", 0) == 0) {
        job.rl->zero3_gathers = false;  // FSDP gathers module by module
      }
    }
    // DeepSpeed's engine casts the reference it prepares to its half dtype, as the policy.
    if (holds_reference_model(job) &&
        framework_and_sharding.find("deepspeed") != std::string::npos &&
        job.precision != Precision::fp32) {
      job.reference_dtype = job.precision == Precision::fp16_pure ? Dtype::fp16 : Dtype::bf16;
    }
  }
  // A VLM's tower (validate_rows drops the reading for a model without one).
  if (job.mode == JobMode::full) {
    job.freeze_vision = vision_frozen_in(framework_and_sharding + " " + framework_and_notes);
  }
  // MTP layers trained beside the model: Megatron's --mtp-num-layers ("mtp_num_layers 1") at 1
  // or more (validate_rows drops the reading for a model without them).
  if (job.mode != JobMode::serve) {
    const std::optional<std::int64_t> mtp_layers = count_cell(
        number_after(framework_and_notes, "mtp_num_layers")
            .value_or(number_after(framework_and_notes, "mtp-num-layers").value_or("")));
    job.train_mtp = mtp_layers && *mtp_layers >= 1;
  }
  // PyTorch FSDP (job_sharding fsdp, not DeepSpeed's ZeRO-3): accumulation under no_sync keeps
  // unsharded gradients; Lightning Fabric wraps LitGPT's frozen base and LoRA weights in one
  // flat parameter per Block (use_orig_params=True), whose gradient covers the frozen share.
  const std::string text_cells =
      to_lower(get("micro_batch") + " " + get("seq_len") + " ") + framework_and_notes;
  if (job.mode != JobMode::serve) job.grad_accum = grad_accum_in(text_cells, job.gpus, job.batch);
  // A serving row run under autocast (Lightning's "bf16-mixed" / "16-mixed", "autocast").
  if (job.mode == JobMode::serve) {
    const std::string precision_text = to_lower(get("precision"));
    job.serve_autocast = precision_text.find("-mixed") != std::string::npos ||
                         precision_text.find("autocast") != std::string::npos;
  }
  if (sharding == "ddp") {
    // Data parallel through PyTorch DDP keeps its buckets as a copy of the gradients; FSDP's
    // NO_SHARD (Answer.AI's "ddp") and DeepSpeed's data parallel reduce without one.
    job.ddp_bucket_copy =
        framework_and_sharding.find("no_shard") == std::string::npos &&
        framework_and_sharding.find("deepspeed") == std::string::npos &&
        framework_and_sharding.find("gradient_as_bucket_view") == std::string::npos;
  }
  if (sharding == "fsdp") {
    job.fsdp = true;
    // FSDP's root unit stays gathered unless the embedding and head are units of their own.
    job.root_unit_gathered = !shards_embeddings_apart(framework_and_notes);
    job.accumulate_unsharded = accumulates_without_sync(framework_and_notes);
    job.frozen_in_flat_params =
        (job.mode == JobMode::lora || job.mode == JobMode::qlora) && names_lightning(framework_and_notes);
  }
  // torch.compile, as the notes say it ("compile", "compile=True"), not "no compile".
  job.compiled = compiled_in(framework_and_notes);
  // The loss implementation: job_loss, else what the framework and notes say it used.
  const std::string loss = get("job_loss");
  if (!loss.empty()) {
    const std::optional<LossImpl> value = parse_loss(loss);
    if (!value) return fmt::format("job_loss '{}' is not known", loss);
    job.loss = *value;
  } else {
    job.loss = loss_named_in(framework_and_notes, to_lower(get("framework")),
                             to_lower(get("source")));
  }
  // LitGPT holds a tied head as its own lm_head (convert_hf_checkpoint copies the embedding) and
  // Lightning Fabric's bitsandbytes plugin quantizes every Linear, the head included.
  job.separate_head = names_litgpt(framework_and_notes);
  job.quantized_head = names_lightning(framework_and_notes);
  job.eager_rms_norm = framework_and_notes.find("unsloth") == std::string::npos &&
                       framework_and_notes.find("liger") == std::string::npos &&
                       !names_megatron(framework_and_notes);
  // transformers' own models run its Python activations; LitGPT, torchtune and Megatron have
  // models of their own, Unsloth and Liger fused kernels.
  job.composed_activations = job.eager_rms_norm && !names_litgpt(framework_and_notes) &&
                             framework_and_notes.find("torchtune") == std::string::npos;
  job.foreach_step = foreach_step_in(optimizer_text, framework_and_notes,
                                     to_lower(get("framework")), to_lower(get("source")));
  // zero_grad(set_to_none=True) frees the gradients between steps on one GPU and under FSDP
  // (as trace's CLI defaults); DDP, DeepSpeed and Megatron keep their gradient buffers, and so
  // did zero_grad() before PyTorch 2.0 (March 2023), as a row's date says.
  job.gradients_freed = frees_gradients_by_default(job, sharding == "fsdp") &&
                        !names_megatron(framework_and_notes) &&
                        framework_and_notes.find("deepspeed") == std::string::npos &&
                        !dated_before_torch_2(framework_and_notes + " " + to_lower(get("source")));
  // Mixed precision as torch.autocast over fp32 weights, unless DeepSpeed, FSDP or Megatron
  // cast the model to bf16 (as trace's CLI defaults), or Unsloth or Liger patch the forward
  // with kernels of their own (not measured: trace assumes no fp32 stream there).
  job.autocast_fp32_weights =
      autocasts_fp32_weights_by_default(job) && !names_megatron(framework_and_notes) &&
      framework_and_notes.find("deepspeed") == std::string::npos && job.eager_rms_norm;
  job.nf4_quantized_in_one_pass =
      (job.mode == JobMode::qlora || job.base_nf4) &&
      torchao_quantizes_in_one_pass(to_lower(get("framework") + " " + get("notes") + " " +
                                             get("quantization")),
                                    to_lower(get("framework")), to_lower(get("source")));
  return "";
}

// A yes / no cell (job_oom, job_optimizer_in_backward) as measured.md writes it (0 / 1, also
// y / n), lowercased; empty counts as readable (the column's default).
bool reads_as_yes_or_no(const std::string& lowered) {
  return lowered.empty() || lowered == "0" || lowered == "1" || lowered == "y" || lowered == "n";
}

// A job_* cell that holds something other than what its column holds (measured.md's
// definitions): the row is not read, rather than read with the column's default as if the cell
// were empty. Returns the message naming the cell, or "".
std::string malformed_job_cell(const Cells& get) {
  for (const char* name :
       {"job_seq_len", "job_batch", "job_gpus", "job_tp", "job_pp", "job_ep", "job_lora_rank"}) {
    const std::string value = get(name);
    if (value.empty()) continue;
    if (const std::optional<std::int64_t> count = count_cell(value); !count || *count < 1) {
      return fmt::format("{} '{}' is not a whole number of at least 1", name, value);
    }
  }
  for (const char* name : {"job_usable_gib", "job_measured_gib"}) {
    const std::string value = get(name);
    if (value.empty()) continue;
    if (const std::optional<double> gib = number_cell(value); !gib || *gib <= 0) {
      return fmt::format("{} '{}' is not a positive number of GiB", name, value);
    }
  }
  for (const char* name : {"job_oom", "job_optimizer_in_backward"}) {
    if (!reads_as_yes_or_no(to_lower(get(name)))) {
      return fmt::format("{} '{}' is not 0 or 1", name, get(name));
    }
  }
  return "";
}

// Reads the job_* cells into a Job; returns a message naming the cell it could not read.
std::string read_job(const std::map<std::string, std::string>& cell, MeasuredRow& row) {
  const Cells get{cell};
  if (std::string error = malformed_job_cell(get); !error.empty()) return error;
  std::string sharding;
  if (std::string error = read_job_cells(get, row, sharding); !error.empty()) return error;
  return read_text_cells(get, row, sharding);
}

// The counter a measure_method cell names.
MemoryCounter counter_named_in(const std::string& measure_method) {
  const std::string text = to_lower(measure_method);
  if (text.find("pynvml") != std::string::npos || text.find("nvidia-smi") != std::string::npos) {
    return MemoryCounter::process;
  }
  // "does not say active vs reserved": unknown, read as the tightest counter
  if (text.find("reserved") != std::string::npos && text.find("does not say") == std::string::npos) {
    return MemoryCounter::reserved;
  }
  return MemoryCounter::allocated;
}

// vLLM logs "Loading model weights took X GB" with X in GiB: its model runner divides the bytes
// by 2^30 (vLLM issue #14979). A measure derived by subtracting that figure read as decimal GB
// ("DERIVED: peak_torch_memory A GiB minus weights X GB (Y GiB)") subtracted too little; the
// row's own two logged values give A - X GiB.
void rederive_vllm_weights_unit(std::map<std::string, std::string>& cell, MeasuredRow& row) {
  const std::string method = to_lower(cell["measure_method"]);
  if ((to_lower(cell["framework"]) + " " + method).find("vllm") == std::string::npos) return;
  static const std::regex derived(R"(derived:[a-z_ ]*?([0-9]+(?:\.[0-9]+)?)\s*gib\s+minus\s+)"
                                  R"((?:the\s+)?(?:model\s+)?weights?\s+(?:of\s+)?)"
                                  R"(([0-9]+(?:\.[0-9]+)?)\s*gb\b)");
  std::smatch match;
  if (!std::regex_search(method, match, derived)) return;
  const std::optional<double> peak = number_cell(match[1].str());
  const std::optional<double> weights = number_cell(match[2].str());
  if (!peak || !weights || *peak <= *weights) return;
  row.measured_gib = *peak - *weights;
  row.measured_rederived = fmt::format(
      "measured re-derived as {} - {} GiB = {:.2f} GiB (vLLM logs its weights in GiB as \"GB\")",
      match[1].str(), match[2].str(), *row.measured_gib);
}

}  // namespace

MeasuredRow read_measured_row(std::map<std::string, std::string>& cell) {
  MeasuredRow row;
  row.row_id = cell["row_id"];
  row.task = to_lower(cell["job_task"]);
  row.model_id = cell["model_id"];
  row.config_file = cell["config_file"];
  row.usable_gib = number_cell(cell["job_usable_gib"]).value_or(0);
  row.boundary = to_lower(cell["unit_basis"]) == "nominal_card_gb";
  if (row.usable_gib <= 0 && !cell["job_gpu"].empty()) {
    // The card the row names, as trace's GPU table has it (what a process can allocate there).
    if (const GpuSpec* gpu = find_gpu(builtin_gpu_catalog(), cell["job_gpu"])) {
      row.usable_gib = static_cast<double>(gpu->memory_bytes_usable) / k_gib_f;
    }
  }
  if (row.usable_gib <= 0) {
    // "VRAM tier" rows: the nominal size in GB, as bytes.
    row.usable_gib = number_cell(cell["card_mem_gb"]).value_or(0) * 1e9 / k_gib_f;
  }
  row.measured_gib = number_cell(cell["job_measured_gib"]);
  rederive_vllm_weights_unit(cell, row);
  row.oom = cell["job_oom"] == "1" || to_lower(cell["job_oom"]) == "y";
  row.oom_known = reads_as_yes_or_no(to_lower(cell["job_oom"]));
  row.kv_cache_gib = number_cell(cell["kv_cache_mem_gib"]);
  row.kv_tokens = count_cell(cell["kv_cache_tokens"]);
  row.gpu_memory_utilization = number_cell(cell["gpu_mem_util"]).value_or(0.9);
  // vLLM's profile run: chunked prefill feeds max_num_batched_tokens (as the row states it,
  // else the V1 engine's default: V1, from 0.8, always chunks); without chunking (V0's
  // default, --no-enable-chunked-prefill, or a setting given only as a bound, "> 64000") it
  // covers at least max_model_len.
  const std::string engine_text = to_lower(cell["seq_len"] + " " + cell["micro_batch"] + " " +
                                           cell["framework"] + " " + cell["notes"]);
  row.engine_batched_tokens =
      count_cell(number_after(engine_text, "max_num_batched_tokens").value_or(""));
  row.engine_max_num_seqs = count_cell(number_after(engine_text, "max_num_seqs")
                                           .value_or(number_after(engine_text, "max-num-seqs").value_or("")));
  static const std::regex batched_bound(R"(max_num_batched_tokens\s*[<>])");
  const std::string framework_text = to_lower(cell["framework"]);
  for (const char* engine : {"vllm", "sglang", "text-generation-inference", "tgi", "tensorrt",
                             "lmdeploy"}) {
    row.serving_engine = row.serving_engine || framework_text.find(engine) != std::string::npos;
  }
  row.engine_eager = engine_text.find("enforce_eager") != std::string::npos ||
                     engine_text.find("enforce-eager") != std::string::npos ||
                     to_lower(cell["attention"]).find("enforce_eager") != std::string::npos;
  // Speculative decoding with the checkpoint's MTP layers ("MTP n=3", "num_speculative_tokens"):
  // the engine loads them beside the model ("no MTP" says it does not).
  static const std::regex mtp_word(R"((^|[^a-z])mtp([^a-z]|$))");
  const std::string mtp_text = to_lower(cell["framework"] + " " + cell["notes"]);
  row.engine_mtp = mtp_text.find("no mtp") == std::string::npos &&
                   (std::regex_search(mtp_text, mtp_word) ||
                    mtp_text.find("speculative") != std::string::npos);
  bool v1 = framework_text.find("vllm v1") != std::string::npos;
  static const std::regex vllm_version = version_pattern("vllm");
  // A version among the framework's words when none follows the name ("vLLM OpenAI server
  // (2026, versions >= v0.17 tried)"), else the row's date: V1 is the default from 0.8 (March
  // 2025). A row naming neither is read as V0, the older engine.
  static const std::regex any_version(R"(\bv(\d{1,3})\.(\d{1,3})(?:\.(\d{1,4}))?)");
  std::optional<Version> vllm = version_after(framework_text, vllm_version);
  if (!vllm && framework_text.find("vllm") != std::string::npos) {
    vllm = version_after(framework_text, any_version);
  }
  if (vllm) {
    v1 = v1 || *vllm >= Version{0, 8};
    // vLLM caches MLA's latent from 0.7.1 (Feb 2025); before, K and V per head, V padded.
    if (*vllm < Version{0, 7, 1}) row.engine_mla_cache = MlaCache::per_head_padded;
    // 0.3.0 (January 2024) brought the fused MoE for Mixtral (PR #2542) and AWQ's dequantize +
    // matmul for 256 tokens and more (PR #2566).
    row.engine_vllm_before_0_3 = *vllm < Version{0, 3};
    // 0.17 (March 2026) masks top-k/top-p with Triton kernels instead of sorting (PR #33538).
    row.engine_sort_sampler = *vllm < Version{0, 17};
    // 0.21 profiles the CUDA graphs before it sizes the KV pool.
    row.engine_graphs_in_pool_budget = *vllm >= Version{0, 21};
  } else if (framework_text.find("vllm") != std::string::npos) {
    // ("V0" named as the engine is V0 whatever the date)
    static const std::regex v0_engine(R"(\bv0(?![.\d]))");
    const std::optional<std::pair<int, int>> date =
        year_month_in(framework_text + " " + to_lower(cell["source_locator"]));
    v1 = v1 ||
         (date && *date >= std::pair{2025, 4} && !std::regex_search(framework_text, v0_engine));
    // a month after 0.17's release
    row.engine_sort_sampler = !(date && *date >= std::pair{2026, 4});
    row.engine_graphs_in_pool_budget = date && *date >= std::pair{2026, 6};
  }
  row.engine_v1 = v1;
  // V1's default max_num_seqs depends on the card (EngineArgs.get_batch_defaults): 1,024 on one
  // of 70 GiB or more that is not an A100 (H100, H200, MI300X), else 256.
  if (v1 && !row.engine_max_num_seqs) {
    const std::string card = to_lower(cell["job_gpu"] + " " + cell["gpu"]);
    const bool large = row.usable_gib >= 70 && card.find("a100") == std::string::npos;
    row.engine_max_num_seqs = large ? 1024 : 256;
  }
  if (engine_text.find("vllm_mla_disable=1") != std::string::npos) {
    row.engine_mla_cache = MlaCache::per_head_padded;
  }
  row.engine_chunked_prefill =
      engine_text.find("no-enable-chunked-prefill") == std::string::npos &&
      engine_text.find("chunked prefill off") == std::string::npos &&
      !(!row.engine_batched_tokens && std::regex_search(engine_text, batched_bound)) &&
      (row.engine_batched_tokens || v1);
  const std::string counter = to_lower(cell["job_counter"]);
  if (counter == "allocated" || counter == "active") {
    row.counter = MemoryCounter::allocated;
  } else if (counter == "reserved") {
    row.counter = MemoryCounter::reserved;
  } else if (counter == "process" || counter == "nvidia-smi" || counter == "nvml") {
    row.counter = MemoryCounter::process;
  } else {
    row.counter = counter_named_in(cell["measure_method"]);
  }
  // A context size the row measured: "(1343 MiB context)" or "context (~1343 MiB)".
  static const std::regex context_after(R"((\d+)\s*mib\)?\s*(?:of\s+)?(?:cuda\s+)?context)");
  static const std::regex context_before(R"(context\s*\(~?\s*(\d+)\s*mib)");
  const std::string context_text = to_lower(cell["measure_method"] + " " + cell["notes"]);
  std::smatch match;
  if (std::regex_search(context_text, match, context_after) ||
      std::regex_search(context_text, match, context_before)) {
    if (const std::optional<std::int64_t> mib = count_cell(match[1].str()); mib && *mib < (1 << 20)) {
      row.measured_context_bytes = *mib * k_mib;
    }
  }
  row.job_error = read_job(cell, row);
  return row;
}

}  // namespace trace
