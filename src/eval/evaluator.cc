#include "eval/evaluator.h"
