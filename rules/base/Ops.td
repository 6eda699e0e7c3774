//===- rules/base/Ops.td - one record per HLO opcode --------------------------===//
//
// Every opcode of src/ir/opcode.h, named in CamelCase after its enumerator (kAdd -> Add,
// kGetTupleElement -> GetTupleElement, kCos -> Cos) with XLA's text name and its traits
// (defined below: Elementwise, MovesValuesOnly). Patterns and results
// use these as DAG operators: (Add $a, $b). hloc-tblgen checks each name against opcode.h
// (and knows each opcode's operand count from there), and tests/unit/rewrite_test.cc checks
// that this list and opcode.h agree, so a new opcode must be added in both places.
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_OPS_TD
#define HLOC_BASE_OPS_TD

include "base/Dsl.td"

// Traits (OpTrait, rules/base/Dsl.td). An OpSet can select ops by them (OpSet<[], [Elementwise]>),
// so a trait must hold for every op it tags and be on every op it describes: add it to a new
// opcode's def here when it applies.

// Each result element is computed from the operands' elements at the same index only: XLA's
// elementwise ops (src/ir/opcode.cc IsElementwise: its unary and binary ops, select, clamp;
// tests/unit/rewrite_test.cc checks that the two agree).
def Elementwise : OpTrait<"each result element from the operands' elements at its index">;
// An array op whose result elements are elements of its array operands (or its padding value):
// it moves, repeats, drops or reinterprets-in-place values, with no arithmetic on them and no
// called computation, on one device. Index operands (dynamic-slice, gather, dynamic-update-
// slice) are only read as indices. Not tagged: ops that make values (constant, iota,
// parameter), tuple plumbing (tuple, get-tuple-element), scheduling ops that forward an operand
// (opt-barrier, add-dependency, domain, copy-start/-done, async ops), collectives (they move
// values between devices), sort (it calls a comparator) and bitcast-convert (it changes the
// element type).
def MovesValuesOnly : OpTrait<"result elements are operand elements, moved without arithmetic">;

