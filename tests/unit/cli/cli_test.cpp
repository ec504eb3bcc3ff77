// The command line in-process: the JSON contract "trace.plan/1" (docs/json.md), the table and
// Markdown sections, the graph, help and version, `trace gpus`, `trace models`, `trace check`
// exit codes and --gpu-table. Models come from the bundled catalog, with the HF cache pointed at
// an empty folder so the real ~/.cache is never read.
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "catch.hpp"
#include "cli_runner.hpp"
#include "temp_dir.hpp"
#include "test_data.hpp"
#include "trace/render/render.hpp"
#include "trace/version.hpp"

namespace {

using trace::test::CliResult;
using trace::test::TempDir;

constexpr const char* k_llama = "meta-llama/Llama-3.1-8B";
constexpr std::int64_t k_llama_total = 8'030'261'248;  // published (docs/catalog.md)

bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

// Runs trace with an empty HF cache; the folder lives as long as the call.
CliResult run(const std::vector<std::string>& args) {
  return trace::test::run_cli_offline(args);
}

nlohmann::json run_json(const std::vector<std::string>& args) {
  const CliResult result = run(args);
  INFO("stderr: " << result.err);
  REQUIRE(result.exit_code == trace::cli::k_exit_ok);
  CHECK(result.err.empty());
  return nlohmann::json::parse(result.out);
}

bool has_line(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0 || contains(text, "\n" + prefix);
}

std::vector<std::string> node_names(const nlohmann::json& plan) {
  std::vector<std::string> names;
  for (const nlohmann::json& node : plan.at("graph").at("nodes")) {
    names.push_back(node.at("name").get<std::string>());
  }
  return names;
}

bool has_name(const std::vector<std::string>& names, const std::string& name) {
  for (const std::string& each : names) {
    if (each == name) return true;
  }
  return false;
}

// A one-card GPU table in schema trace.gpus/1.
std::string one_card_table(std::int64_t usable_bytes) {
  const nlohmann::json table = {{"schema", "trace.gpus/1"},
                                {"as_of", "2026-01-01"},
                                {"gpus",
                                 {{{"id", "Test-Card"},
                                   {"aliases", {"tc"}},
                                   {"name", "Test Card 1TB"},
                                   {"vendor", "Test"},
                                   {"memory_bytes_marketed", usable_bytes + (1LL << 30)},
                                   {"memory_bytes_usable", usable_bytes},
                                   {"memory_bandwidth_bytes_per_s", 1'000'000'000'000LL},
                                   {"peak_tflops", {{"bf16", 100.0}}},
                                   {"source", "unit test"},
                                   {"as_of", "2026-01-01"}}}}};
  return table.dump(2);
}

}  // namespace

TEST_CASE("option --json follows the trace.plan/1 contract", "[cli][json]") {
  const nlohmann::json plan = run_json({k_llama, "--json"});
  CHECK(plan.at("schema") == "trace.plan/1");
  CHECK(plan.at("model").at("id") == k_llama);
  CHECK(plan.at("model").at("model_type") == "llama");

  const nlohmann::json& parameters = plan.at("parameters");
  for (const char* key : {"total", "active", "mtp"}) {
    INFO(key);
    CHECK(parameters.at(key).is_number_integer());
  }
  CHECK(parameters.at("total") == k_llama_total);
  CHECK(parameters.at("active") == k_llama_total);
  CHECK(parameters.at("mtp") == 0);
  std::int64_t component_sum = 0;
  REQUIRE(parameters.at("by_component").is_object());
  CHECK_FALSE(parameters.at("by_component").empty());
  for (const auto& [name, count] : parameters.at("by_component").items()) {
    INFO(name);
    REQUIRE(count.is_number_integer());
    CHECK(count.get<std::int64_t>() >= 0);
    component_sum += count.get<std::int64_t>();
  }
  CHECK(component_sum == k_llama_total);

  for (const char* mode : {"full_finetune", "lora", "serve"}) {
    INFO(mode);
    const nlohmann::json& memory = plan.at("memory").at(mode);
    REQUIRE(memory.at("bytes").is_number_integer());
    std::int64_t sum = 0;
    for (const char* term : {"weights", "gradients", "optimizer", "activations", "kv_cache",
                             "ssm_state", "overhead"}) {
      INFO(term);
      const nlohmann::json& value = memory.at("breakdown").at(term);
      REQUIRE(value.is_number_integer());
      CHECK(value.get<std::int64_t>() >= 0);
      sum += value.get<std::int64_t>();
    }
    CHECK(sum == memory.at("bytes").get<std::int64_t>());
    CHECK(memory.at("bytes").get<std::int64_t>() > 0);
  }
  // Serving holds no gradients or optimizer state; full fine-tuning does.
  CHECK(plan["memory"]["serve"]["breakdown"]["gradients"] == 0);
  CHECK(plan["memory"]["serve"]["breakdown"]["optimizer"] == 0);
  CHECK(plan["memory"]["full_finetune"]["breakdown"]["optimizer"].get<std::int64_t>() > 0);

  REQUIRE(plan.at("cards").is_array());
  REQUIRE_FALSE(plan.at("cards").empty());
  bool saw_h100 = false;
  for (const nlohmann::json& card : plan.at("cards")) {
    const std::string id = card.at("id").get<std::string>();
    INFO(id);
    saw_h100 = saw_h100 || id == "h100-80gb";
    REQUIRE(card.at("memory_bytes").is_number_integer());
    CHECK(card.at("memory_bytes").get<std::int64_t>() > 0);
    for (const char* mode : {"full_finetune", "lora", "serve"}) {
      INFO(mode);
      const nlohmann::json& fit = card.at("modes").at(mode);
      REQUIRE(fit.at("fits").is_boolean());
      REQUIRE(fit.at("max_batch").is_number_integer());
      const nlohmann::json& min_cards = fit.at("min_cards");
      CHECK((min_cards.is_null() || min_cards.is_number_integer()));
      // fits means batch 1 on one card: then max_batch >= 1 and one card is the minimum.
      const bool fits = fit.at("fits").get<bool>();
      CHECK(fits == (fit.at("max_batch").get<std::int64_t>() >= 1));
      if (fits) {
        CHECK(min_cards == 1);
      } else {
        CHECK((min_cards.is_null() || min_cards.get<std::int64_t>() > 1));
      }
    }
  }
  CHECK(saw_h100);
}

TEST_CASE("option --json and --format json print the same object, deterministically", "[cli][json]") {
  const CliResult flag = run({k_llama, "--json"});
  const CliResult format = run({k_llama, "--format", "json"});
  REQUIRE(flag.exit_code == 0);
  CHECK(flag.out == format.out);
  CHECK(run({k_llama, "--json"}).out == flag.out);
}

TEST_CASE("workload flags reach the plan", "[cli][json]") {
  const nlohmann::json base = run_json({k_llama, "--json"});
  const nlohmann::json longer = run_json({k_llama, "--json", "--context", "8192", "--seq-len",
                                          "4096", "--batch", "2", "--lora-rank", "64"});
  CHECK(longer["workload"]["context"] == 8192);
  CHECK(longer["workload"]["seq_len"] == 4096);
  CHECK(longer["workload"]["batch"] == 2);
  CHECK(longer["workload"]["lora_rank"] == 64);
  // The KV cache is linear in context; parameters do not depend on the workload.
  CHECK(longer["memory"]["serve"]["breakdown"]["kv_cache"].get<std::int64_t>() ==
        2 * base["memory"]["serve"]["breakdown"]["kv_cache"].get<std::int64_t>());
  CHECK(longer["parameters"]["total"] == base["parameters"]["total"]);
  CHECK(longer["memory"]["lora_trainable_params"].get<std::int64_t>() ==
        4 * base["memory"]["lora_trainable_params"].get<std::int64_t>());
  CHECK(longer["memory"]["full_finetune"]["bytes"].get<std::int64_t>() >
        base["memory"]["full_finetune"]["bytes"].get<std::int64_t>());
}

