//===- rules/fusion/FusionKinds.td - which ops fuse, and into which kinds -------===//
//
// XLA's gpu_fusible.cc as records: an op with a Fusible record may take part in fusions of the
// listed kinds (kLoop: one loop over the output; kInput: a reduction or scatter at the root,
// its producers fused in front of it). An op without a record never fuses: dot and
// convolution become library calls (cuBLAS, cuDNN), custom-calls are library calls already,
// and sort, while, conditional, collectives, rng, fft, topk, scan, select-and-scatter get
// their own thunks, as in XLA. `hloc opt --explain-fusion` cites the line of the record (or
// its absence). The fusion engine (src/passes/fusion/fusion_legality.cc) reads the table:
// AsProducer = 0 keeps an op the root of its fusion; the kinds of every fused op must include
// the kind of the fusion they end up in.
//===----------------------------------------------------------------------===//

include "base/Fusion.td"

// Elementwise ops (the Elementwise trait, rules/base/Ops.td): computed per output element, they
// fuse anywhere (XLA's IsUniversallyLoopFusible). Except stochastic-convert, which has never had
// a Fusible record: it stays a kernel of its own.
def ElementwiseIsFusible : Fusible<OpSet<[], [Elementwise], [StochasticConvert]>, [LoopFusion, InputFusion]>;
// Data movement (the MovesValuesOnly trait) and the ops that make values without reading any
// (constant, iota): index arithmetic only, fused as freely as elementwise ops (a tiled
// transpose becomes its fusion's hero; see FusionVetoes.td for when heroes clash). Copy is
// elementwise too (its row is the one above); dynamic-update-slice has its own row below.
def MovementIsFusible : Fusible<OpSet<[Constant, Iota], [MovesValuesOnly], [Copy, DynamicUpdateSlice]>,
                                [LoopFusion, InputFusion]>;

// map applies its computation per element (XLA counts it elementwise). elementwise-while-to-map
// puts a whole loop in that computation, so a map stays the root of its loop fusion: its
// operands (the broadcast initial state) fuse in, but a consumer reading it at other indices
// never recomputes the loop.
def MapIsFusible : Fusible<Map, [LoopFusion]> { let AsProducer = 0; }
// A reduce is the hero of a kInput fusion (XLA's reduction emitter); one that reduces nothing
// of size > 1 is a plain loop ("loop_reduce_fusion"). As a producer it fuses only as XLA's
// reduction epilogue or into a row-normalization chain (FusionVetoes.td).
def ReduceIsFusible : Fusible<Reduce, [InputFusion, LoopFusion]>;
// reduce-window reads a window per output element: a loop fusion (XLA's loop_reduce_window).
def ReduceWindowIsFusible : Fusible<ReduceWindow, [LoopFusion, InputFusion]>;
// Scatter is the root of a kInput fusion that updates its operand in place: its updates and
// indices may be computed in the kernel, but its result is never fused into a consumer.
def ScatterIsFusible : Fusible<Scatter, [InputFusion]> { let AsProducer = 0; }
// dynamic-update-slice writes its operand in place and stays the root of its loop fusion
// (XLA's in-place dynamic-update-slice emitter needs the update to be the fusion's output).
def DynamicUpdateSliceIsFusible : Fusible<DynamicUpdateSlice, [LoopFusion]> { let AsProducer = 0; }
