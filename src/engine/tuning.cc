// The tuning knobs' declarations (tuning.h).
#include "engine/tuning.h"

namespace hloc {

const std::array<TuningDecl, static_cast<size_t>(TuningKnob::kCount)>& TuningDecls() {
  static const std::array<TuningDecl, static_cast<size_t>(TuningKnob::kCount)> decls = {{
      {TuningKnob::kSmallGemmMaxMacs, "small_gemm_max_macs", TuningKind::kCount, int64_t{1} << 24, 1, int64_t{1} << 40,
       "the largest batch*m*n*k GEMM that runs as hloc's own CUDA-core kernel instead of cuBLAS",
       "H200: 2^26 and 2^27 made flax_gru_train.large 6.68 / 7.54 ms against 6.01 ms at 2^24; scan_rnn.large "
       "1.77 ms with the kernel, 2.00 ms with cuBLAS (2026-12-02)"},
      {TuningKnob::kSmallGemmMaxShortSide, "small_gemm_max_short_side", TuningKind::kCount, 128, 1, 1 << 20,
       "the largest min(m, n) of a GEMM hloc's own kernel takes (longer both ways: cuBLAS's tiles fill the GPU)",
       "where cuBLAS's 128x128 tiles start to fill an H200 (132 SMs) for the corpus's recurrent steps"},
      {TuningKnob::kPtxChunkInstructions, "ptx_chunk_instructions", TuningKind::kCount, 20000, 2000, int64_t{1} << 30,
       "LLVM instructions per chunk of kernels optimized and lowered to PTX together (chunks compile in parallel)",
       "amortizes a chunk's fixed cost (libdevice, the target machine, ~6 ms) while superlinear LLVM passes stay "
       "cheap; transformer_train_L40 compiles 5 chunks"},
      {TuningKnob::kLoopThreadsPerBlock, "loop_threads_per_block", TuningKind::kCount, 128, 32, 1024,
       "threads a block of an elementwise (loop) kernel (the fusion cost model's occupancy estimate counts blocks of "
       "this size too)",
       "XLA's default for loop fusions"},
      {TuningKnob::kGridStrideWaves, "grid_stride_waves", TuningKind::kCount, 4, 1, 1 << 16,
       "waves of resident blocks a grid-stride kernel launches at most (the rest loops in each thread)",
       "enough waves to hide a wave's tail; more blocks only add scheduling"},
      {TuningKnob::kSplitReductionLightCost, "split_reduction_light_cost", TuningKind::kCount, 16, 0, 1 << 20,
       "a one-output split reduction whose fused element costs at most this (rules/fusion/FusionCosts.td) runs at "
       "full occupancy (32 registers a thread); costlier ones at half (64)",
       "H200: softmax, layernorm and optimizer norms cost 4-16; numpyro_logprob_grad's costlier fold spilled at 32 "
       "registers (794 -> 552 us at half occupancy)"},
      {TuningKnob::kCommandBufferLanes, "command_buffer_lanes", TuningKind::kCount, 2, 1, 16,
       "streams a command buffer's CUDA-graph capture may fork onto: its independent thunks become parallel graph "
       "branches (1: every graph a chain); recorded on each kCommandBuffer thunk, `hloc run --graph-lanes N` "
       "overrides it",
       "H200, every large module of both waves, lanes 1 vs 2 (2026-12-03, one lease): optax_adafactor_clip 0.435 -> "
       "0.388 ms, flax_gru_train 4.79 -> 4.44, conv_transpose_bf16 0.83 -> 0.78, reductions 0.20 -> 0.19; the rest "
       "within 2% (flax_unet_grad, flax_vit_train, eqx_mlp_lion up to 1.8% slower); 4 lanes slowed the GRU step "
       "(its small kernels beside its GEMMs)"},
      {TuningKnob::kFusionL2CacheSpeedup, "fusion_l2_cache_speedup", TuningKind::kReal, 2.5, 1, 100,
       "how much faster the fusion cost model takes repeated reads of an operand that fits in L2 than DRAM reads",
       "XLA's kL2CacheSpeedup (gpu_performance_model_base.h)"},
      {TuningKnob::kFusionMemoryComputeOverlap, "fusion_memory_compute_overlap", TuningKind::kReal, 0.95, 0, 1,
       "the fraction of the shorter of a kernel's memory and compute times the cost model hides behind the longer",
       "XLA's kMemoryComputeParallelism (gpu_performance_model_base.h)"},
      {TuningKnob::kFusionBlocksPerSmToSaturate, "fusion_blocks_per_sm_to_saturate", TuningKind::kReal, 4, 0.25, 64,
       "blocks (of 128 threads) per SM at which the cost model takes a kernel to fill the GPU; fewer scale its "
       "memory time down",
       "a kernel saturates the H200's memory system with a few blocks per SM"},
      {TuningKnob::kKernelLaunchOverhead, "kernel_launch_overhead_s", TuningKind::kReal, 1e-6, 0, 1e-3,
       "seconds the fusion cost model charges each kernel (what fusing two kernels saves); the CPU profile's "
       "\"kernel\" is a call",
       "XLA's kKernelLaunchOverhead (1 us); cpu.yaml: 5e-8 s, a function call"},
      {TuningKnob::kCublasWorkspaceBytes, "cublas_workspace_bytes", TuningKind::kBytes, 4 << 20, 0, int64_t{1} << 32,
       "the workspace a cuBLAS / cuBLASLt GEMM call gets (its custom call's s8[N] result; legacy cuBLAS at most its "
       "operands' bytes)",
       "XLA's GemmConfig::kDefaultWorkspace (4 MiB); Hopper profiles set kHopperWorkspace (32 MiB)"},
      {TuningKnob::kAllReduceCombineThresholdBytes, "all_reduce_combine_threshold_bytes", TuningKind::kBytes,
       30 << 20, 0, int64_t{1} << 40,
       "the largest all-reduce the all-reduce-combiner makes of independent ones (0: no combining)",
       "XLA's xla_gpu_all_reduce_combine_threshold_bytes default (30 MiB)"},
      {TuningKnob::kAllGatherCombineThresholdBytes, "all_gather_combine_threshold_bytes", TuningKind::kBytes,
       30 << 20, 0, int64_t{1} << 40,
       "the largest all-gather (operand and result bytes) the all-gather-combiner makes (0: no combining)",
       "XLA's xla_gpu_all_gather_combine_threshold_bytes default (30 MiB)"},
      {TuningKnob::kReduceScatterCombineThresholdBytes, "reduce_scatter_combine_threshold_bytes", TuningKind::kBytes,
       30 << 20, 0, int64_t{1} << 40,
       "the largest reduce-scatter (operand bytes) the reduce-scatter-combiner makes (0: no combining)",
       "XLA's xla_gpu_reduce_scatter_combine_threshold_bytes default (30 MiB)"},
      {TuningKnob::kCollectiveCombineThresholdCount, "collective_combine_threshold_count", TuningKind::kCount, 256,
       1, 1 << 20, "the most collectives a combiner puts into one",
       "XLA's combiners' combine_threshold_count (256)"},
      {TuningKnob::kConcatenateMaxDistinctOperands, "concatenate_max_distinct_operands", TuningKind::kCount, 64, 2,
       96, "the most distinct operands one concatenate reads; wide-concatenate-splitter makes a tree of wider ones",
       "compile time: distinct operands per kernel cost a block and an argument each, 64 compile in ~0.1 s "
       "(4000 took 11 s on the CPU, 160 s for the GPU); at most fusion's 96 operands"},
      {TuningKnob::kTopkSplitWarpsPerSm, "topk_split_warps_per_sm", TuningKind::kCount, 16, 1, 64,
       "warps per SM a small-k top-k aims for: with fewer rows than SMs times this, each row is split into parts "
       "that warps scan at once, the row's last warp merging their candidates",
       "not yet measured on a GPU (2026-12-07): half the 32 warps an SM keeps resident at 128-thread blocks, so the "
       "loads of a latency-bound scan overlap; beam search has 8-64 rows of 32k-50k"},
      {TuningKnob::kTopkSplitMinPartElements, "topk_split_min_part_elements", TuningKind::kCount, 4096, 128,
       int64_t{1} << 30,
       "the fewest elements of a row one warp of a split top-k scans (shorter parts cost more in the merge of "
       "their k candidates than they save)",
       "not yet measured on a GPU (2026-12-07): 32 chunks of 128 per warp against a merge of k <= 16 candidates "
       "per part"},
      {TuningKnob::kRowReductionLongRowElements, "row_reduction_long_row_elements", TuningKind::kCount, 8192, 64,
       int64_t{1} << 40,
       "rows at least this long are long rows: fewer of them than twice the SMs are split across blocks, a block "
       "of 1024 threads takes one when they are fewer than four times the SMs or its chain re-reads it, and such "
       "re-read rows fold row_reduction_fold_unroll elements a trip; multi-output fusion's chain cost model "
       "assumes the same blocks (two an SM)",
       "H200, logsumexp_xent.large (8192 x 32000 f32): 1024 threads 394-399 us, 512 threads 398 us; the split "
       "emitter for full reductions (a block per row left most SMs idle)"},
      {TuningKnob::kRowReductionWarpRowMaxElements, "row_reduction_warp_row_max_elements", TuningKind::kCount, 512, 32,
       1 << 20, "rows up to this long are reduced by one warp each (several rows a block); longer rows by a block",
       "a warp's 32 lanes with a few vectors each cover 512 elements; longer rows want more loads in flight"},
      {TuningKnob::kRowReductionWarpRowsPerBlock, "row_reduction_warp_rows_per_block", TuningKind::kCount, 8, 1, 32,
       "rows (one warp each) a block of the row-reduction emitter takes when rows are short",
       "256-thread blocks, as XLA's row reductions of short rows"},
      {TuningKnob::kRowReductionVectorsPerThread, "row_reduction_vectors_per_thread", TuningKind::kCount, 2, 1, 16,
       "16-byte vectors each thread loads of a row kept in registers (the row's threads shrink until each has this "
       "many)",
       "H200 (layernorm_bf16 / attention_bf16 large): 1 -> 88.5 / 2112 us, 2 -> best overall, 4 -> 69.9 / 2246 us"},
      {TuningKnob::kRowReductionFoldUnroll, "row_reduction_fold_unroll", TuningKind::kCount, 4, 1, 64,
       "elements a thread folds per loop trip of a long row its chain re-reads (same order as one at a time: more "
       "loads in flight)",
       "H200, logsumexp_xent.large: 1 -> 429 us, 4 -> 399 us, 8 -> 400 us"},
  }};
  return decls;
}

const TuningDecl& DeclOf(TuningKnob knob) {
  for (const TuningDecl& d : TuningDecls())
    if (d.knob == knob) return d;
  return TuningDecls()[0];  // unreachable: every knob is declared
}

const TuningDecl* FindTuningDecl(std::string_view name) {
  for (const TuningDecl& d : TuningDecls())
    if (d.name == name) return &d;
  return nullptr;
}

Tuning::Tuning() {
  for (const TuningDecl& d : TuningDecls()) values_[static_cast<size_t>(d.knob)] = d.default_value;
}

bool Tuning::IsDefault(TuningKnob k) const { return GetReal(k) == DeclOf(k).default_value; }

}  // namespace hloc
