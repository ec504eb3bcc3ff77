#include "fixture_hub.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cstring>
#include <functional>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace trace::test {

struct FixtureHub::Reply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                   // used when `file` is null
  const FixtureFile* file = nullptr;  // else bytes [first, first + length) of this file
  std::uint64_t first = 0;
  std::uint64_t length = 0;
  std::chrono::milliseconds delay{0};
};

namespace {

constexpr std::size_t k_max_request_bytes = 64 * 1024;
constexpr std::size_t k_send_chunk = 64 * 1024;

std::string lower(std::string text) {
  for (char& c : text) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return text;
}

std::string percent_decode(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 206: return "Partial Content";
    case 302: return "Found";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

int listen_on_loopback(int& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket() failed");
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 64) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot listen on 127.0.0.1");
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  port = ntohs(address.sin_port);
  return fd;
}

bool send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t sent = ::send(fd, data, size, MSG_NOSIGNAL);
    if (sent <= 0) return false;
    data += sent;
    size -= static_cast<std::size_t>(sent);
  }
  return true;
}

FixtureHub::Reply error_reply(int status, const std::string& code, const std::string& message) {
  FixtureHub::Reply reply;
  reply.status = status;
  if (!code.empty()) reply.headers.emplace_back("X-Error-Code", code);
  reply.headers.emplace_back("X-Error-Message", message);
  reply.headers.emplace_back("Content-Type", "application/json");
  reply.body = nlohmann::json{{"error", message}}.dump();
  return reply;
}

}  // namespace

std::string fake_hash(const std::string& text, std::size_t hex_digits) {
  std::string hex;
  std::size_t seed = std::hash<std::string>{}(text);
  while (hex.size() < hex_digits) {
    char part[17];
    std::snprintf(part, sizeof part, "%016zx", seed);
    hex += part;
    seed = std::hash<std::string>{}(hex);
  }
  return hex.substr(0, hex_digits);
}

FixtureHub::FixtureHub() {
  m_hub_fd = listen_on_loopback(m_hub_port);
  m_cdn_fd = listen_on_loopback(m_cdn_port);
  m_hub_thread = std::thread([this] { accept_loop(m_hub_fd, FixturePort::hub); });
  m_cdn_thread = std::thread([this] { accept_loop(m_cdn_fd, FixturePort::cdn); });
}

FixtureHub::~FixtureHub() {
  m_stopping = true;
  ::shutdown(m_hub_fd, SHUT_RDWR);
  ::shutdown(m_cdn_fd, SHUT_RDWR);
  m_hub_thread.join();
  m_cdn_thread.join();
  ::close(m_hub_fd);
  ::close(m_cdn_fd);
  std::vector<std::thread> threads;
  {
    const std::lock_guard lock(m_mutex);
    for (const int fd : m_connections) ::shutdown(fd, SHUT_RDWR);
    threads.swap(m_threads);
  }
  for (std::thread& thread : threads) thread.join();
}

void FixtureHub::add_repo(FixtureRepo repo) {
  const std::lock_guard lock(m_mutex);
  repo.refs.emplace("main", repo.commit);
  m_repos[repo.id] = std::move(repo);
}

std::string FixtureHub::endpoint() const { return "http://127.0.0.1:" + std::to_string(m_hub_port); }

void FixtureHub::inject(const std::string& target_part, Fault fault, int times) {
  const std::lock_guard lock(m_mutex);
  m_rules.push_back({target_part, fault, times});
}

std::vector<LoggedRequest> FixtureHub::requests() const {
  const std::lock_guard lock(m_mutex);
  return m_log;
}

std::size_t FixtureHub::request_count() const {
  const std::lock_guard lock(m_mutex);
  return m_log.size();
}

void FixtureHub::clear_log() {
  const std::lock_guard lock(m_mutex);
  m_log.clear();
  m_body_bytes = 0;
}

void FixtureHub::accept_loop(int listen_fd, FixturePort port) {
  while (!m_stopping) {
    const int fd = ::accept(listen_fd, nullptr, nullptr);
    if (fd < 0) {
      if (m_stopping) return;
      continue;
    }
    const int no_delay = 1;  // no Nagle stalls between the head and the body
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &no_delay, sizeof no_delay);
    const std::lock_guard lock(m_mutex);
    if (m_stopping) {
      ::close(fd);
      return;
    }
    m_connections.push_back(fd);
    m_threads.emplace_back([this, fd, port] { serve_connection(fd, port); });
  }
}

