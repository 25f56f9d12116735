// LexerTest.cpp - Unit tests of the Flex scanner (through ParseDriver).
// SPDX-License-Identifier: Apache-2.0
#include "frontend/ParseDriver.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace opdc;

namespace {

struct Token {
  std::string name; ///< printable kind: "identifier", "'kernel'", "'('"
  std::string spelling;
  RawToken raw;
  unsigned line = 0, col = 0;
};

struct Lexed {
  std::vector<Token> tokens;
  std::string diags;
  unsigned errors = 0;

  std::vector<std::string> names() const {
    std::vector<std::string> v;
    for (auto &t : tokens)
      v.push_back(t.name);
    return v;
  }
};

Lexed lex(llvm::StringRef text) {
  SourceManager sm;
  Lexed out;
  llvm::raw_string_ostream os(out.diags);
  DiagnosticEngine diags(sm, os);
  unsigned id = sm.addBuffer(text, "lex.opd");
  ParseDriver driver(sm, id, diags);
  for (unsigned guard = 0; guard < 100000; ++guard) {
    RawToken t = driver.nextToken();
    if (t.kind == 0)
      break;
    Token tok;
    tok.name = ParseDriver::tokenName(t.kind);
    tok.spelling = driver.textOf(t.range).str();
    std::tie(tok.line, tok.col) = sm.lineAndColumn(t.range.begin);
    tok.raw = t;
    tok.raw.range = {}; // points into sm, which dies here
    out.tokens.push_back(std::move(tok));
  }
  out.errors = diags.errorCount();
  return out;
}

TEST(Lexer, KeywordsAreReserved) {
  const char *keywords[] = {
      "program", "import",  "const",   "param",  "set",         "map",
      "dat",     "block",   "stencil", "kernel", "fn",          "proc",
      "main",    "from",    "size",    "halo",   "base",        "let",
      "var",     "if",      "else",    "for",    "in",          "while",
      "loop",    "over",    "return",  "break",  "continue",    "print",
      "printf",  "fail",    "swap",    "write",   "read",   "to",          "solve",
      "along",   "adjoint", "tangent", "wrt",    "checkpoints", "true",
      "false",   "out",     "inout",   "inc",    "min",         "max",
      "sum",     "f64",     "f32",     "i32",    "i64",         "bool",
      "str"};
  for (const char *kw : keywords) {
    Lexed l = lex(kw);
    ASSERT_EQ(l.tokens.size(), 1u) << kw;
    EXPECT_EQ(l.tokens[0].name, std::string("'") + kw + "'");
    EXPECT_EQ(l.errors, 0u);
  }
}

TEST(Lexer, Identifiers) {
  Lexed l = lex("foo _bar x1 kernels mainly F64");
  ASSERT_EQ(l.tokens.size(), 6u);
  for (auto &t : l.tokens)
    EXPECT_EQ(t.name, "identifier") << t.spelling;
  EXPECT_EQ(l.tokens[0].raw.text, "foo");
  EXPECT_EQ(l.tokens[1].raw.text, "_bar");
  EXPECT_EQ(l.tokens[3].raw.text, "kernels");
  EXPECT_EQ(l.tokens[5].raw.text, "F64");
}

TEST(Lexer, Operators) {
  Lexed l = lex("+ - * / % == != < <= > >= && || ! = += -= *= /= -> .. ..= "
                "@ : , ; . ( ) [ ] { }");
  std::vector<std::string> expected = {
      "'+'",  "'-'",  "'*'",  "'/'",   "'%'", "'=='", "'!='", "'<'",  "'<='",
      "'>'",  "'>='", "'&&'", "'||'",  "'!'", "'='",  "'+='", "'-='", "'*='",
      "'/='", "'->'", "'..'", "'..='", "'@'", "':'",  "','",  "';'",  "'.'",
      "'('",  "')'",  "'['",  "']'",   "'{'", "'}'"};
  EXPECT_EQ(l.names(), expected);
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, OperatorsNeedNoSpaces) {
  Lexed l = lex("a+=b->c..=d");
  std::vector<std::string> expected = {"identifier", "'+='",       "identifier",
                                       "'->'",       "identifier", "'..='",
                                       "identifier"};
  EXPECT_EQ(l.names(), expected);
}

TEST(Lexer, IntegerLiterals) {
  Lexed l = lex("123 0x1F 0XfF 1_000_000 5i64 0x10i64 9223372036854775807");
  ASSERT_EQ(l.tokens.size(), 7u);
  for (auto &t : l.tokens)
    EXPECT_EQ(t.name, "integer literal");
  EXPECT_EQ(l.tokens[0].raw.intValue.value, 123);
  EXPECT_FALSE(l.tokens[0].raw.intValue.forceI64);
  EXPECT_EQ(l.tokens[1].raw.intValue.value, 31);
  EXPECT_EQ(l.tokens[2].raw.intValue.value, 255);
  EXPECT_EQ(l.tokens[3].raw.intValue.value, 1000000);
  EXPECT_EQ(l.tokens[4].raw.intValue.value, 5);
  EXPECT_TRUE(l.tokens[4].raw.intValue.forceI64);
  EXPECT_EQ(l.tokens[5].raw.intValue.value, 16);
  EXPECT_TRUE(l.tokens[5].raw.intValue.forceI64);
  EXPECT_EQ(l.tokens[6].raw.intValue.value, INT64_MAX);
  EXPECT_EQ(l.tokens[4].spelling, "5i64");
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, IntegerOutOfRange) {
  Lexed l = lex("9223372036854775808 0x8000000000000000");
  ASSERT_EQ(l.tokens.size(), 2u);
  EXPECT_EQ(l.errors, 2u);
  EXPECT_NE(l.diags.find("lex.opd:1:1: error: integer literal "
                         "'9223372036854775808' is out of range for i64"),
            std::string::npos)
      << l.diags;
}

TEST(Lexer, FloatLiterals) {
  Lexed l = lex("1.0 1. .5 1e-3 2.5E+4 1_0.2_5");
  ASSERT_EQ(l.tokens.size(), 6u);
  for (auto &t : l.tokens) {
    EXPECT_EQ(t.name, "floating-point literal");
    EXPECT_FALSE(t.raw.floatValue.isF32);
  }
  EXPECT_EQ(l.tokens[0].raw.floatValue.value, 1.0);
  EXPECT_EQ(l.tokens[1].raw.floatValue.value, 1.0);
  EXPECT_EQ(l.tokens[2].raw.floatValue.value, 0.5);
  EXPECT_EQ(l.tokens[3].raw.floatValue.value, 1e-3);
  EXPECT_EQ(l.tokens[4].raw.floatValue.value, 2.5e4);
  EXPECT_EQ(l.tokens[5].raw.floatValue.value, 10.25);
  EXPECT_EQ(l.tokens[1].raw.floatValue.spelling, "1.");
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, F32LiteralsAreRoundedToSinglePrecision) {
  Lexed l = lex("1.4f 1e-3f 0.1f");
  ASSERT_EQ(l.tokens.size(), 3u);
  EXPECT_TRUE(l.tokens[0].raw.floatValue.isF32);
  EXPECT_EQ(l.tokens[0].raw.floatValue.value, double(1.4f));
  EXPECT_NE(l.tokens[0].raw.floatValue.value, 1.4);
  EXPECT_EQ(l.tokens[0].raw.floatValue.spelling, "1.4f");
  EXPECT_EQ(l.tokens[1].raw.floatValue.value, double(1e-3f));
  EXPECT_EQ(l.tokens[2].raw.floatValue.value, double(0.1f));
}

TEST(Lexer, RangeAfterIntegerIsNotAFloat) {
  Lexed l = lex("0..10 1..=n 2.5..3");
  std::vector<std::string> expected = {
      "integer literal",        "'..'",  "integer literal",
      "integer literal",        "'..='", "identifier",
      "floating-point literal", "'..'",  "integer literal"};
  EXPECT_EQ(l.names(), expected);
  EXPECT_EQ(l.tokens[0].raw.intValue.value, 0);
  EXPECT_EQ(l.tokens[2].raw.intValue.value, 10);
}

TEST(Lexer, MemberAccessAfterName) {
  Lexed l = lex("dJ.x a[0].y");
  std::vector<std::string> expected = {"identifier", "'.'", "identifier",
                                       "identifier", "'['", "integer literal",
                                       "']'",        "'.'", "identifier"};
  EXPECT_EQ(l.names(), expected);
}

TEST(Lexer, StringEscapes) {
  Lexed l = lex(R"("a\n\t\\\"\0b" "")");
  ASSERT_EQ(l.tokens.size(), 2u);
  EXPECT_EQ(l.tokens[0].name, "string literal");
  EXPECT_EQ(l.tokens[0].raw.text, std::string("a\n\t\\\"\0b", 7));
  EXPECT_EQ(l.tokens[1].raw.text, "");
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, UnknownEscapeIsAnError) {
  Lexed l = lex(R"("ab\qc")");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diags.find("lex.opd:1:4: error: unknown escape sequence '\\q' "
                         "in string literal"),
            std::string::npos)
      << l.diags;
}

