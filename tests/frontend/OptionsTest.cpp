// Option registry and parser (DESIGN section 4): every key, every error.
#include <gtest/gtest.h>

#include <set>

#include "superkernel/frontend/Options.h"

namespace sk {
namespace {

Options ok(const std::string& s, const Options& base = {}) {
  auto o = parseOptions(s, base);
  EXPECT_TRUE(o.ok()) << s << ": " << (o ? "" : o.error().message());
  return o ? *o : Options{};
}

std::string fail(const std::string& s) {
  auto o = parseOptions(s);
  EXPECT_FALSE(o.ok()) << s << " should fail";
  if (o) return "";
  EXPECT_EQ(o.error().kind(), ErrorKind::BadInput);
  return o.error().message();
}

TEST(Options, RegistryHasEveryDesignKey) {
  std::set<std::string> keys;
  for (const auto& i : optionRegistry()) keys.insert(i.key);
  EXPECT_EQ(keys, (std::set<std::string>{"early-start", "preload-code", "stream-fusion", "split-mode", "func-align",
                                         "feed-sync-all", "debug-sync-all", "profiling", "compile-options",
                                         "strict-scope-check", "debug-core-num", "sync-model", "preload-data"}));
}

TEST(Options, Defaults) {
  Options o = ok("");
  EXPECT_EQ(o, Options{});
  EXPECT_EQ(o.earlyStart, 1);
  EXPECT_EQ(o.preloadCode, PreloadCode::Auto);
  EXPECT_EQ(o.effectiveSplitMode(1), 1);
  EXPECT_EQ(o.effectiveSplitMode(4), 4);
}

TEST(Options, EveryKeyAcceptsItsValues) {
  EXPECT_EQ(ok("early-start=0").earlyStart, 0);
  EXPECT_EQ(ok("early-start=2").earlyStart, 2);
  EXPECT_EQ(ok("preload-code=none").preloadCode, PreloadCode::None);
  EXPECT_EQ(ok("preload-code=max").preloadCode, PreloadCode::Max);
  EXPECT_EQ(ok("preload-code=per-func").preloadCode, PreloadCode::PerFunc);
  EXPECT_EQ(ok("preload-code=auto").preloadCode, PreloadCode::Auto);
  EXPECT_EQ(Options{}.preloadCode, PreloadCode::Auto);  // the target's choice unless set
  EXPECT_TRUE(ok("stream-fusion=1").streamFusion);
  EXPECT_EQ(ok("split-mode=64").splitMode, 64);
  EXPECT_EQ(ok("split-mode=1").effectiveSplitMode(4), 1);
  EXPECT_EQ(ok("func-align=0").funcAlign, 0);
  EXPECT_EQ(ok("func-align=4096").funcAlign, 4096);
  EXPECT_TRUE(ok("feed-sync-all=1").feedSyncAll);
  EXPECT_TRUE(ok("debug-sync-all=1").debugSyncAll);
  EXPECT_TRUE(ok("profiling=1").profiling);
  EXPECT_EQ(ok("compile-options=-O3,-march=native").compileOptions, (std::vector<std::string>{"-O3", "-march=native"}));
  EXPECT_EQ(ok("compile-options=-Wl\\,-rpath\\,/x\\:y").compileOptions, (std::vector<std::string>{"-Wl,-rpath,/x:y"}));
  EXPECT_EQ(ok("strict-scope-check=abort").strictScopeCheck, StrictScope::Abort);
  EXPECT_EQ(ok("debug-core-num=8").debugCoreNum, 8);
  EXPECT_FALSE(ok("sync-model=off").syncModel);
  EXPECT_TRUE(ok("sync-model=on").syncModel);
  EXPECT_TRUE(ok("").syncModel);
  Options m = ok("early-start=0:stream-fusion=1:profiling=1");
  EXPECT_EQ(m.earlyStart, 0);
  EXPECT_TRUE(m.streamFusion);
  EXPECT_TRUE(m.profiling);
}

TEST(Options, OverBaseLaterWins) {
  Options base = ok("early-start=0:profiling=1");
  Options o = ok("early-start=2", base);
  EXPECT_EQ(o.earlyStart, 2);
  EXPECT_TRUE(o.profiling);
}

TEST(Options, InvalidValuesNameKeyAndAcceptedValues) {
  EXPECT_EQ(fail("early-start=3"), "option \"early-start\": invalid value \"3\" (accepted: 0, 1, 2)");
  EXPECT_NE(fail("preload-code=some").find("accepted: auto, none, per-func, max"), std::string::npos);
  EXPECT_NE(fail("stream-fusion=yes").find("\"stream-fusion\""), std::string::npos);
  EXPECT_NE(fail("split-mode=0").find("1..64"), std::string::npos);
  EXPECT_NE(fail("split-mode=65").find("1..64"), std::string::npos);
  EXPECT_NE(fail("func-align=100").find("not a power of 2"), std::string::npos);
  EXPECT_NE(fail("func-align=-4").find("\"func-align\""), std::string::npos);
  EXPECT_NE(fail("feed-sync-all=2").find("\"feed-sync-all\""), std::string::npos);
  EXPECT_NE(fail("debug-sync-all=true").find("\"debug-sync-all\""), std::string::npos);
  EXPECT_NE(fail("profiling=01x").find("\"profiling\""), std::string::npos);
  EXPECT_NE(fail("strict-scope-check=warn").find("accepted: bypass, abort"), std::string::npos);
  EXPECT_NE(fail("debug-core-num=-1").find("\"debug-core-num\""), std::string::npos);
  EXPECT_NE(fail("debug-core-num=99999999").find("\"debug-core-num\""), std::string::npos);
  EXPECT_NE(fail("sync-model=1").find("accepted: on, off"), std::string::npos);
  EXPECT_NE(fail("early-start= 1").find("\"early-start\""), std::string::npos);
}

TEST(Options, CompileOptionItems) {
  EXPECT_NE(fail("compile-options=-O2,,-g").find("item 2 is empty"), std::string::npos);
  EXPECT_NE(fail("compile-options=-O2,").find("item 2 is empty"), std::string::npos);
  EXPECT_NE(fail(std::string("compile-options=-DX\n-DY")).find("newline"), std::string::npos);
  EXPECT_NE(fail(std::string("compile-options=-DX\0Y", 21)).find("NUL"), std::string::npos);
  // No shell: metacharacters are plain argv bytes.
  EXPECT_EQ(ok("compile-options=-DX=$(rm -rf /);echo").compileOptions[0], "-DX=$(rm -rf /);echo");
}

TEST(Options, StructuralErrors) {
  std::string unknown = fail("early-stat=1");
  EXPECT_NE(unknown.find("unknown option \"early-stat\""), std::string::npos);
  EXPECT_NE(unknown.find("valid keys: compile-options, debug-core-num"), std::string::npos);
  EXPECT_EQ(fail("early-start=1:early-start=2"), "option \"early-start\" given twice");
  EXPECT_EQ(fail("early-start="), "option \"early-start\": empty value (accepted: 0, 1, 2)");
  EXPECT_NE(fail("early-start").find("missing \"=value\""), std::string::npos);
  EXPECT_NE(fail("early-start=1::profiling=1").find("empty item"), std::string::npos);
  EXPECT_NE(fail(":").find("empty item"), std::string::npos);
}

TEST(Options, CanonicalRoundTrips) {
  Options o;
  EXPECT_EQ(o.canonical(),
            "debug-core-num=0:debug-sync-all=0:early-start=1:feed-sync-all=0:func-align=512:preload-code=auto:"
            "preload-data=auto:profiling=0:stream-fusion=0:strict-scope-check=bypass:sync-model=on");
  EXPECT_EQ(ok("preload-data=none").preloadData, PreloadData::None);
  EXPECT_EQ(ok("preload-data=first-block").preloadData, PreloadData::FirstBlock);
  EXPECT_EQ(ok("preload-data=lookahead").preloadData, PreloadData::Lookahead);
  EXPECT_EQ(ok("preload-data=lookahead").canonical().find("preload-data=lookahead") != std::string::npos, true);
  EXPECT_EQ(Options{}.preloadData, PreloadData::Auto);  // the target's choice unless set
  EXPECT_NE(fail("preload-data=all").find("accepted: auto, none, first-block, lookahead"), std::string::npos);
  EXPECT_EQ(ok(o.canonical()), o);
  Options p = ok("early-start=2:preload-code=max:stream-fusion=1:split-mode=4:func-align=0:feed-sync-all=1:"
                 "debug-sync-all=1:profiling=1:compile-options=-O3,-Wl\\,-z\\,now:strict-scope-check=abort:"
                 "debug-core-num=3:sync-model=off");
  EXPECT_FALSE(p.syncModel);
  EXPECT_EQ(p.compileOptions, (std::vector<std::string>{"-O3", "-Wl,-z,now"}));
  EXPECT_EQ(ok(p.canonical()), p);
  EXPECT_EQ(ok(p.canonical()).canonical(), p.canonical());
  Options q;
  q.compileOptions = {"a:b", "c,d", "e\\f"};
  EXPECT_EQ(ok(q.canonical()), q);
}

}  // namespace
}  // namespace sk
