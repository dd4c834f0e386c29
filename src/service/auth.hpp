// SPDX-License-Identifier: Apache-2.0 OR MIT
// Authentication of the daemon's callers: a bearer token (--token-file) checked on every call,
// and the TLS certificate and key (--tls-cert, --tls-key) checked before the server starts.
// Kept free of gRPC, like errors.hpp, so that its tests need no server.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace pp::service {

class BearerToken {
 public:
  // The token is the first line of `file`, without surrounding blanks. std::invalid_argument
  // naming --token-file when the file cannot be read or its first line is empty.
  static BearerToken from_file(const std::filesystem::path& file);
  // std::invalid_argument for an empty token or one with characters gRPC metadata cannot carry.
  explicit BearerToken(std::string_view token);

  // Accepts `authorization` (the call's metadata value; nullopt when absent) when it is
  // "Bearer <token>". The token is compared in constant time (SHA-256 digests, CRYPTO_memcmp).
  // Otherwise throws RequestError(unauthenticated) whose message never contains what was sent.
  void check(std::optional<std::string_view> authorization) const;

 private:
  std::array<unsigned char, 32> digest_{};
};

// The server's certificate chain and private key, PEM. read_tls_pair checks that both parse and
// that the key belongs to the certificate; std::invalid_argument naming the option otherwise.
struct TlsPair {
  std::string cert_pem, key_pem;
};
TlsPair read_tls_pair(const std::filesystem::path& cert, const std::filesystem::path& key);

}  // namespace pp::service
