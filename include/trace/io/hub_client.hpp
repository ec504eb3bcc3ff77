#pragma once
/// The Hugging Face Hub over HTTP (libcurl): pins a revision to a commit with one API call, reads
/// small files through /resolve/<commit>/, and reads safetensors headers with Range requests in
/// parallel. Retries 408, 429 (honouring Retry-After), 5xx, timeouts and cut-off transfers, a
/// bounded number of times. The token goes to the Hub's host only and is never printed.
/// docs/hub.md describes the requests, limits and errors.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trace/error.hpp"
#include "trace/io/checkpoint_headers.hpp"
#include "trace/io/hub_settings.hpp"
#include "trace/io/model_source.hpp"

namespace trace {

namespace http {
class Session;
struct Request;
struct Response;
}  // namespace http

/// The Hub has no such repository, revision or file: bad input, exit 2.
class HubNotFoundError : public ConfigError {
 public:
  enum class Missing { repository, revision, file };
  HubNotFoundError(Missing missing, const std::string& message)
      : ConfigError(message), m_missing(missing) {}
  Missing missing() const { return m_missing; }

 private:
  Missing m_missing;
};

/// The Hub refused access: a gated or private repo, a rejected token. Exit 3.
class HubAccessError : public FetchError {
 public:
  using FetchError::FetchError;
};

/// The Hub's host could not be resolved or connected to (no network). Exit 3.
class HubUnreachableError : public FetchError {
 public:
  using FetchError::FetchError;
};

/// Where and how to reach the Hub.
struct HubConnection {
  std::string endpoint;              ///< no trailing '/'
  std::optional<std::string> token;  ///< sent as "Authorization: Bearer" to the endpoint only
  std::string token_source;          ///< "HF_TOKEN" or the token file's path (never the token)
  HubNetworkSettings settings;
  std::string no_proxy;              ///< CURLOPT_NOPROXY: loopback plus NO_PROXY
};

/// HF_ENDPOINT without its trailing '/', else https://huggingface.co.
std::string hub_endpoint(const HubEnvironment& env);

/// HF_TOKEN, else the token file (HF_TOKEN_PATH, else $HF_HOME/token, else
/// ~/.cache/huggingface/token); \r and \n removed, surrounding spaces trimmed, empty = none.
/// Sets `source` to where it came from.
std::optional<std::string> hub_token(const HubEnvironment& env, std::string* source = nullptr);

/// Everything a HubClient needs, from the environment.
HubConnection hub_connection(const HubEnvironment& env);

/// Percent-encodes every byte but A-Z a-z 0-9 - . _ ~ (and '/' when keep_slash).
std::string percent_encode(std::string_view text, bool keep_slash);

/// {endpoint}/api/models/{repo}/revision/{revision, encoded with no safe characters}?expand=...
std::string revision_api_url(const std::string& endpoint, const std::string& repo,
                             const std::string& revision);

/// {endpoint}/{repo}/resolve/{commit, encoded}/{path, encoded with '/' kept}
std::string resolve_url(const std::string& endpoint, const std::string& repo,
                        const std::string& commit, const std::string& path);

/// An ETag as a blob name: W/ and quotes stripped; empty unless 40 or 64 lower-case hex digits.
std::string normalized_etag(std::string_view etag);

/// A revision pinned to its commit, with the repo's file list at that commit.
struct RevisionInfo {
  std::string commit;              ///< 40 lower-case hex digits
  std::vector<std::string> files;  ///< siblings[].rfilename
};

/// A small file read whole.
struct HubFile {
  std::string path;
  std::string content;
  std::string etag;  ///< normalized; empty when the server sent none usable
};

class HubClient {
 public:
  explicit HubClient(HubConnection connection);
  ~HubClient();
  HubClient(const HubClient&) = delete;
  HubClient& operator=(const HubClient&) = delete;

  /// GET /api/models/{repo}/revision/{revision}: the commit and the file list.
  RevisionInfo resolve_revision(const std::string& repo, const std::string& revision);

  /// GET /{repo}/resolve/{commit}/{path}, whole (at most settings.max_file_bytes).
  HubFile download(const std::string& repo, const std::string& commit, const std::string& path);

  /// The first 8 + N bytes of each shard, read with Range requests on at most
  /// settings.max_connections connections; `on_done` runs (serialized) after each shard. The
  /// result keeps the order of `paths`; the first failure (in that order) is thrown.
  std::vector<ShardHeaderBytes> read_shard_headers(
      const std::string& repo, const std::string& commit, const std::vector<std::string>& paths,
      const std::function<void(const ShardHeaderBytes&)>& on_done = {});

  /// HTTP requests made (tries included) and response body bytes received so far.
  std::uint64_t requests() const { return m_requests.load(); }
  std::uint64_t bytes_received() const { return m_bytes.load(); }
  const std::string& endpoint() const { return m_connection.endpoint; }

 private:
  struct Context;
  ShardHeaderBytes read_shard_header(http::Session& session, const Context& context);
  http::Response get_with_retries(http::Session& session, const http::Request& request,
                                  const Context& context);
  std::unique_ptr<http::Session> new_session() const;

  HubConnection m_connection;
  std::unique_ptr<http::Session> m_session;
  std::atomic<std::uint64_t> m_requests{0};
  std::atomic<std::uint64_t> m_bytes{0};
  std::mutex m_done_mutex;
};

}  // namespace trace