def Abs : Op<"abs", [Elementwise]>;
def Add : Op<"add", [Elementwise]>;
def AddDependency : Op<"add-dependency">;
def AfterAll : Op<"after-all">;
def AllGather : Op<"all-gather">;
def AllGatherDone : Op<"all-gather-done">;
def AllGatherStart : Op<"all-gather-start">;
def AllReduce : Op<"all-reduce">;
def AllReduceDone : Op<"all-reduce-done">;
def AllReduceStart : Op<"all-reduce-start">;
def AllToAll : Op<"all-to-all">;
def And : Op<"and", [Elementwise]>;
def AsyncDone : Op<"async-done">;
def AsyncStart : Op<"async-start">;
def AsyncUpdate : Op<"async-update">;
def Atan2 : Op<"atan2", [Elementwise]>;
def BatchNormGrad : Op<"batch-norm-grad">;
def BatchNormInference : Op<"batch-norm-inference">;
def BatchNormTraining : Op<"batch-norm-training">;
def Bitcast : Op<"bitcast", [MovesValuesOnly]>;
def BitcastConvert : Op<"bitcast-convert", [Elementwise]>;
def Broadcast : Op<"broadcast", [MovesValuesOnly]>;
def Call : Op<"call">;
def Cbrt : Op<"cbrt", [Elementwise]>;
def Ceil : Op<"ceil", [Elementwise]>;
def Cholesky : Op<"cholesky">;
def Clamp : Op<"clamp", [Elementwise]>;
def Clz : Op<"count-leading-zeros", [Elementwise]>;
def CollectiveBroadcast : Op<"collective-broadcast">;
def CollectivePermute : Op<"collective-permute">;
def CollectivePermuteDone : Op<"collective-permute-done">;
def CollectivePermuteStart : Op<"collective-permute-start">;
def Compare : Op<"compare", [Elementwise]>;
def Complex : Op<"complex", [Elementwise]>;
def Concatenate : Op<"concatenate", [MovesValuesOnly]>;
def Conditional : Op<"conditional">;
def Constant : Op<"constant">;
def Convert : Op<"convert", [Elementwise]>;
def Convolution : Op<"convolution">;
def Copy : Op<"copy", [Elementwise, MovesValuesOnly]>;
def CopyDone : Op<"copy-done">;
def CopyStart : Op<"copy-start">;
def Cos : Op<"cosine", [Elementwise]>;
def CustomCall : Op<"custom-call">;
def Divide : Op<"divide", [Elementwise]>;
def Domain : Op<"domain">;
def Dot : Op<"dot">;
def DynamicReshape : Op<"dynamic-reshape">;
def DynamicSlice : Op<"dynamic-slice", [MovesValuesOnly]>;
def DynamicUpdateSlice : Op<"dynamic-update-slice", [MovesValuesOnly]>;
def Erf : Op<"erf", [Elementwise]>;
def Exp : Op<"exponential", [Elementwise]>;
def Expm1 : Op<"exponential-minus-one", [Elementwise]>;
def Fft : Op<"fft">;
def Floor : Op<"floor", [Elementwise]>;
def Fusion : Op<"fusion">;
def Gather : Op<"gather", [MovesValuesOnly]>;
def GetDimensionSize : Op<"get-dimension-size">;
def GetTupleElement : Op<"get-tuple-element">;
def Imag : Op<"imag", [Elementwise]>;
def Infeed : Op<"infeed">;
def Iota : Op<"iota">;
def IsFinite : Op<"is-finite", [Elementwise]>;
def Log : Op<"log", [Elementwise]>;
def Log1p : Op<"log-plus-one", [Elementwise]>;
def Logistic : Op<"logistic", [Elementwise]>;
def Map : Op<"map">;
def Maximum : Op<"maximum", [Elementwise]>;
def Minimum : Op<"minimum", [Elementwise]>;
def Multiply : Op<"multiply", [Elementwise]>;
def Negate : Op<"negate", [Elementwise]>;
def Not : Op<"not", [Elementwise]>;
def OptimizationBarrier : Op<"opt-barrier">;
def Or : Op<"or", [Elementwise]>;
def Outfeed : Op<"outfeed">;
def Pad : Op<"pad", [MovesValuesOnly]>;
def Parameter : Op<"parameter">;
def PartitionId : Op<"partition-id">;
def PopulationCount : Op<"popcnt", [Elementwise]>;
def Power : Op<"power", [Elementwise]>;
def RaggedAllToAll : Op<"ragged-all-to-all">;
def RaggedDot : Op<"ragged-dot">;
def Real : Op<"real", [Elementwise]>;
def Recv : Op<"recv">;
def RecvDone : Op<"recv-done">;
def Reduce : Op<"reduce">;
def ReducePrecision : Op<"reduce-precision", [Elementwise]>;
def ReduceScatter : Op<"reduce-scatter">;
def ReduceWindow : Op<"reduce-window">;
def Remainder : Op<"remainder", [Elementwise]>;
def ReplicaId : Op<"replica-id">;
def Reshape : Op<"reshape", [MovesValuesOnly]>;
def Reverse : Op<"reverse", [MovesValuesOnly]>;
def Rng : Op<"rng">;
def RngBitGenerator : Op<"rng-bit-generator">;
def RngGetAndUpdateState : Op<"rng-get-and-update-state">;
def RoundNearestAfz : Op<"round-nearest-afz", [Elementwise]>;
def RoundNearestEven : Op<"round-nearest-even", [Elementwise]>;
def Rsqrt : Op<"rsqrt", [Elementwise]>;
def Scan : Op<"scan">;
def Scatter : Op<"scatter">;
def Select : Op<"select", [Elementwise]>;
def SelectAndScatter : Op<"select-and-scatter">;
def Send : Op<"send">;
def SendDone : Op<"send-done">;
def SetDimensionSize : Op<"set-dimension-size">;
def ShiftLeft : Op<"shift-left", [Elementwise]>;
def ShiftRightArithmetic : Op<"shift-right-arithmetic", [Elementwise]>;
def ShiftRightLogical : Op<"shift-right-logical", [Elementwise]>;
def Sign : Op<"sign", [Elementwise]>;
def Sin : Op<"sine", [Elementwise]>;
def Slice : Op<"slice", [MovesValuesOnly]>;
def Sort : Op<"sort">;
def Sqrt : Op<"sqrt", [Elementwise]>;
def StochasticConvert : Op<"stochastic-convert", [Elementwise]>;
def Subtract : Op<"subtract", [Elementwise]>;
def Tan : Op<"tan", [Elementwise]>;
def Tanh : Op<"tanh", [Elementwise]>;
def TopK : Op<"topk">;
def Transpose : Op<"transpose", [MovesValuesOnly]>;
def TriangularSolve : Op<"triangular-solve">;
def Tuple : Op<"tuple">;
def While : Op<"while">;
def Xor : Op<"xor", [Elementwise]>;

#endif  // HLOC_BASE_OPS_TD
