//===- pool-explore.cpp - Look at a model's plan and how it moves ---------===//
//
//   pool-explore MODEL.yaml --budget SIZE --max-num-seqs N [--param K=V]...
//       [--sweep budget=A..B[:STEPS]] [--vary NAME=V1,V2,...] [--width COLS]
//
// Shows the pools and entry classes, the history the budget buys, the plane
// assignment and its slack, and an ASCII map of the row space. --sweep and
// --vary compile the model again for each point and tabulate what moved.
// `--vary dtype=bf16,fp8` swaps the dtype token of the model's file name
// (models/x-fp8.yaml -> models/x-bf16.yaml); any other NAME is a model
// parameter.
//
//===----------------------------------------------------------------------===//

#include "codegen/Report.h"
#include "tools/lib/Driver.h"
#include "tools/lib/SizeArg.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;
namespace cl = llvm::cl;
namespace json = llvm::json;

static cl::OptionCategory cat("pool-explore options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<model.yaml>"),
                                      cl::Required, cl::cat(cat));
static cl::opt<std::string> budgetArg("budget", cl::desc("bytes for the pools"),
                                      cl::value_desc("SIZE"), cl::Required,
                                      cl::cat(cat));
static cl::opt<int64_t> maxNumSeqs("max-num-seqs", cl::desc("requests in flight"),
                                   cl::Required, cl::cat(cat));
static cl::list<std::string> params("param", cl::desc("override a model parameter"),
                                    cl::value_desc("NAME=VALUE"), cl::cat(cat));
static cl::opt<std::string> sweep("sweep", cl::desc("budget=A..B[:STEPS]"),
                                  cl::cat(cat));
static cl::opt<std::string> vary("vary", cl::desc("NAME=V1,V2,... (a parameter, or dtype)"),
                                 cl::cat(cat));
static cl::opt<unsigned> width("width", cl::desc("columns of the row-space map"),
                               cl::init(64), cl::cat(cat));

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
  json::Value report = nullptr;
  std::string error; // first diagnostic, if the compile failed
};

Compiled compile(const std::string &path,
                 const std::vector<std::pair<std::string, int64_t>> &ps,
                 int64_t budget, int64_t seqs) {
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
  auto module = ::pool::compileModel(ctx, sm, opts);
  if (!module) {
    out.error = firstError.empty() ? "the model does not compile" : firstError;
    return out;
  }
  FailureOr<mlir::pool::ModelOp> model = mlir::pool::firstModel(*module);
  FailureOr<json::Value> report = failure();
  if (succeeded(model))
    report = mlir::pool::buildReport(*model, {path, ps, -1});
  if (failed(report))
    out.error = firstError.empty() ? "the model is not planned" : firstError;
  else
    out.report = std::move(*report);
  return out;
}

const json::Object *rowSpace(const json::Object &r) {
  return r.getObject("row_space");
}

