// Forwarding header: the training layer moved to distflow/training/. Kept
// while code outside this tree still includes the old path; include
// distflow/training/saver.h instead.
#include "distflow/training/saver.h"
