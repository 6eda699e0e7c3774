// libFuzzer target: HLO text -> parse -> verify -> print -> parse -> print (issue 17), in the
// default (dump), long and short parsable forms.
//
// Any input may fail to parse or verify (an error is the right answer to bad text); a crash, a
// sanitizer report, or, for a module that verifies, printed text that does not parse back or
// prints differently the second time, is a finding. Printing must not crash on a module that
// parsed but does not verify either (`hloc print` does not verify).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_util.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto module = hloc::ParseHloModule(text, "<fuzz>");
  if (!module.ok()) return 0;
  const bool verified = hloc::VerifyModule(**module).ok();
  // Every print form must work on whatever parsed; for a module that verifies, each must parse
  // back and print the same (XLA's dump form, its long form, and its short parsable form).
  const hloc::HloPrintOptions forms[] = {hloc::HloPrintOptions(), hloc::HloPrintOptions::Long(),
                                         hloc::HloPrintOptions::ShortParsable()};
  const char* const names[] = {"default", "long", "short"};
  for (int f = 0; f < 3; ++f) {
    const std::string printed = hloc::PrintModule(**module, forms[f]);
    if (!verified) continue;
    const std::string form = names[f];
    auto reparsed = hloc::ParseHloModule(printed, "<printed>");
    if (!reparsed.ok()) {
      hloc_fuzz::Fail("the " + form + " form does not parse back: " + std::string(reparsed.status().message()), printed);
    }
    const std::string printed_again = hloc::PrintModule(**reparsed, forms[f]);
    if (printed_again != printed) hloc_fuzz::Fail(form + " form: print(parse(print(m))) != print(m)", printed, printed_again);
    if (f == 0 && !hloc::VerifyModule(**reparsed).ok()) {
      hloc_fuzz::Fail("the printed module does not verify although the input did", printed);
    }
  }
  return 0;
}
