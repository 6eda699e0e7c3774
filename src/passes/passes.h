// Registration of hloc's passes, one function per area. Each area's file registers its passes
// under XLA's names with their typed options.
#pragma once
#include "engine/pass.h"

namespace hloc {

// src/passes/simplify/: dce, cse, constant_folding, tuple-simplifier, call-inliner,
// flatten-call-graph, zero_sized_hlo_elimination.
void RegisterSimplifyPasses(PassRegistry& registry);
// sharding-propagation, spmd-partitioning, sharding-remover (src/passes/spmd/).
void RegisterSpmdPasses(PassRegistry& registry);
// reduce-scatter-creator (src/passes/collectives/).
void RegisterCollectivePasses(PassRegistry& registry);
// src/passes/simplify/: simplify-while-loops, simplify-conditional, simplify-sorts,
// reshape-mover, convert-mover.
void RegisterControlFlowAndMoverPasses(PassRegistry& registry);
// src/passes/expanders/: rng-bit-generator-expander, logistic-expander, batchnorm_expander,
// comparison-expander, dot_decomposer.
void RegisterExpanderPasses(PassRegistry& registry);
// src/passes/rewrite_passes.cc: the rule-driven passes (algsimp, ...), one per `Pass` name
// used by the generated rules.
void RegisterRewritePasses(PassRegistry& registry);
// src/passes/fusion/: priority-fusion, multi_output_fusion, rename_fusions, fusion-wrapper.
void RegisterFusionPasses(PassRegistry& registry);
// (The scheduling passes register through src/schedule/schedule_passes.h: the scheduling stage
// sits below the passes and includes nothing of them.)
// src/passes/layout/: layout-assignment, layout_normalization, reshape-decomposer,
// move_copy_to_users, transpose-folding, float-normalization.
void RegisterLayoutPasses(PassRegistry& registry);
// src/passes/library/: cublas-gemm-rewriter, cublas-pad-for-gemms, conv-rewriter,
// cudnn-fused-convolution-rewriter.
void RegisterLibraryPasses(PassRegistry& registry);
// src/passes/library/conv_padding_legalization.cc: gpu-conv-padding-legalization.
void RegisterConvPaddingLegalizationPass(PassRegistry& registry);
// src/passes/library/cudnn_layout_legalization.cc: cudnn-layout-legalization.
void RegisterCudnnLayoutLegalizationPass(PassRegistry& registry);
// src/passes/copy/: copy-insertion.
void RegisterCopyInsertionPass(PassRegistry& registry);
// src/passes/sort/sort_merger.cc: sort-merger.
void RegisterSortMergerPass(PassRegistry& registry);
// src/passes/sort/stable_sort_expander.cc: stable-sort-expander.
void RegisterStableSortExpanderPass(PassRegistry& registry);
// src/passes/sort/topk_decomposer.cc: topk-decomposer.
void RegisterTopkDecomposerPass(PassRegistry& registry);
// src/passes/simplify/elementwise_while_to_map.cc: elementwise-while-to-map.
void RegisterElementwiseWhileToMapPass(PassRegistry& registry);
// src/passes/sort/gpu_sort_rewriter.cc: gpu-sort-rewriter.
void RegisterGpuSortRewriterPass(PassRegistry& registry);

}  // namespace hloc
