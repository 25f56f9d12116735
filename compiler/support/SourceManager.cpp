// SourceManager.cpp - Owns every source buffer the compiler reads.
// SPDX-License-Identifier: Apache-2.0
#include "support/SourceManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace opdc {

std::optional<unsigned> SourceManager::loadFile(const std::string &path,
                                                std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buf) {
    error = buf.getError().message();
    return std::nullopt;
  }
  // A directory opens but reads as an error on some systems; treat any
  // non-regular input the same way.
  return mgr.AddNewSourceBuffer(std::move(*buf), llvm::SMLoc());
}

unsigned SourceManager::addBuffer(llvm::StringRef text, llvm::StringRef name) {
  return mgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                llvm::SMLoc());
}

llvm::StringRef SourceManager::bufferText(unsigned id) const {
  return mgr.getMemoryBuffer(id)->getBuffer();
}

llvm::StringRef SourceManager::bufferName(unsigned id) const {
  return mgr.getMemoryBuffer(id)->getBufferIdentifier();
}

unsigned SourceManager::bufferOf(llvm::SMLoc loc) const {
  if (!loc.isValid())
    return 0;
  return mgr.FindBufferContainingLoc(loc);
}

std::pair<unsigned, unsigned>
SourceManager::lineAndColumn(llvm::SMLoc loc) const {
  unsigned id = bufferOf(loc);
  if (id == 0)
    return {0, 0};
  return mgr.getLineAndColumn(loc, id);
}

std::string SourceManager::describe(llvm::SMLoc loc) const {
  unsigned id = bufferOf(loc);
  if (id == 0)
    return "<unknown>";
  auto [line, col] = mgr.getLineAndColumn(loc, id);
  return (bufferName(id) + ":" + llvm::Twine(line) + ":" + llvm::Twine(col))
      .str();
}

std::string SourceManager::shortLocation(llvm::SMLoc loc) const {
  unsigned id = bufferOf(loc);
  if (id == 0)
    return "";
  auto [line, col] = mgr.getLineAndColumn(loc, id);
  return (llvm::sys::path::filename(bufferName(id)) + ":" + llvm::Twine(line) +
          ":" + llvm::Twine(col))
      .str();
}

} // namespace opdc
