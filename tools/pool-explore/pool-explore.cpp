//===- pool-explore.cpp - Look at a model's plan and how it moves ---------===//
//
//   pool-explore MODEL.yaml --budget SIZE --max-num-seqs N [--param K=V]...
//       [--sweep budget=A..B[:STEPS]] [--vary NAME=V1,V2,...] [--width COLS]
//       [--html DIR [--compare OTHER.yaml|OTHER.poolpack]]
//       [--ladder PROMPT[:OUTPUT[:TAIL]]]... [--checkpoint-interval N]
//       [--max-batched-tokens N]
//   pool-explore --artifact X.poolpack [--html DIR [--compare OTHER]] [--ladder ...]
//
// Shows the pools and entry classes, the history the budget buys, the plane
// assignment and its slack, and an ASCII map of the row space. --sweep and
// --vary compile the model again for each point and tabulate what moved.
// `--vary dtype=bf16,fp8` swaps the dtype token of the model's file name
// (models/x-fp8.yaml -> models/x-bf16.yaml); any other NAME is a model
// parameter.
//
// --html DIR writes the same plan as a self-contained page (index.html, the
// report as report.json, the page's data as explore.json): the row space
// drawn to scale, the tables, the sweep and --vary as plots, and with
// --compare the difference to a second layout. The page is a viewer of the
// data computed here (poolrt/Explore.h); it opens from file://.
//
// --ladder PROMPT[:OUTPUT[:TAIL]] runs the checkpoint ladder of that prompt
// on a cache manager of the layout's counts (poolrt/Ladder.h) and prints
// where each of three requests (first, follow-up, repeat) keeps its
// checkpoints; the page draws the same runs (one default query without
// --ladder). --checkpoint-interval and --max-batched-tokens are
// pool-serve's policy options.
//
//===----------------------------------------------------------------------===//

#include "codegen/Report.h"
#include "dialects/Pool/Yaml/ModelDecl.h"
#include "poolrt/Artifact.h"
#include "poolrt/Checked.h"
#include "poolrt/Explore.h"
#include "poolrt/SolvedLayout.h"
#include "tools/lib/Driver.h"
#include "tools/lib/Output.h"
#include "poolrt/ByteSize.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory cat("pool-explore options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.yaml>"),
                                      cl::cat(cat));
static cl::opt<std::string> budgetArg("budget", cl::desc("bytes for the pools"),
                                      cl::value_desc("SIZE"), cl::cat(cat));
static cl::opt<int64_t> maxNumSeqs("max-num-seqs", cl::desc("requests in flight"),
                                   cl::init(-1), cl::cat(cat));
static cl::opt<std::string> artifactArg("artifact",
                                        cl::desc("explore a compiled .poolpack instead of a model"),
                                        cl::value_desc("X.poolpack"), cl::cat(cat));
static cl::opt<std::string> htmlDir("html", cl::desc("write the page into DIR"),
                                    cl::value_desc("DIR"), cl::cat(cat));
static cl::opt<std::string> compareArg(
    "compare", cl::desc("diff against a second model (same budget) or artifact"),
    cl::value_desc("OTHER"), cl::cat(cat));
static cl::list<std::string> params("param", cl::desc("override a model parameter"),
                                    cl::value_desc("NAME=VALUE"), cl::cat(cat));
static cl::opt<std::string> sweep("sweep", cl::desc("budget=A..B[:STEPS]"),
                                  cl::cat(cat));
static cl::opt<std::string> vary("vary", cl::desc("NAME=V1,V2,... (a parameter, or dtype)"),
                                 cl::cat(cat));
static cl::opt<unsigned> width("width", cl::desc("columns of the row-space map"),
                               cl::init(64), cl::cat(cat));
static cl::list<std::string> ladderArgs(
    "ladder",
    cl::desc("run the checkpoint ladder of a PROMPT-token prompt (OUTPUT tokens "
             "generated, default 1024; a follow-up TAIL, default 1024) and print it"),
    cl::value_desc("PROMPT[:OUTPUT[:TAIL]]"), cl::cat(cat));
