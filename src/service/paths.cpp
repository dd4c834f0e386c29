// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "paths.hpp"

#include <fmt/core.h>

#include <iterator>
#include <stdexcept>
#include <system_error>

#include "errors.hpp"

namespace pp::service {

namespace fs = std::filesystem;

fs::path canonical_root(const fs::path& data_root) {
  std::error_code ec;
  const fs::path root = fs::canonical(data_root, ec);
  if (ec) throw std::invalid_argument(fmt::format("--data-root {}: {}", data_root.string(), ec.message()));
  if (!fs::is_directory(root)) throw std::invalid_argument(fmt::format("--data-root {}: not a directory", data_root.string()));
  return root;
}

bool is_within(const fs::path& root, const fs::path& path) {
  // Element-wise prefix test: /data is not a prefix of /database.
  auto r = root.begin(), p = path.begin();
  for (; r != root.end(); ++r, ++p) {
    if (r->empty() && std::next(r) == root.end()) break;  // a trailing separator of root
    if (p == path.end() || *r != *p) return false;
  }
  return true;
}

namespace {

// A client's value as it may appear in a message: control bytes escaped, at most 200 bytes.
std::string printable(std::string_view value) {
  std::string out;
  for (char c : value.substr(0, 200)) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  if (value.size() > 200) out += "...";
  return out;
}

}  // namespace

fs::path confine(const fs::path& root, std::string_view value, std::string_view field, std::optional<std::size_t> index) {
  const std::string name = index ? fmt::format("{}[{}]", field, *index) : std::string(field);
  auto fail = [&](const std::string& why) {
    throw RequestError(ErrorCode::invalid_argument, fmt::format("{}: '{}' {}", name, printable(value), why));
  };
  if (value.empty()) throw RequestError(ErrorCode::invalid_argument, name + ": empty path");
  if (value.find('\0') != std::string_view::npos) fail("contains a NUL byte");
  if (value.size() > 4096) throw RequestError(ErrorCode::invalid_argument, name + ": path longer than 4096 bytes");
  const fs::path given(value);
  const fs::path joined = given.is_absolute() ? given : root / given;
  std::error_code ec;
  // weakly_canonical resolves `..` and the symlinks of the part that exists, so an escape is
  // refused as such even when its target does not exist.
  const fs::path weak = fs::weakly_canonical(joined, ec);
  if (ec) fail("cannot be resolved: " + ec.message());
  if (!is_within(root, weak)) fail("is outside --data-root");
  const fs::path resolved = fs::canonical(joined, ec);
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) fail("does not exist under --data-root");
    fail("cannot be resolved: " + ec.message());
  }
  if (!is_within(root, resolved)) fail("resolves outside --data-root (symlink)");
  if (!fs::is_regular_file(resolved, ec)) fail("is not a regular file");
  return resolved;
}

bool is_loopback_listen(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) return false;
  for (char c : listen.substr(colon + 1))
    if (c < '0' || c > '9') return false;
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host == "localhost" || host == "::1") return true;
  if (host.rfind("127.", 0) != 0) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.')
      ++dots;
    else if (c < '0' || c > '9')
      return false;
  }
  return dots == 3;
}

}  // namespace pp::service
