//===- rules/base/Spmd.td - the SPMD partitioner's strategies ------------------===//
//
// Each SpmdStrategy record names one way the partitioner (src/passes/spmd/) may move or split
// data. hloc-tblgen --gen-spmd turns the records of a rules/spmd/*.td file into rows of a
// SpmdStrategyInfo table (src/engine/rule_tables.h); spmd-partitioning lists them as its
// records, so a pipeline entry's `rules: {disable: [NAME]}` turns a strategy off (the
// partitioner then falls back to the next one: an all-gather and a local slice). The pass
// checks at run time that the records and the strategies it implements are the same set, so a
// renamed record is an error, not a silent change.
//
//   def ReshardByAllToAll : SpmdStrategy<"a split moves from one dimension to another">;
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_SPMD_TD
#define HLOC_BASE_SPMD_TD

class SpmdStrategy<string summary> {
  string Summary = summary;
}

#endif  // HLOC_BASE_SPMD_TD