static cl::opt<int64_t> intervalArg("checkpoint-interval",
                                    cl::desc("the ladder's checkpoint interval in tokens "
                                             "(0: off; pool-serve's default)"),
                                    cl::init(poolrt::kDefaultCheckpointInterval),
                                    cl::cat(cat));
static cl::opt<int64_t> batchedArg("max-batched-tokens",
                                   cl::desc("the ladder's token budget per pass "
                                            "(pool-serve's default)"),
                                   cl::init(2048), cl::cat(cat));

namespace {

using mlir::pool::asGiB;
std::string commas(int64_t v) { return mlir::pool::withCommas(v); }
std::string gib(int64_t bytes) { return asGiB(bytes); }

std::string pct(double f) {
  std::string s;
  llvm::raw_string_ostream(s) << llvm::format("%.1f%%", 100.0 * f);
  return s;
}

struct Compiled {
  poolrt::SolvedLayout layout;
  std::string error; // first diagnostic, if the compile failed
};

using Overrides = std::vector<std::pair<std::string, std::string>>;

Compiled compile(const std::string &path, const Overrides &ps, int64_t budget,
                 int64_t seqs) {
  Compiled out;
  MLIRContext ctx;
  ctx.printOpOnDiagnostic(false);
  llvm::SourceMgr sm;
  std::string firstError;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = d.str();
    return success();
  });
  ::pool::CompileOptions opts;
  opts.input = path;
  opts.params = ps;
  opts.planPools.budget = budget;
  opts.planPools.maxNumSeqs = seqs;
  opts.onError = [&](const std::string &msg) {
    if (firstError.empty())
      firstError = msg;
  };
  std::vector<std::pair<std::string, int64_t>> used;
  std::vector<std::pair<std::string, std::string>> usedDtypes;
  auto module = ::pool::compileModel(ctx, sm, opts, &used, &usedDtypes);
  if (!module) {
    out.error = firstError.empty() ? "the model does not compile" : firstError;
    return out;
  }
  FailureOr<mlir::pool::ModelOp> model = mlir::pool::firstModel(*module);
  FailureOr<poolrt::SolvedLayout> layout = failure();
  if (succeeded(model))
    layout = mlir::pool::solvedLayoutOf(*model, {path, used, -1, usedDtypes});
  if (failed(layout))
    out.error = firstError.empty() ? "the model is not planned" : firstError;
  else
    out.layout = std::move(*layout);
  return out;
}

void printPools(const poolrt::SolvedLayout &r, llvm::raw_ostream &os) {
  int64_t budget = r.inputs.budgetBytes;
  int64_t seqs = r.inputs.maxNumSeqs;
  int64_t bs = r.geometry.blockSize;
  os << "== " << r.model << ": " << gib(budget) << " (" << commas(budget)
     << " B), " << seqs << " sequences ==\n\npools\n";
  os << llvm::format("  %-10s %-6s %12s %14s %12s %7s\n", "class", "pool",
                     "entries", "entry bytes", "reserved", "share");
  int64_t total = r.totalReservedBytes;
  for (const poolrt::SolvedClass &c : r.classes)
    os << llvm::format(
        "  %-10s %-6s %12s %14s %12s %7s\n", c.name.c_str(),
        c.isPage() ? "page" : "state", commas(c.entries).c_str(),
        commas(c.entryBytes).c_str(), gib(c.reservedBytes).c_str(),
        pct(total ? double(c.reservedBytes) / double(total) : 0).c_str());
  int64_t alloc = r.allocationBytes;
  os << "  reserved " << commas(total) << " B, unreserved "
     << commas(r.unreservedBytes) << " B, one allocation of " << commas(alloc)
     << " B";
  if (alloc > budget)
    os << " (" << commas(alloc - budget)
       << " B over the budget: blocks round up to whole slots)";
  os << "\n\n";
  int64_t blocks = r.pagedEntries, tokens = 0;
  if (poolrt::mulOverflows(blocks, bs, tokens)) {
    os << "history: " << commas(blocks) << " blocks x " << bs
       << " tokens (over 2^63 tokens)\n";
    return;
  }
  os << "history: " << commas(blocks) << " blocks x " << bs << " tokens = "
     << commas(tokens) << " tokens";
  if (seqs > 0)
    os << " (" << commas(tokens / seqs) << " per sequence with " << seqs
       << " in flight)";
  os << "\n";
}

