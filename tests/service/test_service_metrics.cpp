// SPDX-License-Identifier: Apache-2.0 OR MIT
// The Prometheus text writer and the --metrics HTTP endpoint (src/service/metrics.hpp).
#include <gtest/gtest.h>
#include <httplib.h>

#include <limits>
#include <stdexcept>
#include <string>

#include "metrics.hpp"

using namespace pp::service;

TEST(Metrics, TextFormat) {
  PromText t;
  t.family("proofpipe_x_total", "Things\\done\nso far", "counter");
  t.sample("proofpipe_x_total", 3, {{"rpc", "Submit"}, {"code", "OK"}});
  t.sample("proofpipe_x_total", 0.5, {{"path", "a\"b\\c\nd"}});
  t.sample("proofpipe_y", std::numeric_limits<double>::infinity());
  t.sample("proofpipe_z", 12345678901234.0);
  EXPECT_EQ(t.str(),
            "# HELP proofpipe_x_total Things\\\\done\\nso far\n"
            "# TYPE proofpipe_x_total counter\n"
            "proofpipe_x_total{rpc=\"Submit\",code=\"OK\"} 3\n"
            "proofpipe_x_total{path=\"a\\\"b\\\\c\\nd\"} 0.5\n"
            "proofpipe_y +Inf\n"
            "proofpipe_z 12345678901234\n");
}

TEST(Metrics, ServesGetMetricsOnLoopbackOnly) {
  int scrapes = 0;
  MetricsServer server("127.0.0.1:0", [&] { return "proofpipe_up " + std::to_string(++scrapes) + "\n"; });
  ASSERT_GT(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  for (int i = 1; i <= 2; ++i) {
    auto res = client.Get("/metrics");
    ASSERT_TRUE(res) << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->body, "proofpipe_up " + std::to_string(i) + "\n");
    EXPECT_NE(res->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  }
  auto missing = client.Get("/other");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  server.stop();
  server.stop();  // idempotent
  EXPECT_FALSE(httplib::Client("127.0.0.1", server.port()).Get("/metrics"));

  for (const char* bad : {"0.0.0.0:0", "10.1.2.3:9100", "127.0.0.1:99999", "127.0.0.1:x", "nohost"}) {
    try {
      MetricsServer refused(bad, [] { return std::string(); });
      ADD_FAILURE() << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--metrics"), std::string::npos) << e.what();
    }
  }
}
