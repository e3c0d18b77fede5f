#!/usr/bin/env bash
# Fires the example event at a plugflow server.
#   SERVER     server address (default https://localhost:2746)
#   NAMESPACE  namespace of the binding (default default)
#   TOKEN      bearer token (client auth mode), e.g. $(kubectl create token event-sender)
# -k accepts the server's generated self-signed certificate.
set -euo pipefail
cd "$(dirname "$0")"
SERVER="${SERVER:-https://localhost:2746}"
NAMESPACE="${NAMESPACE:-default}"
curl -sS -k "$SERVER/api/v1/events/$NAMESPACE/" \
  -H "Authorization: Bearer $TOKEN" \
  -H "Content-Type: application/json" \
  -H "X-Event-Type: push" \
  -d @event.json
echo
