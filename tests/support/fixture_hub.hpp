#pragma once
// A local stand-in for the Hugging Face Hub, inside the test process: two HTTP/1.1 listeners on
// 127.0.0.1 (ephemeral ports), a "hub" port (the API and /resolve/) and a "cdn" port that the
// hub's resolve URLs of LFS files redirect to. The CDN honours Range (206 + Content-Range) unless
// told to ignore it. Files are served from memory: a shard stores its header bytes and reports its
// full size, the rest served as zeros (no weights stored). Faults can be injected per URL, and
// every request is logged with its headers.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trace::test {

struct FixtureFile {
  std::string content;     // the first bytes of the file (all of a small file)
  std::uint64_t size = 0;  // the file's length; bytes past `content` are zeros
  bool lfs = false;        // resolve answers 302 to the CDN, like *.safetensors on the Hub
};

struct FixtureRepo {
  std::string id;                           // "org/name"
  std::string commit;                       // 40 hex; "main" points here unless refs say else
  std::map<std::string, std::string> refs;  // extra branches and tags -> commit
  std::map<std::string, FixtureFile> files;
  bool gated = false;
  std::string granted_token;  // the one token a gated repo lets through
  bool list_siblings = true;  // false: the API answer has no "siblings" (a mirror that omits them)
};

enum class FixturePort { hub, cdn };

struct LoggedRequest {
  FixturePort port = FixturePort::hub;
  std::string method;
  std::string target;                         // path and query, as sent
  std::map<std::string, std::string> headers;  // lower-case names
  bool has(const std::string& name) const { return headers.count(name) != 0; }
};

struct Fault {
  enum class Kind {
    status,    // answer `status` (429 with Retry-After: retry_after)
    slow,      // wait `delay`, then answer normally
    truncate,  // announce the whole body, send half of it, close
    garbage,   // 200 with a body that is not what the URL serves ("<html>...")
  };
  Kind kind = Kind::status;
  int status = 500;
  std::string retry_after;  // for 429; empty: no header
  std::chrono::milliseconds delay{0};
  std::string date{};  // for 429: a Date header (an IMF-fixdate); empty: none
};

class FixtureHub {
 public:
  FixtureHub();
  ~FixtureHub();
  FixtureHub(const FixtureHub&) = delete;
  FixtureHub& operator=(const FixtureHub&) = delete;

  void add_repo(FixtureRepo repo);
  std::string endpoint() const;  // http://127.0.0.1:<hub port>
  int hub_port() const { return m_hub_port; }
  int cdn_port() const { return m_cdn_port; }

  /// The next `times` requests whose target contains `target_part` get `fault`.
  void inject(const std::string& target_part, Fault fault, int times = 1);
  /// The CDN answers 200 with the whole file to a Range request (some CDNs and proxies do).
  void ignore_range(bool ignore) { m_ignore_range = ignore; }

  std::vector<LoggedRequest> requests() const;
  std::size_t request_count() const;
  std::uint64_t body_bytes_sent() const { return m_body_bytes.load(); }
  /// The most connections open at once on the CDN port.
  std::size_t peak_cdn_connections() const { return m_peak_cdn.load(); }
  void clear_log();

  struct Reply;

 private:
  struct Listener;
  void accept_loop(int listen_fd, FixturePort port);
  void serve_connection(int fd, FixturePort port);
  Reply route(const LoggedRequest& request, bool& truncate);
  Reply route_hub(const LoggedRequest& request);
  Reply route_cdn(const LoggedRequest& request);
  bool send_reply(int fd, const Reply& reply, bool truncate);

  int m_hub_fd = -1;
  int m_cdn_fd = -1;
  int m_hub_port = 0;
  int m_cdn_port = 0;
  std::atomic<bool> m_stopping{false};
  std::atomic<bool> m_ignore_range{false};
  std::atomic<std::uint64_t> m_body_bytes{0};
  std::atomic<std::size_t> m_open_cdn{0};
  std::atomic<std::size_t> m_peak_cdn{0};
  mutable std::mutex m_mutex;  // guards everything below
  std::map<std::string, FixtureRepo> m_repos;
  struct Rule {
    std::string target_part;
    Fault fault;
    int remaining = 0;
  };
  std::vector<Rule> m_rules;
  std::vector<LoggedRequest> m_log;
  std::vector<int> m_connections;
  std::vector<std::thread> m_threads;
  std::thread m_hub_thread;
  std::thread m_cdn_thread;
};

/// A 40- or 64-hex stand-in for a content hash (not a real SHA), stable for the same text.
std::string fake_hash(const std::string& text, std::size_t hex_digits);

}  // namespace trace::test
