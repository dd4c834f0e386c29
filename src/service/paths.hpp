// SPDX-License-Identifier: Apache-2.0 OR MIT
// Path confinement: every path a client sends names a file under the daemon's --data-root.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pp::service {

// The canonical form of the data root (it must exist and be a directory; std::invalid_argument
// otherwise).
std::filesystem::path canonical_root(const std::filesystem::path& data_root);

// Resolves `value` (relative to `root`, or absolute inside it) to the canonical path of an
// existing regular file inside `root`, following symlinks. `root` must be canonical_root's
// result. Throws RequestError(invalid_argument) naming `field` (and `[index]` when given) for an
// empty or NUL-carrying value, a path whose resolution leaves `root` (`..`, an absolute path
// elsewhere, a symlink pointing out), a missing file or something that is not a regular file.
std::filesystem::path confine(const std::filesystem::path& root, std::string_view value, std::string_view field,
                              std::optional<std::size_t> index = std::nullopt);

// True when `path` (canonical) is `root` or lies below it, compared element by element.
bool is_within(const std::filesystem::path& root, const std::filesystem::path& path);

// True for host:port where host is in 127.0.0.0/8, ::1 ([::1]) or localhost: the only addresses
// served without a token or TLS, which this version does not have yet.
bool is_loopback_listen(const std::string& listen);

}  // namespace pp::service
