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

// One row per cost class; an op set (rules/base/Dsl.td) is one row per member op.
def CheapOpCosts : OpCost<OpSet<[Abs, Add, And, Ceil, Clamp, Clz, Compare, Complex, Convert, Floor, Imag, IsFinite,
                                 Maximum, Minimum, Multiply, Negate, Not, Or, PopulationCount, Real, ReducePrecision,
                                 RoundNearestAfz, RoundNearestEven, Select, ShiftLeft, ShiftRightArithmetic,
                                 ShiftRightLogical, Sign, Subtract, Xor]>, CheapOp>;

def FastMathOpCosts : OpCost<OpSet<[Divide, Exp, Rsqrt, Sqrt]>, FastMathOp>;

def ExpensiveOpCosts : OpCost<OpSet<[Atan2, Cbrt, Cos, Erf, Expm1, Log, Log1p, Logistic, Power, Remainder, Sin, Tan,
                                     Tanh]>, ExpensiveOp>;

// Data movement (the MovesValuesOnly trait), the ops that make or pass values without
// arithmetic, and bitcast-convert (it reinterprets bits in place).
def MovementOpCosts : OpCost<OpSet<[BitcastConvert, Constant, GetTupleElement, Iota, Parameter, Tuple],
                                   [MovesValuesOnly]>, MovementOp>;

def ReductionOpCosts : OpCost<OpSet<[Reduce, ReduceWindow, Scatter, SelectAndScatter]>, ReductionOp>;

def ContractionOpCosts : OpCost<OpSet<[Convolution, Dot]>, ContractionOp>;

def OpaqueOpCosts : OpCost<OpSet<[AllGather, AllReduce, AllToAll, Call, Cholesky, Conditional, CustomCall, Fft, Rng,
                                  RngBitGenerator, Scan, Sort, TopK, TriangularSolve, While]>, OpaqueOp>;
