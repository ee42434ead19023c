#!/usr/bin/env bash
# One-line explanations when a prerequisite is missing (used by the Makefile).
set -u
py="${PYTHON:-python3.11}"
if ! command -v "$py" >/dev/null 2>&1; then
  if command -v python3 >/dev/null 2>&1 && python3 -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
    echo python3; exit 0
  fi
  echo "error: Python 3.11+ not found (install python3.11, or set PYTHON=/path/to/python3.11)" >&2
  exit 2
fi
if ! "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
  echo "error: $py is $("$py" -V 2>&1); laketx needs Python 3.11+ (set PYTHON=...)" >&2
  exit 2
fi
java_bin="java"
[ -n "${JAVA_HOME:-}" ] && java_bin="$JAVA_HOME/bin/java"
if ! command -v "$java_bin" >/dev/null 2>&1; then
  echo "error: Java not found; Spark 4 needs a JDK 17+ (e.g. apt-get install openjdk-17-jdk, or set JAVA_HOME)" >&2
  exit 2
fi
major=$("$java_bin" -version 2>&1 | sed -n 's/.*version "\([0-9]*\)\(\.\([0-9]*\)\)\{0,1\}.*/\1 \3/p' | head -1)
set -- $major
v=${1:-0}; [ "$v" = "1" ] && v=${2:-0}
if [ "$v" -lt 17 ]; then
  echo "error: Java $v found; Spark 4 needs Java 17+ (install a newer JDK or set JAVA_HOME)" >&2
  exit 2
fi
echo "$py"
