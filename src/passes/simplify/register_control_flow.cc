// Registration of the control-flow simplifiers and the movers, under XLA's pass names.
#include "passes/passes.h"
#include "passes/simplify/conditional_simplifier.h"
#include "passes/simplify/convert_mover.h"
#include "passes/simplify/reshape_mover.h"
#include "passes/simplify/sort_simplifier.h"
#include "passes/simplify/while_loop_invariant_code_motion.h"
#include "passes/simplify/while_loop_simplifier.h"
#include "passes/simplify/while_loop_trip_count_annotator.h"

namespace hloc {
namespace {

bool BoolOption(const PassOptions& options, const std::string& name, bool fallback) {
  return options.Has(name) ? options.GetBool(name) : fallback;
}

}  // namespace

void RegisterControlFlowAndMoverPasses(PassRegistry& registry) {
  RegisterWhileLoopInvariantCodeMotionPass(registry);
  {
    PassInfo info;
    info.name = WhileLoopSimplifier::kName;
    info.description =
        "while-loop simplifier: removes loops that run 0 or 1 times, dead and constant loop state, "
        "repeated elements, and merges induction variables";
    info.options.push_back({"simplify_compare_instrs", OptionType::kBool, OptionValue(false),
                            "fold compares of the induction variable against constants outside its range"});
    info.factory = [](const PassOptions& options) -> std::unique_ptr<HloPass> {
      WhileLoopSimplifierOptions o;
      o.simplify_compare_instrs = BoolOption(options, "simplify_compare_instrs", false);
      return std::make_unique<WhileLoopSimplifier>(o);
    };
    registry.Register(std::move(info));
  }
  {
    PassInfo info;
    info.name = ConditionalSimplifier::kName;
    info.description =
        "conditional simplifier: inlines conditionals with a known or irrelevant branch, selects between "
        "cheap branches, drops unused results and operands";
    info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> {
      return std::make_unique<ConditionalSimplifier>();
    };
    registry.Register(std::move(info));
  }
  {
    PassInfo info;
    info.name = SortSimplifier::kName;
    info.description = "sort simplifier: drops sort operands whose results are unused and that the comparator ignores";
    info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<SortSimplifier>(); };
    registry.Register(std::move(info));
  }
  {
    PassInfo info;
    info.name = ReshapeMover::kName;
    info.description = "reshape mover: sinks reshapes and transposes below elementwise ops so they can cancel";
    info.options.push_back({"reshape_of_1d_broadcast_is_cheap", OptionType::kBool, OptionValue(false),
                            "treat reshapes of broadcasts of 1-D values as free"});
    info.factory = [](const PassOptions& options) -> std::unique_ptr<HloPass> {
      ReshapeMoverOptions o;
      o.reshape_of_1d_broadcast_is_cheap = BoolOption(options, "reshape_of_1d_broadcast_is_cheap", false);
      return std::make_unique<ReshapeMover>(o);
    };
    registry.Register(std::move(info));
  }
  {
    PassInfo info;
    info.name = ConvertMover::kName;
    info.description =
        "convert mover: sinks widening and hoists narrowing converts across data-movement ops "
        "(concatenate, pad, reshape, slice, transpose)";
    info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<ConvertMover>(); };
    registry.Register(std::move(info));
  }
  {
    PassInfo info;
    info.name = WhileLoopTripCountAnnotator::kName;
    info.description =
        "while-loop trip count annotator: records the induction variable, init/step and known trip count "
        "of while loops in their backend_config (runtimes then skip the condition)";
    info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> {
      return std::make_unique<WhileLoopTripCountAnnotator>();
    };
    registry.Register(std::move(info));
  }
}

}  // namespace hloc