TEST_CASE("option --lora-targets reads PEFT's module lists", "[cli][json]") {
  const auto peak = [](const std::string& targets) {
    return run_json({k_llama, "--json", "--mode", "lora", "--lora-targets",
                     targets})["estimate"]["peak_bytes"]
        .get<std::int64_t>();
  };
  CHECK(peak("q_proj,v_proj") == peak("qv"));
  CHECK(peak("q_proj,k_proj,v_proj,o_proj") == peak("attention"));
  CHECK(peak("all-linear") == peak("all"));
  const CliResult mlp_only =
      run({k_llama, "--mode", "lora", "--lora-targets", "gate_proj,up_proj,down_proj"});
  CHECK(mlp_only.exit_code == trace::cli::k_exit_bad_input);
  CHECK(mlp_only.err.find("--lora-targets 'gate_proj,up_proj,down_proj' is not known") !=
        std::string::npos);
}

TEST_CASE("gradients are freed between steps unless kept", "[cli][json]") {
  // Llama-3.1-8B, mixed precision, 16 tokens on one GPU: zero_grad(set_to_none=True) frees the
  // 8,030,261,248 x 4 bytes of fp32 gradients before the next forward, so they count only by
  // what they add above its activations, logits and autocast's bf16 weight copies
  // (8,030,261,248 x 2 bytes, held through the forward, gone when backward ends);
  // --keep-grads holds them all, as DDP does; DDP's reducer also keeps its all-reduce buckets,
  // a second fp32 copy, unless --grad-as-bucket-view (gradient_as_bucket_view=True).
  const std::vector<std::string> args = {
      "meta-llama/Llama-3.1-8B", "--json", "--mode", "full", "--seq-len", "16", "--batch", "1"};
  const nlohmann::json freed = run_json(args)["estimate"];
  const std::int64_t forward = freed["breakdown"]["activations"].get<std::int64_t>() +
                               freed["breakdown"]["logits"].get<std::int64_t>();
  CHECK(freed["breakdown"]["gradients"] == 8'030'261'248LL * (4 - 2) - forward);
  CHECK(freed["gradients_at_step"] == 8'030'261'248LL * 4);
  CHECK(freed["read_as"].get<std::string>().find("grads freed between steps") != std::string::npos);
  std::vector<std::string> kept = args;
  kept.push_back("--keep-grads");
  CHECK(run_json(kept)["estimate"]["breakdown"]["gradients"] == 8'030'261'248LL * 4);
  std::vector<std::string> ddp = args;
  for (const char* arg : {"--gpus", "2", "--strategy", "ddp"}) ddp.push_back(arg);
  CHECK(run_json(ddp)["estimate"]["breakdown"]["gradients"] == 8'030'261'248LL * 4 * 2);
  ddp.emplace_back("--grad-as-bucket-view");
  const nlohmann::json view = run_json(ddp)["estimate"];
  CHECK(view["breakdown"]["gradients"] == 8'030'261'248LL * 4);
  CHECK(view["read_as"].get<std::string>().find("2 GPUs ddp no bucket copy") != std::string::npos);
  // it says how DDP holds gradients: under another strategy it is bad input
  const CliResult refused =
      run({"meta-llama/Llama-3.1-8B", "--mode", "full", "--gpus", "2", "--grad-as-bucket-view"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--grad-as-bucket-view needs --strategy ddp") != std::string::npos);
}

TEST_CASE("the card table's largest batch is the job estimator's", "[cli][json]") {
  // Qwen2.5-7B in pure bf16 at 512 tokens on an H200: at batch 1 the step's phase (gradients
  // and the embedding's fp32 backward buffer) sets the peak, so the peak grows with the batch
  // only once the forward outgrows it. A straight line through batches 1 and 2 would call the
  // card unbounded; the table searches as --mode does.
  const nlohmann::json out = run_json({"Qwen/Qwen2.5-7B", "--json", "--mode", "full", "--precision",
                                       "bf16", "--seq-len", "512", "--gpu", "h200"});
  const std::int64_t searched = out["estimate"]["max_batch"].get<std::int64_t>();
  CHECK(searched > 2);
  CHECK(searched < 1'000);
  CHECK(out["cards"][0]["modes"]["full_finetune"]["max_batch"] == searched);
}

TEST_CASE("framework switches reach the job: fused norms, fused optimizer step", "[cli][json]") {
  // Llama-3.1-8B full fine-tune under mixed precision, 16 tokens on one GPU. Eager RMSNorms
  // (the default) keep an fp32 copy of their input and, the weights training, the normalised
  // input in bf16: 4 bytes more than the input's 2 on (2 x 32 + 1) x 4,096 = 266,240 values per
  // token.
  const std::vector<std::string> args = {"meta-llama/Llama-3.1-8B", "--json", "--mode", "full",
                                         "--seq-len", "16", "--batch", "1"};
  const nlohmann::json eager = run_json(args)["estimate"]["breakdown"];
  std::vector<std::string> fused_norms = args;
  fused_norms.push_back("--fused-norms");
  CHECK(eager["activations"].get<std::int64_t>() -
            run_json(fused_norms)["estimate"]["breakdown"]["activations"].get<std::int64_t>() ==
        266'240LL * 4 * 16);
  // The default step is fused (PyTorch 2.11's default AdamW was measured so): two fp32 moments
  // and no temporary; --fused-optimizer says the same. The foreach step's temporary (one fp32
  // moment, 4 x 8,030,261,248 bytes) outweighs what the forward held above the step: the 16
  // tokens' activations and logits, and autocast's bf16 weight copies (2 x 8,030,261,248).
  std::vector<std::string> fused_step = args;
  fused_step.push_back("--fused-optimizer");
  const nlohmann::json fused = run_json(fused_step)["estimate"]["breakdown"];
  CHECK(eager["optimizer"] == 8'030'261'248LL * 8);
  CHECK(fused["optimizer"] == eager["optimizer"]);
  std::vector<std::string> foreach_step = args;
  foreach_step.push_back("--foreach-step");
  const nlohmann::json foreach = run_json(foreach_step)["estimate"]["breakdown"];
  CHECK(foreach["optimizer"].get<std::int64_t>() - eager["optimizer"].get<std::int64_t>() ==
        8'030'261'248LL * (4 - 2) - eager["activations"].get<std::int64_t>() -
            eager["logits"].get<std::int64_t>());
  // Naming both steps is bad input, not a guess.
  std::vector<std::string> both = foreach_step;
  both.push_back("--fused-optimizer");
  CHECK(trace::test::run_cli_offline(both).exit_code == 2);
}

TEST_CASE("option --allocated-peak: the recomputed layer apart from the logits", "[cli][json]") {
  // Llama-3.1-8B LoRA at 4,096 tokens, checkpointed: the logits (128,256 x 4,096 x 12 bytes)
  // outweigh the recomputed layer, which the allocated peak then leaves out of the activations;
  // the held peak (the default, and the verdict's) keeps it. Without checkpointing, one peak.
  std::vector<std::string> args = {
      k_llama, "--json", "--mode", "lora", "--seq-len", "4096", "--grad-checkpointing", "full"};
  const nlohmann::json held = run_json(args)["estimate"];
  args.push_back("--allocated-peak");
  const nlohmann::json allocated = run_json(args)["estimate"];
  CHECK(allocated["breakdown"]["logits"] == held["breakdown"]["logits"]);
  CHECK(held["breakdown"]["logits"] == 128'256LL * 4'096 * 12);
  CHECK(allocated["peak_bytes"].get<std::int64_t>() < held["peak_bytes"].get<std::int64_t>());
  CHECK(contains(allocated["read_as"].get<std::string>(), "checkpointing full, allocated peak"));
  args[7] = "none";
  const std::int64_t none_allocated = run_json(args)["estimate"]["peak_bytes"];
  args.pop_back();
  CHECK(run_json(args)["estimate"]["peak_bytes"] == none_allocated);
}

TEST_CASE("the card table's tensor-parallel serving plan is the serve job's per-GPU peak",
          "[cli][json]") {
  // Llama-3.1-70B, DeepSeek-V3 (MLA, MoE) and Nemotron-3-Super at 1M tokens (Mamba-2 hybrid)
  // do not fit one H100. For one request (the table's question), the table's search (ModeMemory
  // split per card count) and the job estimator at that tensor-parallel size must give the same
  // bytes per GPU (weights / n, KV, SSM state and the forward pass per rank, the sampling step,
  // the TP buffers, the CUDA context and graphs), or one of them has drifted.
  for (const std::vector<std::string>& model : std::vector<std::vector<std::string>>{
           {"meta-llama/Llama-3.1-70B"},
           {"deepseek-ai/DeepSeek-V3", "--context", "32768"},
           {"nvidia/NVIDIA-Nemotron-3-Super-120B-A12B-NVFP4", "--context", "1M"}}) {
    std::vector<std::string> args = model;
    args.insert(args.end(), {"--json", "--gpu", "h100-80gb"});
    const nlohmann::json serve = run_json(args)["cards"][0]["modes"]["serve"];
    REQUIRE(serve["strategy"] == "tensor parallel");
    const std::int64_t cards = serve["min_cards"].get<std::int64_t>();
    REQUIRE(cards > 1);
    const std::string n = std::to_string(cards);
    args.insert(args.end(), {"--mode", "serve", "--gpus", n, "--tp", n});
    CHECK(run_json(args)["estimate"]["peak_bytes"] == serve["bytes_per_card"]);
  }
}

TEST_CASE("option --cuda-graph-mib sizes the engine's CUDA graphs in every serving figure",
          "[cli][json]") {
  const std::vector<std::string> args = {k_llama, "--json", "--mode", "serve"};
  std::vector<std::string> eager = args;
  eager.insert(eager.end(), {"--cuda-graph-mib", "0"});
  const nlohmann::json with_graphs = run_json(args);
  const nlohmann::json without = run_json(eager);
  // 512 MiB by default, in the job's peak and in the plan's serving mode alike.
  CHECK(with_graphs["estimate"]["peak_bytes"].get<std::int64_t>() -
            without["estimate"]["peak_bytes"].get<std::int64_t>() ==
        512LL << 20);
  CHECK(with_graphs["memory"]["serve"]["breakdown"]["overhead"] == (512LL << 20) + (512LL << 20));
  CHECK(without["memory"]["serve"]["breakdown"]["overhead"] == 512LL << 20);
  // Training holds no graphs.
  std::vector<std::string> lora = {k_llama, "--json", "--mode", "lora"};
  const std::int64_t lora_peak = run_json(lora)["estimate"]["peak_bytes"].get<std::int64_t>();
  lora.insert(lora.end(), {"--cuda-graph-mib", "0"});
  CHECK(run_json(lora)["estimate"]["peak_bytes"] == lora_peak);
}

TEST_CASE("serving over --gpus with --tp: KV per rank, MLA latent or per head", "[cli][json][kv]") {
  // DeepSeek-V3: 61 MLA layers, 128 heads, K 128 + 64 = 192 wide, latent 512 + 64 = 576.
  // The latent is whole on each of the 8 ranks: 61 x 576 x 2 bytes x 1,000 tokens. Every card
  // of the table is planned too (their own card counts, not --tp 8).
  const std::vector<std::string> args = {"deepseek-ai/DeepSeek-V3", "--json", "--mode", "serve",
                                         "--context", "1000", "--gpus", "8", "--tp", "8"};
  const nlohmann::json latent = run_json(args);
  CHECK(latent["estimate"]["breakdown"]["kv_cache"] == 61LL * 576 * 2 * 1000);
  // vLLM before 0.7.1: 16 heads per rank x (K 192 + V padded to 192).
  std::vector<std::string> padded = args;
  padded.insert(padded.end(), {"--mla-cache", "per-head-padded"});
  CHECK(run_json(padded)["estimate"]["breakdown"]["kv_cache"] == 61LL * 16 * 2 * 192 * 2 * 1000);
  std::vector<std::string> bad = args;
  bad.insert(bad.end(), {"--mla-cache", "compressed"});
  CHECK(run(bad).exit_code == trace::cli::k_exit_bad_input);
}

TEST_CASE("option --ep N splits a training job's routed experts", "[cli][json]") {
  // Mixtral-8x7B: 46,702,792,704 parameters, of which the routed experts are 32 layers x 8 x
  // 3 x 4,096 x 14,336 = 45,097,156,608. Pure bf16 over 2 GPUs with EP 2 (ZeRO-1 keeps the
  // weights whole): the dense 1,605,636,096 at 2 bytes + half the experts at 2 bytes.
  const std::vector<std::string> args = {"mistralai/Mixtral-8x7B-v0.1", "--json", "--mode", "full",
                                         "--precision", "bf16", "--gpus", "2", "--strategy", "zero1"};
  const std::int64_t whole = run_json(args)["estimate"]["breakdown"]["weights"].get<std::int64_t>();
  CHECK(whole == 46'702'792'704LL * 2);
  std::vector<std::string> with_ep = args;
  with_ep.insert(with_ep.end(), {"--ep", "2"});
  const std::int64_t split = run_json(with_ep)["estimate"]["breakdown"]["weights"].get<std::int64_t>();
  CHECK(std::llabs(split - (1'605'636'096LL * 2 + 45'097'156'608LL)) <= 1);  // double rounding
  with_ep.back() = "two";
  CHECK(run(with_ep).exit_code == trace::cli::k_exit_bad_input);
}

TEST_CASE("option --pp-split: stages by layer count or by memory", "[cli][json]") {
  // Llama-3.1-8B served over 2 pipeline stages, 16 layers of 218,112,000 each. By count (vLLM):
  // the first stage adds the embedding and final norm (525,336,576 + 4,096), the last the head
  // (525,336,576): the first, 4,015,132,672 parameters, 8,030,265,344 bytes in bf16. By memory
  // (Accelerate's device_map): half of 8,030,261,248 x 2 bytes.
  std::vector<std::string> args = {k_llama, "--json", "--mode", "serve",
                                    "--gpus", "2", "--pp", "2"};
  const auto weights = [](const std::vector<std::string>& a) {
    return run_json(a)["estimate"]["breakdown"]["weights"].get<std::int64_t>();
  };
  CHECK(std::llabs(weights(args) - 8'030'265'344LL) <= 1);
  args.insert(args.end(), {"--pp-split", "memory"});
  CHECK(weights(args) == 8'030'261'248LL);
  CHECK(run_json(args)["estimate"]["read_as"] == "serve 4096 tokens x 1, 2 GPUs pp2 by memory");
  args.back() = "layers";
  CHECK(run(args).exit_code == trace::cli::k_exit_bad_input);
}

TEST_CASE("option --strategy fsdp keeps FSDP's root unit gathered / zero3 does not",
          "[cli][json]") {
  // Llama-3.1-8B under CPU offload, where the GPU holds only what is gathered, in bf16. A layer:
  // q, o 2 x 4,096^2 + k, v 2 x 4,096 x 1,024 + MLP 3 x 4,096 x 14,336 + 2 norms of 4,096 =
  // 218,112,000. The vocabulary matrix: 128,256 x 4,096 = 525,336,576; the root unit: embedding
  // + head + final norm = 1,050,677,248.
  std::vector<std::string> args = {k_llama, "--json", "--mode", "full", "--gpus", "4",
                                    "--cpu-offload", "--strategy", "zero3"};
  const auto weights = [](const std::vector<std::string>& a) {
    return run_json(a)["estimate"]["breakdown"]["weights"].get<std::int64_t>();
  };
  // DeepSpeed: a layer and, for the loss, the head beside it
  CHECK(weights(args) == (218'112'000LL + 525'336'576LL) * 2);
  // PyTorch FSDP: the root held through backward, beside two layers
  args.back() = "fsdp";
  CHECK(weights(args) == 1'050'677'248LL * 2 + 2 * 218'112'000LL * 2);
  // the plan says how it read the job, in JSON and on the job line
  const std::string read_as =
      "full, 2048 x 1 tokens, AdamW, bf16 mixed, grads freed between steps, 4 GPUs fsdp, cpu "
      "offload";
  CHECK(run_json(args)["estimate"]["read_as"] == read_as);
  std::vector<std::string> table = args;
  std::erase(table, std::string("--json"));
  CHECK(run(table).out.find("Job (" + read_as + "): ") != std::string::npos);
  // one plain GPU is named as well, in JSON and on the job line alike (the defaults: LoRA r16
  // on every Linear, 2048 x 1 tokens, AdamW under mixed precision, the gradients freed between
  // steps as zero_grad(set_to_none=True) does on one GPU and under FSDP)
  const std::string one_gpu =
      "lora r16 all linear, 2048 x 1 tokens, AdamW, bf16 mixed, grads freed between steps, 1 GPU";
  CHECK(run_json({k_llama, "--json", "--mode", "lora"})["estimate"]["read_as"] == one_gpu);
  CHECK(run({k_llama, "--mode", "lora"}).out.find("Job (" + one_gpu + "): ") != std::string::npos);
  // with the embedding and head wrapped apart (torchtune's custom_sharded_layers), as zero3
  args.emplace_back("--shard-embeddings");
  CHECK(weights(args) == (218'112'000LL + 525'336'576LL) * 2);
  // the card table's and the training run's sharded searches shard as the job asks
  const nlohmann::json plan =
      run_json({k_llama, "--json", "--mode", "full", "--strategy", "fsdp", "--gpu", "l4"});
  CHECK(plan["cards"][0]["modes"]["full_finetune"]["strategy"] == "FSDP");
  CHECK(plan["training"]["runs"][0]["strategy"] == "FSDP");
  const nlohmann::json deepspeed = run_json({k_llama, "--json", "--mode", "full", "--gpu", "l4"});
  CHECK(deepspeed["cards"][0]["modes"]["full_finetune"]["strategy"] == "ZeRO-3");
  // FSDP's gathered root does not shrink with the card count: more L4s than under ZeRO-3
  CHECK(plan["training"]["runs"][0]["gpus"].get<int>() >
        deepspeed["training"]["runs"][0]["gpus"].get<int>());
  // the search spreads the one-card job as `--strategy zero3` reads it (the model cast to bf16,
  // DeepSpeed's gradient partitions kept): the card count is where that job first fits
  const nlohmann::json zero3 =
      run_json({k_llama, "--json", "--mode", "full", "--gpu", "l4", "--strategy", "zero3"});
  const int cards = deepspeed["training"]["runs"][0]["gpus"].get<int>();
  CHECK(cards == zero3["training"]["runs"][0]["gpus"].get<int>());
  // so is a DDP job (autocast over fp32 weights on each card): the search shards it as ZeRO-3
  const nlohmann::json ddp =
      run_json({k_llama, "--json", "--mode", "full", "--gpu", "l4", "--strategy", "ddp"});
  CHECK(ddp["cards"][0]["modes"]["full_finetune"]["min_cards"].get<int>() == cards);
  const auto fits_on = [](int n) {
    return run_json({k_llama, "--json", "--mode", "full", "--gpu", "l4", "--gpus",
                     std::to_string(n)})["estimate"]["fits"]
        .get<bool>();
  };
  CHECK(fits_on(cards));
  CHECK_FALSE(fits_on(cards - 1));
  // --shard-embeddings says how FSDP wraps: without --strategy fsdp it is bad input
  args[args.size() - 2] = "zero3";
  const CliResult refused = run(args);
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--shard-embeddings needs --strategy fsdp") != std::string::npos);
}

TEST_CASE("options --reduce-bucket-size and --overlap-comm: ZeRO-2's gradient buckets",
          "[cli][json]") {
  // Llama-3.1-8B's full fine-tune on 8 GPUs under ZeRO-2: 8,030,261,248 trained weights, an
  // eighth of them 1,003,782,656. The bf16 partition, 2,007,565,312 bytes, beside what backward
  // has in flight: DeepSpeed's 5e8-value bucket (1,000,000,000 bytes) and the largest gradient,
  // the head's 128,256 x 4,096 = 525,336,576 values (1,050,673,152 bytes): 4,058,238,464. The
  // step's fp32 partition (4,015,130,624) comes after the activations and logits are freed: its
  // phase (at most 2 x 2,007,565,312 + 4,015,130,624 = 8,030,261,248) is below backward's.
  std::vector<std::string> args = {k_llama,  "--json", "--mode",     "full",
                                   "--gpus", "8",      "--strategy", "zero2"};
  CHECK(run_json(args)["estimate"]["breakdown"]["gradients"] == 4'058'238'464LL);
  // ms-swift's zero2.json: 2e8-value buckets, two with overlap_comm (800,000,000 bytes)
  args.insert(args.end(), {"--reduce-bucket-size", "200000000", "--overlap-comm"});
  CHECK(run_json(args)["estimate"]["breakdown"]["gradients"] == 3'858'238'464LL);
  // as DeepSpeed's JSON writes it, and as a decimal multiple
  for (const char* spelled : {"2e8", "2E8", "0.2e9", "200M"}) {
    std::vector<std::string> same = args;
    same[same.size() - 2] = spelled;
    CHECK(run_json(same)["estimate"]["breakdown"]["gradients"] == 3'858'238'464LL);
  }
  for (const char* bad : {"2e", "e8", "2.5e-1", "1.5e0", "2e8x", "1e99"}) {
    std::vector<std::string> refused_spelling = args;
    refused_spelling[refused_spelling.size() - 2] = bad;
    CHECK(run(refused_spelling).exit_code == trace::cli::k_exit_bad_input);
  }
  // they set DeepSpeed's buckets: under another strategy, or out of range, they are bad input
  args[7] = "fsdp";
  CliResult refused = run(args);
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--reduce-bucket-size needs --strategy zero1, zero2 or zero3") !=
        std::string::npos);
  // under ZeRO-1, overlap_comm reduces in backward: not modelled, so refused
  refused =
      run({k_llama, "--mode", "full", "--gpus", "8", "--strategy", "zero1", "--overlap-comm"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--overlap-comm needs --strategy zero2") != std::string::npos);
  // ZeRO-1 (DeepSpeed) keeps the bf16 gradients whole, 16,060,522,496 bytes, until the bucket
  // (2e8 values here, 400,000,000 bytes) reduces them: 16,460,522,496 (the step's fp32
  // partition comes after them). Megatron's distributed optimizer keeps fp32 main gradients
  // whole: 32,121,044,992.
  const nlohmann::json zero1 =
      run_json({k_llama, "--json", "--mode", "full", "--gpus", "8", "--strategy", "zero1",
                "--reduce-bucket-size", "200000000"});
  CHECK(zero1["estimate"]["breakdown"]["gradients"] == 16'460'522'496LL);
  const nlohmann::json megatron =
      run_json({k_llama, "--json", "--mode", "full", "--gpus", "8", "--strategy", "megatron"});
  CHECK(megatron["estimate"]["breakdown"]["gradients"] == 32'121'044'992LL);
  refused = run({k_llama, "--mode", "full", "--gpus", "8", "--strategy", "zero2",
                 "--reduce-bucket-size", "0"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--reduce-bucket-size = 0 is out of range") != std::string::npos);
}

TEST_CASE("options --reduce-bucket-size and --sub-group-size under DeepSpeed's ZeRO-3",
          "[cli][json]") {
  // Llama-3.1-8B's full fine-tune on 8 GPUs under ZeRO-3: this rank's bf16 partition, an eighth
  // of 8,030,261,248 gradients, 2,007,565,312 bytes; the bucket, Hugging Face's "auto" by
  // default (4,096 x 4,096 values, 33,554,432 bytes); the head's gradient in flight
  // (525,336,576 values, 1,050,673,152 bytes): 3,091,792,896 in backward.
  std::vector<std::string> args = {k_llama,  "--json", "--mode",     "full",
                                   "--gpus", "8",      "--strategy", "zero3"};
  CHECK(run_json(args)["estimate"]["breakdown"]["gradients"] == 3'091'792'896LL);
  std::vector<std::string> auto_bucket = args;
  auto_bucket.insert(auto_bucket.end(), {"--reduce-bucket-size", "auto"});
  CHECK(run_json(auto_bucket)["estimate"]["breakdown"]["gradients"] == 3'091'792'896LL);
  // DeepSpeed's own default, 5e8 values: 1,000,000,000 bytes in place of 33,554,432
  std::vector<std::string> deepspeed_default = args;
  deepspeed_default.insert(deepspeed_default.end(), {"--reduce-bucket-size", "5e8"});
  CHECK(run_json(deepspeed_default)["estimate"]["breakdown"]["gradients"] == 4'058'238'464LL);
  // One token: the step outweighs backward. The partition and bucket stay (2,041,119,744);
  // the partition, one sub-group (1,003,782,656 values < 1e9 + a head's 65,667,072), is
  // flattened (2,007,565,312) and cast to fp32 (4,015,130,624): 8,063,815,680 in all. Backward
  // held besides the gathered layer and head ((218,112,000 + 525,336,576) x 2 = 1,486,897,152),
  // which the step releases: the gradients, activations and logits add up to 6,576,918,528.
  args.insert(args.end(), {"--seq-len", "1"});
  const nlohmann::json step = run_json(args)["estimate"]["breakdown"];
  CHECK(step["gradients"].get<std::int64_t>() + step["activations"].get<std::int64_t>() +
            step["logits"].get<std::int64_t>() ==
        8'063'815'680LL - 1'486'897'152LL);
  // Sub-groups of 1e8 values (165,667,072 at most): 2,041,119,744 + 331,334,144 + 662,668,288
  // = 3,035,122,176, below backward's 3,091,792,896, which is the gradients' again.
  args.insert(args.end(), {"--sub-group-size", "1e8"});
  CHECK(run_json(args)["estimate"]["breakdown"]["gradients"] == 3'091'792'896LL);
  // ZeRO-3's own settings: refused elsewhere, and a bucket that is no count
  CliResult refused = run(
      {k_llama, "--mode", "full", "--gpus", "8", "--strategy", "zero2", "--sub-group-size", "1e8"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--sub-group-size needs --strategy zero3") != std::string::npos);
  for (const char* bad : {"0", "-3", "abc", "12abc"}) {
    refused = run({k_llama, "--mode", "full", "--gpus", "8", "--strategy", "zero3",
                   "--reduce-bucket-size", bad});
    CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
    CHECK(refused.err.find("--reduce-bucket-size") != std::string::npos);
  }
}

TEST_CASE("option --max-reuse-distance: what DeepSpeed's ZeRO-3 keeps gathered", "[cli][json]") {
  // Mistral-7B-v0.3's full fine-tune on 8 GPUs, checkpointed, parameters offloaded (the GPU
  // holds only what is gathered, in bf16). Its layers hold 218,112,000 parameters (q 4,096^2,
  // k and v 4,096 x 1,024, o 4,096^2, three 4,096 x 14,336 MLP matrices, two norms), its head
  // H = 32,768 x 4,096 = 134,217,728. The walk from the last layer to its reuse is 2H =
  // 268,435,456; from the one before, 2H + 3 x 218,112,000 = 922,771,456; from the third,
  // 1,577,107,456, past DeepSpeed's 1e9. So the default keeps two layers beside the head:
  // (134,217,728 + 2 x 218,112,000) x 2 = 1,140,883,456 bytes.
  const std::vector<std::string> args = {"mistralai/Mistral-7B-v0.3",
                                         "--json",
                                         "--mode",
                                         "full",
                                         "--gpus",
                                         "8",
                                         "--strategy",
                                         "zero3",
                                         "--cpu-offload",
                                         "--grad-checkpointing",
                                         "full"};
  const auto gathered = [&](std::vector<const char*> more) {
    std::vector<std::string> all = args;
    all.insert(all.end(), more.begin(), more.end());
    return run_json(all)["estimate"]["breakdown"]["weights"].get<std::int64_t>();
  };
  CHECK(gathered({}) == 1'140'883'456LL);
  CHECK(gathered({"--max-reuse-distance", "922771457"}) == 1'140'883'456LL);
  // A distance the second walk reaches keeps the last layer only: then the layer being run and
  // the next, prefetched (each larger than the head), 2 x 218,112,000 x 2 = 872,448,000 bytes,
  // as with 0 (every layer repartitioned after it runs).
  CHECK(gathered({"--max-reuse-distance", "922771456"}) == 872'448'000LL);
  CHECK(gathered({"--max-reuse-distance", "0"}) == 872'448'000LL);
  CliResult refused = run({k_llama, "--mode", "full", "--gpus", "8", "--strategy", "zero2",
                           "--max-reuse-distance", "1e8"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--max-reuse-distance needs --strategy zero3") != std::string::npos);
  refused = run({k_llama, "--mode", "full", "--gpus", "8", "--strategy", "zero3",
                 "--max-reuse-distance", "-1"});
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--max-reuse-distance") != std::string::npos);
}

TEST_CASE("the KV line says which cross-attention caches a fixed source per sequence", "[cli]") {
  // Llama-3.2-11B-Vision: 8 of its 40 text layers (cross_attention_layers) attend, in place of
  // self-attention, to the image: max_num_tiles 4 x ((560 / 14)^2 + 1) = 6,404 tokens.
  const CliResult vision =
      run({trace::test::config_path("meta-llama--Llama-3.2-11B-Vision.reconstructed.json"),
           "--mode", "serve"});
  CHECK(vision.exit_code == 0);
  CHECK(vision.out.find("40 of 40 decoder layers cache K/V, 8 of them a cross-attention over a "
                        "fixed 6,404-token source instead, cached once per sequence") !=
        std::string::npos);
  // Whisper-tiny: each of its 4 decoder layers attends beside its self-attention to the
  // encoder's max_source_positions, 1,500 frames.
  const CliResult whisper =
      run({trace::test::config_path("openai--whisper-tiny.reconstructed.json"), "--mode", "serve"});
  CHECK(whisper.exit_code == 0);
  CHECK(whisper.out.find("4 of 4 decoder layers cache K/V, and 4 a cross-attention over a fixed "
                         "1,500-token source beside it") != std::string::npos);
  // T5's cross-attention caches an encoder as long as the context: per token, no such clause.
  const CliResult t5 =
      run({trace::test::config_path("google-t5--t5-small.json"), "--mode", "serve"});
  CHECK(t5.out.find("6 of 6 decoder layers cache K/V") != std::string::npos);
  CHECK(t5.out.find("fixed") == std::string::npos);
}

TEST_CASE("a serve job refuses a training layout in --strategy", "[cli][json]") {
  // Serving splits the model with --tp / --pp; --strategy zero2 would otherwise be read as
  // tensor parallel over the 8 GPUs without a word.
  for (const char* strategy : {"ddp", "zero1", "zero2", "zero3", "fsdp", "megatron"}) {
    const CliResult refused =
        run({k_llama, "--mode", "serve", "--gpus", "8", "--strategy", strategy});
    CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
    CHECK(refused.err.find(fmt::format("--strategy {} is a training layout", strategy)) !=
          std::string::npos);
  }
  // Without --strategy (or with single) the 8 GPUs are tensor parallel; with --tp 2 they are
  // four replicas, each GPU holding what a 2-GPU tensor-parallel job's does.
  const auto peak = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {k_llama, "--json", "--mode", "serve"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_json(args)["estimate"]["peak_bytes"].get<std::int64_t>();
  };
  CHECK(peak({"--gpus", "8", "--strategy", "single"}) == peak({"--gpus", "8", "--tp", "8"}));
  CHECK(peak({"--gpus", "8", "--tp", "2"}) == peak({"--gpus", "2", "--tp", "2"}));
  CHECK(peak({"--gpus", "8", "--tp", "2"}) > peak({"--gpus", "8"}));
}

TEST_CASE("option --nf4-one-pass: torchao 0.1's quantization peaks at model setup", "[cli][json]") {
  // Llama-3.1-8B QLoRA at 128 tokens. torchao 0.1 quantizes the largest weight, gate / up /
  // down at 14,336 x 4,096 = 58,720,256 values, in one pass: 66 bytes a value beside the stored
  // weights, 3,875,536,896 bytes, before any gradient, optimizer state or activation exists.
  std::vector<std::string> args = {k_llama, "--json", "--mode", "qlora", "--seq-len", "128"};
  const nlohmann::json chunked = run_json(args)["estimate"];
  args.emplace_back("--nf4-one-pass");
  const nlohmann::json one_pass = run_json(args)["estimate"];
  const nlohmann::json& b = one_pass["breakdown"];
  CHECK(b["weights"] == chunked["breakdown"]["weights"]);
  // the overhead also holds the CUDA context (512 MiB), there at setup as at the step
  const std::int64_t context = 512LL << 20;
  CHECK(b["overhead"].get<std::int64_t>() - context + b["gradients"].get<std::int64_t>() +
            b["optimizer"].get<std::int64_t>() + b["activations"].get<std::int64_t>() +
            b["logits"].get<std::int64_t>() ==
        3'875'536'896LL);
  CHECK(one_pass["peak_bytes"].get<std::int64_t>() ==
        b["weights"].get<std::int64_t>() + context + 3'875'536'896LL);
  CHECK(one_pass["read_as"].get<std::string>().find("nf4 base, quantized in one pass") !=
        std::string::npos);
  std::vector<std::string> table = args;
  table.erase(table.begin() + 1);  // without --json: the job line names what the overhead holds
  CHECK(run(table).out.find(" + CUDA context + nf4 setup ") != std::string::npos);
  // it says how an nf4 base is quantized: without one it is bad input
  args[3] = "lora";
  const CliResult refused = run(args);
  CHECK(refused.exit_code == trace::cli::k_exit_bad_input);
  CHECK(refused.err.find("--nf4-one-pass needs --mode qlora") != std::string::npos);
}

TEST_CASE("option --train-mtp: the MTP layers train beside the model", "[cli][json]") {
  // DeepSeek-V3 stores one MTP layer; a full fine-tune that trains it holds its parameters too
  // and computes a second loss over the 129,280-token vocabulary.
  std::vector<std::string> args = {"deepseek-ai/DeepSeek-V3", "--json", "--mode", "full",
                                   "--precision", "bf16", "--seq-len", "128"};
  const nlohmann::json left_out = run_json(args)["estimate"];
  args.emplace_back("--train-mtp");
  const nlohmann::json trained = run_json(args)["estimate"];
  CHECK(trained["breakdown"]["logits"].get<std::int64_t>() ==
        2 * left_out["breakdown"]["logits"].get<std::int64_t>());
  CHECK(trained["breakdown"]["weights"].get<std::int64_t>() >
        left_out["breakdown"]["weights"].get<std::int64_t>());
  CHECK(trained["read_as"].get<std::string>().find(", MTP trained") != std::string::npos);
  // a model without MTP layers, or a serve job: bad input
  const CliResult no_mtp = run({k_llama, "--mode", "full", "--train-mtp"});
  CHECK(no_mtp.exit_code == trace::cli::k_exit_bad_input);
  CHECK(no_mtp.err.find("no multi-token-prediction layers") != std::string::npos);
  CHECK(run({"deepseek-ai/DeepSeek-V3", "--mode", "serve", "--train-mtp"}).exit_code ==
        trace::cli::k_exit_bad_input);
}

TEST_CASE("option --gpu selects the cards reported, by id or alias", "[cli][json]") {
  const nlohmann::json plan = run_json({k_llama, "--json", "--gpu", "h100", "--gpu", "T4"});
  REQUIRE(plan.at("cards").size() == 2);
  CHECK(plan["cards"][0]["id"] == "h100-80gb");
  CHECK(plan["cards"][1]["id"] == "t4");
}

TEST_CASE("the serving derivation is worked on the first card that holds the model",
          "[cli][json]") {
  // Llama-3.1-8B's bf16 weights are 14.96 GiB, over a T4's 14.00 GiB budget: the estimate moves
  // to the L4, (21.05 - 14.96 - 0.5 context - 0.5 graphs - 0.46 sampling) GiB / 0.5 GiB of KV
  // a 4,096-token request = 9.3 -> 9 requests (the sampling step: 256 x 128,256 x 14 +
  // 4,096 x 4,096 x 2 bytes, above the 4,096-token prefill's 4,096 x 55,296 x 2).
  const nlohmann::json plan = run_json({k_llama, "--json", "--gpu", "t4", "--gpu", "l4"});
  CHECK(plan["estimate"]["gpu"] == "l4");
  CHECK(plan["estimate"]["max_concurrency"] == 9);
  // The first card, when it holds the model, whatever follows.
  CHECK(run_json({k_llama, "--json", "--gpu", "h100", "--gpu", "t4"})["estimate"]["gpu"] ==
        "h100-80gb");
  // No card holds it: the first card listed, with nothing to serve.
  const nlohmann::json none = run_json({k_llama, "--json", "--gpu", "t4", "--gpu", "t4"});
  CHECK(none["estimate"]["gpu"] == "t4");
  CHECK(none["estimate"]["max_concurrency"] == 0);
  const CliResult table = run({k_llama, "--gpu", "t4", "--gpu", "l4"});
  CHECK(contains(table.out, "Serving on one l4 at 4,096 tokens per request: 9 concurrent"));
  CHECK(contains(table.out, "Longest context on one l4 at 1 concurrent request(s):"));
}

TEST_CASE("option --attention sdpa-gqa keeps K and V grouped", "[cli][json]") {
  // Llama-3.2-1B: 32 query heads over 8 KV heads of 64; repeated for SDPA, K and V take
  // 2 x (32 - 8) x 64 = 3,072 values a layer and token more: x 2 bytes x 16 layers x 2,048
  // tokens = 201,326,592 bytes that enable_gqa leaves out.
  const auto activations = [&](const char* attention) {
    const nlohmann::json out = run_json({"meta-llama/Llama-3.2-1B", "--json", "--mode", "full",
                                         "--seq-len", "2048", "--attention", attention});
    return out["estimate"]["breakdown"]["activations"].get<std::int64_t>();
  };
  CHECK(activations("sdpa") - activations("sdpa-gqa") == 201'326'592);
  CHECK(activations("sdpa-gqa") == activations("flash"));
  CHECK(activations("SDPA_GQA") == activations("sdpa-gqa"));
  CHECK(run_json({"meta-llama/Llama-3.2-1B", "--json", "--mode", "full", "--attention",
                  "sdpa-gqa"})["estimate"]["read_as"]
            .get<std::string>()
            .find("SDPA grouped K/V") != std::string::npos);
}

TEST_CASE("the table report has its sections in order", "[cli][table]") {
  const CliResult result = run({k_llama});
  REQUIRE(result.exit_code == 0);
  CHECK(result.err.empty());
  std::size_t previous = 0;
  for (const char* section : {"MODEL", "PARAMETERS", "MEMORY", "WHAT FITS", "STRUCTURE"}) {
    INFO(section);
    CHECK(has_line(result.out, section));
    const std::size_t at = result.out.find(std::string("\n") + section);
    const std::size_t position = result.out.rfind(section, 0) == 0 ? 0 : at;
    CHECK(position >= previous);
    previous = position;
  }
  CHECK_FALSE(has_line(result.out, "GRAPH"));
  CHECK(contains(result.out, "8,030,261,248"));
  // --plan is the default action: the same output.
  CHECK(run({k_llama, "--plan"}).out == result.out);
}

TEST_CASE("option --format markdown starts with the plan title", "[cli][markdown]") {
  const CliResult result = run({k_llama, "--format", "markdown"});
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.rfind("# trace plan", 0) == 0);
  CHECK(contains(result.out, k_llama));
}

TEST_CASE("option --graph adds the layer graph / only learned positions have embed_positions",
          "[cli][graph]") {
  const CliResult table = run({k_llama, "--graph"});
  REQUIRE(table.exit_code == 0);
  CHECK(has_line(table.out, "GRAPH"));

  const nlohmann::json llama = run_json({k_llama, "--graph", "--json"});
  const std::vector<std::string> llama_nodes = node_names(llama);
  CHECK(has_name(llama_nodes, "embed_tokens"));
  CHECK_FALSE(has_name(llama_nodes, "embed_positions"));  // RoPE: no position table

  const nlohmann::json gpt2 = run_json({"openai-community/gpt2", "--graph", "--json"});
  CHECK(has_name(node_names(gpt2), "embed_positions"));
  CHECK(gpt2["model"]["position_embedding"] == "learned");
  CHECK(llama["model"]["position_embedding"] == "rope");

  // Without --graph the JSON has no graph.
  CHECK_FALSE(run_json({k_llama, "--json"}).contains("graph"));
}

TEST_CASE("option --help and --version exit 0 on stdout", "[cli][help]") {
  const CliResult help = run({"--help"});
  CHECK(help.exit_code == 0);
  CHECK(help.err.empty());
  for (const char* flag : {"--seq-len", "--context", "--lora-rank", "--json", "--gpu", "--batch"}) {
    INFO(flag);
    CHECK(contains(help.out, flag));
  }
  const CliResult version = run({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.err.empty());
  CHECK(contains(version.out, std::string(trace::k_version)));

  const CliResult check_help = run({"check", "--help"});
  CHECK(check_help.exit_code == 0);
  CHECK(contains(check_help.out, "--mode"));
  CHECK(run({"gpus", "--help"}).exit_code == 0);
  CHECK(run({"models", "--help"}).exit_code == 0);
}

TEST_CASE("trace gpus lists the table", "[cli][gpus]") {
  const CliResult table = run({"gpus"});
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "h100-80gb"));
  CHECK(contains(table.out, "t4"));
  const nlohmann::json list = run_json({"gpus", "--json"});
  REQUIRE(list.is_array());
  bool saw_h100 = false;
  for (const nlohmann::json& gpu : list) {
    saw_h100 = saw_h100 || gpu.at("id") == "h100-80gb";
    CHECK(gpu.at("memory_bytes").get<std::int64_t>() > 0);
    CHECK(gpu.at("memory_bytes").get<std::int64_t>() <=
          gpu.at("memory_bytes_marketed").get<std::int64_t>());
  }
  CHECK(saw_h100);
  // Dense peaks per dtype from the datasheets (docs/gpus.md): H100 SXM bf16 989.5, fp8 1,979, no
  // fp4; B200 runs NVFP4 at 9,000; MI355X runs MXFP4 (10,066.4) but not NVFP4; T4 has no bf16.
  const auto peak = [&](const std::string& id, const std::string& dtype) {
    for (const nlohmann::json& gpu : list) {
      if (gpu.at("id") == id) return gpu.at("peak_tflops").at(dtype);
    }
    return nlohmann::json();
  };
  CHECK(peak("h100-80gb", "bf16") == 989.5);
  CHECK(peak("h100-80gb", "fp8") == 1979.0);
  CHECK(peak("h100-80gb", "nvfp4").is_null());
  CHECK(peak("b200", "nvfp4") == 9000.0);
  CHECK(peak("mi355x", "nvfp4").is_null());
  CHECK(peak("mi355x", "mxfp4") == 10066.4);
  CHECK(peak("t4", "bf16").is_null());
  CHECK(peak("t4", "fp16") == 65.0);
}

TEST_CASE("trace models lists the catalog and the model types", "[cli][models]") {
  const CliResult result = run({"models"});
  REQUIRE(result.exit_code == 0);
  CHECK(has_line(result.out, k_llama));
  CHECK(contains(result.out, "openai-community/gpt2"));
  CHECK(contains(result.out, "llama"));
  CHECK(contains(result.out, "gpt2"));
  CHECK(run({"models", "--bogus"}).exit_code == trace::cli::k_exit_bad_input);
}

TEST_CASE("trace check is a CI gate: 0 fits, 1 does not", "[cli][check]") {
  const CliResult serve = run({"check", k_llama, "--gpu", "h100", "--mode", "serve"});
  INFO(serve.err);
  CHECK(serve.exit_code == trace::cli::k_exit_ok);
  CHECK(serve.out.rfind("fits", 0) == 0);
  CHECK(serve.err.empty());

  const CliResult full = run({"check", k_llama, "--gpu", "t4", "--mode", "full"});
  CHECK(full.exit_code == trace::cli::k_exit_does_not_fit);
  CHECK(full.out.rfind("does not fit", 0) == 0);
  CHECK(full.err.empty());

  // --cards / --gpus: the threshold is where the plan's job estimate (same flags) first fits.
  std::int64_t needed = 0;
  for (std::int64_t n = 1; n <= 64 && needed == 0; ++n) {
    const nlohmann::json plan = run_json({k_llama, "--json", "--gpu", "t4", "--mode", "full",
                                          "--grad-checkpointing", "full", "--gpus",
                                          std::to_string(n)});
    if (plan["estimate"]["fits"] == true) needed = n;
  }
  REQUIRE(needed > 1);
  // (Without checkpointing the 8B model's activations alone exceed a T4 at 2,048 tokens.)
  const auto check = [&](const char* flag, std::int64_t n) {
    return run({"check", k_llama, "--gpu", "t4", "--mode", "full", "--grad-checkpointing", "full",
                flag, std::to_string(n)})
        .exit_code;
  };
  CHECK(check("--cards", needed) == trace::cli::k_exit_ok);
  CHECK(check("--gpus", needed) == trace::cli::k_exit_ok);
  CHECK(check("--cards", needed - 1) == trace::cli::k_exit_does_not_fit);
  // --json: the same verdict as one object.
  const CliResult json = run({"check", k_llama, "--gpu", "t4", "--mode", "full", "--json"});
  CHECK(json.exit_code == trace::cli::k_exit_does_not_fit);
  const nlohmann::json verdict = nlohmann::json::parse(json.out);
  CHECK(verdict["verdict"] == "does not fit");
  CHECK(verdict["fits"] == false);
  CHECK(verdict["peak_bytes"].get<std::int64_t>() > verdict["budget_bytes"].get<std::int64_t>());
  // A training verdict says how far the card reaches: a full fine-tune of 8B (16 bytes of
  // weights and states per parameter) fits a T4 at no batch and no length; a QLoRA's longest
  // sequence on an L4 is where `trace check --seq-len` flips from 0 to 1.
  CHECK(verdict["max_batch"] == 0);
  CHECK(verdict["max_seq_len"] == 0);
  const auto lora_at = [&](std::int64_t seq_len) {
    return run({"check", k_llama, "--gpu", "l4", "--mode", "qlora", "--seq-len",
                std::to_string(seq_len), "--json"});
  };
  const nlohmann::json qlora = nlohmann::json::parse(lora_at(2048).out);
  const std::int64_t qlora_longest = qlora["max_seq_len"].get<std::int64_t>();
  REQUIRE(qlora_longest > 1);
  CHECK(lora_at(qlora_longest).exit_code == trace::cli::k_exit_ok);
  CHECK(lora_at(qlora_longest + 1).exit_code == trace::cli::k_exit_does_not_fit);
  // The plan prints the same limits under its job line.
  const CliResult plan = run({k_llama, "--gpu", "l4", "--mode", "qlora"});
  CHECK(contains(plan.out, fmt::format("On 1 x l4: largest batch at 2,048 tokens: none; longest "
                                       "sequence at batch 1: {} tokens\n",
                                       trace::group_digits(qlora_longest))));
  // A serve check says the most requests at its context: the point where --concurrency flips.
  const auto serve_at = [&](std::int64_t requests) {
    return run({"check", k_llama, "--gpu", "l4", "--mode", "serve", "--concurrency",
                std::to_string(requests), "--json"});
  };
  const std::int64_t most = nlohmann::json::parse(serve_at(1).out)["max_concurrency"];
  REQUIRE(most > 1);
  CHECK(serve_at(most).exit_code == trace::cli::k_exit_ok);
  CHECK(serve_at(most + 1).exit_code == trace::cli::k_exit_does_not_fit);
  // Bad job flags are bad input.
  CHECK(run({"check", k_llama, "--gpu", "t4", "--mode", "full", "--optimizer", "rmsprop"})
            .exit_code == trace::cli::k_exit_bad_input);
}

TEST_CASE("trace check says what its estimate assumes or leaves out for the job it checks",
          "[cli][check]") {
  const auto has_note = [](const nlohmann::json& notes, const std::string& start) {
    for (const nlohmann::json& note : notes) {
      if (note.get<std::string>().rfind(start, 0) == 0) return true;
    }
    return false;
  };
  // A VLM: every mode's verdict leaves the vision tower's activations out, and says so on
  // stderr (stdout stays the one verdict line) and in the JSON's notes; only a full
  // fine-tune is told that it trains the tower.
  const std::string vlm =
      trace::test::config_path("meta-llama--Llama-3.2-11B-Vision.reconstructed.json");
  const std::string tower = "the vision tower's activations are not estimated";
  const std::string trains_tower = "a full fine-tune trains the vision tower's parameters too";
  for (const char* mode : {"serve", "lora", "full"}) {
    INFO(mode);
    const CliResult line = run({"check", vlm, "--gpu", "h100-80gb", "--mode", mode});
    CHECK(line.out.find('\n') == line.out.size() - 1);
    CHECK(line.err.rfind("note: " + tower, 0) == 0);
    CHECK(contains(line.err, trains_tower) == (std::string(mode) == "full"));
    const nlohmann::json json = nlohmann::json::parse(
        run({"check", vlm, "--gpu", "h100-80gb", "--mode", mode, "--json"}).out);
    CHECK(has_note(json["notes"], tower));
    CHECK(has_note(json["notes"], trains_tower) == (std::string(mode) == "full"));
    // the family's description notes (its cross-attention's fixed source) are the plan's only
    CHECK_FALSE(has_note(json["notes"], "8 cross-attention layers"));
  }
  // A quantized checkpoint: a serve gate hears how it is served, a training gate how it is
  // trained, neither the other's.
  const auto notes_of = [&](const char* mode) {
    return nlohmann::json::parse(
        run({"check", "openai/gpt-oss-20b", "--gpu", "h100-80gb", "--mode", mode, "--json"})
            .out)["notes"];
  };
  const std::string served = "serving weights taken at the checkpoint's stored size (mxfp4";
  const std::string trained = "training: the mxfp4 checkpoint is trained dequantized";
  CHECK(has_note(notes_of("serve"), served));
  CHECK_FALSE(has_note(notes_of("serve"), trained));
  CHECK(has_note(notes_of("lora"), trained));
  CHECK_FALSE(has_note(notes_of("lora"), served));
  // Qwen-Omni: a serve gate hears that the thinker alone is served (1,800,411,520 parameters of
  // talker and token2wav left out: qwen2_5_omni_test.cpp), a training gate does not.
  const std::string omni = trace::test::config_path("Qwen--Qwen2.5-Omni-7B.reconstructed.json");
  const std::string thinker =
      "serving loads the thinker alone, as vLLM registers the model: the "
      "talker and token2wav (1,800,411,520 parameters)";
  CHECK(has_note(
      nlohmann::json::parse(
          run({"check", omni, "--gpu", "h100-80gb", "--mode", "serve", "--json"}).out)["notes"],
      thinker));
  CHECK_FALSE(has_note(
      nlohmann::json::parse(
          run({"check", omni, "--gpu", "h100-80gb", "--mode", "lora", "--json"}).out)["notes"],
      thinker));
  // A dense bf16 model's check has nothing to add.
  CHECK(
      nlohmann::json::parse(run({"check", k_llama, "--gpu", "h100-80gb", "--json"}).out)["notes"] ==
      nlohmann::json::array());
}

TEST_CASE("option --gpu-table replaces the built-in table", "[cli][gpu_table]") {
  const TempDir dir;
  const std::int64_t usable = 1LL << 40;  // 1 TiB: everything about a 1B model fits
  const std::string table = dir.write("gpus.json", one_card_table(usable));

  const nlohmann::json plan = run_json({"meta-llama/Llama-3.2-1B", "--json", "--gpu-table", table});
  REQUIRE(plan.at("cards").size() == 1);  // the default set keeps only cards the table has
  const nlohmann::json& card = plan["cards"][0];
  CHECK(card["id"] == "test-card");
  CHECK(card["memory_bytes"] == usable);
  for (const char* mode : {"full_finetune", "lora", "serve"}) {
    INFO(mode);
    CHECK(card["modes"][mode]["fits"] == true);
  }
  // Its alias works for --gpu and for trace check; a built-in card is then unknown.
  CHECK(run_json({"meta-llama/Llama-3.2-1B", "--json", "--gpu-table", table, "--gpu",
                  "tc"})["cards"][0]["id"] == "test-card");
  CHECK(run({"check", "meta-llama/Llama-3.2-1B", "--gpu-table", table, "--gpu", "test-card",
             "--mode", "full"})
            .exit_code == trace::cli::k_exit_ok);
  const CliResult unknown = run({"meta-llama/Llama-3.2-1B", "--gpu-table", table, "--gpu", "h100"});
  CHECK(unknown.exit_code == trace::cli::k_exit_bad_input);
  CHECK(contains(unknown.err, "h100"));

  const CliResult listed = run({"gpus", "--gpu-table", table});
  REQUIRE(listed.exit_code == 0);
  CHECK(contains(listed.out, "test-card"));
  CHECK_FALSE(contains(listed.out, "h100-80gb"));
}

TEST_CASE("a malformed GPU table exits 2 with one line naming it", "[cli][gpu_table]") {
  const TempDir dir;
  const nlohmann::json valid = nlohmann::json::parse(one_card_table(1LL << 40));
  std::vector<std::pair<std::string, std::string>> cases{
      {"invalid JSON", "{\"gpus\": ["},
      {"not an object", "[]"},
      {"no gpus list", R"({"as_of": "2026-01-01"})"},
      {"an empty list", R"({"gpus": []})"},
  };
  nlohmann::json no_id = valid;
  no_id["gpus"][0].erase("id");
  cases.emplace_back("a row without id", no_id.dump());
  nlohmann::json no_memory = valid;
  no_memory["gpus"][0].erase("memory_bytes_usable");
  cases.emplace_back("a row without usable memory", no_memory.dump());
  nlohmann::json negative = valid;
  negative["gpus"][0]["memory_bytes_usable"] = -1;
  cases.emplace_back("negative memory", negative.dump());
  nlohmann::json too_much = valid;
  too_much["gpus"][0]["memory_bytes_usable"] =
      valid["gpus"][0]["memory_bytes_marketed"].get<std::int64_t>() + 1;
  cases.emplace_back("usable above marketed", too_much.dump());
  nlohmann::json duplicate = valid;
  duplicate["gpus"].push_back(valid["gpus"][0]);
  cases.emplace_back("a duplicate id", duplicate.dump());

  int index = 0;
  for (const auto& [what, text] : cases) {
    INFO(what);
    const std::string path = dir.write("table-" + std::to_string(index++) + ".json", text);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{k_llama, "--gpu-table", path},
          std::vector<std::string>{"gpus", "--gpu-table", path}}) {
      const CliResult result = run(args);
      INFO("stderr: " << result.err);
      CHECK(result.exit_code == trace::cli::k_exit_bad_input);
      CHECK(result.out.empty());
      CHECK(trace::test::line_count(result.err) == 1);
      CHECK(result.err.rfind("trace: error: ", 0) == 0);
      CHECK(contains(result.err, path));
    }
  }
}

TEST_CASE("a serve job's --tp 1 means replicas, --ep beyond it splits the experts",
          "[cli][serve][parallel]") {
  const auto job = [](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        "Qwen/Qwen3-30B-A3B", "--mode", "serve", "--gpus", "2", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult result = run(args);
    INFO("stderr: " << result.err);
    REQUIRE(result.exit_code == trace::cli::k_exit_ok);
    return nlohmann::json::parse(result.out)["estimate"];
  };
  // Qwen3-30B-A3B: 30,532,122,624 parameters at bf16, of which the routed experts are
  // 48 layers x 128 x 3 x 768 x 2048 = 28,991,029,248.
  const std::int64_t all = 2 * 30'532'122'624LL;
  const std::int64_t experts = 2 * 48LL * 128 * 3 * 768 * 2048;
  // Without --tp the job spans both GPUs with tensor parallelism: half of everything.
  const nlohmann::json tp2 = job({});
  CHECK(tp2["breakdown"]["weights"].get<std::int64_t>() == all / 2);
  CHECK(tp2["read_as"].get<std::string>().find("2 GPUs tp2") != std::string::npos);
  // --tp 1: two replicas, each holding the whole model.
  const nlohmann::json replicas = job({"--tp", "1"});
  CHECK(replicas["breakdown"]["weights"].get<std::int64_t>() == all);
  CHECK(replicas["read_as"].get<std::string>().find("2 GPUs 2 replicas") != std::string::npos);
  // --tp 1 --ep 2: attention and the rest replicated, the routed experts split in two.
  CHECK(job({"--tp", "1", "--ep", "2"})["breakdown"]["weights"].get<std::int64_t>() ==
        all - experts + experts / 2);
  // --ep 2 inside --tp 2 splits the experts as tensor parallelism already did.
  CHECK(job({"--ep", "2"})["breakdown"]["weights"].get<std::int64_t>() == all / 2);
}