TEST(Lexer, CommentsAreSkipped) {
  Lexed l = lex("a // b c\n/* d\n e * / */ f /**/ g /* ** */");
  std::vector<std::string> expected = {"identifier", "identifier",
                                       "identifier"};
  EXPECT_EQ(l.names(), expected);
  EXPECT_EQ(l.tokens[1].raw.text, "f");
  EXPECT_EQ(l.tokens[1].line, 3u);
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, Locations) {
  Lexed l = lex("const x =\n  1.5\tfoo");
  ASSERT_EQ(l.tokens.size(), 5u);
  EXPECT_EQ(l.tokens[0].line, 1u);
  EXPECT_EQ(l.tokens[0].col, 1u);
  EXPECT_EQ(l.tokens[0].spelling, "const");
  EXPECT_EQ(l.tokens[2].col, 9u);
  EXPECT_EQ(l.tokens[3].line, 2u);
  EXPECT_EQ(l.tokens[3].col, 3u);
  EXPECT_EQ(l.tokens[3].spelling, "1.5");
  EXPECT_EQ(l.tokens[4].col, 7u);
  EXPECT_TRUE(l.tokens[3].raw.firstOnLine);
  EXPECT_FALSE(l.tokens[4].raw.firstOnLine);
}

TEST(Lexer, InvalidCharacter) {
  Lexed l = lex("a $ b");
  EXPECT_EQ(l.names(), (std::vector<std::string>{"identifier", "identifier"}));
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diags.find("lex.opd:1:3: error: invalid character '$'"),
            std::string::npos)
      << l.diags;
}

