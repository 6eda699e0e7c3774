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

// Elementwise ops: computed per output element, they fuse anywhere (XLA's
// IsUniversallyLoopFusible).
class ElementwiseFusible<Op op> : Fusible<op, [LoopFusion, InputFusion]>;
// Data movement: index arithmetic only, fused as freely as elementwise ops (a tiled transpose
// becomes its fusion's hero; see FusionVetoes.td for when heroes clash).
class MovementFusible<Op op> : Fusible<op, [LoopFusion, InputFusion]>;

def AbsIsFusible : ElementwiseFusible<Abs>;
def AddIsFusible : ElementwiseFusible<Add>;
def AndIsFusible : ElementwiseFusible<And>;
def Atan2IsFusible : ElementwiseFusible<Atan2>;
def BitcastConvertIsFusible : ElementwiseFusible<BitcastConvert>;
def CbrtIsFusible : ElementwiseFusible<Cbrt>;
def CeilIsFusible : ElementwiseFusible<Ceil>;
def ClampIsFusible : ElementwiseFusible<Clamp>;
def ClzIsFusible : ElementwiseFusible<Clz>;
def CompareIsFusible : ElementwiseFusible<Compare>;
def ComplexIsFusible : ElementwiseFusible<Complex>;
def ConvertIsFusible : ElementwiseFusible<Convert>;
def CopyIsFusible : ElementwiseFusible<Copy>;
def CosIsFusible : ElementwiseFusible<Cos>;
def DivideIsFusible : ElementwiseFusible<Divide>;
def ErfIsFusible : ElementwiseFusible<Erf>;
def ExpIsFusible : ElementwiseFusible<Exp>;
def Expm1IsFusible : ElementwiseFusible<Expm1>;
def FloorIsFusible : ElementwiseFusible<Floor>;
def ImagIsFusible : ElementwiseFusible<Imag>;
def IsFiniteIsFusible : ElementwiseFusible<IsFinite>;
def LogIsFusible : ElementwiseFusible<Log>;
def Log1pIsFusible : ElementwiseFusible<Log1p>;
def LogisticIsFusible : ElementwiseFusible<Logistic>;
def MaximumIsFusible : ElementwiseFusible<Maximum>;
def MinimumIsFusible : ElementwiseFusible<Minimum>;
def MultiplyIsFusible : ElementwiseFusible<Multiply>;
def NegateIsFusible : ElementwiseFusible<Negate>;
def NotIsFusible : ElementwiseFusible<Not>;
def OrIsFusible : ElementwiseFusible<Or>;
def PopulationCountIsFusible : ElementwiseFusible<PopulationCount>;
def PowerIsFusible : ElementwiseFusible<Power>;
def RealIsFusible : ElementwiseFusible<Real>;
def ReducePrecisionIsFusible : ElementwiseFusible<ReducePrecision>;
def RemainderIsFusible : ElementwiseFusible<Remainder>;
def RoundNearestAfzIsFusible : ElementwiseFusible<RoundNearestAfz>;
def RoundNearestEvenIsFusible : ElementwiseFusible<RoundNearestEven>;
def RsqrtIsFusible : ElementwiseFusible<Rsqrt>;
def SelectIsFusible : ElementwiseFusible<Select>;
def ShiftLeftIsFusible : ElementwiseFusible<ShiftLeft>;
def ShiftRightArithmeticIsFusible : ElementwiseFusible<ShiftRightArithmetic>;
def ShiftRightLogicalIsFusible : ElementwiseFusible<ShiftRightLogical>;
def SignIsFusible : ElementwiseFusible<Sign>;
def SinIsFusible : ElementwiseFusible<Sin>;
def SqrtIsFusible : ElementwiseFusible<Sqrt>;
def SubtractIsFusible : ElementwiseFusible<Subtract>;
def TanIsFusible : ElementwiseFusible<Tan>;
def TanhIsFusible : ElementwiseFusible<Tanh>;
def XorIsFusible : ElementwiseFusible<Xor>;

def BitcastIsFusible : MovementFusible<Bitcast>;
def BroadcastIsFusible : MovementFusible<Broadcast>;
def ConcatenateIsFusible : MovementFusible<Concatenate>;
def ConstantIsFusible : MovementFusible<Constant>;
def DynamicSliceIsFusible : MovementFusible<DynamicSlice>;
def GatherIsFusible : MovementFusible<Gather>;
def IotaIsFusible : MovementFusible<Iota>;
def PadIsFusible : MovementFusible<Pad>;
def ReshapeIsFusible : MovementFusible<Reshape>;
def ReverseIsFusible : MovementFusible<Reverse>;
def SliceIsFusible : MovementFusible<Slice>;
def TransposeIsFusible : MovementFusible<Transpose>;

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
