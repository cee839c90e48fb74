// Symbol sizes of an ELF object or shared object (driver/Driver.h), from its
// symbol table as support/ElfSymbols.cpp reads it: any byte string is
// accepted, a truncated or corrupt object gives ErrorKind::Compile.
#include <fmt/format.h>

#include "support/ElfSymbols.h"
#include "superkernel/driver/Driver.h"

namespace sk {

Expected<std::map<std::string, uint64_t>> readSymbolSizes(std::string_view objectBytes) {
  SK_ASSIGN_OR_RETURN(std::vector<ElfSymbol> symbols, readElfSymbols(objectBytes));
  std::map<std::string, uint64_t> sizes;
  for (const ElfSymbol& sym : symbols) {
    if (!sym.defined) continue;
    auto [it, inserted] = sizes.emplace(sym.name, sym.size);
    if (!inserted && sym.size > it->second) it->second = sym.size;
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
