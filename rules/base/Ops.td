//===- rules/base/Ops.td - one record per HLO opcode --------------------------===//
//
// Every opcode of src/ir/opcode.h, named in CamelCase after its enumerator (kAdd -> Add,
// kGetTupleElement -> GetTupleElement, kCos -> Cos) with XLA's text name. Patterns and results
// use these as DAG operators: (Add $a, $b). hloc-tblgen checks each name against opcode.h
// (and knows each opcode's operand count from there), and tests/unit/rewrite_test.cc checks
// that this list and opcode.h agree, so a new opcode must be added in both places.
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_OPS_TD
#define HLOC_BASE_OPS_TD

include "base/Dsl.td"

def Abs : Op<"abs">;
def Add : Op<"add">;
def AddDependency : Op<"add-dependency">;
def AfterAll : Op<"after-all">;
def AllGather : Op<"all-gather">;
def AllGatherDone : Op<"all-gather-done">;
def AllGatherStart : Op<"all-gather-start">;
def AllReduce : Op<"all-reduce">;
def AllReduceDone : Op<"all-reduce-done">;
def AllReduceStart : Op<"all-reduce-start">;
def AllToAll : Op<"all-to-all">;
def And : Op<"and">;
def AsyncDone : Op<"async-done">;
def AsyncStart : Op<"async-start">;
def AsyncUpdate : Op<"async-update">;
def Atan2 : Op<"atan2">;
def BatchNormGrad : Op<"batch-norm-grad">;
def BatchNormInference : Op<"batch-norm-inference">;
def BatchNormTraining : Op<"batch-norm-training">;
def Bitcast : Op<"bitcast">;
def BitcastConvert : Op<"bitcast-convert">;
def Broadcast : Op<"broadcast">;
def Call : Op<"call">;
def Cbrt : Op<"cbrt">;
def Ceil : Op<"ceil">;
def Cholesky : Op<"cholesky">;
def Clamp : Op<"clamp">;
def Clz : Op<"count-leading-zeros">;
def CollectiveBroadcast : Op<"collective-broadcast">;
def CollectivePermute : Op<"collective-permute">;
def CollectivePermuteDone : Op<"collective-permute-done">;
def CollectivePermuteStart : Op<"collective-permute-start">;
def Compare : Op<"compare">;
def Complex : Op<"complex">;
def Concatenate : Op<"concatenate">;
def Conditional : Op<"conditional">;
def Constant : Op<"constant">;
def Convert : Op<"convert">;
def Convolution : Op<"convolution">;
def Copy : Op<"copy">;
def CopyDone : Op<"copy-done">;
def CopyStart : Op<"copy-start">;
def Cos : Op<"cosine">;
def CustomCall : Op<"custom-call">;
def Divide : Op<"divide">;
def Domain : Op<"domain">;
def Dot : Op<"dot">;
def DynamicReshape : Op<"dynamic-reshape">;
def DynamicSlice : Op<"dynamic-slice">;
def DynamicUpdateSlice : Op<"dynamic-update-slice">;
def Erf : Op<"erf">;
def Exp : Op<"exponential">;
def Expm1 : Op<"exponential-minus-one">;
def Fft : Op<"fft">;
def Floor : Op<"floor">;
def Fusion : Op<"fusion">;
def Gather : Op<"gather">;
def GetDimensionSize : Op<"get-dimension-size">;
def GetTupleElement : Op<"get-tuple-element">;
def Imag : Op<"imag">;
def Infeed : Op<"infeed">;
def Iota : Op<"iota">;
def IsFinite : Op<"is-finite">;
def Log : Op<"log">;
def Log1p : Op<"log-plus-one">;
def Logistic : Op<"logistic">;
def Map : Op<"map">;
def Maximum : Op<"maximum">;
def Minimum : Op<"minimum">;
def Multiply : Op<"multiply">;
def Negate : Op<"negate">;
def Not : Op<"not">;
def OptimizationBarrier : Op<"opt-barrier">;
def Or : Op<"or">;
def Outfeed : Op<"outfeed">;
def Pad : Op<"pad">;
def Parameter : Op<"parameter">;
def PartitionId : Op<"partition-id">;
def PopulationCount : Op<"popcnt">;
def Power : Op<"power">;
def RaggedAllToAll : Op<"ragged-all-to-all">;
def RaggedDot : Op<"ragged-dot">;
def Real : Op<"real">;
def Recv : Op<"recv">;
def RecvDone : Op<"recv-done">;
def Reduce : Op<"reduce">;
def ReducePrecision : Op<"reduce-precision">;
def ReduceScatter : Op<"reduce-scatter">;
def ReduceWindow : Op<"reduce-window">;
def Remainder : Op<"remainder">;
def ReplicaId : Op<"replica-id">;
def Reshape : Op<"reshape">;
def Reverse : Op<"reverse">;
def Rng : Op<"rng">;
def RngBitGenerator : Op<"rng-bit-generator">;
def RngGetAndUpdateState : Op<"rng-get-and-update-state">;
def RoundNearestAfz : Op<"round-nearest-afz">;
def RoundNearestEven : Op<"round-nearest-even">;
def Rsqrt : Op<"rsqrt">;
def Scan : Op<"scan">;
def Scatter : Op<"scatter">;
def Select : Op<"select">;
def SelectAndScatter : Op<"select-and-scatter">;
def Send : Op<"send">;
def SendDone : Op<"send-done">;
def SetDimensionSize : Op<"set-dimension-size">;
def ShiftLeft : Op<"shift-left">;
def ShiftRightArithmetic : Op<"shift-right-arithmetic">;
def ShiftRightLogical : Op<"shift-right-logical">;
def Sign : Op<"sign">;
def Sin : Op<"sine">;
def Slice : Op<"slice">;
def Sort : Op<"sort">;
def Sqrt : Op<"sqrt">;
def StochasticConvert : Op<"stochastic-convert">;
def Subtract : Op<"subtract">;
def Tan : Op<"tan">;
def Tanh : Op<"tanh">;
def TopK : Op<"topk">;
def Transpose : Op<"transpose">;
def TriangularSolve : Op<"triangular-solve">;
def Tuple : Op<"tuple">;
def While : Op<"while">;
def Xor : Op<"xor">;

#endif  // HLOC_BASE_OPS_TD