TEST(Lexer, UnterminatedString) {
  Lexed l = lex("x = \"abc\ny");
  EXPECT_EQ(l.names(),
            (std::vector<std::string>{"identifier", "'='", "string literal",
                                      "identifier"}));
  EXPECT_EQ(l.tokens[2].raw.text, "abc");
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diags.find("lex.opd:1:5: error: unterminated string literal"),
            std::string::npos)
      << l.diags;
}

TEST(Lexer, UnterminatedBlockComment) {
  Lexed l = lex("a /* b\n c");
  EXPECT_EQ(l.names(), (std::vector<std::string>{"identifier"}));
  EXPECT_EQ(l.errors, 1u);
  EXPECT_NE(l.diags.find("lex.opd:1:3: error: unterminated block comment"),
            std::string::npos)
      << l.diags;
}

TEST(Lexer, MalformedNumbers) {
  for (const char *bad : {"12abc", "0x", "1e", "1e+", "1.5q", ".5x", "0x1g"}) {
    Lexed l = lex(bad);
    ASSERT_EQ(l.tokens.size(), 1u) << bad;
    EXPECT_EQ(l.tokens[0].name, "integer literal");
    EXPECT_EQ(l.errors, 1u) << bad;
    EXPECT_NE(
        l.diags.find(std::string("error: malformed number '") + bad + "'"),
        std::string::npos)
        << l.diags;
  }
}

TEST(Lexer, FloatOutOfRange) {
  Lexed l = lex("1e999 1e39f");
  EXPECT_EQ(l.errors, 2u);
  EXPECT_NE(l.diags.find("'1e999' is out of range for f64"), std::string::npos);
  EXPECT_NE(l.diags.find("'1e39f' is out of range for f32"), std::string::npos);
}

TEST(Lexer, NulAndNonAsciiBytes) {
  std::string text = std::string("a\0\0b \xC3\xA9 c \xFF", 11);
  Lexed l = lex(text);
  EXPECT_EQ(l.names(), (std::vector<std::string>{"identifier", "identifier",
                                                 "identifier"}));
  EXPECT_EQ(l.errors, 3u);
  EXPECT_NE(l.diags.find("invalid character '\\x00\\x00'"), std::string::npos);
  EXPECT_NE(l.diags.find("invalid character '\\xC3\\xA9'"), std::string::npos);
}

TEST(Lexer, StringsMayHoldUtf8) {
  Lexed l = lex("\"h\xC3\xA9\" // \xFF in a comment");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_EQ(l.tokens[0].raw.text, "h\xC3\xA9");
  EXPECT_EQ(l.errors, 0u);
}

TEST(Lexer, NestingTooDeep) {
  std::string text(300, '(');
  Lexed l = lex(text);
  EXPECT_EQ(l.errors, 1u);
  EXPECT_EQ(l.tokens.size(), 256u);
  EXPECT_NE(l.diags.find("error: nesting too deep (more than 256 levels)"),
            std::string::npos);
}

} // namespace
