#!/bin/sh
# The redis image's entrypoint contract (docker-library/redis docker-entrypoint.sh), written here
# for the real node's image (tools/e2e/images/recipes.ts): an option or a .conf file as the first
# argument starts redis-server with it; the umask is 0077 unless one was set. The published
# script's switch from root to redis (gosu) is not done: the program runs it as 999 (its command
# `redis-server /etc/redis/redis.conf` bypasses this script anyway).
set -e
if [ "${1#-}" != "$1" ] || [ "${1%.conf}" != "$1" ]; then
  set -- redis-server "$@"
fi
if [ "$(id -u)" = 0 ]; then
  echo "this image's entrypoint does not switch from root to redis: run it as uid 999" >&2
  exit 1
fi
if [ "$(umask)" = 0022 ]; then umask 0077; fi
exec "$@"
