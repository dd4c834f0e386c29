// SPDX-License-Identifier: Apache-2.0 OR MIT
// The bearer token check and the TLS certificate/key check (src/service/auth.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>

#include "auth.hpp"
#include "errors.hpp"
#include "temp_dir.hpp"

using namespace pp::service;

namespace {

// The check's error, or "" when it accepted.
std::string refusal(const BearerToken& token, std::optional<std::string_view> value) {
  try {
    token.check(value);
    return "";
  } catch (const RequestError& e) {
    EXPECT_EQ(e.code(), ErrorCode::unauthenticated);
    return e.what();
  }
}

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

}  // namespace

TEST(Auth, BearerToken) {
  const BearerToken token("s3cret-Token.42");
  EXPECT_EQ(refusal(token, "Bearer s3cret-Token.42"), "");
  EXPECT_EQ(refusal(token, "bearer s3cret-Token.42"), "");  // the scheme is case-insensitive
  for (const char* bad : {"Bearer s3cret-Token.4", "Bearer s3cret-Token.42 ", "Bearer S3cret-Token.42",
                          "Bearer  s3cret-Token.42", "Bearer x", "Bearer s3cret-Token.42s3cret-Token.42"}) {
    const std::string why = refusal(token, bad);
    EXPECT_NE(why.find("not the daemon's"), std::string::npos) << bad << ": " << why;
    EXPECT_EQ(why.find("s3cret"), std::string::npos) << "the message echoes the token: " << why;
    EXPECT_EQ(why.find("S3cret"), std::string::npos) << "the message echoes what was sent: " << why;
  }
  for (const char* bad : {"", "Bearer", "Bearer ", "Basic s3cret-Token.42", "s3cret-Token.42", "Bearers3cret-Token.42"}) {
    const std::string why = refusal(token, bad);
    EXPECT_NE(why.find("Bearer <token>"), std::string::npos) << bad << ": " << why;
    EXPECT_EQ(why.find("s3cret"), std::string::npos) << why;
  }
  EXPECT_NE(refusal(token, std::nullopt).find("authorization"), std::string::npos);
  EXPECT_THROW(BearerToken(""), std::invalid_argument);
  EXPECT_THROW(BearerToken("has blank"), std::invalid_argument);
}

TEST(Auth, TokenFile) {
  TempDir dir;
  write(dir.path() / "t", "  tok-1\t\r\nsecond line\n");
  EXPECT_EQ(refusal(BearerToken::from_file(dir.path() / "t"), "Bearer tok-1"), "");
  write(dir.path() / "empty", "\n tok-2\n");
  try {
    BearerToken::from_file(dir.path() / "empty");
    ADD_FAILURE() << "an empty first line was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--token-file"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("first line is empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(BearerToken::from_file(dir.path() / "missing"), std::invalid_argument);
}

TEST(Auth, TlsPairRefusesWhatIsNotACertificateAndKey) {
  TempDir dir;
  write(dir.path() / "junk.pem", "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
  try {
    read_tls_pair(dir.path() / "junk.pem", dir.path() / "junk.pem");
    ADD_FAILURE() << "junk accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--tls-cert"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_tls_pair(dir.path() / "missing.pem", dir.path() / "junk.pem"), std::invalid_argument);
}
