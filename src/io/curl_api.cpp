#include "curl_api.hpp"

#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <mutex>
#include <string>

#include "trace/error.hpp"

namespace trace::http {

namespace {

// Reads a symbol into a function pointer (memcpy: no object-to-function pointer cast).
template <typename Function>
void resolve(void* library, const char* name, Function& target, std::string& missing) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) {
    missing += missing.empty() ? name : std::string(", ") + name;
    return;
  }
  static_assert(sizeof(Function) == sizeof(void*));
  std::memcpy(&target, &symbol, sizeof(void*));
}

struct Loaded {
  CurlApi api;
  std::string error;  // empty when loaded
};

Loaded load() {
  Loaded loaded;
  void* library = nullptr;
  for (const char* name : {"libcurl.so.4", "libcurl.so", "libcurl-gnutls.so.4"}) {
    library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library != nullptr) break;
  }
  if (library == nullptr) {
    const char* why = dlerror();
    loaded.error = fmt::format("libcurl could not be loaded ({}); install libcurl4 (Debian: apt-get "
                               "install libcurl4) or use --offline",
                               why ? why : "libcurl.so.4 not found");
    return loaded;
  }
  std::string missing;
  CURLcode (*global_init)(long) = nullptr;
  resolve(library, "curl_global_init", global_init, missing);
  CurlApi& api = loaded.api;
  resolve(library, "curl_easy_init", api.easy_init, missing);
  resolve(library, "curl_easy_cleanup", api.easy_cleanup, missing);
  resolve(library, "curl_easy_reset", api.easy_reset, missing);
  resolve(library, "curl_easy_setopt", api.easy_setopt, missing);
  resolve(library, "curl_easy_getinfo", api.easy_getinfo, missing);
  resolve(library, "curl_easy_perform", api.easy_perform, missing);
  resolve(library, "curl_easy_strerror", api.easy_strerror, missing);
  resolve(library, "curl_slist_append", api.slist_append, missing);
  resolve(library, "curl_slist_free_all", api.slist_free_all, missing);
  if (!missing.empty()) {
    loaded.error = fmt::format("libcurl lacks {}; install a libcurl4 from 2022 or later", missing);
    return loaded;
  }
  if (global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) loaded.error = "libcurl failed to initialise";
  return loaded;
}

}  // namespace

const CurlApi& curl_api() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load(); });
  if (!loaded.error.empty()) throw FetchError(loaded.error);
  return loaded.api;
}

}  // namespace trace::http
