#include "http_transfer.hpp"

#include "curl_api.hpp"

#include <algorithm>
#include <curl/curl.h>
#include <mutex>
#include <stdexcept>
#include <string_view>

namespace trace::http {

namespace {

constexpr std::size_t k_max_error_body_bytes = 64 * 1024;  // enough for {"error": "..."}

void global_init_once() { (void)curl_api(); }  // loads and initialises libcurl once

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

// The state one request's callbacks share.
struct Transfer {
  const Request* request = nullptr;
  Response* response = nullptr;
  CURL* curl = nullptr;
  std::vector<Headers> responses;  // one header map per response in the redirect chain
  std::uint64_t skipped = 0;       // bytes of an ignored-Range 200 before range_first
  bool stopped_on_purpose = false;
  bool too_large = false;
};

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  const std::string_view line = trim(std::string_view(data, bytes));
  if (line.starts_with("HTTP/")) {
    transfer->responses.emplace_back();
    return bytes;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  std::string name(trim(line.substr(0, colon)));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  if (transfer->responses.empty()) transfer->responses.emplace_back();
  transfer->responses.back()[name] = std::string(trim(line.substr(colon + 1)));
  return bytes;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  transfer->response->bytes_received += bytes;
  long status = 0;
  curl_api().easy_getinfo(transfer->curl, CURLINFO_RESPONSE_CODE, &status);
  if (status >= 300 && status < 400) return bytes;  // a redirect's own body
  std::string_view chunk(data, bytes);
  std::string& body = transfer->response->body;
  if (status >= 400) {
    body.append(chunk.substr(0, std::min(chunk.size(), k_max_error_body_bytes - std::min(body.size(), k_max_error_body_bytes))));
    return bytes;
  }
  const Request& request = *transfer->request;
  const bool ranged = request.range_first && request.range_last;
  if (ranged && status == 200) {
    // The server ignored Range and sends the whole file: skip to the range, keep it, cut off.
    const std::uint64_t first = *request.range_first;
    if (transfer->skipped < first) {
      const std::size_t skip =
          static_cast<std::size_t>(std::min<std::uint64_t>(first - transfer->skipped, chunk.size()));
      transfer->skipped += skip;
      chunk.remove_prefix(skip);
    }
  }
  const std::uint64_t limit =
      ranged ? *request.range_last - *request.range_first + 1 : request.max_body_bytes;
  const std::uint64_t room = limit - std::min<std::uint64_t>(limit, body.size());
  if (chunk.size() > room) {
    body.append(chunk.substr(0, static_cast<std::size_t>(room)));
    (ranged ? transfer->stopped_on_purpose : transfer->too_large) = true;
    return 0;  // abort the transfer (CURLE_WRITE_ERROR)
  }
  body.append(chunk);
  if (ranged && status == 200 && body.size() == limit) {
    transfer->stopped_on_purpose = true;
    return 0;
  }
  return bytes;
}

Outcome outcome_of(CURLcode code, CURL* curl) {
  switch (code) {
    case CURLE_OK:
      return Outcome::ok;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return Outcome::unresolved;
    case CURLE_COULDNT_CONNECT:
      return Outcome::unreachable;
    case CURLE_OPERATION_TIMEDOUT: {
      curl_off_t connected_us = 0;
      curl_api().easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connected_us);
      return connected_us == 0 ? Outcome::unreachable : Outcome::timed_out;
    }
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return Outcome::interrupted;
    default:
      return Outcome::failed;
  }
}

// "bytes a-b/total" or "bytes */total".
void read_content_range(const Headers& headers, Response& response,
                        std::optional<std::uint64_t>& range_start) {
  const auto found = headers.find("content-range");
  if (found == headers.end()) return;
  std::string_view value = found->second;
  if (!value.starts_with("bytes ")) return;
  value.remove_prefix(6);
  const std::size_t slash = value.find('/');
  if (slash == std::string_view::npos) return;
  response.total_size = parse_u64(value.substr(slash + 1));
  const std::size_t dash = value.find('-');
  if (dash != std::string_view::npos && dash < slash) range_start = parse_u64(value.substr(0, dash));
}

}  // namespace

struct Session::Handle {
  CURL* curl = nullptr;
  ~Handle() {
    if (curl) curl_api().easy_cleanup(curl);
  }
};