void printPlan(const json::Object &r, llvm::raw_ostream &os) {
  const json::Object &in = *r.getObject("inputs");
  int64_t budget = *in.getInteger("budget_bytes");
  int64_t seqs = *in.getInteger("max_num_seqs");
  int64_t bs = *r.getObject("geometry")->getInteger("block_size");
  os << "== " << *r.getString("model") << ": " << gib(budget) << " ("
     << commas(budget) << " B), " << seqs << " sequences ==\n\npools\n";
  os << llvm::format("  %-10s %-6s %12s %14s %12s %7s\n", "class", "pool",
                     "entries", "entry bytes", "reserved", "share");
  int64_t total = *r.getInteger("total_reserved_bytes");
  for (const json::Value &v : *r.getArray("entry_classes")) {
    const json::Object &c = *v.getAsObject();
    int64_t reserved = *c.getInteger("reserved_bytes");
    os << llvm::format("  %-10s %-6s %12s %14s %12s %7s\n",
                       c.getString("name")->str().c_str(),
                       c.getString("pool")->str().c_str(),
                       commas(*c.getInteger("entries")).c_str(),
                       commas(*c.getInteger("entry_bytes")).c_str(),
                       gib(reserved).c_str(),
                       pct(total ? double(reserved) / double(total) : 0).c_str());
  }
  int64_t alloc = *r.getInteger("allocation_bytes");
  os << "  reserved " << commas(total) << " B, unreserved "
     << commas(*r.getInteger("unreserved_bytes")) << " B, one allocation of "
     << commas(alloc) << " B";
  if (alloc > budget)
    os << " (" << commas(alloc - budget)
       << " B over the budget: blocks round up to whole slots)";
  os << "\n\n";
  int64_t blocks = *r.getInteger("paged_entries");
  os << "history: " << commas(blocks) << " blocks x " << bs << " tokens = "
     << commas(blocks * bs) << " tokens";
  if (seqs > 0)
    os << " (" << commas(blocks * bs / seqs) << " per sequence with " << seqs
       << " in flight)";
  os << "\n";

  const json::Object *rs = rowSpace(r);
  if (!rs) {
    for (const json::Value &v : *r.getArray("arenas")) {
      const json::Object &a = *v.getAsObject();
      os << "\narena of '" << *a.getString("class") << "': "
         << commas(*a.getInteger("entry_bytes")) << " B per entry, checkpoint "
         << commas(*a.getInteger("checkpoint_bytes")) << " B\n";
      for (const json::Value &fv : *a.getArray("fields")) {
        const json::Object &f = *fv.getAsObject();
        os << llvm::format("  %-16s %14s .. %-14s %s%s\n",
                           f.getString("name")->str().c_str(),
                           commas(*f.getInteger("offset")).c_str(),
                           commas(*f.getInteger("end")).c_str(),
                           f.getString("dtype")->str().c_str(),
                           *f.getBoolean("in_checkpoint") ? "" : "  (not in checkpoints)");
      }
    }
    return;
  }

  int64_t arenaRows = *rs->getInteger("arena_rows");
  int64_t slotRows = *rs->getInteger("slot_rows");
  int64_t planeRows = rs->getInteger("plane_rows").value_or(0);
  os << "\nplanes (" << *rs->getInteger("row_bytes") << " B per row in all)\n";
  os << llvm::format("  %-8s %6s %-9s %14s %10s  %s\n", "plane", "width",
                     "dtype", "slack bytes", "slack", "fields");
  for (const json::Value &pv : *rs->getArray("planes")) {
    const json::Object &p = *pv.getAsObject();
    int64_t w = *p.getInteger("row_bytes");
    int64_t slack = *p.getInteger("slack_bytes");
    std::string fields;
    for (const json::Value &f : *p.getArray("fields"))
      fields += (fields.empty() ? "" : ", ") + f.getAsString()->str();
    os << llvm::format("  %-8s %6lld %-9s %14s %10s  %s\n",
                       p.getString("name")->str().c_str(), (long long)w,
                       p.getString("dtype")->str().c_str(),
                       commas(slack).c_str(),
                       pct(arenaRows ? double(slack) / double(arenaRows * w) : 0)
                           .c_str(),
                       fields.empty() ? "-" : fields.c_str());
  }
  os << "  arena " << commas(arenaRows) << " rows; slack "
     << commas(*rs->getInteger("plane_slack_bytes")) << " B = "
     << pct(*rs->getNumber("plane_slack_fraction")) << " of the arena\n";

  // The plane: blocks from row 0, slots from the top, the gap between.
  int64_t env = *rs->getInteger("envelope_rows");
  int64_t nb = rs->getInteger("num_blocks").value_or(0);
  int64_t ns = rs->getInteger("num_slots").value_or(0);
  int64_t positions = rs->getInteger("slot_positions").value_or(0);
  int64_t held = slotRows ? planeRows / slotRows : 0;
  int64_t origin = positions - held;
  int64_t blockEnd = nb * env;
  int64_t slotBegin = (positions - ns - origin) * slotRows;
  unsigned cols = std::max(8u, (unsigned)width);
  os << "\nrow space: envelope " << commas(env) << " rows per block, slot "
     << commas(slotRows) << " rows (arena " << commas(arenaRows) << " + windows "
     << commas(*rs->getInteger("entry_rows")) << "), ring "
     << *rs->getInteger("ring_slots") << ", plane " << commas(planeRows)
     << " rows\n";
  if (planeRows > 0) {
    std::string bar;
    for (unsigned c = 0; c < cols; ++c) {
      int64_t lo = planeRows * c / cols, hi = planeRows * (c + 1) / cols;
      bool block = lo < blockEnd, slot = hi > slotBegin;
      bar += block && slot ? '|' : block ? '#' : slot ? 'S' : '.';
    }
    os << "  [" << bar << "]\n";
    os << "   # blocks rows 0.." << commas(blockEnd) << " (" << commas(nb)
       << ")   . gap " << commas(slotBegin - blockEnd) << " rows   S slots rows "
       << commas(slotBegin) << ".." << commas(planeRows) << " (" << ns
       << " of " << positions << " positions)\n";
  }
  // One slot: the arena, then each class's windows.
  std::string slotBar;
  std::vector<std::pair<int64_t, char>> marks{{arenaRows, 'A'}};
  std::string legend = "A arena " + commas(arenaRows);
  for (const json::Value &cv : *rs->getArray("classes")) {
    const json::Object &c = *cv.getAsObject();
    std::string name = c.getString("name")->str();
    char ch = name == "dense" ? 'd' : name == "csa" ? 'c' : 'h';
    marks.push_back({arenaRows + *c.getInteger("entry_offset") +
                         *c.getInteger("entry_rows"),
                     ch});
    legend += std::string("  ") + ch + " " + name + " " +
              commas(*c.getInteger("entry_rows"));
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
  for (const json::Value &cv : *rs->getArray("classes")) {
    const json::Object &c = *cv.getAsObject();
    os << "  " << *c.getString("name") << " "
       << c.getArray("layers")->size() << " layers";
    if (*c.getInteger("block_rows") > 0)
      os << " x " << *c.getInteger("block_rows") << " rows/block";
    os << ";";
  }
  os << "\n";
  for (const json::Value &fv : *rs->getArray("field_windows")) {
    const json::Object &f = *fv.getAsObject();
    os << "  window field '" << *f.getString("field") << "' in plane '"
       << *f.getString("plane") << "': " << *f.getInteger("rows_per_window_row")
       << " plane rows per window row\n";
  }
  os << "  checkpoint image " << commas(*rs->getInteger("image_bytes")) << " B";
  if (auto units = rs->getInteger("units_per_checkpoint"))
    os << " = " << *units << " PAGE units";
  os << "\n";
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
    const json::Object &r = *row.c.report.getAsObject();
    int64_t page = 0, state = 0, perReq = 0;
    for (const json::Value &v : *r.getArray("entry_classes")) {
      const json::Object &c = *v.getAsObject();
      if (*c.getString("pool") == "page")
        page = *c.getInteger("entry_bytes");
      else
        state += *c.getInteger("entry_bytes") * *c.getInteger("entries_per_req");
      (void)perReq;
    }
    int64_t bs = *r.getObject("geometry")->getInteger("block_size");
    int64_t seqs = *r.getObject("inputs")->getInteger("max_num_seqs");
    int64_t tokens = *r.getInteger("paged_entries") * bs;
    std::string slack = "-";
    if (const json::Object *rs = rowSpace(r))
      slack = pct(*rs->getNumber("plane_slack_fraction"));
    os << llvm::format("%-16s %14s %14s %12s %16s %14s %8s\n", row.label.c_str(),
                       commas(page).c_str(), commas(state).c_str(),
                       commas(*r.getInteger("paged_entries")).c_str(),
                       commas(tokens).c_str(),
                       seqs ? commas(tokens / seqs).c_str() : "-",
                       slack.c_str());
  }
}

