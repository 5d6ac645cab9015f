#!/bin/sh
# The tree keeps one style (.clang-format at the root): every C and CUDA source
# and header that git tracks must come out of clang-format unchanged.
# Usage: format_check.sh [SOURCE_ROOT] (default: the checkout this script is in).
# Skips (77) without clang-format or git.
set -u
root=${1:-$(dirname "$0")/..}
command -v clang-format >/dev/null 2>&1 || { echo "skip: clang-format is not installed"; exit 77; }
command -v git >/dev/null 2>&1 && git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "skip: $root is not a git checkout"; exit 77; }
cd "$root" || exit 1
bad=0
for f in $(git ls-files '*.c' '*.h' '*.cu'); do
    [ -f "$f" ] || continue
    if ! clang-format --style=file "$f" | cmp -s - "$f"; then
        echo "not formatted: $f (run: clang-format -i $f)"
        bad=$((bad + 1))
    fi
done
if [ "$bad" -eq 0 ]; then
    echo "ok - every tracked C source and header is clang-formatted"
    echo "1 passed, 0 failed"
    exit 0
fi
echo "$bad file(s) differ from clang-format's output"
exit 1