Session::Session(const HubNetworkSettings& settings, std::string user_agent, std::string no_proxy)
    : m_handle(std::make_unique<Handle>()),
      m_settings(settings),
      m_user_agent(std::move(user_agent)),
      m_no_proxy(std::move(no_proxy)) {
  global_init_once();
  m_handle->curl = curl_api().easy_init();
  if (!m_handle->curl) throw std::runtime_error("libcurl could not create a handle");
}

Session::~Session() = default;

Response Session::get(const Request& request) {
  CURL* curl = m_handle->curl;
  curl_api().easy_reset(curl);  // keeps the open connections
  Response response;
  Transfer transfer;
  transfer.request = &request;
  transfer.response = &response;
  transfer.curl = curl;
  char error_text[CURL_ERROR_SIZE] = {};

  curl_api().easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_api().easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_api().easy_setopt(curl, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_api().easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  curl_api().easy_setopt(curl, CURLOPT_MAXREDIRS, m_settings.max_redirects);
  // The token goes to the Hub's host only: libcurl drops Authorization when a redirect changes
  // the host, scheme or port (the CDN's URL is signed instead).
  curl_api().easy_setopt(curl, CURLOPT_UNRESTRICTED_AUTH, 0L);
  curl_api().easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_api().easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(m_settings.connect_timeout.count()));
  curl_api().easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(m_settings.request_timeout.count()));
  curl_api().easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_api().easy_setopt(curl, CURLOPT_LOW_SPEED_TIME, static_cast<long>(m_settings.stall_timeout.count()));
  curl_api().easy_setopt(curl, CURLOPT_USERAGENT, m_user_agent.c_str());
  curl_api().easy_setopt(curl, CURLOPT_NOPROXY, m_no_proxy.c_str());
  curl_api().easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
  curl_api().easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_api().easy_setopt(curl, CURLOPT_HEADERDATA, &transfer);
  curl_api().easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_api().easy_setopt(curl, CURLOPT_WRITEDATA, &transfer);
  std::string range;
  if (request.range_first && request.range_last) {
    range = std::to_string(*request.range_first) + "-" + std::to_string(*request.range_last);
    curl_api().easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  }
  curl_slist* headers = nullptr;
  std::string authorization;
  if (request.bearer_token) {
    authorization = "Authorization: Bearer " + *request.bearer_token;
    headers = curl_api().slist_append(headers, authorization.c_str());
    curl_api().easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  }

  const CURLcode code = curl_api().easy_perform(curl);
  curl_api().slist_free_all(headers);
  // Overwrite the token's copy before the string is freed.
  std::fill(authorization.begin(), authorization.end(), '\0');

  curl_api().easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  long redirects = 0;
  curl_api().easy_getinfo(curl, CURLINFO_REDIRECT_COUNT, &redirects);
  response.redirects = static_cast<int>(redirects);
  if (!transfer.responses.empty()) {
    response.first_headers = transfer.responses.front();
    response.headers = transfer.responses.back();
  }
  if (code == CURLE_WRITE_ERROR && transfer.stopped_on_purpose) {
    response.outcome = Outcome::ok;
  } else if (code == CURLE_WRITE_ERROR && transfer.too_large) {
    response.outcome = Outcome::too_large;
  } else {
    response.outcome = outcome_of(code, curl);
  }
  if (response.outcome != Outcome::ok) {
    response.transport_message = error_text[0] ? std::string(error_text) : curl_api().easy_strerror(code);
  }
  std::optional<std::uint64_t> range_start;
  read_content_range(response.headers, response, range_start);
  if (request.range_first && response.status == 200) {
    response.range_ignored = true;
    const auto length = response.headers.find("content-length");
    if (length != response.headers.end()) response.total_size = parse_u64(length->second);
  }
  if (request.range_first && response.status == 206 && range_start != request.range_first) {
    response.outcome = Outcome::failed;
    response.transport_message = "the server answered a different range than the one asked for";
  }
  curl_api().easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  return response;
}

std::string without_query(const std::string& url) {
  return url.substr(0, std::min(url.find('?'), url.find('#')));
}

}  // namespace trace::http
