//===- IntExprTest.cpp - Integer expressions in model files ---------------===//

#include "dialects/Pool/Yaml/ModelDecl.h"

#include <gtest/gtest.h>

using pool::yaml::evalIntExpr;

namespace {

int64_t eval(const std::string &s,
             std::vector<std::pair<std::string, int64_t>> params = {}) {
  int64_t v = 0;
  std::string msg;
  EXPECT_TRUE(evalIntExpr(s, params, v, msg)) << s << ": " << msg;
  return v;
}

std::string error(const std::string &s,
                  std::vector<std::pair<std::string, int64_t>> params = {}) {
  int64_t v = 0;
  std::string msg;
  EXPECT_FALSE(evalIntExpr(s, params, v, msg)) << s << " evaluated to " << v;
  return msg;
}

TEST(IntExpr, ArithmeticAndPrecedence) {
  EXPECT_EQ(eval("2*16*16*2*256*2 + 2*16*2*16*4"), 528384);
  EXPECT_EQ(eval("1 + 2 * 3"), 7);
  EXPECT_EQ(eval("(1 + 2) * 3"), 9);
  EXPECT_EQ(eval("-7 / 2"), -4); // floor division
  EXPECT_EQ(eval("-7 % 2"), 1);
  EXPECT_EQ(eval("1_000_000"), 1000000);
  EXPECT_EQ(eval("--3"), 3);
  EXPECT_EQ(eval("8 + e", {{"e", 3}}), 11);
  EXPECT_EQ(eval("ceil_div(10, 4) + align_up(10, 8) + min(3, 2) + max(3, 2)"),
            3 + 16 + 2 + 3);
  EXPECT_EQ(eval("9223372036854775807"), INT64_MAX);
}

TEST(IntExpr, Errors) {
  EXPECT_NE(error("9223372036854775808").find("overflows"), std::string::npos);
  EXPECT_NE(error("9223372036854775807 * 2").find("overflows"), std::string::npos);
  EXPECT_NE(error("-9223372036854775807 - 2").find("overflows"), std::string::npos);
  EXPECT_NE(error("4 / 0").find("division by zero"), std::string::npos);
  EXPECT_NE(error("4 % (2 - 2)").find("division by zero"), std::string::npos);
  EXPECT_NE(error("x + 1", {{"e", 0}}).find("unknown parameter 'x'"),
            std::string::npos);
  EXPECT_NE(error("1.5").find("expected an integer"), std::string::npos);
  EXPECT_NE(error("").find("empty expression"), std::string::npos);
  EXPECT_NE(error("(1 + 2").find("expected ')'"), std::string::npos);
  EXPECT_NE(error("sqrt(4, 2)").find("unknown function"), std::string::npos);
  EXPECT_NE(error("1 2").find("unexpected"), std::string::npos);
  EXPECT_NE(error("ceil_div(4, 0)").find("b >= 1"), std::string::npos);
  EXPECT_NE(error(std::string(100, '(') + "1" + std::string(100, ')'))
                .find("nests too deeply"),
            std::string::npos);
}

} // namespace
