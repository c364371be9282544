//===- Explore.h - The layout explorer page's data and page -----*- C++ -*-===//
//
// pool-explore --html and pool-serve --listen show one page: a viewer of the
// data built here. The page computes no count or offset of its own: every
// region comes from the SolvedLayout (the report) and, in a row space, from
// the runtime's RowSpaceGeometry (the functions the kernels' addresses are
// checked against), so the map shows where the runtime puts each byte.
//
// The data (schema "poolc-explore/1", specs/explore-page.md):
//   report   the JSON report, as the compiler wrote it (the tables read it)
//   text     --emit=text of the same layout ("" when the caller has none)
//   numbers  the history the budget buys (PointNumbers)
//   maps     one per plane of a row space (unit: rows) and one of the whole
//            allocation (unit: bytes); each has levels (plane / slot /
//            block; allocation / entry) of regions [begin, end) relative to
//            the level's instance, some repeated `count` times `stride` apart
//   sweep, vary  the points --sweep and --vary compiled
//   diff     every report member that differs from a second layout, as
//            offset / count / other, and the inputs that differ (the why)
//   ladders  the checkpoint ladder of chosen prompt lengths, run on a cache
//            manager of the layout's counts (poolrt/Ladder.h)
//   live     true when pool-serve serves the page: it polls
//            /debug/cache_stats
//
// Plain C++17 over nlohmann json (exceptions caught inside); the API never
// throws.
//
//===----------------------------------------------------------------------===//
#ifndef POOLRT_EXPLORE_H
#define POOLRT_EXPLORE_H

#include "poolrt/Artifact.h"
#include "poolrt/Ladder.h"
#include "poolrt/SolvedLayout.h"
#include "poolrt/Status.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace poolrt::explore {

/// The numbers a sweep row shows, computed once for the table and the page.
struct PointNumbers {
  int64_t pageEntryBytes = 0;   // the full-attention PAGE class's entry
  int64_t stateBytesPerReq = 0; // every STATE class's entries of one request; -1 past 2^63
  int64_t tokens = 0;           // paged entries x block size; -1 past 2^63
  int64_t tokensPerSeq = 0;     // tokens / max_num_seqs (0 without sequences)
};
PointNumbers pointNumbers(const SolvedLayout &layout);

/// One compiled point of a sweep or a --vary.
struct Point {
  std::string label;
  int64_t budget = 0;
  const SolvedLayout *layout = nullptr; // null: it did not compile
  std::string error;
};

/// A ladder query and what running it gave: the ladder, or why not (a pool
/// too small for the prompt, a stateless model's counts the manager
/// refuses). The CLI prints it and the page draws it: one computation.
struct LadderRun {
  LadderQuery query;
  std::optional<Ladder> ladder;
  std::string error;
};
/// The query the page shows when the caller chose none: 4.5 intervals of
/// prompt (a grid of rungs and a partial interval past the last; 32,768
/// tokens with the ladder off), a 1,024-token output and a 1,024-token
/// tail, the prompt shrunk to half the history the layout holds
/// (pointNumbers' tokens, in whole blocks) so one request fits alone.
LadderQuery defaultLadderQuery(const SolvedLayout &layout, int64_t intervalTokens,
                               int64_t maxBatchedTokens);
/// Runs each query on a cache manager of `layout`'s counts
/// (cacheManagerConfig) under `policy`.
std::vector<LadderRun> runLadders(const SolvedLayout &layout, const CachePolicy &policy,
                                  const std::vector<LadderQuery> &queries);
/// The ladder as text: a header, then one line per request.
std::string ladderText(const LadderRun &run);

struct PageInputs {
  const SolvedLayout *layout = nullptr; // required
  std::string reportJson;               // the report, as JSON text; required
  std::string text;                     // --emit=text, or ""
  std::string artifact;                 // the artifact fingerprint, or ""
  std::vector<Point> sweep;
  std::string varyName;
  std::vector<Point> vary;
  /// --compare: the second layout and its report (both or neither).
  const SolvedLayout *other = nullptr;
  std::string otherReportJson;
  std::vector<LadderRun> ladders;
  bool live = false;
};

/// The page's data as JSON text. Errors name what could not be drawn (a row
/// space without counts, one the runtime's geometry refuses, a report that
/// is not JSON).
Result<std::string> pageData(const PageInputs &in);

/// The self-contained page: the shipped HTML, styles and script with
/// `dataJson` inlined ('<' escaped, so no "</" closes the element).
std::string pageHtml(const std::string &dataJson);

/// The report JSON of an artifact: its manifest's "layout" member, as the
/// compiler wrote it.
Result<std::string> artifactReportJson(const Artifact &artifact);

} // namespace poolrt::explore

#endif // POOLRT_EXPLORE_H
