// SPDX-License-Identifier: Apache-2.0 OR MIT
#include "auth.hpp"

#include <fmt/core.h>
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <strings.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include "errors.hpp"

namespace pp::service {

namespace {

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> out{};
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &n, EVP_sha256(), nullptr) != 1 || n != out.size())
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
  return out;
}

std::string trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::string read_file(const std::filesystem::path& path, const char* option) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument(fmt::format("{} {}: cannot be read", option, path.string()));
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) throw std::invalid_argument(fmt::format("{} {}: read error", option, path.string()));
  return text;
}

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
std::unique_ptr<BIO, BioFree> bio_of(const std::string& pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), int(pem.size())));
  if (!bio) throw std::bad_alloc();
  return bio;
}

}  // namespace

BearerToken BearerToken::from_file(const std::filesystem::path& file) {
  const std::string text = read_file(file, "--token-file");
  const std::string first = trim(std::string_view(text).substr(0, text.find('\n')));
  if (first.empty()) throw std::invalid_argument(fmt::format("--token-file {}: the first line is empty", file.string()));
  try {
    return BearerToken(first);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--token-file {}: {}", file.string(), e.what()));
  }
}

BearerToken::BearerToken(std::string_view token) {
  if (token.empty()) throw std::invalid_argument("the token is empty");
  // What an HTTP/2 header value (gRPC metadata) can carry: printable ASCII.
  for (char c : token)
    if (c < 0x21 || c > 0x7e)
      throw std::invalid_argument("the token has a character other than printable ASCII (no blanks)");
  digest_ = sha256(token);
}

void BearerToken::check(std::optional<std::string_view> authorization) const {
  if (!authorization)
    throw RequestError(ErrorCode::unauthenticated,
                       "authorization: this daemon requires the metadata 'authorization: Bearer <token>' "
                       "(proofpipe clients: --token-file)");
  std::string_view value = *authorization;
  // "Bearer <token>"; the scheme is case-insensitive (RFC 6750).
  constexpr std::string_view scheme = "Bearer ";
  if (value.size() <= scheme.size() || strncasecmp(value.data(), scheme.data(), scheme.size()) != 0)
    throw RequestError(ErrorCode::unauthenticated, "authorization: not of the form 'Bearer <token>'");
  value.remove_prefix(scheme.size());
  // Digests of equal length: the comparison time says nothing about the token, its length included.
  const std::array<unsigned char, 32> sent = sha256(value);
  if (CRYPTO_memcmp(sent.data(), digest_.data(), digest_.size()) != 0)
    throw RequestError(ErrorCode::unauthenticated, "authorization: the bearer token is not the daemon's");
}

TlsPair read_tls_pair(const std::filesystem::path& cert, const std::filesystem::path& key) {
  TlsPair pair{read_file(cert, "--tls-cert"), read_file(key, "--tls-key")};
  struct ClearErrors {  // a failed PEM read leaves this thread's OpenSSL error queue filled
    ~ClearErrors() { ERR_clear_error(); }
  } clear;
  std::unique_ptr<X509, X509Free> x509(PEM_read_bio_X509(bio_of(pair.cert_pem).get(), nullptr, nullptr, nullptr));
  if (!x509)
    throw std::invalid_argument(fmt::format("--tls-cert {}: not a PEM certificate", cert.string()));
  std::unique_ptr<EVP_PKEY, PkeyFree> pkey(
      PEM_read_bio_PrivateKey(bio_of(pair.key_pem).get(), nullptr, nullptr, nullptr));
  if (!pkey)
    throw std::invalid_argument(
        fmt::format("--tls-key {}: not a PEM private key (or one protected by a passphrase)", key.string()));
  if (X509_check_private_key(x509.get(), pkey.get()) != 1)
    throw std::invalid_argument(
        fmt::format("--tls-key {}: does not belong to the certificate in --tls-cert {}", key.string(), cert.string()));
  return pair;
}

}  // namespace pp::service