void printArenas(const poolrt::SolvedLayout &r, llvm::raw_ostream &os) {
  for (const poolrt::SolvedArena &a : r.arenas) {
    os << "\narena of '" << a.className << "': " << commas(a.entryBytes)
       << " B per entry, checkpoint " << commas(a.checkpointBytes) << " B\n";
    for (const poolrt::SolvedField &f : a.fields)
      os << llvm::format("  %-16s %14s .. %-14s %s%s\n", f.name.c_str(),
                         commas(f.offset).c_str(), commas(f.end).c_str(),
                         f.dtype.c_str(),
                         f.inCheckpoint ? "" : "  (not in checkpoints)");
  }
}

void printPlanes(const poolrt::SolvedRowSpace &rs, llvm::raw_ostream &os) {
  int64_t arenaRows = rs.arenaRows;
  os << "\nplanes (" << rs.rowBytes << " B per row in all)\n";
  os << llvm::format("  %-8s %6s %-9s %14s %10s  %s\n", "plane", "width",
                     "dtype", "slack bytes", "slack", "fields");
  for (const poolrt::SolvedRowPlane &p : rs.planes) {
    int64_t w = p.rowBytes;
    std::string fields;
    for (const std::string &f : p.fields)
      fields += (fields.empty() ? "" : ", ") + f;
    os << llvm::format(
        "  %-8s %6lld %-9s %14s %10s  %s\n", p.name.c_str(), (long long)w,
        p.dtype.c_str(), commas(p.slackBytes).c_str(),
        pct(arenaRows ? double(p.slackBytes) / double(arenaRows * w) : 0)
            .c_str(),
        fields.empty() ? "-" : fields.c_str());
  }
  os << "  arena " << commas(arenaRows) << " rows; slack "
     << commas(rs.planeSlackBytes) << " B = " << pct(rs.planeSlackFraction)
     << " of the arena\n";
}

/// The plane: blocks from row 0, slots from the top, the gap between.
void printPlaneMap(const poolrt::SolvedRowSpace &rs, unsigned cols,
                   llvm::raw_ostream &os) {
  int64_t slotRows = rs.slotRows;
  int64_t planeRows = rs.planeRows.value_or(0);
  int64_t env = rs.envelopeRows;
  int64_t nb = rs.numBlocks.value_or(0);
  int64_t ns = rs.numSlots.value_or(0);
  int64_t positions = rs.slotPositions.value_or(0);
  int64_t held = slotRows ? planeRows / slotRows : 0;
  int64_t origin = positions - held;
  int64_t blockEnd = nb * env;
  int64_t slotBegin = (positions - ns - origin) * slotRows;
  os << "\nrow space: envelope " << commas(env) << " rows per block, slot "
     << commas(slotRows) << " rows (arena " << commas(rs.arenaRows)
     << " + windows " << commas(rs.entryRows) << "), ring " << rs.ringSlots
     << ", plane " << commas(planeRows) << " rows\n";
  if (planeRows <= 0)
    return;
  std::string bar;
  for (unsigned c = 0; c < cols; ++c) {
    int64_t lo = planeRows * c / cols, hi = planeRows * (c + 1) / cols;
    bool block = lo < blockEnd, slot = hi > slotBegin;
    bar += block && slot ? '|' : block ? '#' : slot ? 'S' : '.';
  }
  os << "  [" << bar << "]\n";
  os << "   # blocks rows 0.." << commas(blockEnd) << " (" << commas(nb)
     << ")   . gap " << commas(slotBegin - blockEnd) << " rows   S slots rows "
     << commas(slotBegin) << ".." << commas(planeRows) << " (" << ns << " of "
     << positions << " positions)\n";
}

