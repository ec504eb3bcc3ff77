#pragma once
// libcurl, loaded on first use with dlopen: a plan that never reaches the network does not pay
// libcurl's start-up cost (its dependencies' constructors and relocations: about 5 ms of CPU in
// every process, more than a whole warm plan). Only http_transfer.cpp calls through it.
#include <curl/curl.h>

namespace trace::http {

struct CurlApi {
  CURL* (*easy_init)() = nullptr;
  void (*easy_cleanup)(CURL*) = nullptr;
  void (*easy_reset)(CURL*) = nullptr;
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...) = nullptr;
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...) = nullptr;
  CURLcode (*easy_perform)(CURL*) = nullptr;
  const char* (*easy_strerror)(CURLcode) = nullptr;
  curl_slist* (*slist_append)(curl_slist*, const char*) = nullptr;
  void (*slist_free_all)(curl_slist*) = nullptr;
};

/// libcurl.so.4 loaded and globally initialised once. Throws FetchError (exit 3) naming the
/// library when it cannot be loaded.
const CurlApi& curl_api();

}  // namespace trace::http
