#!/bin/sh
# /usr/local/bin/svc-entrypoint: the sandbox container's process 1.
# tini replaces this shell as process 1: it forwards SIGTERM/SIGINT to svc-agent's whole process
# group (-g), so the engine stops with it, and reaps the zombies the agent's tools leave behind.
set -eu
exec /usr/bin/tini -g -- /usr/local/bin/svc-agent "$@"
