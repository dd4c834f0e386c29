// SPDX-License-Identifier: Apache-2.0 OR MIT
// The C API with a BN254 key (a snarkjs bn128 .zkey): loaded from a file and from memory, its
// info (curve, proof bytes), proofs of .wtns files and bytes equal to the CPU prover's (seeded),
// in Ethereum's byte form, verified by pp_verify and by the library's verifier, tampering
// rejected, and the errors of inputs and buffers that do not fit a BN254 key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "engine_fixture.hpp"
#include "proofpipe/io/snarkjs.hpp"
#include "proofpipe/io/wtns.hpp"
#include "proofpipe/io/zkey.hpp"
#include "proofpipe/proofpipe.h"

namespace pp::test {
namespace {

using bn254::Fr;
using E = bn254::Bn254;

// "w<k>.wtns" (appended, not `"w" + ...`: GCC 12 -O3 reports a false -Wrestrict for that form).
std::string wtns_name(int k) {
  std::string s = "w";
  s += std::to_string(k);
  s += ".wtns";
  return s;
}

struct Fixture {
  std::vector<uint8_t> zkey_bytes;
  std::vector<std::vector<uint8_t>> wtns;     // one .wtns per partition
  std::vector<std::vector<Fr>> publics;       // x, out of each
  std::filesystem::path dir;

  Fixture() {
    const bn254::R1cs r1cs = Bn254ChainCircuit::chain_r1cs();
    zkey_bytes = encode_zkey(zkey_test_setup<Fr>(r1cs, 91));
    std::mt19937_64 rng(92);
    std::string leaf = "pp_capi_bn254_";
    leaf += std::to_string(::getpid());
    dir = std::filesystem::temp_directory_path() / leaf;
    std::filesystem::create_directories(dir);
    for (int k = 0; k < 3; ++k) {
      const std::vector<Fr> z = Bn254ChainCircuit::chain_assignment(testdata::random_fr<Fr>(rng));
      wtns.push_back(encode_wtns(std::span<const Fr>(z)));
      publics.push_back({z[1], z[2]});
      std::ofstream(dir / wtns_name(k), std::ios::binary)
          .write(reinterpret_cast<const char*>(wtns.back().data()), std::streamsize(wtns.back().size()));
    }
    std::ofstream(dir / "key.zkey", std::ios::binary)
        .write(reinterpret_cast<const char*>(zkey_bytes.data()), std::streamsize(zkey_bytes.size()));
  }
  ~Fixture() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string wtns_path(int k) const { return (dir / wtns_name(k)).string(); }

