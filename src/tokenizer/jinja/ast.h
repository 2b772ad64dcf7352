// The syntax tree of a template: one node type whose fields are read
// according to its kind (listed beside each kind).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cairn::jinja {

enum class NodeKind {
  // Statements
  kText,         // text
  kComment,      //
  kIf,           // kids[0] test; body; alt (else or a nested kIf for elif)
  kFor,          // kids[0] target, kids[1] iterable, kids[2] filter test or null; body; alt (else)
  kSet,          // kids[0] target, kids[1] value or null (block set: body)
  kMacro,        // text name; args parameters; body; flag uses kwargs; flag2 uses varargs
  kCallBlock,    // kids[0] call expression; args caller parameters; body
  kFilterBlock,  // kids[0] filter (identifier or call); body
  kBreak,
  kContinue,
  // Expressions
  kInteger,   // int_value
  kFloat,     // float_value
  kString,    // text
  kList,      // kids
  kTuple,     // kids
  kDict,      // kids: key, value, key, value...
  kName,      // text
  kMember,    // kids[0] object, kids[1] property; flag computed ([...])
  kSlice,     // kids[0..2] start, stop, step (each may be null)
  kCall,      // kids[0] callee; args arguments
  kKeyword,   // text name; kids[0] value  (name=value)
  kSpread,    // kids[0]  (*list)
  kKwSpread,  // kids[0]  (**dict)
  kUnary,     // text operator; kids[0]
  kBinary,    // text operator; kids[0], kids[1]
  kFilter,    // kids[0] operand, kids[1] filter (kName or kCall)
  kTest,      // kids[0] operand; text test name; flag negated; args test arguments
  kSelect,    // kids[0] value, kids[1] condition  (value if condition)
  kTernary,   // kids[0] condition, kids[1] if true, kids[2] if false
};

struct Node;
using NodePtr = std::unique_ptr<Node>;

struct Node {
  NodeKind kind;
  uint32_t offset = 0;  // byte offset in the template source
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  bool flag = false;
  bool flag2 = false;
  std::vector<NodePtr> kids;
  std::vector<NodePtr> args;
  std::vector<NodePtr> body;
  std::vector<NodePtr> alt;

  Node(NodeKind k, uint32_t off) : kind(k), offset(off) {}
  const Node* kid(size_t i) const { return i < kids.size() ? kids[i].get() : nullptr; }
};

inline NodePtr make_node(NodeKind kind, uint32_t offset) {
  return std::make_unique<Node>(kind, offset);
}

}  // namespace cairn::jinja
