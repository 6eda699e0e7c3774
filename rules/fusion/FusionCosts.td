//===- rules/fusion/FusionCosts.td - op cost classes for the GPU cost model ------===//
//
// The cost model (src/passes/fusion/gpu_cost_model.cc, XLA's GpuPerformanceModel) counts an
// op's arithmetic as (elements it evaluates) x (its class's relative cost); memory traffic
// and launch overhead come from the hardware profile. The classes are in
// rules/base/Fusion.td, plus FastMathOp below. Ops without a record cost 1 per element.
//===----------------------------------------------------------------------===//

include "base/Fusion.td"

// XLA:GPU treats f32/f16 divide, sqrt, rsqrt and exp as cheap: the hardware has fast
// approximations (GpuInstructionFusion::IsExpensive). On f64 they are expensive (the
// IsExpensive constraint checks the type).
let SlowInF64 = 1 in
def FastMathOp : CostClass<"a few instructions per element on the GPU's fast paths (f32 divide, exp, sqrt, rsqrt)", 4>;

def AbsCost : OpCost<Abs, CheapOp>;
def AddCost : OpCost<Add, CheapOp>;
def AndCost : OpCost<And, CheapOp>;
def CeilCost : OpCost<Ceil, CheapOp>;
def ClampCost : OpCost<Clamp, CheapOp>;
def ClzCost : OpCost<Clz, CheapOp>;
def CompareCost : OpCost<Compare, CheapOp>;
def ComplexCost : OpCost<Complex, CheapOp>;
def ConvertCost : OpCost<Convert, CheapOp>;
def FloorCost : OpCost<Floor, CheapOp>;
def ImagCost : OpCost<Imag, CheapOp>;
def IsFiniteCost : OpCost<IsFinite, CheapOp>;
def MaximumCost : OpCost<Maximum, CheapOp>;
def MinimumCost : OpCost<Minimum, CheapOp>;
def MultiplyCost : OpCost<Multiply, CheapOp>;
def NegateCost : OpCost<Negate, CheapOp>;
def NotCost : OpCost<Not, CheapOp>;
def OrCost : OpCost<Or, CheapOp>;
def PopulationCountCost : OpCost<PopulationCount, CheapOp>;
def RealCost : OpCost<Real, CheapOp>;
def ReducePrecisionCost : OpCost<ReducePrecision, CheapOp>;
def RoundNearestAfzCost : OpCost<RoundNearestAfz, CheapOp>;
def RoundNearestEvenCost : OpCost<RoundNearestEven, CheapOp>;
def SelectCost : OpCost<Select, CheapOp>;
def ShiftLeftCost : OpCost<ShiftLeft, CheapOp>;
def ShiftRightArithmeticCost : OpCost<ShiftRightArithmetic, CheapOp>;
def ShiftRightLogicalCost : OpCost<ShiftRightLogical, CheapOp>;
def SignCost : OpCost<Sign, CheapOp>;
def SubtractCost : OpCost<Subtract, CheapOp>;
def XorCost : OpCost<Xor, CheapOp>;

def DivideCost : OpCost<Divide, FastMathOp>;
def ExpCost : OpCost<Exp, FastMathOp>;
def RsqrtCost : OpCost<Rsqrt, FastMathOp>;
def SqrtCost : OpCost<Sqrt, FastMathOp>;

def Atan2Cost : OpCost<Atan2, ExpensiveOp>;
def CbrtCost : OpCost<Cbrt, ExpensiveOp>;
def CosCost : OpCost<Cos, ExpensiveOp>;
def ErfCost : OpCost<Erf, ExpensiveOp>;
def Expm1Cost : OpCost<Expm1, ExpensiveOp>;
def LogCost : OpCost<Log, ExpensiveOp>;
def Log1pCost : OpCost<Log1p, ExpensiveOp>;
def LogisticCost : OpCost<Logistic, ExpensiveOp>;
def PowerCost : OpCost<Power, ExpensiveOp>;
def RemainderCost : OpCost<Remainder, ExpensiveOp>;
def SinCost : OpCost<Sin, ExpensiveOp>;
def TanCost : OpCost<Tan, ExpensiveOp>;
def TanhCost : OpCost<Tanh, ExpensiveOp>;

def BitcastCost : OpCost<Bitcast, MovementOp>;
def BitcastConvertCost : OpCost<BitcastConvert, MovementOp>;
def BroadcastCost : OpCost<Broadcast, MovementOp>;
def ConcatenateCost : OpCost<Concatenate, MovementOp>;
def ConstantCost : OpCost<Constant, MovementOp>;
def CopyCost : OpCost<Copy, MovementOp>;
def DynamicSliceCost : OpCost<DynamicSlice, MovementOp>;
def DynamicUpdateSliceCost : OpCost<DynamicUpdateSlice, MovementOp>;
def GatherCost : OpCost<Gather, MovementOp>;
def GetTupleElementCost : OpCost<GetTupleElement, MovementOp>;
def IotaCost : OpCost<Iota, MovementOp>;
def PadCost : OpCost<Pad, MovementOp>;
def ParameterCost : OpCost<Parameter, MovementOp>;
def ReshapeCost : OpCost<Reshape, MovementOp>;
def ReverseCost : OpCost<Reverse, MovementOp>;
def SliceCost : OpCost<Slice, MovementOp>;
def TransposeCost : OpCost<Transpose, MovementOp>;
def TupleCost : OpCost<Tuple, MovementOp>;

def ReduceCost : OpCost<Reduce, ReductionOp>;
def ReduceWindowCost : OpCost<ReduceWindow, ReductionOp>;
def ScatterCost : OpCost<Scatter, ReductionOp>;
def SelectAndScatterCost : OpCost<SelectAndScatter, ReductionOp>;

def ConvolutionCost : OpCost<Convolution, ContractionOp>;
def DotCost : OpCost<Dot, ContractionOp>;

def AllGatherCost : OpCost<AllGather, OpaqueOp>;
def AllReduceCost : OpCost<AllReduce, OpaqueOp>;
def AllToAllCost : OpCost<AllToAll, OpaqueOp>;
def CallCost : OpCost<Call, OpaqueOp>;
def CholeskyCost : OpCost<Cholesky, OpaqueOp>;
def ConditionalCost : OpCost<Conditional, OpaqueOp>;
def CustomCallCost : OpCost<CustomCall, OpaqueOp>;
def FftCost : OpCost<Fft, OpaqueOp>;
def RngCost : OpCost<Rng, OpaqueOp>;
def RngBitGeneratorCost : OpCost<RngBitGenerator, OpaqueOp>;
def ScanCost : OpCost<Scan, OpaqueOp>;
def SortCost : OpCost<Sort, OpaqueOp>;
def TopKCost : OpCost<TopK, OpaqueOp>;
def TriangularSolveCost : OpCost<TriangularSolve, OpaqueOp>;
def WhileCost : OpCost<While, OpaqueOp>;
