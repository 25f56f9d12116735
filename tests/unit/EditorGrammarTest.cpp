// EditorGrammarTest.cpp - The editor grammars (editors/) highlight exactly
// the lexer's reserved words, so that a keyword added to the language
// cannot be forgotten there.
// SPDX-License-Identifier: Apache-2.0
#include "frontend/ParseDriver.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Regex.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

using namespace opdc;

namespace {

std::string readSource(const std::string &rel) {
  auto buf =
      llvm::MemoryBuffer::getFile(std::string(OPDC_SOURCE_DIR) + "/" + rel);
  if (!buf)
    return {};
  return (*buf)->getBuffer().str();
}

std::set<std::string> lexerKeywords() {
  auto words = ParseDriver::keywords();
  return {words.begin(), words.end()};
}

TEST(EditorGrammar, LexerHasNoDuplicateKeywords) {
  EXPECT_EQ(lexerKeywords().size(), ParseDriver::keywords().size());
  EXPECT_TRUE(lexerKeywords().count("out"));
  EXPECT_TRUE(lexerKeywords().count("checkpoints"));
}

// The 'keywords' repository entry: patterns whose match is \b(a|b|...)\b.
TEST(EditorGrammar, TextMateKeywordsAreTheLexers) {
  std::string text = readSource("editors/vscode/syntaxes/opd.tmLanguage.json");
  ASSERT_FALSE(text.empty());
  auto parsed = llvm::json::parse(text);
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object *root = parsed->getAsObject();
  ASSERT_NE(root, nullptr);
  const llvm::json::Object *repo = root->getObject("repository");
  ASSERT_NE(repo, nullptr);
  const llvm::json::Object *keywords = repo->getObject("keywords");
  ASSERT_NE(keywords, nullptr);
  const llvm::json::Array *patterns = keywords->getArray("patterns");
  ASSERT_NE(patterns, nullptr);
  std::set<std::string> words;
  llvm::Regex alternation("^\\\\b\\(([a-z0-9_|]+)\\)\\\\b$");
  for (const llvm::json::Value &p : *patterns) {
    const llvm::json::Object *o = p.getAsObject();
    ASSERT_NE(o, nullptr);
    auto match = o->getString("match");
    ASSERT_TRUE(match.has_value());
    llvm::SmallVector<llvm::StringRef, 2> groups;
    ASSERT_TRUE(alternation.match(*match, &groups)) << match->str();
    llvm::SmallVector<llvm::StringRef, 16> alts;
    groups[1].split(alts, '|');
    for (llvm::StringRef w : alts)
      EXPECT_TRUE(words.insert(w.str()).second) << "listed twice: " << w.str();
  }
  EXPECT_EQ(words, lexerKeywords());
}

// Every `syntax keyword GROUP word...` line, `contained` groups (TODO
// markers in comments) aside.
TEST(EditorGrammar, VimKeywordsAreTheLexers) {
  std::string text = readSource("editors/vim/syntax/opd.vim");
  ASSERT_FALSE(text.empty());
  std::set<std::string> words;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::string cmd, kind, group, w;
    in >> cmd >> kind >> group;
    if (cmd != "syntax" || kind != "keyword")
      continue;
    std::set<std::string> these;
    bool contained = false;
    while (in >> w) {
      if (w == "contained")
        contained = true;
      else
        these.insert(w);
    }
    if (contained)
      continue;
    for (const std::string &x : these)
      EXPECT_TRUE(words.insert(x).second) << "listed twice: " << x;
  }
  EXPECT_EQ(words, lexerKeywords());
}

} // namespace
