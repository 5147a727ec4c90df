#!/usr/bin/env bash
# `opforge new-op` as a user runs it: this build installed into a fresh prefix, the installed CLI
# writes an out-of-tree op project (with --cuda), which is configured with only CMAKE_PREFIX_PATH =
# that prefix, built, and its test run (the skeleton's test checks the CPU reference only); the
# stub registers no CUDA tactic; the files are clang-formatted as written. Then the in-tree layout
# (--dir .../ops/contrib of an opforge tree) and the bad input: invalid names, an existing folder
# (left as it was), a namespace of a shipped op; each refused with exit 1 and nothing written.
#   new_op.sh BUILD SOURCE
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/opforge-newop-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/p" >"$tmp/install.log" || { cat "$tmp/install.log"; fail "cmake --install"; }
opforge=$tmp/p/bin/opforge
mkdir "$tmp/w"

# 1. An out-of-tree project, built and tested against the prefix.
(cd "$tmp/w" && "$opforge" new-op myops::scale_copy --cuda) >"$tmp/new.log" 2>&1 || { cat "$tmp/new.log"; fail "new-op"; }
d=$tmp/w/scale_copy
for f in CMakeLists.txt library.cc scale_copy.cc scale_copy.cu scale_copy_test.cc README.md; do
  [ -f "$d/$f" ] || fail "new-op wrote no $f"
done
[ -z "$(ls -A "$tmp/w" | grep -v '^scale_copy$')" ] || fail "new-op left something else: $(ls -A "$tmp/w")"
grep -q '^#if 0' "$d/scale_copy.cu" || fail "the CUDA stub is not inside #if 0"
grep -q 'checks the CPU reference ONLY' "$d/scale_copy_test.cc" || fail "the test does not say it checks the reference only"
if grep -rn 'newop_\|NewopName\|@[A-Z_]*@' "$d"; then fail "template placeholders left in the output"; fi
if command -v clang-format >/dev/null 2>&1; then
  (cd "$d" && clang-format --style="file:$src/.clang-format" --dry-run --Werror ./*.cc ./*.cu) ||
    fail "the generated sources are not clang-formatted"
fi
cmake -S "$d" -B "$tmp/b" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/p" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  >"$tmp/configure.log" 2>&1 || { cat "$tmp/configure.log"; fail "configure"; }
grep -q "opforge_DIR:PATH=$tmp/p/lib/cmake/opforge" "$tmp/b/CMakeCache.txt" || fail "opforge was not found in the prefix"
cmake --build "$tmp/b" -j 2 >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; fail "build"; }
ctest --test-dir "$tmp/b" --output-on-failure >"$tmp/ctest.log" 2>&1 || { cat "$tmp/ctest.log"; fail "the generated test"; }
grep -q 'ScaleCopy.ReferenceOnRandomShapes .* Passed' "$tmp/ctest.log" || { cat "$tmp/ctest.log"; fail "the generated test did not run"; }
lib=$tmp/b/lib/libmyops_ops.so
"$opforge" ops myops:: --plugins="$lib" >"$tmp/ops.log" 2>&1 || { cat "$tmp/ops.log"; fail "opforge ops"; }
grep -q '^myops::scale_copy v1' "$tmp/ops.log" || { cat "$tmp/ops.log"; fail "the op is not registered"; }
if grep -q 'tactic.*(CUDA' "$tmp/ops.log"; then fail "the stub registered a CUDA tactic"; fi
echo "ok: out-of-tree project built against the prefix, its test passed, no CUDA tactic claimed"

# 2. Inside an opforge tree (--dir <tree>/ops/contrib): the op folder only, no project files.
mkdir -p "$tmp/tree/ops/contrib" "$tmp/tree/include/opforge"
touch "$tmp/tree/ops/contrib/library.cc" "$tmp/tree/include/opforge/op.h"
"$opforge" new-op myops::in_tree --dir "$tmp/tree/ops/contrib" >"$tmp/in.log" 2>&1 || { cat "$tmp/in.log"; fail "new-op in tree"; }
[ "$(cd "$tmp/tree/ops/contrib/in_tree" && LC_ALL=C ls | tr '\n' ' ')" = "README.md in_tree.cc in_tree_test.cc " ] ||
  fail "in-tree files: $(ls "$tmp/tree/ops/contrib/in_tree")"
grep -q 'inside opforge' "$tmp/in.log" || fail "in-tree not said"
# ... and from a working directory inside the tree, without --dir.
(cd "$tmp/tree/include" && "$opforge" new-op myops::from_cwd) >"$tmp/cwd.log" 2>&1 || { cat "$tmp/cwd.log"; fail "new-op from cwd"; }
[ -f "$tmp/tree/ops/contrib/from_cwd/from_cwd.cc" ] || fail "new-op inside the tree did not write ops/contrib/from_cwd"
echo "ok: in-tree layout"

# 3. Bad input: exit 1, the message, nothing written.
refuse() {  # refuse WHAT_THE_MESSAGE_SAYS ARGS...
  local want=$1
  shift
  local before after
  before=$(cd "$tmp/w" && find . | sort)
  if (cd "$tmp/w" && "$opforge" new-op "$@") >"$tmp/bad.log" 2>&1; then fail "new-op $* succeeded"; fi
  grep -q -- "$want" "$tmp/bad.log" || { cat "$tmp/bad.log"; fail "new-op $*: no message '$want'"; }
  grep -q 'terminate\|Aborted\|Segmentation' "$tmp/bad.log" && fail "new-op $* crashed"
  after=$(cd "$tmp/w" && find . | sort)
  [ "$before" = "$after" ] || fail "new-op $* wrote something: $(diff <(echo "$before") <(echo "$after"))"
  echo "ok: new-op $* refused: $(head -1 "$tmp/bad.log")"
}
refuse "is not NAMESPACE::NAME" noseparator
refuse "does not begin with a letter" 1ns::x
refuse "holds the character '-'" myops::bad-name
refuse "the name '' is empty" myops::
refuse "the namespace '' is empty" ::x
refuse "holds the character ':'" a::b::c
refuse 'holds "__"' my__ops::x
refuse "is a C++ keyword" myops::int
refuse "longer than 64" myops::"$(printf 'a%.0s' $(seq 70))"
refuse "the namespace 'ai.onnx' is taken" ai.onnx::x
refuse "the namespace 'opforge' is taken" opforge::x
refuse "the namespace 'example' is taken" example::my_op   # contrib (libopforge_ops.so)
refuse "the namespace 'sample' is taken" sample::my_op
refuse "the namespace 'torch' is taken" torch::my_op
refuse "already exists" myops::scale_copy
refuse "is not a directory" myops::y --dir "$tmp/none"
# The existing folder is as it was: same files, same bytes.
mkdir "$tmp/w/keep" && echo mine >"$tmp/w/keep/keep.txt"
refuse "already exists" myops::keep
[ "$(cat "$tmp/w/keep/keep.txt")" = mine ] && [ "$(ls "$tmp/w/keep")" = keep.txt ] || fail "the existing folder was changed"
echo "PASS: opforge new-op"