int fail(const std::string &msg) {
  llvm::errs() << "pool-explore: error: " << msg << "\n";
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(argc, argv, "pool-explore: a model's plan and how it moves\n");
  std::string why;
  auto budget = ::pool::parseByteSize(budgetArg, why);
  if (!budget)
    return fail("--budget '" + budgetArg + "': " + why);
  if (maxNumSeqs < 0)
    return fail("--max-num-seqs must be >= 0");
  std::vector<std::pair<std::string, int64_t>> ps;
  for (const std::string &p : params) {
    std::pair<std::string, int64_t> kv;
    if (!::pool::parseParamArg(p, kv, why))
      return fail("--param " + why);
    ps.push_back(kv);
  }

  Compiled base = compile(inputFile, ps, *budget, maxNumSeqs);
  if (!base.error.empty()) {
    llvm::errs() << base.error << "\n";
    return 1;
  }
  printPlan(*base.report.getAsObject(), llvm::outs());

  if (!sweep.empty()) {
    llvm::StringRef s(sweep);
    if (!s.consume_front("budget="))
      return fail("--sweep takes budget=A..B[:STEPS]");
    auto [range, stepsText] = s.split(':');
    auto [aText, bText] = range.split("..");
    auto a = ::pool::parseByteSize(aText.str(), why);
    if (!a)
      return fail("--sweep start '" + aText.str() + "': " + why);
    auto b = ::pool::parseByteSize(bText.str(), why);
    if (!b)
      return fail("--sweep end '" + bText.str() + "': " + why);
    unsigned steps = 5;
    if (!stepsText.empty() && (stepsText.getAsInteger(10, steps) || steps < 2 ||
                               steps > 1000))
      return fail("--sweep STEPS must be an integer in 2..1000");
    if (*b < *a)
      return fail("--sweep needs A <= B");
    std::vector<Row> rows;
    for (unsigned i = 0; i < steps; ++i) {
      int64_t point = *a + int64_t(((unsigned __int128)(*b - *a) * i) / (steps - 1));
      rows.push_back({gib(point), compile(inputFile, ps, point, maxNumSeqs)});
    }
    llvm::outs() << "\nsweep over the budget (" << maxNumSeqs << " sequences)\n";
    printTable(rows, llvm::outs());
  }

  if (!vary.empty()) {
    auto [name, valuesText] = llvm::StringRef(vary).split('=');
    if (name.empty() || valuesText.empty())
      return fail("--vary takes NAME=V1,V2,...");
    llvm::SmallVector<llvm::StringRef> values;
    valuesText.split(values, ',');
    std::vector<Row> rows;
    for (llvm::StringRef v : values) {
      if (name == "dtype") {
        std::string path = inputFile;
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
        rows.push_back({v.str(), compile(path, ps, *budget, maxNumSeqs)});
        continue;
      }
      std::pair<std::string, int64_t> kv;
      if (!::pool::parseParamArg((name + "=" + v).str(), kv, why))
        return fail("--vary " + why);
      auto vps = ps;
      vps.erase(std::remove_if(vps.begin(), vps.end(),
                               [&](auto &p) { return p.first == kv.first; }),
                vps.end());
      vps.push_back(kv);
      rows.push_back({(name + "=" + v).str(), compile(inputFile, vps, *budget, maxNumSeqs)});
    }
    llvm::outs() << "\nvarying " << name << " (" << gib(*budget) << ", "
                 << maxNumSeqs << " sequences)\n";
    printTable(rows, llvm::outs());
    for (const Row &r : rows)
      if (!r.c.error.empty())
        return 1;
  }
  return 0;
}
