// Explain is header-only; this unit keeps one object file per header so the
// library layout mirrors include/.
#include "planner/explain.h"
