#include <set>

#include "catch.hpp"
#include "trace/error.hpp"
#include "trace/hardware/gpu_catalog.hpp"

TEST_CASE("the built-in GPU table is complete and consistent", "[gpus]") {
  const trace::GpuCatalog& catalog = trace::builtin_gpu_catalog();
  CHECK(catalog.gpus.size() >= 42);
  std::set<std::string> ids;
  for (const trace::GpuSpec& gpu : catalog.gpus) {
    INFO(gpu.id);
    CHECK(ids.insert(gpu.id).second);
    CHECK(gpu.memory_bytes_usable > 0);
    CHECK(gpu.memory_bytes_usable <= gpu.memory_bytes_marketed);
    CHECK_FALSE(gpu.source.empty());
  }
  for (const char* id : {"t4", "l4", "a10g", "a100-40gb", "a100-80gb", "h100-80gb", "h100-pcie",
                         "h200", "b200"}) {
    INFO(id);
    CHECK(trace::find_gpu(catalog, id) != nullptr);
  }
}

TEST_CASE("usable memory, not the marketing number", "[gpus]") {
  const trace::GpuCatalog& catalog = trace::builtin_gpu_catalog();
  // An "80 GB" H100 exposes about 79.2 GiB to PyTorch; a "16 GB" T4 about 14.74 GiB.
  CHECK(trace::require_gpu(catalog, "h100").memory_bytes_usable ==
        static_cast<std::int64_t>(79.2 * 1073741824.0 + 0.5));
  CHECK(trace::require_gpu(catalog, "T4").memory_bytes_usable ==
        static_cast<std::int64_t>(14.74 * 1073741824.0 + 0.5));
}

TEST_CASE("cards the measured runs name: A800, H20, L40, L20, RTX A6000, TITAN RTX", "[gpus]") {
  const trace::GpuCatalog& catalog = trace::builtin_gpu_catalog();
  constexpr double gib = 1073741824.0;
  // A800 = the A100 80GB SXM4 with NVLink cut to 400 GB/s (NVIDIA, Nov 2022); the 79.33 GiB total
  // capacity a CUDA OOM message on one printed (LLaMA-Factory #2959), kept at 79.3 as the A100's.
  const trace::GpuSpec& a800 = trace::require_gpu(catalog, "a800");
  CHECK(a800.id == "a800-80gb");
  CHECK(a800.interconnect_bytes_per_s == 400000000000);
  CHECK(a800.memory_bandwidth_bytes_per_s == 2039000000000);
  CHECK(a800.memory_bytes_usable == static_cast<std::int64_t>(79.3 * gib + 0.5));
  // H20: 96 GB HBM3 at 4.0 TB/s, 148 dense BF16 TFLOPS, 296 FP8; usable 0.99 x 96 GiB.
  const trace::GpuSpec& h20 = trace::require_gpu(catalog, "h20");
  CHECK(h20.memory_bandwidth_bytes_per_s == 4000000000000);
  CHECK(h20.memory_bytes_usable == static_cast<std::int64_t>(0.99 * 96 * gib + 0.5));
  CHECK(h20.bf16_tflops == 148);
  CHECK(h20.fp8_tflops == 296);
  // L40 datasheet: BF16 362.1 TFLOPS with sparsity -> 181 dense; 864 GB/s.
  const trace::GpuSpec& l40 = trace::require_gpu(catalog, "l40");
  CHECK(l40.memory_bandwidth_bytes_per_s == 864000000000);
  CHECK(l40.memory_bytes_usable == static_cast<std::int64_t>(44.0 * gib + 0.5));
  CHECK(l40.bf16_tflops == 181);
  CHECK(trace::require_gpu(catalog, "l20").bf16_tflops == 119.5);
  // RTX A6000: 48 GB GDDR6 at 768 GB/s; 0.98 x 48 GiB. TITAN RTX: 24 GB at 672 GB/s, no BF16.
  const trace::GpuSpec& a6000 = trace::require_gpu(catalog, "rtx-a6000");
  CHECK(a6000.memory_bandwidth_bytes_per_s == 768000000000);
  CHECK(a6000.memory_bytes_usable == static_cast<std::int64_t>(0.98 * 48 * gib + 0.5));
  const trace::GpuSpec& titan = trace::require_gpu(catalog, "titan-rtx");
  CHECK(titan.memory_bandwidth_bytes_per_s == 672000000000);
  CHECK_FALSE(titan.bf16_tflops.has_value());
  CHECK(titan.fp16_tflops == 130);
}

TEST_CASE("aliases and did-you-mean", "[gpus]") {
  const trace::GpuCatalog& catalog = trace::builtin_gpu_catalog();
  CHECK(trace::require_gpu(catalog, "h100").id == "h100-80gb");
  CHECK(trace::require_gpu(catalog, "H100-80GB").id == "h100-80gb");
  CHECK_THROWS_WITH(trace::require_gpu(catalog, "h100-80g8"),
                    Catch::Matchers::Contains("did you mean 'h100-80gb'"));
  CHECK_THROWS_AS(trace::require_gpu(catalog, "zzzzzzzzzzzz"), trace::ConfigError);
}

TEST_CASE("a custom table is validated", "[gpus]") {
  CHECK_THROWS_AS(trace::parse_gpu_catalog("[]", "x.json"), trace::ConfigError);
  CHECK_THROWS_AS(trace::parse_gpu_catalog(R"({"gpus": [{"id": "a"}]})", "x.json"),
                  trace::ConfigError);
  CHECK_THROWS_WITH(
      trace::parse_gpu_catalog(
          R"({"gpus": [{"id": "a", "memory_bytes_marketed": 10, "memory_bytes_usable": 20}]})",
          "x.json"),
      Catch::Matchers::Contains("exceeds"));
  const trace::GpuCatalog one = trace::parse_gpu_catalog(
      R"({"gpus": [{"id": "Mine", "memory_bytes_marketed": 100, "memory_bytes_usable": 90}]})",
      "x.json");
  CHECK(trace::find_gpu(one, "mine") != nullptr);
}

TEST_CASE("malformed tables end in ConfigError, never an internal error", "[gpus]") {
  const char* tables[] = {
      R"({"as_of": 5, "gpus": [{"id": "a", "memory_bytes_marketed": 10, "memory_bytes_usable": 9}]})",
      R"({"gpus": [{"id": "a", "name": 5, "memory_bytes_marketed": 10, "memory_bytes_usable": 9}]})",
      R"({"gpus": [1e400]})",
  };
  for (const char* table : tables) {
    INFO(table);
    CHECK_THROWS_AS(trace::parse_gpu_catalog(table, "x.json"), trace::ConfigError);
  }
  // An alias repeating the card's own id is harmless.
  CHECK(trace::parse_gpu_catalog(
            R"({"gpus": [{"id": "a", "aliases": ["a", "A"], "memory_bytes_marketed": 10, "memory_bytes_usable": 9}]})",
            "x.json")
            .gpus.size() == 1);
}
