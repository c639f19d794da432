#!/bin/sh
# The n8n image's entrypoint contract (docker/images/n8n/docker-entrypoint.sh of n8n 1.x), written
# here for the real node's image (tools/e2e/images/recipes.ts): arguments are n8n's (`start`,
# `worker --concurrency=5`), none starts n8n. /opt/custom-certificates is trusted as there.
if [ -d /opt/custom-certificates ]; then
  echo "Trusting custom certificates from /opt/custom-certificates."
  export NODE_OPTIONS="--use-openssl-ca $NODE_OPTIONS"
  export SSL_CERT_DIR=/opt/custom-certificates
fi
if [ "$#" -gt 0 ]; then
  exec n8n "$@"
fi
exec n8n