/// One slot: the arena, then each class's windows.
void printSlot(const poolrt::SolvedRowSpace &rs, unsigned cols,
               llvm::raw_ostream &os) {
  int64_t arenaRows = rs.arenaRows, slotRows = rs.slotRows;
  std::string slotBar;
  std::vector<std::pair<int64_t, char>> marks{{arenaRows, 'A'}};
  std::string legend = "A arena " + commas(arenaRows);
  for (const poolrt::SolvedRowClass &c : rs.classes) {
    char ch = c.name == "dense" ? 'd' : c.name == "csa" ? 'c' : 'h';
    marks.push_back({arenaRows + c.entryOffset + c.entryRows, ch});
    legend += std::string("  ") + ch + " " + c.name + " " + commas(c.entryRows);
  }
  for (unsigned c = 0; c < cols; ++c) {
    int64_t mid = (slotRows * (2 * c + 1)) / (2 * cols);
    char ch = '_';
    for (auto [end, m] : marks)
      if (mid < end) {
        ch = m;
        break;
      }
    slotBar += ch;
  }
  os << "  slot [" << slotBar << "]\n   " << legend << "  _ padding "
     << commas(slotRows - marks.back().first) << " (rows)\n";
  os << "  classes:";
  for (const poolrt::SolvedRowClass &c : rs.classes) {
    os << "  " << c.name << " " << c.layers.size() << " layers";
    if (c.blockRows > 0)
      os << " x " << c.blockRows << " rows/block";
    os << ";";
  }
  os << "\n";
  for (const poolrt::SolvedFieldWindow &f : rs.fieldWindows)
    os << "  window field '" << f.field << "' in plane '" << f.plane
       << "': " << f.rowsPerWindowRow << " plane rows per window row\n";
  os << "  checkpoint image " << commas(rs.imageBytes) << " B";
  if (rs.unitsPerCheckpoint)
    os << " = " << *rs.unitsPerCheckpoint << " PAGE units";
  os << "\n";
}

void printPlan(const poolrt::SolvedLayout &r, llvm::raw_ostream &os) {
  printPools(r, os);
  if (!r.rowSpace) {
    printArenas(r, os);
    return;
  }
  unsigned cols = std::max(8u, (unsigned)width);
  printPlanes(*r.rowSpace, os);
  printPlaneMap(*r.rowSpace, cols, os);
  printSlot(*r.rowSpace, cols, os);
}

struct Row {
  std::string label;
  Compiled c;
};

void printTable(const std::vector<Row> &rows, llvm::raw_ostream &os) {
  os << llvm::format("%-16s %14s %14s %12s %16s %14s %8s\n", "", "PAGE B/entry",
                     "STATE B/req", "blocks", "tokens", "tokens/seq", "slack");
  for (const Row &row : rows) {
    if (!row.c.error.empty()) {
      os << llvm::format("%-16s ", row.label.c_str()) << row.c.error << "\n";
      continue;
    }
    const poolrt::SolvedLayout &r = row.c.layout;
    poolrt::explore::PointNumbers n = poolrt::explore::pointNumbers(r);
    int64_t page = n.pageEntryBytes, state = n.stateBytesPerReq;
    int64_t seqs = r.inputs.maxNumSeqs;
    int64_t tokens = n.tokens;
    std::string slack = "-";
    if (r.rowSpace)
      slack = pct(r.rowSpace->planeSlackFraction);
    os << llvm::format("%-16s %14s %14s %12s %16s %14s %8s\n", row.label.c_str(),
                       commas(page).c_str(), commas(state).c_str(),
                       commas(r.pagedEntries).c_str(),
                       commas(tokens).c_str(),
                       seqs ? commas(n.tokensPerSeq).c_str() : "-",
                       slack.c_str());
  }
}

