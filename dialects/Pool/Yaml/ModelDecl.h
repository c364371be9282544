//===- ModelDecl.h - A model declaration read from YAML ---------*- C++ -*-===//
//
// The YAML front end's result: plain data with a source location on every
// item, so the importer can give each dialect op a file:line:col location and
// every later diagnostic points back into the YAML. No exceptions cross this
// API (yaml-cpp's stay inside ModelYaml.cpp, built with -fexceptions).
//
//===----------------------------------------------------------------------===//
#ifndef POOL_YAML_MODELDECL_H
#define POOL_YAML_MODELDECL_H

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pool::yaml {

struct SrcLoc {
  int line = 0; // 1-based; 0 = unknown
  int col = 0;  // 1-based
};

struct YamlError {
  std::string file;
  SrcLoc loc;
  std::string message; // starts with the key path, e.g. "planes[0].row_bytes: ..."
  /// "file:line:col: error: message"
  std::string str() const;
};

struct PlaneDecl {
  std::string name;
  int64_t rowBytes = 0;
  std::string dtype;
  SrcLoc loc;
};

struct FieldDecl {
  std::string name;
  std::string entryClass;
  int64_t layers = 0;
  std::vector<int64_t> shape;
  std::string dtype;
  double fill = 0.0;
  int64_t align = 0;
  bool inCheckpoint = true;
  bool window = false;
  SrcLoc loc;
};

struct TransferDecl {
  std::string kind; // none | fork | copy
  int64_t tokens = 0;
  std::string layoutId;
};

/// A PAGE class's attention pattern (specs/model-format.md, "attention").
struct AttentionDecl {
  std::string kind; // full | sliding | chunked
  int64_t tokens = 0;
  int64_t forwardTokens = 0;
  int64_t cachePercent = 0;
};

struct ClassDecl {
  std::string name;
  std::string pool; // page | state
  std::optional<int64_t> bytes;
  bool derived = false;
  int64_t entriesPerReq = 0;
  int64_t extraEntries = 0;
  std::optional<TransferDecl> transfer;
  std::optional<AttentionDecl> attention;
  SrcLoc loc;
};

struct ModelDecl {
  std::string file;
  std::string name;
  std::vector<std::pair<std::string, int64_t>> params; // after overrides
  /// Parameters whose value is a dtype name (`kv_dtype: fp8_e4m3`), after
  /// overrides; a field's or plane's dtype may name one.
  std::vector<std::pair<std::string, std::string>> dtypeParams;
  int64_t blockSize = 0;
  int64_t hashBlockSize = 0;
  int64_t slidingWindow = 0;
  int64_t specDepth = 0;
  std::vector<PlaneDecl> planes;
  std::optional<std::vector<int64_t>> layers;
  SrcLoc layersLoc;
  std::vector<FieldDecl> fields;
  std::vector<ClassDecl> classes;
  SrcLoc loc;
};

/// `--param NAME=TEXT`: TEXT is an integer expression for an integer
/// parameter, a dtype name for a dtype parameter.
using ParamOverrides = std::vector<std::pair<std::string, std::string>>;

/// Read `path`. `overrides` replace declared parameters (an undeclared name
/// is an error). Returns false and fills `error` on any problem.
bool loadModelYaml(const std::string &path, const ParamOverrides &overrides,
                   ModelDecl &out, YamlError &error);

/// The same for a document held in memory; `name` stands for the file in
/// messages.
bool loadModelYamlText(const std::string &text, const std::string &name,
                       const ParamOverrides &overrides, ModelDecl &out,
                       YamlError &error);

/// Evaluate an integer expression (see specs/model-format.md) over `params`.
/// Returns false with a message on a syntax error, an unknown name, a
/// division by zero or an overflow.
bool evalIntExpr(const std::string &text,
                 const std::vector<std::pair<std::string, int64_t>> &params,
                 int64_t &value, std::string &message);
/// The same, where `dtypes` are the dtype parameters sizeof() may name.
bool evalIntExpr(const std::string &text,
                 const std::vector<std::pair<std::string, int64_t>> &params,
                 const std::vector<std::pair<std::string, std::string>> &dtypes,
                 int64_t &value, std::string &message);

} // namespace pool::yaml

#endif // POOL_YAML_MODELDECL_H