void FixtureHub::serve_connection(int fd, FixturePort port) {
  if (port == FixturePort::cdn) {
    const std::size_t open = ++m_open_cdn;
    std::size_t peak = m_peak_cdn.load();
    while (open > peak && !m_peak_cdn.compare_exchange_weak(peak, open)) {
    }
  }
  std::string buffer;
  char chunk[4096];
  for (;;) {
    std::size_t end = buffer.find("\r\n\r\n");
    while (end == std::string::npos) {
      const ssize_t got = ::recv(fd, chunk, sizeof chunk, 0);
      if (got <= 0 || buffer.size() > k_max_request_bytes) {
        end = std::string::npos;
        break;
      }
      buffer.append(chunk, static_cast<std::size_t>(got));
      end = buffer.find("\r\n\r\n");
    }
    if (end == std::string::npos) break;
    LoggedRequest request;
    request.port = port;
    const std::string head = buffer.substr(0, end);
    buffer.erase(0, end + 4);
    std::size_t line_end = head.find("\r\n");
    const std::string request_line = head.substr(0, line_end);
    const std::size_t space1 = request_line.find(' ');
    const std::size_t space2 = request_line.find(' ', space1 + 1);
    request.method = request_line.substr(0, space1);
    request.target = request_line.substr(space1 + 1, space2 - space1 - 1);
    while (line_end != std::string::npos && line_end < head.size()) {
      const std::size_t next = head.find("\r\n", line_end + 2);
      const std::string line = head.substr(line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string value = line.substr(colon + 1);
        value.erase(0, value.find_first_not_of(' '));
        request.headers[lower(line.substr(0, colon))] = value;
      }
      line_end = next;
    }
    {
      const std::lock_guard lock(m_mutex);
      m_log.push_back(request);
    }
    bool truncate = false;
    const Reply reply = route(request, truncate);
    if (reply.delay.count() > 0) std::this_thread::sleep_for(reply.delay);
    if (!send_reply(fd, reply, truncate) || truncate) break;
    if (lower(request.headers["connection"]) == "close") break;
  }
  ::shutdown(fd, SHUT_RDWR);
  if (port == FixturePort::cdn) --m_open_cdn;
  const std::lock_guard lock(m_mutex);
  m_connections.erase(std::remove(m_connections.begin(), m_connections.end(), fd), m_connections.end());
  ::close(fd);
}

bool FixtureHub::send_reply(int fd, const Reply& reply, bool truncate) {
  const std::uint64_t length = reply.file ? reply.length : reply.body.size();
  std::string head = "HTTP/1.1 " + std::to_string(reply.status) + " " + reason(reply.status) + "\r\n";
  for (const auto& [name, value] : reply.headers) head += name + ": " + value + "\r\n";
  head += "Content-Length: " + std::to_string(length) + "\r\n\r\n";
  if (!send_all(fd, head.data(), head.size())) return false;
  const std::uint64_t to_send = truncate ? length / 2 : length;
  if (!reply.file) {
    const bool ok = send_all(fd, reply.body.data(), static_cast<std::size_t>(to_send));
    if (ok) m_body_bytes += to_send;
    return ok;
  }
  std::string block;
  for (std::uint64_t sent = 0; sent < to_send;) {
    const std::uint64_t position = reply.first + sent;
    const std::size_t size = static_cast<std::size_t>(std::min<std::uint64_t>(k_send_chunk, to_send - sent));
    block.assign(size, '\0');
    const std::string& content = reply.file->content;
    if (position < content.size()) {
      const std::size_t copy = static_cast<std::size_t>(std::min<std::uint64_t>(size, content.size() - position));
      std::memcpy(block.data(), content.data() + position, copy);
    }
    if (!send_all(fd, block.data(), size)) return false;
    m_body_bytes += size;
    sent += size;
  }
  return true;
}

FixtureHub::Reply FixtureHub::route(const LoggedRequest& request, bool& truncate) {
  std::chrono::milliseconds delay{0};
  {
    const std::lock_guard lock(m_mutex);
    for (Rule& rule : m_rules) {
      if (rule.remaining <= 0 || request.target.find(rule.target_part) == std::string::npos) continue;
      --rule.remaining;
      if (rule.fault.kind == Fault::Kind::status) {
        Reply reply = error_reply(rule.fault.status, "", "injected fault");
        if (!rule.fault.retry_after.empty()) reply.headers.emplace_back("Retry-After", rule.fault.retry_after);
        if (!rule.fault.date.empty()) reply.headers.emplace_back("Date", rule.fault.date);
        return reply;
      }
      if (rule.fault.kind == Fault::Kind::garbage) {
        Reply reply;
        reply.body = "<html>captive portal</html>";
        return reply;
      }
      if (rule.fault.kind == Fault::Kind::slow) delay = rule.fault.delay;
      if (rule.fault.kind == Fault::Kind::truncate) truncate = true;
      break;
    }
  }
  Reply reply = request.port == FixturePort::hub ? route_hub(request) : route_cdn(request);
  reply.delay = delay;
  return reply;
}

