#include "trace/io/hub_client.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "http_transfer.hpp"
#include "trace/io/http_date.hpp"
#include "trace/version.hpp"

namespace trace {

namespace fs = std::filesystem;

namespace {

constexpr std::uintmax_t k_max_token_file_bytes = 64 * 1024;
constexpr const char* k_loopback_hosts = "localhost,127.0.0.1,::1";

std::string clean_token(std::string token) {
  token.erase(std::remove_if(token.begin(), token.end(), [](char c) { return c == '\r' || c == '\n'; }),
              token.end());
  const std::size_t first = token.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const std::size_t last = token.find_last_not_of(" \t");
  return token.substr(first, last - first + 1);
}

bool is_lower_hex(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_commit_hash(std::string_view text) { return text.size() == 40 && is_lower_hex(text); }

bool retryable_status(long status) {
  return status == 408 || status == 429 || (status >= 500 && status <= 599 && status != 501);
}

std::string header_or(const http::Headers& headers, const std::string& name,
                      const std::string& fallback = {}) {
  const auto found = headers.find(name);
  return found == headers.end() ? fallback : found->second;
}

// Retry-After as delay-seconds or an HTTP date (measured from the response's Date, else from this
// machine's clock); nullopt when absent or malformed (the backoff applies).
std::optional<std::int64_t> retry_after_seconds(const http::Headers& headers) {
  const std::string value = header_or(headers, "retry-after");
  if (value.empty()) return std::nullopt;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  return http::retry_after_wait(value, header_or(headers, "date"), now);
}

// The server's own words: X-Error-Message, else the JSON body's "error".
std::string server_message(const http::Response& response) {
  std::string message = header_or(response.headers, "x-error-message");
  if (message.empty()) {
    const nlohmann::json body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object() && body.contains("error") && body["error"].is_string()) {
      message = body["error"].get<std::string>();
    }
  }
  if (message.size() > 300) message = message.substr(0, 300) + "...";
  const std::string request_id = header_or(response.headers, "x-request-id");
  if (!request_id.empty()) message += (message.empty() ? "" : " ") + fmt::format("(request id {})", request_id);
  return message.empty() ? message : ": " + message;
}

}  // namespace

struct HubClient::Context {
  std::string repo;
  std::string revision;  // as asked for
  std::string commit;    // empty before the revision is resolved
  std::string file;      // empty for the API call
  std::string url;       // without its query
};

std::string hub_endpoint(const HubEnvironment& env) {
  std::string endpoint = env.hf_endpoint.value_or("");
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  return endpoint.empty() ? std::string(k_default_hub_endpoint) : endpoint;
}

std::optional<std::string> hub_token(const HubEnvironment& env, std::string* source) {
  if (env.hf_token) {
    std::string token = clean_token(*env.hf_token);
    if (!token.empty()) {
      if (source) *source = "HF_TOKEN";
      return token;
    }
  }
  fs::path path;
  if (env.hf_token_path && !env.hf_token_path->empty()) {
    path = *env.hf_token_path;
  } else if (env.hf_home && !env.hf_home->empty()) {
    path = fs::path(*env.hf_home) / "token";
  } else {
    path = fs::path(env.home.value_or(".")) / ".cache" / "huggingface" / "token";
  }
  std::error_code error;
  if (!fs::is_regular_file(path, error) || fs::file_size(path, error) > k_max_token_file_bytes) {
    return std::nullopt;
  }
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  std::string token = clean_token(text.str());
  if (token.empty()) return std::nullopt;
  if (source) *source = path.string();
  return token;
}

HubConnection hub_connection(const HubEnvironment& env) {
  HubConnection connection;
  connection.endpoint = hub_endpoint(env);
  connection.token = hub_token(env, &connection.token_source);
  connection.settings = env.network_settings;
  connection.no_proxy = k_loopback_hosts;
  if (env.no_proxy && !env.no_proxy->empty()) connection.no_proxy += "," + *env.no_proxy;
  return connection;
}

std::string percent_encode(std::string_view text, bool keep_slash) {
  std::string encoded;
  for (const char c : text) {
    const bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || (keep_slash && c == '/')) {
      encoded += c;
    } else {
      encoded += fmt::format("%{:02X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    }
  }
  return encoded;
}

std::string revision_api_url(const std::string& endpoint, const std::string& repo,
                             const std::string& revision) {
  return fmt::format("{}/api/models/{}/revision/{}?expand=sha&expand=siblings", endpoint, repo,
                     percent_encode(revision, false));
}

std::string resolve_url(const std::string& endpoint, const std::string& repo,
                        const std::string& commit, const std::string& path) {
  return fmt::format("{}/{}/resolve/{}/{}", endpoint, repo, percent_encode(commit, false),
                     percent_encode(path, true));
}

std::string normalized_etag(std::string_view etag) {
  if (etag.starts_with("W/")) etag.remove_prefix(2);
  while (!etag.empty() && etag.front() == '"') etag.remove_prefix(1);
  while (!etag.empty() && etag.back() == '"') etag.remove_suffix(1);
  if ((etag.size() != 40 && etag.size() != 64) || !is_lower_hex(etag)) return {};
  return std::string(etag);
}

HubClient::HubClient(HubConnection connection)
    : m_connection(std::move(connection)), m_session(new_session()) {}

HubClient::~HubClient() = default;

std::unique_ptr<http::Session> HubClient::new_session() const {
  return std::make_unique<http::Session>(m_connection.settings,
                                         fmt::format("trace/{}", k_version), m_connection.no_proxy);
}

namespace {

std::string what_of(const std::string& repo, const std::string& file) {
  return file.empty() ? fmt::format("the revision of {}", repo) : fmt::format("{} of {}", file, repo);
}

// Transport failures become errors; a response (any status) passes.
void require_response(const http::Response& response, const std::string& what,
                      const std::string& endpoint, int tries, const HubNetworkSettings& settings) {
  switch (response.outcome) {
    case http::Outcome::ok:
      return;
    case http::Outcome::unresolved:
    case http::Outcome::unreachable:
      throw HubUnreachableError(fmt::format(
          "cannot reach the Hub at {} ({}) after {} {}; check the network, or set HF_HUB_OFFLINE=1 "
          "(or pass --offline) to use the local cache only",
          endpoint, response.transport_message, tries, tries == 1 ? "try" : "tries"));
    case http::Outcome::timed_out:
      throw FetchError(fmt::format("the Hub did not deliver {} in time ({}) after {} tries", what,
                                   response.transport_message, tries));
    case http::Outcome::interrupted:
      throw FetchError(fmt::format(
          "the response for {} was cut short (truncated or connection lost: {}) after {} tries",
          what, response.transport_message, tries));
    case http::Outcome::too_large:
      throw FetchError(fmt::format("{} is larger than {} bytes; refused", what,
                                   settings.max_file_bytes));
    case http::Outcome::failed:
      break;
  }
  throw FetchError(fmt::format("the request for {} failed: {}", what, response.transport_message));
}

}  // namespace

http::Response HubClient::get_with_retries(http::Session& session, const http::Request& request,
                                           const Context& context) {
  const HubNetworkSettings& settings = m_connection.settings;
  int connect_failures = 0;
  for (int attempt = 1;; ++attempt) {
    ++m_requests;
    http::Response response = session.get(request);
    m_bytes += response.bytes_received;
    std::chrono::milliseconds wait = settings.backoff_initial;
    for (int doubling = 1; doubling < attempt && wait < settings.backoff_max; ++doubling) wait *= 2;
    wait = std::min(wait, settings.backoff_max);
    bool retry = false;
    switch (response.outcome) {
      case http::Outcome::ok:
        retry = retryable_status(response.status);
        if (response.status == 429) {
          if (const std::optional<std::int64_t> seconds = retry_after_seconds(response.headers)) {
            // Compared in units first: a huge value must not overflow the multiplication.
            const std::int64_t max_units =
                settings.retry_after_unit.count() > 0
                    ? settings.retry_after_max / settings.retry_after_unit
                    : std::numeric_limits<std::int64_t>::max() - 1;
            wait = settings.retry_after_unit * std::min<std::int64_t>(*seconds, max_units + 1);
            if (*seconds > max_units || wait > settings.retry_after_max) {
              throw FetchError(fmt::format(
                  "the Hub is rate-limiting requests (429) and asks to wait {} s before {}; try "
                  "again later, or set HF_TOKEN for a higher limit",
                  *seconds, what_of(context.repo, context.file)));
            }
          }
        }
        break;
      case http::Outcome::unreachable:
        retry = ++connect_failures < settings.max_connect_attempts;
        break;
      case http::Outcome::timed_out:
      case http::Outcome::interrupted:
        retry = true;
        break;
      case http::Outcome::unresolved:
      case http::Outcome::too_large:
      case http::Outcome::failed:
        break;
    }
    if (!retry || attempt >= settings.max_attempts) {
      require_response(response, what_of(context.repo, context.file), m_connection.endpoint,
                       attempt, settings);
      if (retryable_status(response.status)) {
        throw FetchError(fmt::format(
            "the Hub answered HTTP {} for {} after {} tries{}; {}", response.status,
            what_of(context.repo, context.file), attempt, server_message(response),
            response.status == 429 ? "it is rate-limiting requests: wait, or set HF_TOKEN for a higher limit"
                                   : "try again later"));
      }
      return response;
    }
    std::this_thread::sleep_for(wait);
  }
}

namespace {

// A status other than success, as the Hub means it (huggingface_hub's hf_raise_for_status).
[[noreturn]] void throw_for_status(const http::Response& response, const std::string& endpoint,
                                   const std::string& repo, const std::string& revision,
                                   const std::string& file, const HubConnection& connection) {
  const std::string code = header_or(response.headers, "x-error-code");
  const std::string message = header_or(response.headers, "x-error-message");
  const long status = response.status;
  const std::string at = fmt::format("revision '{}'", revision);
  if (code == "GatedRepo" || ((status == 401 || status == 403) && !file.empty() && code.empty())) {
    if (!connection.token || status == 401) {
      throw HubAccessError(fmt::format(
          "{} is a gated repository: accept its licence at {}/{} and set HF_TOKEN to a token of "
          "that account (or save one in $HF_HOME/token){}",
          repo, endpoint, repo, server_message(response)));
    }
    throw HubAccessError(fmt::format(
        "{} is a gated repository and the token from {} has not been granted access: accept its "
        "licence at {}/{} with the token's account{}",
        repo, connection.token_source, endpoint, repo, server_message(response)));
  }
  if (status == 401 && message == "Invalid credentials in Authorization header") {
    throw HubAccessError(fmt::format(
        "the Hub rejected the token from {} (invalid credentials); replace it or unset it",
        connection.token_source));
  }
  if (code == "RevisionNotFound") {
    throw HubNotFoundError(HubNotFoundError::Missing::revision,
                           fmt::format("{} not found in {} on {} (use a branch, tag or commit)",
                                       at, repo, endpoint));
  }
  if (code == "EntryNotFound" || (status == 404 && !file.empty() && code != "RepoNotFound")) {
    throw HubNotFoundError(HubNotFoundError::Missing::file,
                           fmt::format("file {} not found in {} at {}", file, repo, at));
  }
  if (code == "RepoNotFound" || status == 404 || status == 401) {
    throw HubNotFoundError(
        HubNotFoundError::Missing::repository,
        fmt::format("repository {} not found on {}; check the id{}", repo, endpoint,
                    connection.token ? ", and that the token can read it if it is private"
                                     : ", or set HF_TOKEN if it is private or gated"));
  }
  if (status == 403) {
    throw HubAccessError(fmt::format("the Hub refused access to {} (403 Forbidden){}; check the "
                                     "token's permissions",
                                     repo, server_message(response)));
  }
  if (status == 416) {
    throw FetchError(fmt::format("{} of {} is empty or shorter than asked for (416)", file, repo));
  }
  throw FetchError(fmt::format("unexpected HTTP {} from the Hub for {}{}", status,
                               what_of(repo, file), server_message(response)));
}

}  // namespace

RevisionInfo HubClient::resolve_revision(const std::string& repo, const std::string& revision) {
  const Context context{repo, revision, {}, {}, revision_api_url(m_connection.endpoint, repo, revision)};
  http::Request request;
  request.url = context.url;
  request.bearer_token = m_connection.token;
  request.max_body_bytes = m_connection.settings.max_file_bytes;
  const http::Response response = get_with_retries(*m_session, request, context);
  if (response.status != 200) {
    throw_for_status(response, m_connection.endpoint, repo, revision, {}, m_connection);
  }
  const nlohmann::json info = nlohmann::json::parse(response.body, nullptr, false);
  if (!info.is_object() || !info.contains("sha") || !info["sha"].is_string() ||
      !is_commit_hash(info["sha"].get<std::string>())) {
    throw FetchError(fmt::format(
        "malformed answer from {} for {}@{}: not JSON with a 40-hex \"sha\" (is HF_ENDPOINT a "
        "Hugging Face Hub?)",
        m_connection.endpoint, repo, revision));
  }
  RevisionInfo result;
  result.commit = info["sha"].get<std::string>();
  if (info.contains("siblings") && info["siblings"].is_array()) {
    for (const nlohmann::json& sibling : info["siblings"]) {
      if (sibling.is_object() && sibling.contains("rfilename") && sibling["rfilename"].is_string()) {
        result.files.push_back(sibling["rfilename"].get<std::string>());
      }
    }
  }
  return result;
}

HubFile HubClient::download(const std::string& repo, const std::string& commit,
                            const std::string& path) {
  const Context context{repo, commit, commit, path, resolve_url(m_connection.endpoint, repo, commit, path)};
  http::Request request;
  request.url = context.url;
  request.bearer_token = m_connection.token;
  request.max_body_bytes = m_connection.settings.max_file_bytes;
  const http::Response response = get_with_retries(*m_session, request, context);
  if (response.status != 200) {
    throw_for_status(response, m_connection.endpoint, repo, commit, path, m_connection);
  }
  HubFile file;
  file.path = path;
  file.content = response.body;
  file.etag = normalized_etag(header_or(response.first_headers, "x-linked-etag",
                                        header_or(response.headers, "etag")));
  return file;
}

ShardHeaderBytes HubClient::read_shard_header(http::Session& session, const Context& context) {
  const HubNetworkSettings& settings = m_connection.settings;
  const std::uint64_t probe = std::max<std::uint64_t>(settings.header_probe_bytes, 8);
  http::Request request;
  request.url = context.url;
  request.bearer_token = m_connection.token;
  request.range_first = 0;
  request.range_last = probe - 1;
  request.max_body_bytes = probe;
  const http::Response first = get_with_retries(session, request, context);
  if (first.status != 206 && first.status != 200) {
    throw_for_status(first, m_connection.endpoint, context.repo, context.commit, context.file,
                     m_connection);
  }
  ShardHeaderBytes shard;
  shard.file = context.file;
  shard.file_size = first.total_size.value_or(0);
  shard.bytes = first.body;
  const std::string where = fmt::format("{} of {}", context.file, context.repo);
  if (shard.bytes.size() < 8) {
    throw FetchError(fmt::format("{} is {} bytes long: too short for a safetensors header", where,
                                 shard.bytes.size()));
  }
  const std::uint64_t header_length = read_u64_le(shard.bytes);
  if (header_length > settings.max_header_bytes) {
    throw FetchError(fmt::format("{} declares a {}-byte safetensors header, over the {}-byte "
                                 "limit; refused (not a safetensors file?)",
                                 where, header_length, settings.max_header_bytes));
  }
  const std::uint64_t needed = 8 + header_length;
  if (first.total_size && needed > *first.total_size) {
    throw FetchError(fmt::format("{} declares a {}-byte header but the file holds {} bytes: not a "
                                 "safetensors file",
                                 where, header_length, *first.total_size));
  }
  if (shard.bytes.size() < needed) {
    if (shard.bytes.size() < probe) {
      throw FetchError(fmt::format("{} ended after {} bytes inside its {}-byte header (truncated)",
                                   where, shard.bytes.size(), header_length));
    }
    request.range_first = shard.bytes.size();
    request.range_last = needed - 1;
    request.max_body_bytes = needed - shard.bytes.size();
    const http::Response rest = get_with_retries(session, request, context);
    if (rest.status != 206 && rest.status != 200) {
      throw_for_status(rest, m_connection.endpoint, context.repo, context.commit, context.file,
                       m_connection);
    }
    shard.bytes += rest.body;
    if (shard.bytes.size() != needed) {
      throw FetchError(fmt::format("{}: the header read ended after {} of {} bytes (truncated)",
                                   where, shard.bytes.size(), needed));
    }
  }
  shard.bytes.resize(static_cast<std::size_t>(needed));
  if (header_length == 0 || shard.bytes[8] != '{') {
    throw FetchError(fmt::format("{} does not hold a safetensors header (no JSON object after the "
                                 "length prefix)",
                                 where));
  }
  return shard;
}

std::vector<ShardHeaderBytes> HubClient::read_shard_headers(
    const std::string& repo, const std::string& commit, const std::vector<std::string>& paths,
    const std::function<void(const ShardHeaderBytes&)>& on_done) {
  std::vector<ShardHeaderBytes> shards(paths.size());
  std::vector<std::exception_ptr> errors(paths.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  const auto work = [&] {
    std::unique_ptr<http::Session> session;
    for (;;) {
      const std::size_t index = next++;
      if (index >= paths.size() || failed) return;
      try {
        if (!session) session = new_session();
        const Context context{repo, commit, commit, paths[index],
                              resolve_url(m_connection.endpoint, repo, commit, paths[index])};
        shards[index] = read_shard_header(*session, context);
        if (on_done) {
          const std::lock_guard lock(m_done_mutex);
          on_done(shards[index]);
        }
      } catch (...) {
        errors[index] = std::current_exception();
        failed = true;
      }
    }
  };
  const std::size_t workers = std::min<std::size_t>(
      paths.size(), static_cast<std::size_t>(std::max(1, m_connection.settings.max_connections)));
  {
    std::vector<std::jthread> threads;
    threads.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) threads.emplace_back(work);
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  return shards;
}

std::uint64_t read_u64_le(std::string_view bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8 && i < bytes.size(); ++i) {
    value |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  }
  return value;
}

std::string u64_le_bytes(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) {
    bytes[i] = static_cast<char>(static_cast<unsigned char>((value >> (8 * i)) & 0xffU));
  }
  return bytes;
}

}  // namespace trace
