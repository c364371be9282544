//===- Trace.cpp - Request traces pool-serve replays ----------------------===//
//
// nlohmann::json parses without exceptions (allow_exceptions = false) and
// every member is type-checked before it is read; the entry points catch
// anything else (an allocation failure), so the API never throws.
//
//===----------------------------------------------------------------------===//

#include "poolrt/serve/Trace.h"
#include "poolrt/Checked.h"
#include "poolrt/serve/Mix.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace poolrt {
namespace serve {

namespace {

/// Longest prompt or output a trace line may ask for: far past any model's
/// context, small enough that a crafted line cannot make the reader
/// allocate gigabytes.
constexpr int64_t kMaxTraceTokens = int64_t(1) << 24;


Error lineError(const std::string &source, int64_t line, const std::string &what) {
  return Error::invalid(source + ":" + std::to_string(line) + ": error: " + what);
}

/// A member of a Mooncake line that must be an integer in [lo, hi].
bool intMember(const nlohmann::json &o, const char *key, int64_t lo, int64_t hi,
               int64_t &out, std::string &why) {
  auto it = o.find(key);
  if (it == o.end()) {
    why = std::string("'") + key + "' is missing";
    return false;
  }
  if (!it->is_number_integer()) {
    why = std::string("'") + key + "' must be an integer";
    return false;
  }
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) {
    why = std::string("'") + key + "' passes the signed 64-bit range";
    return false;
  }
  int64_t v = it->get<int64_t>();
  if (v < lo || v > hi) {
    why = std::string("'") + key + "' is " + std::to_string(v) + ", outside [" +
          std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return false;
  }
  out = v;
  return true;
}

Result<TraceRequest> mooncakeLine(const std::string &text,
                                  const std::string &source, int64_t line) {
  nlohmann::json o = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (o.is_discarded())
    return lineError(source, line, "not a JSON object");
  if (!o.is_object())
    return lineError(source, line, "expected a JSON object");
  TraceRequest r;
  r.line = line;
  r.name = "line " + std::to_string(line);
  std::string why;
  auto ts = o.find("timestamp");
  if (ts == o.end() || !ts->is_number() || !(ts->get<double>() >= 0))
    return lineError(source, line, "'timestamp' must be a number >= 0");
  r.arrivalMs = ts->get<double>();
  int64_t input = 0, output = 0;
  if (!intMember(o, "input_length", 1, kMaxTraceTokens, input, why) ||
      !intMember(o, "output_length", 1, kMaxTraceTokens, output, why))
    return lineError(source, line, why);
  r.maxOutput = output;
  auto ids = o.find("hash_ids");
  if (ids == o.end() || !ids->is_array())
    return lineError(source, line, "'hash_ids' must be an array");
  int64_t want = ceilDiv(input, kMooncakeTokensPerHash);
  if (int64_t(ids->size()) != want)
    return lineError(source, line,
                     "'hash_ids' has " + std::to_string(ids->size()) +
                         " ids; input_length " + std::to_string(input) +
                         " needs " + std::to_string(want) + " (512 tokens each)");
  r.prompt.reserve(size_t(input));
  for (size_t k = 0; k < ids->size(); ++k) {
    const nlohmann::json &id = (*ids)[k];
    if (!id.is_number_integer() || (!id.is_number_unsigned() && id.get<int64_t>() < 0))
      return lineError(source, line,
                       "'hash_ids'[" + std::to_string(k) +
                           "] must be a non-negative integer");
    uint64_t key = id.get<uint64_t>();
    int64_t n = std::min<int64_t>(kMooncakeTokensPerHash,
                                  input - int64_t(k) * kMooncakeTokensPerHash);
    for (int64_t j = 0; j < n; ++j)
      r.prompt.push_back(syntheticToken(key, j));
  }
  return r;
}

bool parseU64(const std::string &word, uint64_t &out) {
  if (word.empty() || word[0] == '-' || word[0] == '+')
    return false;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(word.c_str(), &end, 10);
  if (errno != 0 || end != word.c_str() + word.size())
    return false;
  out = v;
  return true;
}

Result<Trace> parseMooncake(const std::vector<std::string> &lines,
                            const std::string &source) {
  Trace t;
  t.source = source;
  t.format = "mooncake";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t\r") == std::string::npos)
      continue;
    auto r = mooncakeLine(lines[i], source, int64_t(i + 1));
    if (!r.ok())
      return r.error();
    t.requests.push_back(r.take());
  }
  // Replay in arrival order; equal timestamps keep file order.
  std::stable_sort(t.requests.begin(), t.requests.end(),
                   [](const TraceRequest &a, const TraceRequest &b) {
                     return a.arrivalMs < b.arrivalMs;
                   });
  return t;
}

