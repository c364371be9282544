//===- ModelYamlTest.cpp - The YAML reader over every bundled input -------===//
//
// Runs the reader (which owns yaml-cpp's exceptions) over every bundled model
// and every bad input of the lit suite, so the sanitizer build exercises the
// parsing paths, and checks what a caller relies on: success fills the
// declaration, failure names the file and says what went wrong.
//
//===----------------------------------------------------------------------===//

#include "dialects/Pool/Yaml/ModelDecl.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace fs = std::filesystem;
using namespace pool::yaml;

namespace {

std::vector<fs::path> yamlFiles(const fs::path &dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto &e : fs::directory_iterator(dir))
      if (e.path().extension() == ".yaml")
        out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ModelYaml, EveryBundledModelLoads) {
  auto files = yamlFiles(fs::path(POOLC_SOURCE_DIR) / "models");
  ASSERT_GE(files.size(), 4u);
  for (const fs::path &f : files) {
    ModelDecl decl;
    YamlError err;
    EXPECT_TRUE(loadModelYaml(f.string(), {}, decl, err)) << err.str();
    EXPECT_FALSE(decl.name.empty()) << f;
    EXPECT_FALSE(decl.classes.empty()) << f;
    EXPECT_GE(decl.blockSize, 1) << f;
  }
}

TEST(ModelYaml, EveryBadInputFailsWithAMessage) {
  auto files = yamlFiles(fs::path(POOLC_SOURCE_DIR) / "test/Tools/Inputs/bad");
  int failed = 0;
  for (const fs::path &f : files) {
    ModelDecl decl;
    YamlError err;
    if (loadModelYaml(f.string(), {}, decl, err))
      continue; // rejected later, by a dialect verifier (lit covers those)
    ++failed;
    EXPECT_EQ(err.file, f.string());
    EXPECT_FALSE(err.message.empty()) << f;
    EXPECT_NE(err.str().find(": error: "), std::string::npos);
  }
  EXPECT_GE(failed, 15);
}

TEST(ModelYaml, ParamOverrides) {
  fs::path qwen = fs::path(POOLC_SOURCE_DIR) / "models/qwen3.5-27b.yaml";
  ModelDecl decl;
  YamlError err;
  ASSERT_TRUE(loadModelYaml(qwen.string(), {{"num_spec", "3"}}, decl, err))
      << err.str();
  auto state = std::find_if(decl.classes.begin(), decl.classes.end(),
                            [](const ClassDecl &c) { return c.pool == "state"; });
  ASSERT_NE(state, decl.classes.end());
  EXPECT_EQ(state->entriesPerReq, 4);
  EXPECT_FALSE(loadModelYaml(qwen.string(), {{"no_such_param", "1"}}, decl, err));
  EXPECT_NE(err.message.find("no_such_param"), std::string::npos);
}

} // namespace