int fail(const std::string &msg) {
  llvm::errs() << "pool-explore: error: " << msg << "\n";
  return 2;
}

/// The layout of a compiled artifact.
bool readArtifactLayout(const std::string &path, poolrt::SolvedLayout &out,
                        std::string &error) {
  auto art = poolrt::readArtifactFile(path);
  if (!art) {
    error = path + ": " + art.error().message;
    return false;
  }
  auto layout = poolrt::readSolvedLayout(*art);
  if (!layout) {
    error = path + ": " + layout.error().message;
    return false;
  }
  out = layout.take();
  return true;
}

bool isArtifactPath(llvm::StringRef p) { return p.ends_with(".poolpack"); }

/// Writes each (name, text) into DIR: every file to a temporary first, then
/// the renames, so a failed write leaves the previous page whole and no
/// page half new.
bool writeFilesAtomic(const std::string &dir,
                      const std::vector<std::pair<std::string, std::string>> &files,
                      std::string &error) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    error = "--html " + dir + ": " + ec.message();
    return false;
  }
  if (!llvm::sys::fs::is_directory(dir)) {
    error = "--html " + dir + ": not a directory";
    return false;
  }
  std::vector<std::string> tmps;
  auto cleanup = [&] {
    for (const std::string &t : tmps)
      llvm::sys::fs::remove(t);
  };
  for (const auto &[name, text] : files) {
    std::string tmp = dir + "/" + name + ".tmp";
    tmps.push_back(tmp);
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec) {
      error = "cannot write " + tmp + ": " + ec.message();
      cleanup();
      return false;
    }
    os << text;
    os.close();
    if (os.has_error()) {
      error = "cannot write " + tmp + ": " + os.error().message();
      os.clear_error();
      cleanup();
      return false;
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::string path = dir + "/" + files[i].first;
    if (std::error_code ec = llvm::sys::fs::rename(tmps[i], path)) {
      error = "cannot rename " + tmps[i] + " to " + path + ": " + ec.message();
      cleanup();
      return false;
    }
  }
  return true;
}

std::vector<poolrt::explore::Point> pointsOf(const std::vector<Row> &rows,
                                           const std::vector<int64_t> &budgets) {
  std::vector<poolrt::explore::Point> out;
  for (size_t i = 0; i < rows.size(); ++i) {
    poolrt::explore::Point p;
    p.label = rows[i].label;
    p.budget = budgets[i];
    if (rows[i].c.error.empty())
      p.layout = &rows[i].c.layout;
    else
      p.error = rows[i].c.error;
    out.push_back(std::move(p));
  }
  return out;
}

// The helpers of main() below that return an int return 0 to go on, else
// main's exit code.

// Refuses contradictory or out-of-range options (before anything is read).
int checkOptions(bool fromArtifact) {
  if (fromArtifact && !inputFile.empty())
    return fail("give a model file or --artifact, not both");
  if (!fromArtifact && inputFile.empty())
    return fail("no model file given (pool-explore MODEL.yaml --budget SIZE "
                "--max-num-seqs N, or --artifact X.poolpack)");
  if (fromArtifact && (!sweep.empty() || !vary.empty()))
    return fail("--sweep and --vary compile a model file; an artifact holds one "
                "layout");
  if (!compareArg.empty() && htmlDir.empty())
    return fail("--compare draws its diff into the page: give --html DIR");
  if (intervalArg < 0)
    return fail("--checkpoint-interval must be >= 0 tokens (0: the ladder off), got " +
                std::to_string(intervalArg));
  if (batchedArg < 1)
    return fail("--max-batched-tokens must be >= 1, got " + std::to_string(batchedArg));
  return 0;
}

