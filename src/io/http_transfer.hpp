#pragma once
// One HTTP GET with libcurl: redirects followed (Authorization only on the first host), an
// optional Range, a cap on the body. No retries and no Hub semantics: hub_client.cpp adds those.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/io/hub_settings.hpp"

namespace trace::http {

/// A GET. `range` is inclusive; a server that ignores it (200, whole file) is read only up to
/// the range's end and then cut off.
struct Request {
  std::string url;
  std::optional<std::string> bearer_token;  ///< sent to the URL's host only, never after a redirect to another host
  std::optional<std::uint64_t> range_first;
  std::optional<std::uint64_t> range_last;
  std::uint64_t max_body_bytes = 0;  ///< a longer body fails with Outcome::too_large
};

enum class Outcome {
  ok,               ///< a response arrived (any status)
  unresolved,       ///< the host name did not resolve (no network, no DNS)
  unreachable,      ///< the connection was refused or timed out before any response
  timed_out,        ///< the request ran past its time limits after connecting
  interrupted,      ///< the connection broke or the body ended short (truncated)
  too_large,        ///< the body exceeded max_body_bytes
  failed,           ///< anything else (TLS, too many redirects, bad URL)
};

/// Header names are lower-case; a repeated header keeps its last value.
using Headers = std::map<std::string, std::string>;

struct Response {
  Outcome outcome = Outcome::failed;
  std::string transport_message;  ///< libcurl's words when outcome != ok
  long status = 0;                ///< the final response's status
  Headers headers;                ///< the final response's headers
  Headers first_headers;          ///< the first response's (the Hub's 302 before the CDN)
  int redirects = 0;
  std::string body;               ///< the requested range (or the whole body), capped
  /// With a range: the file size from Content-Range, or from Content-Length on a 200.
  std::optional<std::uint64_t> total_size;
  bool range_ignored = false;     ///< a range was asked for and the server sent 200
  std::uint64_t bytes_received = 0;  ///< body bytes off the wire (progress)
};

/// A reusable connection (one libcurl easy handle: keep-alive across requests). Not shared
/// between threads; each worker owns one.
class Session {
 public:
  Session(const HubNetworkSettings& settings, std::string user_agent, std::string no_proxy);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Response get(const Request& request);

 private:
  struct Handle;
  std::unique_ptr<Handle> m_handle;
  HubNetworkSettings m_settings;
  std::string m_user_agent;
  std::string m_no_proxy;
};

/// The part of `url` before its query and fragment (signed CDN URLs carry credentials there).
std::string without_query(const std::string& url);

}  // namespace trace::http
