// The only file that includes LLVM headers (compile time).
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include <fmt/format.h>

#include "superkernel/driver/Driver.h"

namespace sk {

Expected<std::map<std::string, uint64_t>> readSymbolSizes(std::string_view objectBytes) {
  llvm::MemoryBufferRef ref(llvm::StringRef(objectBytes.data(), objectBytes.size()), "object");
  auto obj = llvm::object::ObjectFile::createObjectFile(ref);
  if (!obj) {
    std::string msg = llvm::toString(obj.takeError());
    return compileError(fmt::format("not an object file: {}", msg));
  }
  const llvm::object::ObjectFile& file = **obj;
  auto* elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(&file);
  if (!elf) return compileError("not an ELF object file (symbol sizes need ELF)");
  std::map<std::string, uint64_t> sizes;
  for (const llvm::object::ELFSymbolRef sym : elf->symbols()) {
    auto name = sym.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    auto flags = sym.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      continue;
    }
    if (*flags & llvm::object::SymbolRef::SF_Undefined) continue;
    if (name->empty()) continue;
    uint64_t size = sym.getSize();
    auto [it, inserted] = sizes.emplace(name->str(), size);
    if (!inserted && size > it->second) it->second = size;
  }
  return sizes;
}

Expected<uint64_t> readSymbolSize(std::string_view objectBytes, std::string_view symbol) {
  SK_ASSIGN_OR_RETURN(auto sizes, readSymbolSizes(objectBytes));
  auto it = sizes.find(std::string(symbol));
  if (it == sizes.end()) return compileError(fmt::format("symbol '{}' is not defined in the object", symbol));
  return it->second;
}

}  // namespace sk