// Parses each --ladder PROMPT[:OUTPUT[:TAIL]] into a ladder query.
int parseLadders(std::vector<poolrt::LadderQuery> &ladderQueries) {
  for (const std::string &arg : ladderArgs) {
    poolrt::LadderQuery q;
    q.outputTokens = q.tailTokens = 1024;
    q.maxBatchedTokens = batchedArg;
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(arg).split(parts, ':');
    int64_t *into[] = {&q.promptTokens, &q.outputTokens, &q.tailTokens};
    const int64_t least[] = {1, 1, 0};
    const char *what[] = {"PROMPT", "OUTPUT", "TAIL"};
    if (parts.size() > 3)
      return fail("--ladder '" + arg + "': give PROMPT[:OUTPUT[:TAIL]]");
    for (size_t i = 0; i < parts.size(); ++i)
      if (parts[i].getAsInteger(10, *into[i]) || *into[i] < least[i])
        return fail("--ladder '" + arg + "': " + what[i] + " must be an integer >= " +
                    std::to_string(least[i]) + " (tokens)");
    ladderQueries.push_back(q);
  }
  return 0;
}

// The layout explored: read from --artifact (which also gives the budget and
// the sequences), or compiled from the model file with --budget and --param.
int loadBase(bool fromArtifact, Compiled &base, Overrides &ps,
             std::optional<int64_t> &budget) {
  std::string why;
  if (fromArtifact) {
    if (!budgetArg.empty() || maxNumSeqs >= 0)
      return fail("--budget and --max-num-seqs come from the artifact");
    if (!readArtifactLayout(artifactArg, base.layout, why))
      return fail(why);
    budget = base.layout.inputs.budgetBytes;
    maxNumSeqs = base.layout.inputs.maxNumSeqs;
  } else {
    if (budgetArg.empty())
      return fail("--budget SIZE is required with a model file");
    if (maxNumSeqs < 0)
      return fail("--max-num-seqs N (>= 0) is required with a model file");
    budget = poolrt::parseByteSize(budgetArg, why);
    if (!budget)
      return fail("--budget '" + budgetArg + "': " + why);
    for (const std::string &p : params) {
      std::pair<std::string, std::string> kv;
      if (!::pool::parseParamArg(p, kv, why))
        return fail("--param " + why);
      ps.push_back(kv);
    }
    base = compile(inputFile, ps, *budget, maxNumSeqs);
    if (!base.error.empty()) {
      llvm::errs() << base.error << "\n";
      return 1;
    }
  }
  return 0;
}

/// The tables of --sweep and --vary, and their points' budgets.
struct Tables {
  std::vector<Row> sweepRows, varyRows;
  std::vector<int64_t> sweepBudgets, varyBudgets;
  std::string varyName;
};

// --sweep budget=A..B[:STEPS]: compiles the model at each budget and prints
// the table.
int runSweep(const Overrides &ps, Tables &t) {
  std::string why;
  llvm::StringRef s(sweep);
  if (!s.consume_front("budget="))
    return fail("--sweep takes budget=A..B[:STEPS]");
  auto [range, stepsText] = s.split(':');
  auto [aText, bText] = range.split("..");
  auto a = poolrt::parseByteSize(aText.str(), why);
  if (!a)
    return fail("--sweep start '" + aText.str() + "': " + why);
  auto b = poolrt::parseByteSize(bText.str(), why);
  if (!b)
    return fail("--sweep end '" + bText.str() + "': " + why);
  unsigned steps = 5;
  if (!stepsText.empty() && (stepsText.getAsInteger(10, steps) || steps < 2 ||
                             steps > 1000))
    return fail("--sweep STEPS must be an integer in 2..1000");
  if (*b < *a)
    return fail("--sweep needs A <= B");
  for (unsigned i = 0; i < steps; ++i) {
    int64_t point = *a + int64_t(((unsigned __int128)(*b - *a) * i) / (steps - 1));
    t.sweepRows.push_back({gib(point), compile(inputFile, ps, point, maxNumSeqs)});
    t.sweepBudgets.push_back(point);
  }
  llvm::outs() << "\nsweep over the budget (" << maxNumSeqs << " sequences)\n";
  printTable(t.sweepRows, llvm::outs());
  return 0;
}

