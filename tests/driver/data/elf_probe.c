/* A small ELF shared object for the symbol-size reader's corruption tests
 * (SymbolSizesTest.cpp): a full parse of it costs microseconds, so every
 * truncation and header patch can be tried, even under ASan, where a parse of
 * the test executable itself takes a third of a second. */
__attribute__((visibility("default"))) char skElfTinyArray[333] = {1};
__attribute__((visibility("default"))) int skElfTinyFunction(int x) { return x * 3 + skElfTinyArray[x & 255]; }