Result<Trace> parsePrefix(const std::vector<std::string> &lines,
                          const std::string &source, const TraceOptions &o) {
  if (o.tokensPerPrefixHash < 1 || o.tokensPerPrefixHash > kMaxTraceTokens)
    return Error::invalid(source + ": tokens per prefix hash must be in [1, 2^24]");
  if (o.prefixOutputTokens < 1 || o.prefixOutputTokens > kMaxTraceTokens)
    return Error::invalid(source + ": prefix-trace output tokens must be in [1, 2^24]");
  Trace t;
  t.source = source;
  t.format = "prefix";
  std::set<uint64_t> admitted, finished;
  for (size_t i = 0; i < lines.size(); ++i) {
    int64_t line = int64_t(i + 1);
    std::istringstream in(lines[i]);
    std::string verb, reqWord;
    if (!(in >> verb))
      continue;
    uint64_t req = 0;
    if (!(in >> reqWord) || !parseU64(reqWord, req))
      return lineError(source, line, "'" + verb + "' needs a request number");
    if (verb == "finish") {
      std::string extra;
      if (in >> extra)
        return lineError(source, line, "'finish' takes one request number");
      if (!admitted.count(req) || finished.count(req))
        return lineError(source, line,
                         "finish of request " + reqWord +
                             (finished.count(req) ? ", already finished"
                                                  : ", which was never admitted"));
      finished.insert(req);
      continue;
    }
    if (verb != "admit")
      return lineError(source, line, "unknown event '" + verb +
                                         "' (expected admit or finish)");
    if (!admitted.insert(req).second)
      return lineError(source, line, "request " + reqWord + " is admitted twice");
    TraceRequest r;
    r.line = line;
    r.name = "req " + reqWord;
    r.arrivalMs = double(t.requests.size());
    r.maxOutput = o.prefixOutputTokens;
    std::string word;
    int64_t hashes = 0;
    while (in >> word) {
      uint64_t h = 0;
      if (!parseU64(word, h))
        return lineError(source, line,
                         "hash " + std::to_string(hashes + 1) + " '" + word +
                             "' is not an unsigned 64-bit integer");
      if (int64_t(r.prompt.size()) + o.tokensPerPrefixHash > kMaxTraceTokens)
        return lineError(source, line, "the prompt passes 2^24 tokens");
      for (int64_t j = 0; j < o.tokensPerPrefixHash; ++j)
        r.prompt.push_back(syntheticToken(h, j));
      ++hashes;
    }
    if (hashes == 0)
      return lineError(source, line, "'admit' needs at least one block hash");
    t.requests.push_back(std::move(r));
  }
  return t;
}

} // namespace

int64_t syntheticToken(uint64_t key, int64_t j) {
  return int64_t(splitmix(splitmix(key) ^ uint64_t(j)) % uint64_t(kSyntheticVocab));
}

Result<Trace> parseTrace(const std::string &text, const std::string &source,
                         const TraceOptions &options) {
  try {
    if (text.find('\0') != std::string::npos)
      return Error::invalid(source + ": error: the trace holds a NUL byte");
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      size_t at = lines[i].find_first_not_of(" \t\r");
      if (at == std::string::npos)
        continue;
      if (lines[i][at] == '{')
        return parseMooncake(lines, source);
      return parsePrefix(lines, source, options);
    }
    return Error::invalid(source + ": error: the trace holds no request");
  } catch (const std::exception &e) {
    return Error::invalid(source + ": error: " + e.what());
  }
}

Result<Trace> readTraceFile(const std::string &path, const TraceOptions &options) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error::invalid(path + ": error: is a directory, not a trace");
  std::ifstream f(path, std::ios::binary);
  if (!f)
    return Error::invalid(path + ": error: cannot open the trace");
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad())
    return Error::invalid(path + ": error: cannot read the trace");
  auto t = parseTrace(ss.str(), path, options);
  if (t.ok() && t->requests.empty())
    return Error::invalid(path + ": error: the trace holds no request");
  return t;
}

