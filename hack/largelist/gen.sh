#!/bin/sh
# Writes N Services (default 200,000) as one block-style `kind: List` (list) or as `---`
# documents (docs) to stdout: the large valid inputs of docs/limits.md's "Memory" table.
#   hack/largelist/gen.sh list 200000 > /tmp/list.yaml
#   /usr/bin/time -v agpol lint -f /tmp/list.yaml -o json > /dev/null
set -eu
mode=${1:-list}
n=${2:-200000}
awk -v mode="$mode" -v n="$n" 'BEGIN {
	if (mode == "list") { print "apiVersion: v1"; print "kind: List"; print "items:"; p = "- "; i2 = "  " }
	else { p = ""; i2 = "" }
	for (i = 0; i < n; i++) {
		if (mode != "list") print "---"
		printf "%sapiVersion: v1\n%skind: Service\n%smetadata:\n%s  name: svc-%06d\n%s  namespace: ns\n%sspec:\n%s  ports:\n%s  - port: 80\n", p, i2, i2, i2, i, i2, i2, i2, i2
	}
}'
