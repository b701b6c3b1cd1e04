// Forwarding header: the training layer moved to distflow/training/. Kept
// while code outside this tree still includes the old path; include
// distflow/training/adam.h instead.
#include "distflow/training/adam.h"
