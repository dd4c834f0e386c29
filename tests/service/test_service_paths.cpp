// SPDX-License-Identifier: Apache-2.0 OR MIT
// Path confinement under --data-root: `..`, absolute paths outside, symlinks out, missing files;
// and the loopback-only rule of --listen.
#include <gtest/gtest.h>

#include <fstream>

#include "errors.hpp"
#include "paths.hpp"
#include "temp_dir.hpp"

using namespace pp::service;
namespace fs = std::filesystem;

namespace {

class Confine : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(tmp.path() / "data" / "sub");
    fs::create_directories(tmp.path() / "database");
    fs::create_directories(tmp.path() / "outside");
    std::ofstream(tmp.path() / "data" / "key.params") << "k";
    std::ofstream(tmp.path() / "data" / "sub" / "w.ppw") << "w";
    std::ofstream(tmp.path() / "outside" / "secret") << "s";
    std::ofstream(tmp.path() / "database" / "f") << "f";
    fs::create_symlink(tmp.path() / "outside" / "secret", tmp.path() / "data" / "link-out");
    fs::create_symlink(tmp.path() / "outside", tmp.path() / "data" / "dir-out");
    fs::create_symlink("key.params", tmp.path() / "data" / "link-in");
    root = canonical_root(tmp.path() / "data");
  }

  // The message of the RequestError that confine throws (fails the test if it does not).
  std::string refusal(const std::string& value, std::optional<std::size_t> index = std::nullopt) {
    try {
      confine(root, value, index ? "witness_paths" : "key_path", index);
    } catch (const RequestError& e) {
      EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
      return e.what();
    }
    ADD_FAILURE() << "'" << value << "' was accepted";
    return "";
  }

  TempDir tmp;
  fs::path root;
};

}  // namespace

TEST_F(Confine, AcceptsFilesInside) {
  EXPECT_EQ(confine(root, "key.params", "key_path"), root / "key.params");
  EXPECT_EQ(confine(root, "sub/w.ppw", "witness_paths", 0), root / "sub" / "w.ppw");
  EXPECT_EQ(confine(root, "sub/../key.params", "key_path"), root / "key.params");
  EXPECT_EQ(confine(root, (root / "sub" / "w.ppw").string(), "witness_paths", 1), root / "sub" / "w.ppw");
  EXPECT_EQ(confine(root, "link-in", "key_path"), root / "key.params");  // a symlink that stays inside
}

TEST_F(Confine, RefusesDotDotEscapes) {
  const std::string m = refusal("../outside/secret");
  EXPECT_NE(m.find("key_path"), std::string::npos) << m;
  EXPECT_NE(m.find("outside --data-root"), std::string::npos) << m;
  EXPECT_NE(refusal("sub/../../outside/secret", 2).find("witness_paths[2]"), std::string::npos);
  // Even when the target does not exist, an escape is reported as one.
  EXPECT_NE(refusal("../nothing-here").find("outside --data-root"), std::string::npos);
  // A sibling whose name starts with the root's name is still outside.
  EXPECT_NE(refusal("../database/f").find("outside --data-root"), std::string::npos);
}

TEST_F(Confine, RefusesAbsolutePathsOutside) {
  EXPECT_NE(refusal((tmp.path() / "outside" / "secret").string(), 0).find("witness_paths[0]"), std::string::npos);
  EXPECT_NE(refusal("/etc/passwd").find("outside --data-root"), std::string::npos);
}

TEST_F(Confine, RefusesSymlinksThatLeadOutside) {
  const std::string m = refusal("link-out", 3);
  EXPECT_NE(m.find("witness_paths[3]"), std::string::npos) << m;
  EXPECT_NE(m.find("outside --data-root"), std::string::npos) << m;
  EXPECT_NE(refusal("dir-out/secret").find("outside --data-root"), std::string::npos);
}

TEST_F(Confine, RefusesMissingEmptyAndNonFiles) {
  const std::string m = refusal("sub/missing.ppw", 3);
  EXPECT_NE(m.find("witness_paths[3]"), std::string::npos) << m;
  EXPECT_NE(m.find("does not exist"), std::string::npos) << m;
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  EXPECT_NE(refusal("sub").find("not a regular file"), std::string::npos);
  EXPECT_NE(refusal(std::string("key.params\0x", 12)).find("NUL"), std::string::npos);
}

TEST(Listen, OnlyLoopbackIsServed) {
  for (const char* ok : {"127.0.0.1:0", "127.0.0.1:50051", "localhost:1", "[::1]:9000", "127.1.2.3:80"})
    EXPECT_TRUE(is_loopback_listen(ok)) << ok;
  for (const char* no : {"0.0.0.0:50051", "[::]:1", "10.0.0.1:5", "127.0.0.1", "127.0.0.1:", "example.com:80",
                         "127.0.0.1.evil.com:80", "unix:/tmp/s", "1270.0.0.1:4"})
    EXPECT_FALSE(is_loopback_listen(no)) << no;
}