// Whether the YAML model file declares a parameter (integer or dtype) `name`.
bool modelDeclares(llvm::StringRef name) {
  bool declared = false;
  if (llvm::StringRef(inputFile).ends_with(".yaml") ||
      llvm::StringRef(inputFile).ends_with(".yml")) {
    ::pool::yaml::ModelDecl decl;
    ::pool::yaml::YamlError yerr;
    if (::pool::yaml::loadModelYaml(inputFile, {}, decl, yerr)) {
      for (const auto &p : decl.params)
        declared |= p.first == name;
      for (const auto &p : decl.dtypeParams)
        declared |= p.first == name;
    }
  }
  return declared;
}

// The sibling model file of dtype `v`: the model file's name with its last
// fp8/bf16 token swapped for `v`, which must exist.
int dtypeSibling(llvm::StringRef v, std::string &path) {
  path = inputFile;
  size_t at = std::string::npos;
  std::string from;
  for (const char *tok : {"fp8", "bf16"}) {
    size_t p = path.rfind(tok);
    if (p != std::string::npos && (at == std::string::npos || p > at)) {
      at = p;
      from = tok;
    }
  }
  if (at == std::string::npos)
    return fail("--vary dtype: the model file name has no fp8/bf16 token "
                "to swap");
  path.replace(at, from.size(), v.str());
  if (!llvm::sys::fs::exists(path))
    return fail("--vary dtype=" + v.str() + ": no model file " + path);
  return 0;
}

// --vary NAME=V1,V2,...: compiles the model with each value and prints the
// table.
int runVary(const Overrides &ps, int64_t budget, Tables &t) {
  std::string why;
  auto [name, valuesText] = llvm::StringRef(vary).split('=');
  if (name.empty() || valuesText.empty())
    return fail("--vary takes NAME=V1,V2,...");
  t.varyName = name.str();
  llvm::SmallVector<llvm::StringRef> values;
  valuesText.split(values, ',');
  // A declared parameter (integer or dtype) is varied as --param; the
  // name `dtype` on a model that declares no such parameter swaps the
  // fp8/bf16 token of the file name (the V4 files differ in their planes,
  // not only in a dtype).
  bool declared = modelDeclares(name);
  for (llvm::StringRef v : values) {
    if (name == "dtype" && !declared) {
      std::string path;
      if (int rc = dtypeSibling(v, path))
        return rc;
      t.varyRows.push_back({v.str(), compile(path, ps, budget, maxNumSeqs)});
      t.varyBudgets.push_back(budget);
      continue;
    }
    std::pair<std::string, std::string> kv;
    if (!::pool::parseParamArg((name + "=" + v).str(), kv, why))
      return fail("--vary " + why);
    auto vps = ps;
    vps.erase(std::remove_if(vps.begin(), vps.end(),
                             [&](auto &p) { return p.first == kv.first; }),
              vps.end());
    vps.push_back(kv);
    t.varyRows.push_back({(name + "=" + v).str(), compile(inputFile, vps, budget, maxNumSeqs)});
    t.varyBudgets.push_back(budget);
  }
  llvm::outs() << "\nvarying " << name << " (" << gib(budget) << ", "
               << maxNumSeqs << " sequences)\n";
  printTable(t.varyRows, llvm::outs());
  return 0;
}

