#!/bin/sh
# TLS tests of wmap-webhook (see tls_test.py): run from the repository root by `make check`.
#   sh tests/webhook/run.sh build/wmap-webhook [--keep]
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 WEBHOOK_BINARY [--keep]" >&2
	exit 2
fi
for tool in curl openssl python3; do
	command -v "$tool" >/dev/null || { echo "FAIL $tool is needed by the webhook tests"; exit 1; }
done
python3 -c 'import yaml' 2>/dev/null || { echo "FAIL python3-yaml is needed by the webhook tests"; exit 1; }
# Answers and log lines are written by wmap_json_text only: jansson 2.14's json_dumps can
# emit a cut text under memory pressure (issue 12, part 4). A machine-checked rule.
if grep -n 'json_dump' webhook/*.c; then
	echo "FAIL webhook/ calls json_dump*: use wmap_json_text (include/wmap/json_text.h)"
	exit 1
fi
exec python3 "$(dirname "$0")/tls_test.py" "$@"
