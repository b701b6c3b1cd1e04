#include "distflow/framework/variant.h"

namespace distflow {

std::string Variant::TypeName() const { return empty() ? "<empty>" : value_->TypeName(); }

std::string Variant::DebugString() const { return empty() ? "<empty>" : value_->DebugString(); }

}  // namespace distflow