  // The CPU prover's proofs of the first n witnesses with seed `seed` (what the C API's seeded
  // randomisers draw), in Ethereum's byte form.
  std::vector<uint8_t> cpu_proofs(std::size_t n, uint64_t seed) const {
    const bn254::Zkey zk = parse_zkey<E>(zkey_bytes, "fixture");
    const Densities d = zkey_densities(zk);
    bn254::Zkey taken = zk;
    const bn254::ProvingKey pk = take_proving_key(taken, d);
    std::vector<bn254::Witness> ws;
    for (std::size_t k = 0; k < n; ++k) ws.push_back(witness_from_zkey(zk, parse_wtns<Fr>(wtns[k], "w"), d));
    std::vector<uint8_t> out;
    for (const bn254::Proof& p : prove(pk, ws, seed)) {
      const auto b = p.to_bytes();
      out.insert(out.end(), b.begin(), b.end());
    }
    return out;
  }
};

const Fixture& fixture() {
  static const Fixture f;
  return f;
}

struct Handles {
  pp_engine* engine = nullptr;
  pp_key* key = nullptr;
  ~Handles() {
    pp_key_release(key);
    pp_engine_free(engine);
  }
};

void make(Handles& h, bool from_memory) {
  pp_engine_config cfg;
  pp_engine_config_default(&cfg);
  cfg.threads = 2;
  pp_error err;
  ASSERT_EQ(pp_engine_create(&cfg, &h.engine, &err), PP_OK) << err.message;
  const Fixture& f = fixture();
  if (from_memory)
    ASSERT_EQ(pp_key_load_memory(f.zkey_bytes.data(), f.zkey_bytes.size(), 1, &h.key, &err), PP_OK) << err.message;
  else
    ASSERT_EQ(pp_key_load((f.dir / "key.zkey").c_str(), 1, &h.key, &err), PP_OK) << err.message;
}

pp_input wtns_input(const std::vector<uint8_t>& bytes) {
  pp_input in;
  std::memset(&in, 0, sizeof in);
  in.kind = PP_INPUT_WTNS;
  in.wtns.data = bytes.data();
  in.wtns.size = bytes.size();
  return in;
}

TEST(CapiBn254, KeyInfoNamesTheCurveAndTheProofSize) {
  Handles h;
  make(h, false);
  pp_key_info info;
  pp_error err;
  ASSERT_EQ(pp_key_info_get(h.key, &info, &err), PP_OK) << err.message;
  EXPECT_EQ(info.curve, uint32_t(PP_CURVE_BN254));
  EXPECT_EQ(info.proof_bytes, uint32_t(PP_PROOF_BYTES_BN254));
  EXPECT_EQ(info.num_inputs, 3u);  // 1, x, out
  EXPECT_EQ(info.num_aux, Bn254ChainCircuit::kChain);
  EXPECT_EQ(info.domain_size, info.h);  // snarkjs's H basis
}

TEST(CapiBn254, ProofsOfFilesAndBytesEqualTheCpuProversAndVerify) {
  const Fixture& f = fixture();
  for (const bool from_memory : {false, true}) {
    Handles h;
    make(h, from_memory);
    std::vector<pp_input> in;
    std::vector<std::string> paths;
    for (int k = 0; k < 3; ++k) {
      in.push_back(wtns_input(f.wtns[std::size_t(k)]));
      if (k != 1) {  // a file for 0 and 2, bytes for 1
        paths.push_back(f.wtns_path(k));
        in.back().wtns = pp_source{};
        in.back().wtns.path = paths.back().c_str();
      }
    }
    const uint64_t seed = 17;
    std::vector<uint8_t> proofs(3 * PP_PROOF_BYTES_BN254);
    size_t size = proofs.size();
    pp_error err;
    ASSERT_EQ(pp_prove(h.engine, h.key, in.data(), 3, &seed, proofs.data(), &size, &err), PP_OK) << err.message;
    EXPECT_EQ(size, proofs.size());
    EXPECT_EQ(proofs, f.cpu_proofs(3, seed)) << (from_memory ? "key from memory" : "key from a file");
    for (std::size_t k = 0; k < 3; ++k) {
      // The public inputs in the API's form (Montgomery, BN254's field), from canonical bytes.
      uint8_t canonical[2 * PP_FR_BYTES], pub[2 * PP_FR_BYTES];
      for (int i = 0; i < 2; ++i) {
        uint64_t limbs[4];
        f.publics[k][std::size_t(i)].to_canonical(limbs);
        for (int j = 0; j < 4; ++j)
          for (int b = 0; b < 8; ++b) canonical[i * 32 + j * 8 + b] = uint8_t(limbs[j] >> (8 * b));
      }
      ASSERT_EQ(pp_curve_fr_from_canonical(PP_CURVE_BN254, pub, canonical, 2, &err), PP_OK) << err.message;
      int valid = -1;
      const uint8_t* proof = proofs.data() + k * PP_PROOF_BYTES_BN254;
      ASSERT_EQ(pp_verify(h.key, pub, 2, proof, PP_PROOF_BYTES_BN254, &valid, &err), PP_OK) << err.message;
      EXPECT_EQ(valid, 1) << "proof " << k;
      const bn254::Proof p = bn254::Proof::from_bytes(std::span<const uint8_t, 256>(proof, 256));
      const bn254::Zkey zk = parse_zkey<E>(f.zkey_bytes, "fixture");
      EXPECT_TRUE(verify(zk.vk, f.publics[k], p)) << "proof " << k;
      pub[0] ^= 1;  // another statement
      ASSERT_EQ(pp_verify(h.key, pub, 2, proof, PP_PROOF_BYTES_BN254, &valid, &err), PP_OK) << err.message;
      EXPECT_EQ(valid, 0) << "proof " << k;
    }
    // Asynchronously, the same proofs.
    pp_pending* pending = nullptr;
    ASSERT_EQ(pp_prove_start(h.engine, h.key, in.data(), 3, &seed, &pending, &err), PP_OK) << err.message;
    std::vector<uint8_t> again(proofs.size());
    size = 10;  // too small: the size needed comes back before any wait
    EXPECT_EQ(pp_prove_finalize(pending, again.data(), &size, &err), PP_ERR_BUFFER_TOO_SMALL);
    EXPECT_EQ(size, again.size());
    ASSERT_EQ(pp_prove_finalize(pending, again.data(), &size, &err), PP_OK) << err.message;
    pp_pending_free(pending);
    EXPECT_EQ(again, proofs);
  }
}

TEST(CapiBn254, InputsAndBuffersThatDoNotFitABn254Key) {
  const Fixture& f = fixture();
  Handles h;
  make(h, true);
  const uint64_t seed = 5;
  pp_error err;
  std::vector<uint8_t> proofs(PP_PROOF_BYTES_BN254);
  size_t size = PP_PROOF_BYTES;  // a BLS12-381 proof's size: too small for a BN254 proof
  pp_input in = wtns_input(f.wtns[0]);
  EXPECT_EQ(pp_prove(h.engine, h.key, &in, 1, &seed, proofs.data(), &size, &err), PP_ERR_BUFFER_TOO_SMALL);
  EXPECT_EQ(size, size_t(PP_PROOF_BYTES_BN254));
  // Only .wtns inputs.
  pp_input ppw;
  std::memset(&ppw, 0, sizeof ppw);
  ppw.kind = PP_INPUT_PPW;
  size = proofs.size();
  EXPECT_EQ(pp_prove(h.engine, h.key, &ppw, 1, &seed, proofs.data(), &size, &err), PP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("proves PP_INPUT_WTNS inputs"), std::string::npos) << err.message;
  // A .wtns that does not satisfy the circuit: its proof fails the check (PP_ERR_WITNESS).
  std::vector<uint8_t> bad = f.wtns[0];
  bad[bad.size() - 1] ^= 1;  // the last value (t_k's top byte): no longer t_{k-1}^2 + x
  in = wtns_input(bad);
  EXPECT_EQ(pp_prove(h.engine, h.key, &in, 1, &seed, proofs.data(), &size, &err), PP_ERR_WITNESS) << err.message;
  // One of another length (another circuit).
  in.wtns.size -= PP_FR_BYTES;
  EXPECT_EQ(pp_prove(h.engine, h.key, &in, 1, &seed, proofs.data(), &size, &err), PP_ERR_WITNESS);
  EXPECT_NE(std::string(err.message).find("inputs[0]"), std::string::npos) << err.message;
  // pp_verify: a BLS12-381-sized proof, a wrong count of public inputs.
  uint8_t pub[2 * PP_FR_BYTES] = {};
  int valid = -1;
  EXPECT_EQ(pp_verify(h.key, pub, 2, proofs.data(), PP_PROOF_BYTES, &valid, &err), PP_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(err.message).find("256 bytes"), std::string::npos) << err.message;
  EXPECT_EQ(pp_verify(h.key, pub, 1, proofs.data(), PP_PROOF_BYTES_BN254, &valid, &err), PP_ERR_INVALID_ARGUMENT);
  // Bytes that are not a proof are an invalid proof, not an error.
  std::vector<uint8_t> junk(PP_PROOF_BYTES_BN254, 0xff);
  EXPECT_EQ(pp_verify(h.key, pub, 2, junk.data(), junk.size(), &valid, &err), PP_OK) << err.message;
  EXPECT_EQ(valid, 0);
  // (An unknown curve for the scalar conversions is test_capi.c's: in C any int is a pp_curve.)
}

}  // namespace
}  // namespace pp::test
