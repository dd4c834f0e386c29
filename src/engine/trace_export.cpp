// SPDX-License-Identifier: Apache-2.0 OR MIT
// Writing an engine's trace out: Chrome / Perfetto JSON and the gnuplot timeline (data and
// script; drawing it is the caller's business). Only the engine's public view is used.
#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "proofpipe/engine/engine.hpp"

namespace pp::engine {

namespace {
// The backends' names, by index.
std::vector<std::string> backend_names(const EngineStats& stats) {
  std::vector<std::string> out;
  for (const BackendStats& b : stats.backends) out.push_back(b.name);
  return out;
}
}  // namespace

namespace {
// Lanes of a trace in display order: per backend the workers, then the device queues.
std::vector<std::pair<int, std::string>> trace_lanes(const std::vector<TraceEvent>& events) {
  std::vector<std::pair<int, std::string>> lanes;
  for (const auto& ev : events) lanes.emplace_back(ev.backend, ev.lane);
  std::sort(lanes.begin(), lanes.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    const bool da = a.second.rfind("device", 0) == 0, db = b.second.rfind("device", 0) == 0;
    if (da != db) return !da;
    if (a.second.size() != b.second.size()) return a.second.size() < b.second.size();  // worker 2 < worker 10
    return a.second < b.second;
  });
  lanes.erase(std::unique(lanes.begin(), lanes.end()), lanes.end());
  return lanes;
}
}  // namespace

void write_chrome_trace(const std::vector<TraceEvent>& events, const EngineStats& stats, const std::filesystem::path& path) {
  const auto lanes = trace_lanes(events);
  const std::vector<std::string> names = backend_names(stats);
  auto lane_id = [&](int backend, const std::string& lane) {
    return int(std::find(lanes.begin(), lanes.end(), std::make_pair(backend, lane)) - lanes.begin());
  };
  nlohmann::json out;
  auto& list = out["traceEvents"] = nlohmann::json::array();
  for (std::size_t i = 0; i < names.size(); ++i)
    list.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", int(i)}, {"args", {{"name", names[i]}}}});
  for (std::size_t l = 0; l < lanes.size(); ++l)
    list.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", lanes[l].first}, {"tid", int(l)}, {"args", {{"name", lanes[l].second}}}});
  for (const auto& ev : events)
    list.push_back({{"name", ev.name},
                    {"ph", "X"},
                    {"ts", ev.start_us},
                    {"dur", ev.dur_us},
                    {"pid", ev.backend},
                    {"tid", lane_id(ev.backend, ev.lane)},
                    {"args", {{"job", ev.job}, {"partition", ev.partition}}}});
  std::ofstream f(path);
  if (!f) throw std::runtime_error("write_chrome_trace: cannot open " + path.string());
  f << out.dump() << '\n';
  if (!f) throw std::runtime_error("write_chrome_trace: cannot write " + path.string());
}

namespace {
// Distinct colours for the stage names (gnuplot's own linetypes repeat after eight).
constexpr const char* kStageColours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02",
                                         "#a6761d", "#666666", "#1f78b4", "#b2df8a", "#fb9a99", "#cab2d6",
                                         "#ff7f00", "#6a3d9a", "#b15928", "#17becf"};
}  // namespace

std::filesystem::path write_timeline_script(const std::vector<TraceEvent>& events, const EngineStats& st,
                                            Interlock interlock, const std::filesystem::path& path) {
  if (events.empty()) throw std::runtime_error("timeline: no trace recorded (was the engine run with trace on?)");
  const auto lanes = trace_lanes(events);
  const std::vector<std::string> backends = backend_names(st);
  std::vector<std::string> names;  // the stage names, in order of appearance
  for (const auto& ev : events)
    if (std::find(names.begin(), names.end(), ev.name) == names.end()) names.push_back(ev.name);
  const std::filesystem::path data = path.string() + ".dat", script = path.string() + ".gp";
  {
    std::ofstream f(data);
    if (!f) throw std::runtime_error("timeline: cannot write " + data.string());
    // One data block per stage name (gnuplot `index`): x centre, lane, half width (ms).
    for (const auto& name : names) {
      f << "# " << name << '\n';
      for (const auto& ev : events) {
        if (ev.name != name) continue;
        const int lane = int(std::find(lanes.begin(), lanes.end(), std::make_pair(ev.backend, ev.lane)) - lanes.begin());
        f << fmt::format("{:.4f} {} {:.4f}\n", (ev.start_us + ev.dur_us / 2) / 1e3, lane, ev.dur_us / 2e3);
      }
      f << "\n\n";
    }
  }
  {
    std::ofstream f(script);
    if (!f) throw std::runtime_error("timeline: cannot write " + script.string());
    f << fmt::format("set terminal pngcairo size 1600,{} font ',9'\n", 160 + 28 * lanes.size());
    f << "set output '" << path.string() << "'\n";
    f << fmt::format("set title 'proofpipe engine: {} partitions, GPU busy {:.1f} %, interlock {}'\n",
                     st.partitions_ok, 100 * st.gpu_busy(), to_string(interlock));
    f << "set xlabel 'ms'\nset yrange [-0.7:" << lanes.size() - 0.3 << "] reverse\nset key outside right\n";
    f << "set ytics (";
    for (std::size_t l = 0; l < lanes.size(); ++l)
      f << (l ? ", " : "") << "'" << (lanes[l].first < 0 ? std::string("engine") : backends.at(std::size_t(lanes[l].first))) << " "
        << lanes[l].second << "' " << l;
    f << ")\nset style fill solid 0.9 noborder\nplot ";
    for (std::size_t i = 0; i < names.size(); ++i)
      f << (i ? ", \\\n  " : "") << "'" << data.string() << "' index " << i
        << " using 1:2:3:(0.38) with boxxyerror lc rgb '" << kStageColours[i % std::size(kStageColours)]
        << "' title '" << names[i] << "'";
    f << '\n';
  }
  return script;
}

}  // namespace pp::engine