Result<MultiTurnSpec> parseMultiTurnSpec(const std::string &spec) {
  const std::string head = "multi-turn";
  if (spec.compare(0, head.size(), head) != 0)
    return Error::invalid("'" + spec + "' is not a multi-turn spec");
  MultiTurnSpec s;
  std::string rest = spec.substr(head.size());
  if (rest.empty())
    return s;
  if (rest[0] != ':')
    return Error::invalid("'" + spec + "': expected multi-turn:key=value,...");
  std::map<std::string, int64_t *> keys = {
      {"conversations", &s.conversations}, {"turns", &s.turns},
      {"system-prompts", &s.systemPrompts}, {"system-tokens", &s.systemTokens},
      {"user-min", &s.userMin},             {"user-max", &s.userMax},
      {"output-min", &s.outputMin},         {"output-max", &s.outputMax}};
  std::istringstream in(rest.substr(1));
  for (std::string item; std::getline(in, item, ',');) {
    size_t eq = item.find('=');
    std::string key = item.substr(0, eq);
    uint64_t v = 0;
    if (eq == std::string::npos || !parseU64(item.substr(eq + 1), v))
      return Error::invalid("multi-turn spec: '" + item +
                            "' is not key=unsigned-integer");
    if (key == "seed") {
      s.seed = v;
      continue;
    }
    auto it = keys.find(key);
    if (it == keys.end())
      return Error::invalid("multi-turn spec: unknown key '" + key + "'");
    if (v > uint64_t(kMaxTraceTokens))
      return Error::invalid("multi-turn spec: " + key + " is past 2^24");
    *it->second = int64_t(v);
  }
  if (s.conversations < 1 || s.turns < 1 || s.systemPrompts < 1)
    return Error::invalid("multi-turn spec: conversations, turns and "
                          "system-prompts must be >= 1");
  if (s.userMin < 1 || s.userMax < s.userMin || s.outputMin < 1 ||
      s.outputMax < s.outputMin)
    return Error::invalid("multi-turn spec: need 1 <= user-min <= user-max and "
                          "1 <= output-min <= output-max");
  if (s.conversations * s.turns > kMaxTraceTokens)
    return Error::invalid("multi-turn spec: more than 2^24 requests");
  return s;
}

Trace multiTurnTrace(const MultiTurnSpec &s) {
  Trace t;
  t.source = "multi-turn";
  t.format = "multi-turn";
  uint64_t state = splitmix(s.seed);
  auto next = [&]() { return state = splitmix(state); };
  auto draw = [&](int64_t lo, int64_t hi) {
    return lo + int64_t(next() % uint64_t(hi - lo + 1));
  };
  // Zipf-like choice of a system prompt: weight 1 / (k + 1).
  double total = 0;
  for (int64_t k = 0; k < s.systemPrompts; ++k)
    total += 1.0 / double(k + 1);
  auto chooseSystem = [&]() {
    double x = double(next() >> 11) / double(uint64_t(1) << 53) * total;
    for (int64_t k = 0; k < s.systemPrompts; ++k) {
      x -= 1.0 / double(k + 1);
      if (x < 0)
        return k;
    }
    return s.systemPrompts - 1;
  };
  // Turn t of conversation c sits at index t * conversations + c: every
  // first turn arrives before any follow-up (which waits for its answer).
  t.requests.resize(size_t(s.conversations * s.turns));
  for (int64_t turn = 0; turn < s.turns; ++turn)
    for (int64_t c = 0; c < s.conversations; ++c) {
      TraceRequest &r = t.requests[size_t(turn * s.conversations + c)];
      r.name = "conv " + std::to_string(c) + " turn " + std::to_string(turn);
      r.arrivalMs = double(turn * s.conversations + c);
      uint64_t userKey = splitmix(s.seed ^ splitmix(uint64_t(c) << 20 | uint64_t(turn)));
      if (turn == 0) {
        uint64_t sysKey = splitmix(s.seed * 31 + uint64_t(chooseSystem()));
        for (int64_t j = 0; j < s.systemTokens; ++j)
          r.prompt.push_back(syntheticToken(sysKey, j));
      } else {
        r.followUpOf = (turn - 1) * s.conversations + c;
      }
      int64_t user = draw(s.userMin, s.userMax);
      for (int64_t j = 0; j < user; ++j)
        r.prompt.push_back(syntheticToken(userKey, j));
      r.maxOutput = draw(s.outputMin, s.outputMax);
    }
  return t;
}

Result<Trace> loadTrace(const std::string &pathOrSpec, const TraceOptions &options) {
  if (pathOrSpec.compare(0, 10, "multi-turn") == 0) {
    auto spec = parseMultiTurnSpec(pathOrSpec);
    if (!spec.ok())
      return spec.error();
    return multiTurnTrace(*spec);
  }
  return readTraceFile(pathOrSpec, options);
}

} // namespace serve
} // namespace poolrt
