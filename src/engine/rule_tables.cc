#include "engine/rule_tables.h"

namespace hloc {

GeneratedTables& GeneratedTables::Global() {
  static GeneratedTables* tables = [] {
    auto* t = new GeneratedTables();
    RegisterAllGeneratedTables(*t);
    return t;
  }();
  return *tables;
}

}  // namespace hloc
