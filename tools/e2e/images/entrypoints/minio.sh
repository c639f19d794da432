#!/bin/sh
# The MinIO image's entrypoint contract (dockerscripts/docker-entrypoint.sh), written here for the
# real node's image (tools/e2e/images/recipes.ts): arguments that do not start with `minio` are
# minio's (`server /data ...`). The published script's switch to MINIO_USERNAME/MINIO_GROUPNAME
# when started as root is not done: the program never starts it as root.
if [ "${1}" != "minio" ] && [ -n "${1}" ]; then
  set -- minio "$@"
fi
exec "$@"
