//===- rules/spmd/SpmdStrategies.td - how the SPMD partitioner moves data -------===//
//
// The strategies of spmd-partitioning (src/passes/spmd/), each switchable from a pipeline
// (pipelines/*.yaml: `- pass: spmd-partitioning` with `rules: {disable: [NAME]}`). XLA's
// equivalents are in spmd_partitioner.cc (PartitionedHlo::ReshardNoCache) and
// dot_handler.cc / convolution_handler.cc / gather_scatter_handler.cc.
//===----------------------------------------------------------------------===//

include "base/Spmd.td"

// Reshard: the same tiling on other devices is one collective-permute.
def ReshardByCollectivePermute : SpmdStrategy<"same tiling, tiles held by other devices: one collective-permute">;
// Reshard: one dimension's split moving to another is one all-to-all (XLA's ReshardWithAllToAll).
def ReshardByAllToAll : SpmdStrategy<"a split moves from one dimension to another: one all-to-all">;

// Dots choose their iteration-space sharding among candidates by bytes moved; these are the
// candidate families (the replicated space is always a candidate).
def DotIterationFromOutput : SpmdStrategy<"a dot's iteration space split as its result (plus either operand's contraction split)">;
def DotIterationFromOperands : SpmdStrategy<"a dot's iteration space split as one operand">;
def DotIterationCombiningOperands : SpmdStrategy<"a dot's iteration space combining both operands' splits">;

// Convolutions split along a spatial dimension exchange their halo rows with neighbours.
def ConvolutionHaloExchange : SpmdStrategy<"spatially split convolutions exchange halos with collective-permute, not whole inputs">;

// Gather/scatter over an operand split along the dimensions they index.
def GatherScatterIndexedSplit : SpmdStrategy<"gather/scatter on an operand split along indexed dims: local lookups (+ one all-reduce for gather)">;

// Sort over a split dimension moves the split elsewhere instead of gathering.
def SortMoveSplit : SpmdStrategy<"a sort over a split dim moves the split to a whole dim (all-to-all)">;
