#pragma once
// A uniquely named scratch folder under the system temp directory, removed with everything in it
// when the test ends. Tests that need files (configs, HF cache layouts, GPU tables) write them
// here.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>

namespace trace::test {

class TempDir {
 public:
  TempDir() {
    static std::atomic<std::uint64_t> counter{0};
    std::random_device random;
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    for (int attempt = 0; attempt < 16; ++attempt) {
      const std::filesystem::path candidate =
          std::filesystem::temp_directory_path() /
          ("trace-test-" + std::to_string(now) + "-" + std::to_string(counter++) + "-" +
           std::to_string(random()));
      if (std::filesystem::create_directory(candidate)) {
        m_path = candidate;
        return;
      }
    }
    throw std::runtime_error("cannot create a unique temp folder");
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return m_path; }
  /// path() / relative, as a string.
  std::string at(const std::string& relative) const { return (m_path / relative).string(); }

  /// Writes `text` to path() / relative (creating folders) and returns the full path.
  std::string write(const std::string& relative, const std::string& text) const {
    const std::filesystem::path file = m_path / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream stream(file, std::ios::binary | std::ios::trunc);
    stream << text;
    stream.close();
    if (!stream) throw std::runtime_error("cannot write " + file.string());
    return file.string();
  }

  /// Creates the folder path() / relative and returns its full path.
  std::string make_dir(const std::string& relative) const {
    const std::filesystem::path dir = m_path / relative;
    std::filesystem::create_directories(dir);
    return dir.string();
  }

 private:
  std::filesystem::path m_path;
};

}  // namespace trace::test