// Runs the --ladder queries (or, for the page, one default query) and
// prints the --ladder ones.
std::vector<poolrt::explore::LadderRun>
runLadderQueries(const poolrt::SolvedLayout &layout,
                 const std::vector<poolrt::LadderQuery> &ladderQueries) {
  poolrt::CachePolicy policy;
  policy.checkpointIntervalTokens = intervalArg;
  std::vector<poolrt::explore::LadderRun> ladders = poolrt::explore::runLadders(
      layout, policy,
      ladderQueries.empty() && !htmlDir.empty()
          ? std::vector<poolrt::LadderQuery>{poolrt::explore::defaultLadderQuery(
                layout, intervalArg, batchedArg)}
          : ladderQueries);
  if (!ladderQueries.empty())
    for (const auto &run : ladders)
      llvm::outs() << "\n" << poolrt::explore::ladderText(run);
  return ladders;
}

// --html DIR: writes the page, its data and the report (with --compare, the
// difference to the other layout).
int writePage(bool fromArtifact, const Compiled &base, const Overrides &ps,
              int64_t budget, const Tables &tables,
              const std::vector<poolrt::explore::LadderRun> &ladders) {
  std::string why;
  auto textOf = [](const llvm::json::Value &v) {
    std::string t;
    llvm::raw_string_ostream(t) << v;
    return t;
  };
  poolrt::explore::PageInputs in;
  in.layout = &base.layout;
  in.reportJson = textOf(mlir::pool::reportJson(base.layout));
  {
    llvm::raw_string_ostream os(in.text);
    mlir::pool::printTextReport(base.layout, os);
  }
  if (fromArtifact)
    in.artifact = base.layout.fingerprint;
  in.sweep = pointsOf(tables.sweepRows, tables.sweepBudgets);
  in.varyName = tables.varyName;
  in.vary = pointsOf(tables.varyRows, tables.varyBudgets);
  in.ladders = ladders;
  Compiled other;
  if (!compareArg.empty()) {
    if (isArtifactPath(compareArg)) {
      if (!readArtifactLayout(compareArg, other.layout, why))
        return fail("--compare " + why);
    } else {
      other = compile(compareArg, ps, budget, maxNumSeqs);
      if (!other.error.empty())
        return fail("--compare " + compareArg + ": " + other.error);
    }
    in.other = &other.layout;
    in.otherReportJson = textOf(mlir::pool::reportJson(other.layout));
  }
  auto data = poolrt::explore::pageData(in);
  if (!data)
    return fail(data.error().message);
  std::string reportText;
  llvm::raw_string_ostream(reportText)
      << llvm::formatv("{0:2}", mlir::pool::reportJson(base.layout)) << "\n";
  if (!writeFilesAtomic(htmlDir,
                        {{"report.json", reportText},
                         {"explore.json", *data + "\n"},
                         {"index.html", poolrt::explore::pageHtml(*data)}},
                        why))
    return fail(why);
  llvm::outs() << "\nwrote " << htmlDir << "/index.html (open it from file://)\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "pool-explore: a model's plan and how it moves\n");
  bool fromArtifact = !artifactArg.empty();
  if (int rc = checkOptions(fromArtifact))
    return rc;
  std::vector<poolrt::LadderQuery> ladderQueries;
  if (int rc = parseLadders(ladderQueries))
    return rc;

  Compiled base;
  Overrides ps;
  std::optional<int64_t> budget;
  if (int rc = loadBase(fromArtifact, base, ps, budget))
    return rc;
  printPlan(base.layout, llvm::outs());

  Tables tables;
  if (!sweep.empty())
    if (int rc = runSweep(ps, tables))
      return rc;

  if (!vary.empty())
    if (int rc = runVary(ps, *budget, tables))
      return rc;

  std::vector<poolrt::explore::LadderRun> ladders =
      runLadderQueries(base.layout, ladderQueries);

  if (!htmlDir.empty())
    if (int rc = writePage(fromArtifact, base, ps, *budget, tables, ladders))
      return rc;

  for (const Row &r : tables.varyRows)
    if (!r.c.error.empty())
      return 1;
  return ::pool::finishStdout("pool-explore");
}
