// The symbol table of an ELF object, read with bounds checks (SymbolSizes.cpp):
// what preload sizing and symbol localisation both need, in one reader.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "superkernel/support/Error.h"

namespace sk {

struct ElfSymbol {
  std::string name;
  uint64_t size = 0;
  uint8_t binding = 0;   // STB_LOCAL, STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE (<elf.h>)
  bool defined = false;  // st_shndx != SHN_UNDEF
};

/// Every named symbol of .symtab (else .dynsym). Any byte string is accepted:
/// a truncated or corrupt object is ErrorKind::Compile, never an out-of-bounds read.
Expected<std::vector<ElfSymbol>> readElfSymbols(std::string_view objectBytes);

}  // namespace sk