FixtureHub::Reply FixtureHub::route_hub(const LoggedRequest& request) {
  const std::string target = request.target.substr(0, request.target.find('?'));
  const auto token = [&]() -> std::string {
    const auto found = request.headers.find("authorization");
    if (found == request.headers.end() || found->second.rfind("Bearer ", 0) != 0) return {};
    return found->second.substr(7);
  }();
  std::string repo_id;
  std::string revision;
  std::string path;
  const bool api = target.rfind("/api/models/", 0) == 0;
  if (api) {
    const std::string rest = target.substr(12);
    const std::size_t at = rest.find("/revision/");
    repo_id = rest.substr(0, at);
    revision = at == std::string::npos ? "main" : percent_decode(rest.substr(at + 10));
  } else {
    const std::size_t at = target.find("/resolve/");
    if (at == std::string::npos) return error_reply(404, "", "no such route");
    repo_id = target.substr(1, at - 1);
    const std::string rest = target.substr(at + 9);
    const std::size_t slash = rest.find('/');
    revision = percent_decode(rest.substr(0, slash));
    path = slash == std::string::npos ? "" : percent_decode(rest.substr(slash + 1));
  }
  const std::lock_guard lock(m_mutex);
  const auto repo = m_repos.find(repo_id);
  if (repo == m_repos.end()) {
    // Like the Hub: 401 to anonymous callers (private and missing look alike), 404 with a token.
    return error_reply(token.empty() ? 401 : 404, "RepoNotFound", "Repository not found");
  }
  std::string commit;
  if (revision == repo->second.commit) {
    commit = revision;
  } else if (const auto ref = repo->second.refs.find(revision); ref != repo->second.refs.end()) {
    commit = ref->second;
  } else {
    return error_reply(404, "RevisionNotFound", "Invalid rev id: " + revision);
  }
  if (api) {
    nlohmann::json siblings = nlohmann::json::array();
    for (const auto& [name, file] : repo->second.files) siblings.push_back({{"rfilename", name}});
    Reply reply;
    reply.headers.emplace_back("Content-Type", "application/json");
    nlohmann::json info{{"id", repo_id},
                        {"sha", commit},
                        {"gated", repo->second.gated ? nlohmann::json("manual") : nlohmann::json(false)}};
    if (repo->second.list_siblings) info["siblings"] = siblings;
    reply.body = info.dump();
    return reply;
  }
  if (repo->second.gated && token != repo->second.granted_token) {
    Reply reply = error_reply(
        token.empty() ? 401 : 403, "GatedRepo",
        token.empty() ? "Access to model " + repo_id + " is restricted. You must have access to it and be authenticated to access it. Please log in."
                      : "Access to model " + repo_id + " is restricted and you are not in the authorized list.");
    reply.headers.emplace_back("X-Repo-Commit", commit);
    return reply;
  }
  const auto file = repo->second.files.find(path);
  if (file == repo->second.files.end()) {
    Reply reply = error_reply(404, "EntryNotFound", "Entry not found");
    reply.headers.emplace_back("X-Repo-Commit", commit);
    return reply;
  }
  Reply reply;
  reply.headers.emplace_back("X-Repo-Commit", commit);
  if (file->second.lfs) {
    reply.status = 302;
    reply.headers.emplace_back("Location", "http://127.0.0.1:" + std::to_string(m_cdn_port) + "/cdn/" +
                                               repo_id + "/" + path + "?sig=fixture-signature");
    reply.headers.emplace_back("X-Linked-Size", std::to_string(file->second.size));
    reply.headers.emplace_back("X-Linked-Etag", "\"" + fake_hash(file->second.content, 64) + "\"");
    return reply;
  }
  reply.headers.emplace_back("ETag", "\"" + fake_hash(file->second.content, 40) + "\"");
  reply.body = file->second.content;
  return reply;
}

FixtureHub::Reply FixtureHub::route_cdn(const LoggedRequest& request) {
  const std::string target = request.target.substr(0, request.target.find('?'));
  if (target.rfind("/cdn/", 0) != 0) return error_reply(404, "", "no such blob");
  const std::string rest = target.substr(5);
  const std::size_t first_slash = rest.find('/');
  const std::size_t second_slash = rest.find('/', first_slash + 1);
  const std::string repo_id = rest.substr(0, second_slash);
  const std::string path = second_slash == std::string::npos ? "" : rest.substr(second_slash + 1);
  const std::lock_guard lock(m_mutex);
  const auto repo = m_repos.find(repo_id);
  if (repo == m_repos.end()) return error_reply(404, "", "no such blob");
  const auto file = repo->second.files.find(path);
  if (file == repo->second.files.end()) return error_reply(404, "", "no such blob");
  Reply reply;
  reply.file = &file->second;
  reply.headers.emplace_back("Accept-Ranges", "bytes");
  reply.length = file->second.size;
  const auto range = request.headers.find("range");
  if (range == request.headers.end() || m_ignore_range || range->second.rfind("bytes=", 0) != 0) {
    return reply;  // 200, the whole file
  }
  const std::string spec = range->second.substr(6);
  const std::size_t dash = spec.find('-');
  const std::uint64_t first = std::stoull(spec.substr(0, dash));
  std::uint64_t last = file->second.size - 1;
  if (dash + 1 < spec.size()) last = std::min<std::uint64_t>(last, std::stoull(spec.substr(dash + 1)));
  if (first >= file->second.size) {
    Reply out_of_range = error_reply(416, "", "range not satisfiable");
    out_of_range.headers.emplace_back("Content-Range", "bytes */" + std::to_string(file->second.size));
    return out_of_range;
  }
  reply.status = 206;
  reply.first = first;
  reply.length = last - first + 1;
  reply.headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" +
                                                  std::to_string(last) + "/" +
                                                  std::to_string(file->second.size));
  return reply;
}

}  // namespace trace::test
