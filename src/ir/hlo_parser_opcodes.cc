// Per-opcode attributes, as XLA's parser takes them (CreateInstruction in hlo_parser.cc):
// which attributes each opcode accepts or requires, operand-count rules, and the checks XLA's
// parser makes before building the instruction. Attributes XLA knows but hloc gives no
// meaning to are parsed (so bad values are still errors) and kept verbatim in raw_attributes.
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/hlo_parser_internal.h"

namespace hloc::parser_internal {
namespace {

// Every array leaf has a layout (XLA's LayoutUtil::HasLayout).
bool HasLayoutEverywhere(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& t : s.tuple_shapes())
      if (!HasLayoutEverywhere(t)) return false;
    return true;
  }
  return !s.IsArray() || s.has_layout();
}

std::string Plural(int64_t n, std::string_view word) {
  return absl::StrCat(n, " ", std::string(word), n == 1 ? "" : "s");
}

}  // namespace

bool Parser::CheckOperandCount(InstrCtx& c, int64_t expected) {
  if (static_cast<int64_t>(c.operands.size()) == expected) return true;
  return Err(c.operands_loc, "expects ", Plural(expected, "operand"), ", but has ",
             Plural(c.operands.size(), "operand"));
}

bool Parser::ParseOpcodeAttributes(InstrCtx& c, AttrList& attrs) {
  using O = HloOpcode;
  using K = TokKind;
  InstructionAttributes& a = c.attrs;
  const O op = c.opcode;
  const std::string opname(HloOpcodeString(op));
  const int64_t n = static_cast<int64_t>(c.operands.size());

  auto parse = [&] { return ParseAttributes(attrs, c.allow_attributes, c.opcode_loc, &a.raw_attributes); };
  auto ints = [this](std::vector<int64_t>* out) {
    return [this, out] { return ParseInt64List(K::kLbrace, K::kRbrace, K::kComma, out); };
  };
  auto int64 = [this](int64_t* out) { return [this, out] { return ParseInt64(out); }; };
  auto boolean = [this](bool* out) { return [this, out] { return ParseBool(out); }; };
  auto raw_ident = [this](const char* what) {
    return [this, what] {
      std::string v;
      return ParseIdentIn(what, &v);
    };
  };
  // Attributes that name computations; collected, then placed in XLA's order.
  HloComputation* to_apply = nullptr;
  auto computation = [this](HloComputation** out) { return [this, out] { return ParseComputationRef(out); }; };
  auto replica_groups = [&] {
    attrs.Add("replica_groups", false, [this, &a] { return ParseReplicaGroups(&a.replica_groups); });
  };
  auto channel_id = [&] {
    attrs.Add("channel_id", false, [this, &a] {
      int64_t v = 0;
      if (!ParseInt64(&v)) return false;
      a.channel_id = v;
      return true;
    });
  };
  auto operand_precision = [&] {
    attrs.Add("operand_precision", false,
              [this, &a] { return ParsePrecisionList(&a.precision_config.operand_precision); });
  };
  auto one_dimension = [&]() -> bool {
    if (a.dimensions.size() == 1) return true;
    return Err(c.opcode_loc, opname, " expects dimensions={d} with exactly one dimension, but has ",
               a.dimensions.size());
  };
  auto at_least = [&](int64_t k) -> bool {
    if (n >= k) return true;
    return Err(c.operands_loc, "expects at least ", Plural(k, "operand"), ", but has ", Plural(n, "operand"));
  };
  auto even = [&](const char* what) -> bool {
    if (n >= 2 && n % 2 == 0) return true;
    return Err(c.operands_loc, "expects an even number of operands (", what, "), but has ", Plural(n, "operand"));
  };
  auto window = [&] {
    attrs.Add("window", false, [this, &a] {
      Window w;
      if (!ParseWindow(&w, true)) return false;
      a.window = std::move(w);
      return true;
    });
  };

  int arity = HloOpcodeArity(op);
  if (arity != kVariadic && !CheckOperandCount(c, arity)) return false;

  switch (op) {
    case O::kExp: case O::kExpm1: case O::kLog: case O::kLog1p: case O::kLogistic: case O::kSqrt:
    case O::kCbrt: case O::kRsqrt: case O::kTanh: case O::kErf: case O::kSin: case O::kCos: case O::kTan:
      attrs.Add("result_accuracy", false, [this] { return ParseResultAccuracy(); }, /*keep_raw=*/true);
      return parse();

    case O::kIota:
      attrs.Add("iota_dimension", true, int64(&a.iota_dimension));
      return parse();

    case O::kTopK:
      attrs.Add("k", true, int64(&a.k));
      attrs.Add("largest", false, boolean(&a.largest));
      attrs.Add("is_stable", false, boolean(&a.is_stable));  // newer XLA text
      return parse();

    case O::kAllGather: case O::kAllGatherStart:
      replica_groups();
      channel_id();
      attrs.Add("dimensions", true, ints(&a.dimensions));
      attrs.Add("constrain_layout", false, boolean(&a.constrain_layout));
      attrs.Add("use_global_device_ids", false, boolean(&a.use_global_device_ids));
      return parse() && one_dimension();

    case O::kAllReduce: case O::kAllReduceStart: case O::kReduceScatter:
      attrs.Add("to_apply", true, computation(&to_apply));
      replica_groups();
      channel_id();
      attrs.Add("constrain_layout", false, boolean(&a.constrain_layout));
      attrs.Add("use_global_device_ids", false, boolean(&a.use_global_device_ids));
      attrs.Add("mode", false, raw_ident("collective op group mode"), true);
      if (op == O::kReduceScatter) attrs.Add("dimensions", true, ints(&a.dimensions));
      if (!parse() || (op == O::kReduceScatter && !one_dimension())) return false;
      c.called = {to_apply};
      return true;

    case O::kAllToAll: case O::kRaggedAllToAll:
      replica_groups();
      channel_id();
      attrs.Add("dimensions", false, ints(&a.dimensions));
      if (op == O::kAllToAll) attrs.Add("constrain_layout", false, boolean(&a.constrain_layout));
      return parse() && (!attrs.Seen("dimensions") || one_dimension());

    case O::kCollectiveBroadcast:
      replica_groups();
      channel_id();
      return parse();

    case O::kCollectivePermute: case O::kCollectivePermuteStart: {
      auto pairs = std::make_unique<std::vector<std::vector<int64_t>>>();
      size_t pairs_loc = 0;
      attrs.Add("source_target_pairs", true, [&] {
        pairs_loc = loc();
        return ParseInt64ListList(K::kLbrace, K::kRbrace, K::kComma, pairs.get());
      });
      channel_id();
      attrs.Add("slice_sizes", false, [this] {
        std::vector<std::vector<int64_t>> sizes;
        return ParseInt64ListList(K::kLbrace, K::kRbrace, K::kComma, &sizes);
      }, true);
      if (!parse()) return false;
      for (const auto& p : *pairs) {
        if (p.size() != 2) return Error(pairs_loc, "expects 'source_target_pairs=' to be a list of pairs");
        a.source_target_pairs.emplace_back(p[0], p[1]);
      }
      if (attrs.Seen("slice_sizes") && n != 4)
        return Error(c.operands_loc, "CollectivePermute and CollectivePermuteStart must have exactly four operands "
                                     "for dynamic-slice and in-place update.");
      return true;
    }

    case O::kCopyStart:
      attrs.Add("cross_program_prefetch_index", false, [this] {
        int64_t v = 0;
        return ParseInt32(&v);
      }, true);
      return parse();

    case O::kReshape:
      attrs.Add("inferred_dimension", false, [this] {
        int64_t v = 0;
        return ParseInt64(&v);
      }, true);
      return parse();

    case O::kDynamicReshape:
      return at_least(1) && parse();

    case O::kSort:
      attrs.Add("dimensions", true, ints(&a.dimensions));
      attrs.Add("is_stable", false, boolean(&a.is_stable));
      attrs.Add("to_apply", true, computation(&to_apply));
      if (!at_least(1) || !parse() || !one_dimension()) return false;
      c.called = {to_apply};
      return true;

    case O::kTuple:
      if (c.shape) {
        if (!c.shape->IsTuple())
          return Err(c.opcode_loc, "tuple expects a tuple shape, but has ", c.shape->ToString());
        if (!CheckOperandCount(c, c.shape->tuple_shapes().size())) return false;
      }
      return parse();

    case O::kWhile: {
      HloComputation *condition = nullptr, *body = nullptr;
      attrs.Add("condition", true, computation(&condition));
      attrs.Add("body", true, computation(&body));
      if (!parse()) return false;
      c.called = {condition, body};
      return true;
    }

    case O::kRecv: case O::kRecvDone: case O::kSend: case O::kSendDone: {
      channel_id();
      attrs.Add("is_host_transfer", false, boolean(&a.is_host_transfer));
      if (!parse()) return false;
      if (op == O::kRecv && (!c.shape || !c.shape->IsTuple() || c.shape->tuple_shapes().empty()))
        return Error(c.opcode_loc, "recv expects a tuple shape (data, context, token)");
      if (op == O::kRecvDone || op == O::kSendDone) {
        const HloInstruction* operand = c.operands[0];
        if ((operand->opcode() == O::kRecv || operand->opcode() == O::kSend) &&
            operand->attrs().channel_id != a.channel_id) {
          auto text = [](const std::optional<int64_t>& id) { return id ? absl::StrCat(*id) : std::string("none"); };
          return Err(c.opcode_loc, opname, " has channel_id ", text(a.channel_id), ", but its operand %",
                     operand->name(), " has channel_id ", text(operand->attrs().channel_id));
        }
      }
      return true;
    }

    case O::kGetTupleElement:
      attrs.Add("index", true, int64(&a.tuple_index));
      return parse();

    case O::kCall:
      attrs.Add("to_apply", true, computation(&to_apply));
      attrs.Add("is_composite", false, [this] {
        bool b = false;
        return ParseBool(&b);
      }, true);
      if (!parse()) return false;
      c.called = {to_apply};
      return true;

    case O::kReduceWindow:
      window();
      attrs.Add("to_apply", true, computation(&to_apply));
      if (!even("inputs then init values") || !parse()) return false;
      if (!a.window) a.window = Window();
      c.called = {to_apply};
      return true;

    case O::kConvolution:
      window();
      attrs.Add("dim_labels", true, [this, &a] {
        ConvolutionDimensionNumbers d;
        if (!ParseConvDims(&d)) return false;
        a.convolution_dimension_numbers = std::move(d);
        return true;
      });
      attrs.Add("feature_group_count", false, int64(&a.feature_group_count));
      attrs.Add("batch_group_count", false, int64(&a.batch_group_count));
      attrs.Add("conv_kind", false, raw_ident("convolution kind"), true);
      operand_precision();
      if (!parse()) return false;
      if (!a.window) a.window = Window();
      return true;

    case O::kFft:
      attrs.Add("fft_type", true, [this, &a] { return ParseFftType(&a.fft_type); });
      attrs.Add("fft_length", true, ints(&a.fft_length));
      return parse();

    case O::kTriangularSolve:
      attrs.Add("left_side", false, boolean(&a.left_side));
      attrs.Add("lower", false, boolean(&a.lower));
      attrs.Add("unit_diagonal", false, boolean(&a.unit_diagonal));
      attrs.Add("transpose_a", false, [this, &a] { return ParseTriangularTranspose(&a.transpose_a); });
      return parse();

    case O::kCholesky:
      attrs.Add("lower", false, boolean(&a.lower));
      return parse();

    case O::kCompare:
      attrs.Add("direction", true, [this, &a] {
        ComparisonDirection d;
        if (!ParseComparisonDirection(&d)) return false;
        a.comparison_direction = d;
        return true;
      });
      attrs.Add("type", false, [this, &a] { return ParseComparisonType(&a.comparison_type); });
      // Newer JAX/XLA text: order=TOTAL (total order) or order=PARTIAL. A total order on
      // floating-point operands is XLA's TOTALORDER comparison (NaNs and -0 ordered), which is
      // how it is kept (and printed: type=TOTALORDER); integers are totally ordered anyway.
      attrs.Add("order", false, [this, &a, &c] {
        size_t at = loc();
        std::string v;
        if (!ParseIdentIn("comparison order (TOTAL or PARTIAL)", &v)) return false;
        if (v != "TOTAL" && v != "PARTIAL")
          return Err(at, "expects comparison order TOTAL or PARTIAL, but sees: ", v);
        const bool floating = !c.operands.empty() && c.operands[0]->shape().IsArray() &&
                              IsFloatingPoint(c.operands[0]->shape().element_type());
        if (v == "TOTAL" && floating && a.comparison_type == ComparisonType::kDefault)
          a.comparison_type = ComparisonType::kTotalOrder;
        return true;
      }, true);
      return parse();

    case O::kBroadcast: {
      bool scalar = c.operands[0]->shape().IsArray() && c.operands[0]->shape().rank() == 0;
      attrs.Add("dimensions", !scalar, ints(&a.dimensions));
      return parse();
    }

    case O::kConcatenate:
      attrs.Add("dimensions", true, ints(&a.dimensions));
      return at_least(1) && parse() && one_dimension();

    case O::kMap:
      attrs.Add("to_apply", true, computation(&to_apply));
      attrs.Add("dimensions", false, ints(&a.dimensions));
      if (!at_least(1) || !parse()) return false;
      c.called = {to_apply};
      return true;

    case O::kScan: {
      attrs.Add("to_apply", true, computation(&to_apply));
      attrs.Add("dimensions", true, ints(&a.dimensions));
      attrs.Add("num_carries", true, int64(&a.num_carries));
      attrs.Add("is_reverse", false, boolean(&a.is_reverse));
      attrs.Add("is_associative", false, [this, &a] {
        bool b = false;
        if (!ParseBool(&b)) return false;
        a.is_associative = b;
        return true;
      });
      if (!parse() || !one_dimension()) return false;
      if (n != to_apply->num_parameters())
        return Err(c.operands_loc, "expects ", n, " operands to match the number of parameters of "
                   "to_apply, but to_apply has ", to_apply->num_parameters(), " parameters");
      if (a.num_carries < 0 || a.num_carries > n)
        return Err(c.opcode_loc, "num_carries=", a.num_carries, " must be between 0 and the number of operands (", n,
                   ")");
      c.called = {to_apply};
      return true;
    }

    case O::kReduce:
      attrs.Add("to_apply", true, computation(&to_apply));
      attrs.Add("dimensions", true, ints(&a.dimensions));
      if (!even("inputs then init values") || !parse()) return false;
      c.called = {to_apply};
      return true;

    case O::kReverse: case O::kTranspose:
      attrs.Add("dimensions", true, ints(&a.dimensions));
      return parse();

    case O::kSelectAndScatter: {
      HloComputation *select = nullptr, *scatter = nullptr;
      attrs.Add("select", true, computation(&select));
      attrs.Add("scatter", true, computation(&scatter));
      window();
      if (!parse()) return false;
      if (!a.window) a.window = Window();
      c.called = {select, scatter};
      return true;
    }

    case O::kSlice:
      attrs.Add("slice", true, [this, &a] { return ParseSliceRanges(&a.slice); });
      return parse();

    case O::kDynamicSlice: {
      attrs.Add("dynamic_slice_sizes", true, ints(&a.dynamic_slice_sizes));
      if (!at_least(1) || !parse()) return false;
      int64_t rank = c.operands[0]->shape().rank();
      bool vector_form = n == 2 && c.operands[1]->shape().rank() == 1;
      if (!vector_form && n != 1 + rank)
        return Err(c.operands_loc, "dynamic-slice of a rank-", rank, " operand expects ", 1 + rank,
                   " operands (one start index per dimension), but has ", n);
      return true;
    }

    case O::kDynamicUpdateSlice: {
      if (!at_least(2) || !parse()) return false;
      int64_t rank = c.operands[0]->shape().rank();
      bool vector_form = n == 3 && c.operands[2]->shape().rank() == 1;
      if (!vector_form && n != 2 + rank)
        return Err(c.operands_loc, "dynamic-update-slice of a rank-", rank, " operand expects ", 2 + rank,
                   " operands (one start index per dimension), but has ", n);
      return true;
    }

    case O::kBatchNormTraining: case O::kBatchNormInference: case O::kBatchNormGrad:
      attrs.Add("epsilon", true, [this, &a] {
        size_t at = loc();
        double v = 0;
        if (!ParseDouble(&v)) return false;
        if (v > std::numeric_limits<float>::max() || v < std::numeric_limits<float>::lowest())
          return Error(at, "value out of range for float");
        a.epsilon = static_cast<float>(v);
        return true;
      });
      attrs.Add("feature_index", true, int64(&a.feature_index));
      return parse();

    case O::kPad:
      attrs.Add("padding", true, [this, &a] {
        PaddingConfig p;
        if (!ParsePaddingConfig(&p)) return false;
        a.padding_config = std::move(p);
        return true;
      });
      return parse();

    case O::kFusion: {
      HloComputation* calls = nullptr;
      attrs.Add("calls", true, computation(&calls));
      attrs.Add("kind", true, [this, &a] { return ParseFusionKind(&a.fusion_kind); });
      attrs.Add("output_to_operand_aliasing", false,
                [this, &a] { return ParseOutputOperandAliasing(&a.output_to_operand_aliasing); });
      if (!parse()) return false;
      c.called = {calls};
      return true;
    }

    case O::kInfeed:
      attrs.Add("infeed_config", false, [this, &a] { return ParseString(&a.infeed_config); });
      if (!parse()) return false;
      if (!c.shape->IsTuple() || c.shape->tuple_shapes().empty())
        return Error(c.opcode_loc, "infeed must have a non-empty tuple shape");
      return true;

    case O::kOutfeed:
      attrs.Add("outfeed_config", false, [this, &a] { return ParseString(&a.outfeed_config); });
      attrs.Add("outfeed_shape", false, [this, &a] {
        Shape s;
        if (!ParseShape(&s)) return false;
        a.outfeed_shape = std::move(s);
        return true;
      });
      return parse();

    case O::kRng:
      attrs.Add("distribution", true, [this, &a] { return ParseDistribution(&a.distribution); });
      return parse();

    case O::kRngGetAndUpdateState:
      attrs.Add("delta", true, [this] {
        int64_t v = 0;
        return ParseInt64(&v);
      }, true);
      return parse();

    case O::kRngBitGenerator:
      attrs.Add("algorithm", true, [this, &a] { return ParseRandomAlgorithm(&a.rng_algorithm); });
      return parse();

    case O::kReducePrecision: {
      int64_t e = 0, m = 0;
      size_t e_loc = 0, m_loc = 0;
      attrs.Add("exponent_bits", true, [&] {
        e_loc = loc();
        return ParseInt64(&e);
      });
      attrs.Add("mantissa_bits", true, [&] {
        m_loc = loc();
        return ParseInt64(&m);
      });
      if (!parse()) return false;
      if (e < 1 || e > 64) return Err(e_loc, "exponent_bits must be between 1 and 64, but is ", e);
      if (m < 0 || m > 64) return Err(m_loc, "mantissa_bits must be between 0 and 64, but is ", m);
      a.exponent_bits = static_cast<int>(e);
      a.mantissa_bits = static_cast<int>(m);
      return true;
    }

    case O::kConditional: {
      if (!at_least(1)) return false;
      const Shape& index = c.operands[0]->shape();
      if (!index.IsArray() || index.rank() != 0) return Error(c.operands_loc, "The first operand must be a scalar");
      bool is_pred = index.element_type() == PrimitiveType::PRED;
      if (!is_pred && index.element_type() != PrimitiveType::S32)
        return Error(c.operands_loc, "The first operand must be a scalar of PRED or S32");
      HloComputation *true_comp = nullptr, *false_comp = nullptr;
      std::vector<HloComputation*> branches;
      if (is_pred) {
        attrs.Add("true_computation", true, computation(&true_comp));
        attrs.Add("false_computation", true, computation(&false_comp));
      } else {
        attrs.Add("branch_computations", true, [this, &branches] { return ParseComputationList(&branches); });
      }
      if (!parse()) return false;
      if (is_pred) branches = {true_comp, false_comp};
      if (branches.empty()) return Error(c.opcode_loc, "conditional expects at least one branch computation");
      if (n != static_cast<int64_t>(branches.size()) + 1)
        return Err(c.operands_loc, "conditional with ", Plural(branches.size(), "branch computation"),
                   " expects ", branches.size() + 1, " operands (the branch index and one "
                   "operand per branch), but has ", n);
      c.called = branches;
      return true;
    }

    case O::kCustomCall: {
      std::vector<HloComputation*> called;
      size_t constraints_loc = 0, api_loc = 0;
      attrs.Add("custom_call_target", true, [this, &a] { return ParseString(&a.custom_call_target); });
      window();
      attrs.Add("dim_labels", false, [this, &a] {
        ConvolutionDimensionNumbers d;
        if (!ParseConvDims(&d)) return false;
        a.convolution_dimension_numbers = std::move(d);
        return true;
      });
      attrs.Add("feature_group_count", false, int64(&a.feature_group_count));
      attrs.Add("batch_group_count", false, int64(&a.batch_group_count));
      attrs.Add("operand_layout_constraints", false, [&] {
        constraints_loc = loc();
        std::vector<Shape> shapes;
        if (!ParseShapeList(&shapes)) return false;
        a.operand_layout_constraints = std::move(shapes);
        return true;
      });
      attrs.Add("custom_call_has_side_effect", false, boolean(&a.custom_call_has_side_effect));
      attrs.Add("to_apply", false, computation(&to_apply));
      attrs.Add("called_computations", false, [&] { return ParseComputationList(&called); });
      attrs.Add("output_to_operand_aliasing", false,
                [this, &a] { return ParseOutputOperandAliasing(&a.output_to_operand_aliasing); });
      attrs.Add("padding_type", false, raw_ident("padding type"), true);
      attrs.Add("literal", false, [this] {
        Literal l;
        return ParseLiteralWithShape(&l);
      }, true);
      operand_precision();
      attrs.Add("schedule", false, [this, &a] { return ParseCustomCallSchedule(&a.custom_call_schedule); });
      attrs.Add("api_version", false, [&] {
        api_loc = loc();
        return ParseApiVersion(&a.api_version);
      });
      attrs.Add("opaque", false, [this, &a] { return ParseString(&a.opaque); });
      if (!parse()) return false;
      if (attrs.Seen("api_version") && a.api_version == CustomCallApiVersion::kUnspecified)
        return Error(api_loc, "Invalid API version: API_VERSION_UNSPECIFIED");
      if (to_apply && attrs.Seen("called_computations"))
        return Error(c.opcode_loc, "A single instruction can't have both to_apply and calls field");
      if (a.operand_layout_constraints) {
        const auto& constraints = *a.operand_layout_constraints;
        if (!HasLayoutEverywhere(*c.shape))
          return Error(c.opcode_loc, "Layout must be set on layout-constrained custom call");
        if (static_cast<int64_t>(constraints.size()) != n)
          return Err(constraints_loc, "Expected ", n, " operand layout constraints, ", constraints.size(), " given");
        for (int64_t i = 0; i < n; ++i) {
          if (constraints[i].IsArray() && !constraints[i].has_layout())
            return Err(constraints_loc, "Operand layout constraint shape ", constraints[i].ToString(),
                       " for operand ", i, " does not have a layout");
          if (!CompatibleShapes(constraints[i], c.operands[i]->shape()))
            return Err(constraints_loc, "Operand layout constraint shape ", constraints[i].ToString(),
                       " for operand ", i, " is not compatible with operand shape ",
                       c.operands[i]->shape().ToString());
        }
      }
      if (to_apply) c.called = {to_apply};
      else c.called = called;
      return true;
    }

    case O::kDot: case O::kRaggedDot: {
      // Filled in place (the context is on the heap; this function is on recursive paths).
      DotDimensionNumbers& d = op == O::kDot ? a.dot_dimension_numbers.emplace()
                                             : a.ragged_dot_dimension_numbers.emplace().dot_dimension_numbers;
      attrs.Add("lhs_contracting_dims", false, ints(&d.lhs_contracting_dimensions));
      attrs.Add("rhs_contracting_dims", false, ints(&d.rhs_contracting_dimensions));
      attrs.Add("lhs_batch_dims", false, ints(&d.lhs_batch_dimensions));
      attrs.Add("rhs_batch_dims", false, ints(&d.rhs_batch_dimensions));
      operand_precision();
      if (op == O::kDot) {
        attrs.Add("algorithm", false, [this, &a] { return ParseAlgorithm(&a.precision_config.algorithm); });
      } else {
        attrs.Add("lhs_ragged_dims", false, ints(&a.ragged_dot_dimension_numbers->lhs_ragged_dimensions));
        attrs.Add("rhs_group_dims", false, ints(&a.ragged_dot_dimension_numbers->rhs_group_dimensions));
      }
      return (op != O::kDot || CheckOperandCount(c, 2)) && parse();
    }

    case O::kGather: {
      GatherDimensionNumbers& g = a.gather_dimension_numbers.emplace();
      attrs.Add("offset_dims", true, ints(&g.offset_dims));
      attrs.Add("collapsed_slice_dims", true, ints(&g.collapsed_slice_dims));
      attrs.Add("start_index_map", true, ints(&g.start_index_map));
      attrs.Add("index_vector_dim", true, int64(&g.index_vector_dim));
      attrs.Add("slice_sizes", true, ints(&a.dynamic_slice_sizes));
      attrs.Add("indices_are_sorted", false, boolean(&a.indices_are_sorted));
      attrs.Add("operand_batching_dims", false, ints(&g.operand_batching_dims));
      attrs.Add("start_indices_batching_dims", false, ints(&g.start_indices_batching_dims));
      return parse();
    }

    case O::kScatter: {
      ScatterDimensionNumbers& s = a.scatter_dimension_numbers.emplace();
      attrs.Add("update_window_dims", true, ints(&s.update_window_dims));
      attrs.Add("inserted_window_dims", true, ints(&s.inserted_window_dims));
      attrs.Add("scatter_dims_to_operand_dims", true, ints(&s.scatter_dims_to_operand_dims));
      attrs.Add("index_vector_dim", true, int64(&s.index_vector_dim));
      attrs.Add("to_apply", true, computation(&to_apply));
      attrs.Add("indices_are_sorted", false, boolean(&a.indices_are_sorted));
      attrs.Add("unique_indices", false, boolean(&a.unique_indices));
      attrs.Add("input_batching_dims", false, ints(&s.input_batching_dims));
      attrs.Add("scatter_indices_batching_dims", false, ints(&s.scatter_indices_batching_dims));
      if (n < 3 || n % 2 == 0)
        return Err(c.operands_loc, "expects an odd number of operands (inputs, indices, updates), but has ",
                   Plural(n, "operand"));
      if (!parse()) return false;
      c.called = {to_apply};
      return true;
    }

    case O::kDomain:
      attrs.Add("domain", true, [this] { return ParseDomain(); }, true);
      return parse();

    case O::kGetDimensionSize: case O::kSetDimensionSize:
      attrs.Add("dimensions", true, ints(&a.dimensions));
      return parse() && one_dimension();

    case O::kParameter: case O::kConstant: case O::kAsyncStart: case O::kAsyncUpdate: case O::kAsyncDone:
      return Err(c.opcode_loc, "internal error: ", opname, " reached the generic attribute parser");

    default:
      return parse();
  }
}

}  // namespace hloc::parser_internal
