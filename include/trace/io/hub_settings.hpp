#pragma once
/// The Hub client's network constants: timeouts, retries, parallelism and size caps. The
/// defaults are the production values (docs/hub.md names each one); tests shrink the delays.
#include <chrono>
#include <cstdint>

namespace trace {

/// The public Hub, used when HF_ENDPOINT is not set.
inline constexpr const char* k_default_hub_endpoint = "https://huggingface.co";

struct HubNetworkSettings {
  /// One TCP (and TLS) connection attempt: short, so a machine without network fails fast.
  std::chrono::milliseconds connect_timeout{5000};
  /// A whole request, body included (CURLOPT_TIMEOUT_MS).
  std::chrono::milliseconds request_timeout{120000};
  /// A transfer that receives nothing for this long is abandoned (CURLOPT_LOW_SPEED_TIME).
  std::chrono::seconds stall_timeout{30};
  /// Tries of one request on 408, 429, 5xx (but 501), timeouts and interrupted transfers.
  int max_attempts = 5;
  /// Tries when the host refuses or does not answer the connection at all.
  int max_connect_attempts = 2;
  /// The wait before the second try, doubled before each further one, at most backoff_max.
  std::chrono::milliseconds backoff_initial{1000};
  std::chrono::milliseconds backoff_max{8000};
  /// What "Retry-After: 1" waits (one second; tests shrink it).
  std::chrono::milliseconds retry_after_unit{1000};
  /// A 429 asking for a longer wait than this fails at once, naming the wait.
  std::chrono::milliseconds retry_after_max{60000};
  /// Shard headers read in parallel, each on its own connection.
  int max_connections = 8;
  /// The first Range read of a shard: bytes 0..header_probe_bytes-1. Most headers fit; a
  /// larger one costs one more read of exactly the rest.
  std::uint64_t header_probe_bytes = 64 * 1024;
  /// A safetensors header longer than this is refused (the safetensors reader's own limit).
  std::uint64_t max_header_bytes = 100'000'000;
  /// config.json, hf_quant_config.json and the index are refused above this size.
  std::uint64_t max_file_bytes = 64ULL << 20;
  /// Redirects followed per request (the Hub sends one, to its CDN).
  long max_redirects = 10;
};

}  // namespace trace
